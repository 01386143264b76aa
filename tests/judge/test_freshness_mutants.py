"""Tests that kill mutmut's survivors in rmpeer/judge/freshness.py (docs/mutation.md). Every
expected duration, time and line is worked out by hand from the inputs and the module's
docstrings (--valid-for's units and bounds, valid_until as the start plus the validity in UTC,
one line per reason a certificate does not hold), never the function under test's answer."""

from datetime import datetime, timedelta, timezone

import pytest

from rmpeer.errors import ConfigError
from rmpeer.judge import freshness as fr
from rmpeer.model.result import RunResult

pytestmark = pytest.mark.offline
SHA = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize("text, seconds", [
    (None, 86400), ("24h", 86400), (" 1H30M ", 5400), ("1.5h", 5400), ("90m", 5400), ("60s", 60), ("1m", 60),
    ("2d", 172800), ("1w", 604800), ("52w", 364 * 86400), ("366d", 366 * 86400), ("1d1h1m1s", 90061),
    (5400, None)])
def test_a_validity_in_its_units(text, seconds):
    if seconds is None:         # a number without a unit
        with pytest.raises(ConfigError, match="give a duration"):
            fr.parse_valid_for(text)
        return
    assert fr.parse_valid_for(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text, line", [
    ("", "--valid-for '': give a duration such as 24h, 90m, 2d or 1h30m (a number with a unit: s, m, h, d, w)"),
    ("   ", "--valid-for '': give a duration such as 24h, 90m, 2d or 1h30m (a number with a unit: s, m, h, d, w)"),
    ("90", "--valid-for '90': give a duration such as 24h, 90m, 2d or 1h30m (a number with a unit: s, m, h, d, w)"),
    ("1h x", "--valid-for '1h x': give a duration such as 24h, 90m, 2d or 1h30m (a number with a unit: s, m, h, d, "
             "w)"),
    ("h", "--valid-for 'h': give a duration such as 24h, 90m, 2d or 1h30m (a number with a unit: s, m, h, d, w)"),
    ("366D1S", "--valid-for '366d1s': at most 366 days (a certificate of a host holds until its platform changes, "
               "and never for longer than a year)"),
    ("59s", "--valid-for '59s': a certificate must be valid for at least 1 minute (1m)"),
    ("0.5m", "--valid-for '0.5m': a certificate must be valid for at least 1 minute (1m)"),
])
def test_a_validity_refused_in_one_line(text, line):
    with pytest.raises(ConfigError) as err:
        fr.parse_valid_for(text)
    assert str(err.value) == line


def test_the_bounds_are_a_minute_and_366_days():
    assert (fr.MIN_VALID_FOR_S, fr.MAX_VALID_FOR_S, fr.DEFAULT_VALID_FOR) == (60, 31622400, "24h")


@pytest.mark.parametrize("started, valid_for, until", [
    ("2026-12-05T01:02:03Z", timedelta(hours=1), "2026-12-05T02:02:03Z"),
    ("2026-12-05T03:02:03+02:00", timedelta(hours=1), "2026-12-05T02:02:03Z"),
    ("2026-12-05T01:02:03.900000+00:00", timedelta(minutes=1), "2026-12-05T01:03:03Z"),
    (0, timedelta(days=1), "1970-01-02T00:00:00Z"),
    (86400.5, timedelta(seconds=60), "1970-01-02T00:01:00Z"),
    (datetime(2026, 1, 31, 23, 30), timedelta(hours=1), "2026-02-01T00:30:00Z"),
    (datetime(2026, 1, 1, 9, tzinfo=timezone(timedelta(hours=9))), timedelta(hours=1), "2026-01-01T10:00:00Z"),
])
def test_valid_until_is_the_start_plus_the_validity(started, valid_for, until):
    assert fr.valid_until(started, valid_for) == until


def test_an_aware_start_keeps_its_zone_and_a_naive_one_is_utc():
    tokyo = datetime(2026, 1, 1, 9, tzinfo=timezone(timedelta(hours=9)))
    assert fr._when(tokyo) is tokyo
    assert fr._when(datetime(2026, 1, 1)) == datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert fr._when(datetime(2026, 1, 1)).tzinfo is timezone.utc
    assert fr._when("2026-01-01T09:00:00+09:00").tzinfo == timezone.utc
    assert fr._when(60) == datetime(1970, 1, 1, 0, 1, tzinfo=timezone.utc)


