"""rmpeer.judge.freshness's rules on values alone: --valid-for's durations, valid_until's
arithmetic, RM's platform facts compared. (A certificate read and weighed against a fake
host: tests/run/test_freshness.py.)"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from rmpeer.errors import ConfigError
from rmpeer.judge.freshness import fingerprint_changes, parse_valid_for, valid_until

pytestmark = pytest.mark.offline
STARTED = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("text, seconds", [("24h", 86400), ("90m", 5400), ("2d", 172800), ("1h30m", 5400),
                                           ("90s", 90), ("1m", 60), (None, 86400), (" 1W ", 604800)])
def test_valid_for_durations(text, seconds):
    assert parse_valid_for(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["0", "0h", "0m0s", "-1h", "10", "abc", "", "24 h", "h", "1x", "2d-1h"])
def test_valid_for_refuses_zero_negative_and_garbage(text):
    with pytest.raises(ConfigError, match="--valid-for"):
        parse_valid_for(text)


@pytest.mark.parametrize("text", ["0.0000001s", "0.5s", "0.001m", "1s", "59s", "0.9m"])
def test_a_validity_under_a_minute_is_refused_never_the_default_24_hours(text):
    """Issue 47, rows 4 and 5: 0.0000001s rounded to a zero timedelta, which the assembler
    took for "not given": the certificate held for 24 hours. 1 minute is the least."""
    with pytest.raises(ConfigError, match="at least 1 minute"):
        parse_valid_for(text)
    assert parse_valid_for("60s").total_seconds() == 60


def test_valid_until_is_start_plus_duration():
    assert valid_until("2026-11-30T23:30:00Z", parse_valid_for("90m")) == "2026-12-01T01:00:00Z"
    assert valid_until(STARTED.timestamp(), parse_valid_for("2d")) == "2026-12-02T12:00:00Z"


def test_rms_platform_facts_are_compared_when_both_fingerprints_have_them():
    """The certify path adds RM's platform facts (rm.health.identity) as "health"; the fresh
    path reads no RM: compared only when both sides have them."""
    old, new = {"health": {"card 0": {"pcie_max": "Gen5 x16"}}}, {"health": {"card 0": {"pcie_max": "Gen5 x8"}}}
    assert fingerprint_changes(old, new) == ["RM's card 0 pcie_max changed Gen5 x16 -> Gen5 x8"]
    assert fingerprint_changes(old, {}) == []


def test_valid_for_holds_up_to_366_days_and_no_longer():
    """README: --valid-for past 366 days is exit 2; 366 days itself is allowed."""
    assert parse_valid_for("366d").total_seconds() == 366 * 86400
    with pytest.raises(ConfigError, match="at most 366 days"):
        parse_valid_for("367d")


def test_a_value_a_recording_did_not_hold_matches_nothing_itself_included():
    """A replay's fingerprint says "not recorded" where the recording holds no value: like an
    unreadable one, it matches nothing, not even the same "not recorded" in the certificate."""
    assert fingerprint_changes({"kernel": "not recorded"}, {"kernel": "not recorded"}) == [
        "kernel could not be read on this host (not recorded): an unread value matches nothing"]