CERT_FP = {"driver": "580.159.04", "kernel": "6.8.0"}


def good(**changes) -> RunResult:
    fields = dict(node="gpu01", tier="full", target={"kind": "live"}, verdict="CERTIFIED",
                  valid_until="2026-12-05T12:00:00Z", fingerprint=dict(CERT_FP))
    fields.update(changes)
    return RunResult(**fields)


def stale(cert, *, now="2026-12-05T11:00:00Z", tier="quick", fp=CERT_FP, node="gpu01"):
    return fr.why_stale(cert, dict(fp), tier, now, node=node)


def test_a_certificate_that_holds_has_no_reason():
    assert stale(good()) == []
    assert stale(good(tier="quick"), tier="quick") == []
    assert stale(good(tier="passive"), tier="passive") == []


@pytest.mark.parametrize("after, ago", [
    (0, "0 s"), (30, "30 s"), (59.4, "59 s"), (60, "1 min"), (90, "1.5 min"), (600, "10 min"), (659, "11 min"),
    (3600, "1 h"), (5400, "1.5 h"), (37440, "10 h"), (86400, "1 d"), (129600, "1.5 d"), (12.4 * 86400, "12 d"),
])
def test_an_expired_certificate_says_how_long_ago(after, ago):
    now = datetime(2026, 12, 5, 12, tzinfo=timezone.utc) + timedelta(seconds=after)
    assert stale(good(), now=now) == [f"expired {ago} ago (valid until 2026-12-05T12:00:00Z)"]


def test_every_reason_a_certificate_does_not_hold_in_order():
    cert = good(node="", tier="quick", target={}, verdict="DEGRADED", valid_until=None, fingerprint={})
    assert stale(cert, tier="full", node="gpu02") == [
        "the certificate is of a unknown kind of run, not of this host",
        "the certificate is of host (unnamed), this is gpu02",
        "verdict was DEGRADED",
        "tier full asked, the certificate is quick",
        "the certificate has no valid_until",
        "the certificate holds no platform fingerprint"]
    assert stale(good(node="gpu03", target={"kind": "replay"}, tier="partial", valid_until="soon")) == [
        "the certificate is of a replay run, not of this host",
        "the certificate is of host gpu03, this is gpu01",
        "the certificate is of chosen layouts (--layout) that stand for no tier",
        "the certificate's valid_until 'soon' is not a time"]
    assert stale(good(tier="deep", valid_until="2026-13-01T00:00:00Z")) == [
        "the certificate's tier 'deep' is not one of passive, quick, full",
        "the certificate's valid_until '2026-13-01T00:00:00Z' is not a time"]
    assert stale(good(valid_until=1e300)) == ["the certificate's valid_until 1e+300 is not a time"]


def test_a_tier_asked_that_is_none_is_refused():
    with pytest.raises(ConfigError) as err:
        fr.why_stale(good(), CERT_FP, "deep", "2026-12-05T11:00:00Z", node="gpu01")
    assert str(err.value) == "--tier 'deep': one of passive, quick, full"


def test_the_node_defaults_to_this_hosts_name(monkeypatch):
    monkeypatch.setenv("RMPEER_NODE_NAME", "gpu09")
    assert fr.why_stale(good(node="gpu09"), CERT_FP, "full", "2026-12-05T11:00:00Z") == []
    assert fr.why_stale(good(), CERT_FP, "full", "2026-12-05T11:00:00Z") == [
        "the certificate is of host gpu01, this is gpu09"]


def test_now_defaults_to_the_clock():
    past = good(valid_until="2000-01-01T00:00:00Z")
    assert fr.why_stale(good(valid_until="2999-01-01T00:00:00Z"), CERT_FP, "full", node="gpu01") == []
    (line,) = fr.why_stale(past, CERT_FP, "full", node="gpu01")
    assert line.startswith("expired ") and line.endswith(" d ago (valid until 2000-01-01T00:00:00Z)")


# -- the fingerprint -------------------------------------------------------------------------

def test_each_key_by_its_name_and_a_key_the_certificate_lacks():
    new = {k: "x" for k in ("driver", "driver_flavour", "kernel", "kernel_module", "iommu", "acs", "matrices",
                            "rmpeer", "format", "boot", "driver_load", "other", "nvlinks", "health")}
    assert fr.fingerprint_changes({}, new) == [
        "the certificate records no driver", "the certificate records no driver flavour",
        "the certificate records no kernel", "the certificate records no kernel module",
        "the certificate records no IOMMU", "the certificate records no PCIe ACS",
        "the certificate records no rmpeer's matrices", "the certificate records no rmpeer",
        "the certificate records no fingerprint format", "the certificate records no boot id",
        "the certificate records no nvidia module load", "the certificate records no other"]


def test_a_changed_value_top_level_nested_and_in_a_list():
    old = {"driver": "575.57.08", "iommu": {"mode": "lazy", "groups": 8}, "acs": ["on", "on"],
           "kernel_module": ["a"], "matrices": SHA, "rmpeer": "1.0"}
    new = {"driver": "580.159.04", "iommu": {"mode": "strict", "groups": 8, "extra": 1}, "acs": ["on", "off"],
           "kernel_module": ["a", "b"], "matrices": "sha256:" + "f" * 64, "rmpeer": "1.0"}
    assert fr.fingerprint_changes(old, new) == [
        "driver changed 575.57.08 -> 580.159.04",
        "IOMMU changed (extra): (none) -> 1",
        "IOMMU changed (mode): lazy -> strict",
        "PCIe ACS changed (1): on -> off",
        "kernel module changed ['a'] -> ['a', 'b']",
        "rmpeer's matrices changed sha256:0123456789ab... -> sha256:ffffffffffff..."]


def test_a_value_either_side_could_not_read_matches_nothing():
    old = {"kernel": "not recorded", "driver": "580", "iommu": {"mode": "unreadable: EACCES"},
           "acs": "unreadable: x", "boot": "unreadable: EPERM", "driver_load": "12"}
    new = {"kernel": "not recorded", "driver": "unreadable: " + SHA, "iommu": {"mode": "lazy"},
           "acs": "unreadable: x", "boot": "b1", "driver_load": "unreadable: ENOENT"}
    assert fr.fingerprint_changes(old, new) == [
        "kernel could not be read on this host (not recorded): an unread value matches nothing",
        f"driver could not be read on this host (unreadable: {SHA}): an unread value matches nothing",
        "IOMMU (mode) could not be read in the certificate (unreadable: EACCES): an unread value matches nothing",
        "PCIe ACS could not be read on this host (unreadable: x): an unread value matches nothing",
        "boot id could not be read in the certificate (unreadable: EPERM): an unread value matches nothing",
        "nvidia module load could not be read on this host (unreadable: ENOENT): an unread value matches nothing"]


def test_a_reboot_and_a_reload_are_said_plainly():
    old = {"boot": "b1", "driver_load": "100", "format": 1}
    assert fr.fingerprint_changes(old, {"boot": "b2", "driver_load": "100", "format": 1}) == [
        "the host was rebooted since the certificate (boot id b1 -> b2)"]
    assert fr.fingerprint_changes(old, {"boot": "b1", "driver_load": SHA, "format": 2}) == [
        "the nvidia kernel module was reloaded since the certificate (nvidia module load 100 -> "
        "sha256:0123456789ab...)",
        "fingerprint format changed 1 -> 2"]


def test_cards_by_pci_replaced_gone_new_vbios_and_model():
    card = lambda pci, uuid, vbios="96.00.1", model="H200": {"pci": pci, "uuid": uuid, "vbios": vbios, "model": model}
    old = [card("0000:0a", "GPU-a"), card("0000:0b", "GPU-b"), card("0000:0c", "GPU-c"), card("0000:0d", "GPU-d"),
           card("0000:0e", "GPU-e")]
    new = [card("0000:0a", "GPU-a"), card("0000:0c", "GPU-c", vbios="96.00.2"), card("0000:0b", "GPU-x"),
           card("0000:0d", "GPU-d", model="H100"), card("0000:0f", "GPU-f")]
    assert fr.fingerprint_changes({"cards": old}, {"cards": new}) == [
        "card 1 replaced (UUID GPU-b -> GPU-x, at 0000:0b)",
        "card 2 VBIOS changed 96.00.1 -> 96.00.2",
        "card 3 model changed H200 -> H100",
        "card 4 (0000:0e, GPU-e) is gone",
        "a card the certificate does not have: card 4 (0000:0f, GPU-f)"]
    assert fr.fingerprint_changes({"cards": [card("0000:01", "GPU-z"), old[1]]}, {"cards": [new[2]]}) == [
        "card 0 (0000:01, GPU-z) is gone", "card 1 replaced (UUID GPU-b -> GPU-x, at 0000:0b)"]
    assert fr.fingerprint_changes({"cards": old[:1]}, {"cards": []}) == [
        "this host lists no GPU in /proc/driver/nvidia/gpus", "card 0 (0000:0a, GPU-a) is gone"]
    assert fr.fingerprint_changes({"cards": None}, {"cards": new[:1]}) == [
        "a card the certificate does not have: card 0 (0000:0a, GPU-a)"]


def test_nvlinks_and_rms_health_only_when_both_have_them():
    old = {"nvlinks": {"0": 18, "1": 18}, "health": {"fabric": {"state": "COMPLETED"}, "cc": "off"}}
    new = {"nvlinks": {"0": 18, "1": 17}, "health": {"fabric": {"state": "IN_PROGRESS"}, "cc": "off"}}
    assert fr.fingerprint_changes(old, new) == ["active NVLinks of 1 changed 18 -> 17",
                                                "RM's fabric state changed COMPLETED -> IN_PROGRESS"]
    assert fr.fingerprint_changes({}, new) == []
    assert fr.fingerprint_changes(old, {}) == []


def test_leaves_sort_keys_as_text_and_compare_lists_item_by_item():
    assert fr._leaves({2: "a", 10: "b"}, {2: "x", 10: "y"}) == [(("10",), "b", "y"), (("2",), "a", "x")]
    assert fr._leaves([1, {"k": 2}], [1, {"k": 3}]) == [(("1", "k"), 2, 3)]
    assert fr._leaves([1], [1, 2]) == [((), [1], [1, 2])]
    assert fr._leaves("unreadable: a", "unreadable: a") == [((), "unreadable: a", "unreadable: a")]
    assert fr._leaves({"a": 1}, [1]) == [((), {"a": 1}, [1])]


def test_unread_values_and_short_digests():
    assert [fr.unread_value(v) for v in ("unreadable", "unreadable: x", "not recorded", "not recordedx", "Unreadable",
                                         "x unreadable", None, 0, ["unreadable"])] == [
        True, True, True, True, False, False, False, False, False]
    assert fr._short("sha256:" + "a" * 15) == "sha256:" + "a" * 15
    assert fr._short("sha256:" + "a" * 16) == "sha256:" + "a" * 12 + "..."
    assert fr._short("md5:" + "a" * 40) == "md5:" + "a" * 40
    assert fr._short(12) == "12"


def test_keys_after_the_links_and_lines_before_them_are_kept():
    assert fr.fingerprint_changes({}, {"nvlinks": {"0": 18}, "health": {}, "driver": "580"}) == [
        "the certificate records no driver"]
    old = {"driver": "575", "nvlinks": {"0": 18}}
    assert fr.fingerprint_changes(old, {"driver": "580", "nvlinks": {"0": 17}}) == [
        "driver changed 575 -> 580", "active NVLinks of 0 changed 18 -> 17"]


def test_valid_until_is_utc_whatever_the_local_zone(monkeypatch):
    import time
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert fr.valid_until("2026-12-05T01:02:03Z", timedelta(hours=1)) == "2026-12-05T02:02:03Z"
        assert fr.valid_until(0, timedelta(days=1)) == "1970-01-02T00:00:00Z"
        assert fr.valid_until("2026-12-05T10:02:03+09:00", timedelta(minutes=1)) == "2026-12-05T01:03:03Z"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_nested_path_is_said_with_spaces():
    assert fr.fingerprint_changes({"nvlinks": {"0": {"up": 18}}, "iommu": {"a": {"b": "unreadable: x"}}},
                                  {"nvlinks": {"0": {"up": 17}}, "iommu": {"a": {"b": "on"}}}) == [
        "IOMMU (a b) could not be read in the certificate (unreadable: x): an unread value matches nothing",
        "active NVLinks of 0 up changed 18 -> 17"]
