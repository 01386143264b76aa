"""Whether a certificate is fresh (rmpeer certify --if-stale): rmpeer.run.freshness.check_fresh
reads it and a fake host tree, rmpeer.judge.freshness's rules weigh them (broken below on
purpose, through `rules`)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from fake_host_tree import CARDS, KERNEL, MODULE_BYTES, make_host, write
from rmpeer.judge import freshness as rules
from rmpeer.errors import ConfigError
from rmpeer.run.fingerprint import platform_fingerprint
from rmpeer.model.result import CERTIFIED, DEGRADED, RunResult
from rmpeer.machine.signing import KEY_ENV, signed_text
from rmpeer.judge.freshness import parse_valid_for, valid_until, why_stale
from rmpeer.run.freshness import check_fresh

pytestmark = pytest.mark.offline
NODE = "gpu-node-7"
STARTED = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)
NOW = STARTED + timedelta(hours=1)


@pytest.fixture
def host(tmp_path):
    return make_host(tmp_path / "root")


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    """This test's host key (rmpeer.machine.signing), made by the first certificate signed."""
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "keys" / "host.key"))


def certificate(tmp_path, host, *, tier="quick", verdict=CERTIFIED, valid_for="24h", kind="live", **changes) -> str:
    """A certificate as certify writes one, of the fake host as it is now."""
    fp = platform_fingerprint(root=str(host), cache=tmp_path / "cache.json")
    result = RunResult(node=NODE, tier=tier, target={"kind": kind}, started=STARTED.strftime(rules.ISO),
                       valid_until=valid_until(STARTED, parse_valid_for(valid_for)), fingerprint=fp,
                       verdict=verdict, **changes)
    path = tmp_path / "certificate.json"
    path.write_text(signed_text(result.to_dict()))     # signed as certify signs it
    return str(path)


def fresh(path, host, tier="quick", now=NOW, tmp_path=None):
    return check_fresh(path, tier, root=str(host), now=now, node=NODE,
                       state_path=(tmp_path / "state.json") if tmp_path else None)


def test_a_fresh_certificate_holds_for_its_tier_and_shallower_ones(tmp_path, host):
    path = certificate(tmp_path, host, tier="quick")
    assert fresh(path, host, "quick", tmp_path=tmp_path) == (True, [])
    assert fresh(path, host, "passive", tmp_path=tmp_path) == (True, [])


def test_an_expired_certificate_says_since_when(tmp_path, host):
    path = certificate(tmp_path, host, valid_for="24h")
    ok, reasons = fresh(path, host, now=STARTED + timedelta(hours=26))
    assert not ok and reasons == ["expired 2 h ago (valid until 2026-12-01T12:00:00Z)"]
    assert not fresh(path, host, now=STARTED + timedelta(hours=24))[0]     # valid_until itself is past


def test_a_changed_driver_is_named(tmp_path, host):
    path = certificate(tmp_path, host)
    write(host, "/proc/driver/nvidia/version",
          (host / "proc/driver/nvidia/version").read_text().replace("580.159.04", "580.160.01"))
    ok, reasons = fresh(path, host)
    assert not ok and reasons == ["driver changed 580.159.04 -> 580.160.01"]


def test_a_replaced_card_is_named(tmp_path, host):
    path = certificate(tmp_path, host)
    info = host / f"proc/driver/nvidia/gpus/{CARDS[1][0]}/information"
    new_uuid = "GPU-00000000-1111-2222-3333-444444444444"
    info.write_text(info.read_text().replace(CARDS[1][1], new_uuid))
    ok, reasons = fresh(path, host)
    assert not ok and reasons == [f"card 1 replaced (UUID {CARDS[1][1]} -> {new_uuid}, at {CARDS[1][0]})"]


def test_a_forged_fingerprint_in_the_certificate_is_caught(tmp_path, host):
    path = certificate(tmp_path, host)
    data = json.loads(open(path).read())
    data["fingerprint"]["kernel"] = "6.1.0-old"
    data["fingerprint"]["cards"][0]["vbios"] = "96.00.00.00.00"
    open(path, "w").write(json.dumps(data))
    ok, reasons = fresh(path, host)
    assert not ok
    assert reasons[0].startswith("not trusted: the signature does not verify with this host's key ")   # edited
    assert reasons[1:] == [f"kernel changed 6.1.0-old -> {KERNEL}",
                           f"card 0 VBIOS changed 96.00.00.00.00 -> {CARDS[0][2]}"]


def test_a_replaced_kernel_module_file_is_named(tmp_path, host):
    path = certificate(tmp_path, host)
    write(host, f"/lib/modules/{KERNEL}/updates/dkms/nvidia.ko.zst", MODULE_BYTES + b"rebuilt")
    ok, reasons = fresh(path, host, tmp_path=tmp_path)
    assert not ok and len(reasons) == 1 and reasons[0].startswith("kernel module changed (sha256): sha256:")


def test_iommu_and_acs_changes_are_named(tmp_path, host):
    path = certificate(tmp_path, host)
    write(host, "/proc/cmdline", "root=/dev/vda1 intel_iommu=off\n")
    ok, reasons = fresh(path, host)
    assert not ok and reasons == ["IOMMU changed (cmdline intel_iommu): on -> off",
                                  "IOMMU changed (cmdline iommu): pt -> (none)"]


@pytest.mark.parametrize("cert_tier, asked", [("passive", "quick"), ("passive", "full"), ("quick", "full")])
def test_a_shallower_tier_never_satisfies_a_deeper_one(tmp_path, host, cert_tier, asked):
    path = certificate(tmp_path, host, tier=cert_tier)
    assert fresh(path, host, asked) == (False, [f"tier {asked} asked, the certificate is {cert_tier}"])


def test_a_degraded_verdict_does_not_hold(tmp_path, host):
    path = certificate(tmp_path, host, verdict=DEGRADED)
    assert fresh(path, host) == (False, ["verdict was DEGRADED"])


def test_a_replay_certificate_or_another_hosts_does_not_hold(tmp_path, host):
    path = certificate(tmp_path, host, kind="replay")
    assert fresh(path, host) == (False, ["the certificate is of a replay run, not of this host"])
    path = certificate(tmp_path, host)
    assert check_fresh(path, "quick", root=str(host), now=NOW, node="other-node") == (
        False, [f"the certificate is of host {NODE}, this is other-node"])


@pytest.mark.parametrize("content", ["", "{", "[]", '{"format": "rmpeer-result/1", "layouts": [1]}',
                                     '{"format": "something-else"}', "\x00\xff garbage"])
def test_an_unreadable_certificate_never_holds(tmp_path, host, content):
    path = tmp_path / "certificate.json"
    path.write_text(content)
    ok, reasons = fresh(str(path), host)
    assert not ok and len(reasons) == 1 and reasons[0].startswith(f"the certificate cannot be read: {path}")


def test_a_missing_certificate_never_holds(tmp_path, host):
    ok, reasons = fresh(str(tmp_path / "nope.json"), host)
    assert (ok, reasons) == (False, [f"the certificate cannot be read: {tmp_path / 'nope.json'}: "
                                     "No such file or directory"])


def test_a_certificate_without_fingerprint_or_valid_until_does_not_hold(tmp_path, host):
    result = RunResult(node=NODE, tier="full", target={"kind": "live"}, verdict=CERTIFIED)
    path = tmp_path / "certificate.json"
    path.write_text(json.dumps(result.to_dict()))           # unsigned, as every certificate before signing
    assert fresh(str(path), host) == (False, ["not trusted: unsigned (it carries no signature): nothing vouches "
                                              "for its content", "the certificate has no valid_until",
                                              "the certificate holds no platform fingerprint"])


def test_nvlinks_are_compared_when_both_sides_have_them(tmp_path, host):
    fp = platform_fingerprint(root=str(host))
    old = dict(fp, nvlinks={CARDS[0][1]: 18, CARDS[1][1]: 18})
    cert = RunResult(node=NODE, tier="full", target={"kind": "live"}, verdict=CERTIFIED,
                     valid_until="2030-01-01T00:00:00Z", fingerprint=old)
    assert why_stale(cert, fp, "full", NOW, node=NODE) == []      # the fast path reads none
    now = dict(fp, nvlinks={CARDS[0][1]: 18, CARDS[1][1]: 16})
    assert why_stale(cert, now, "full", NOW, node=NODE) == [f"active NVLinks of {CARDS[1][1]} changed 18 -> 16"]


def test_an_unknown_tier_is_a_usage_error(tmp_path, host):
    with pytest.raises(ConfigError, match="--tier"):
        check_fresh(certificate(tmp_path, host), "deep", root=str(host))


# Mutation tests: each check's guard broken on purpose makes a stale certificate hold.
@pytest.mark.parametrize("name, broken", [
    ("fingerprint_changes", lambda old, new: []),
    ("_cards", lambda old, new: []),
])
def test_mutation_a_broken_comparison_lets_a_changed_platform_through(tmp_path, host, monkeypatch, name, broken):
    path = certificate(tmp_path, host)
    info = host / f"proc/driver/nvidia/gpus/{CARDS[1][0]}/information"
    info.write_text(info.read_text().replace(CARDS[1][1], "GPU-00000000-1111-2222-3333-444444444444"))
    assert not fresh(path, host)[0]
    monkeypatch.setattr(rules, name, broken)
    assert fresh(path, host) == (True, [])


def test_mutation_tier_order_reversed_lets_a_shallow_certificate_through(tmp_path, host, monkeypatch):
    path = certificate(tmp_path, host, tier="passive")
    assert not fresh(path, host, "full")[0]
    monkeypatch.setattr(rules, "TIERS", ("full", "quick", "passive"))
    assert fresh(path, host, "full") == (True, [])


@pytest.mark.parametrize("asked", ["passive", "quick", "full"])
def test_a_certificate_of_chosen_layouts_holds_for_no_tier(tmp_path, host, asked):
    """certify --layout one-per-card claims tier "partial" (rmpeer.tables.layouts.LayoutMatrix.covered_tier): it
    checked less than quick, so it must not let a prolog skip even a passive run."""
    path = certificate(tmp_path, host, tier="partial")
    assert fresh(path, host, asked) == (False, ["the certificate is of chosen layouts (--layout) that stand for no tier"])


def test_a_fingerprint_key_the_certificate_lacks_is_a_change(tmp_path, host):
    """Issue 27 row 5: the certificate's fingerprint with `acs` deleted by hand, against the
    same host's: the certificate did not record the host's PCIe ACS, so it cannot vouch for it."""
    now = platform_fingerprint(root=str(host), cache=tmp_path / "cache.json")
    assert "acs" in now
    recorded = {k: v for k, v in now.items() if k != "acs"}
    assert rules.fingerprint_changes(recorded, now) == ["the certificate records no PCIe ACS"]
    assert rules.fingerprint_changes(now, now) == []


@pytest.mark.parametrize("damage", [
    lambda d: d["fingerprint"].update(cards="x"),
    lambda d: d["fingerprint"].update(cards=[1, 2]),
    lambda d: d["fingerprint"].update(cards=[{"pci": ["0000:18:00.0"], "uuid": "GPU-a"}]),
    lambda d: d.update(target="live"),
    lambda d: d["host"].update(selection="0,1"),
], ids=["cards-text", "cards-numbers", "pci-list", "target-text", "selection-text"])
def test_a_certificate_whose_fields_have_the_wrong_shape_never_holds_and_never_crashes(tmp_path, host, damage):
    """A file at the --if-stale path that another user or a cut write left with JSON of another
    shape is a certificate that cannot be read (one line; certify then runs), never an
    internal error (exit 5, no run): seen as AttributeError on `certify --if-stale`."""
    from rmpeer.machine.selection import request_from

    path = certificate(tmp_path, host)
    doc = json.loads(open(path).read())
    doc["host"] = {}
    damage(doc)
    open(path, "w").write(json.dumps(doc))
    ok, reasons = check_fresh(path, "quick", root=str(host), now=NOW, node=NODE, cards=request_from("0"))
    assert not ok and len(reasons) == 1 and reasons[0].startswith(f"the certificate cannot be read: {path}: ")


def test_a_signature_of_another_kind_is_not_trusted_even_with_a_valid_mac(tmp_path, host):
    """Only HMAC-SHA256 signatures are checked (rmpeer.machine.signing.ALG): one that names
    another algorithm is not trusted, though its mac is this key's HMAC-SHA256 of the content."""
    path = certificate(tmp_path, host)
    doc = json.loads(open(path).read())
    doc["signature"]["alg"] = "HMAC-SHA1"
    open(path, "w").write(json.dumps(doc))
    assert fresh(path, host) == (False, ["not trusted: signature of an unknown kind ('HMAC-SHA1'): not checked, "
                                         "not trusted"])


def test_a_key_another_run_made_a_moment_ago_is_read_never_replaced(tmp_path, monkeypatch):
    """Two first runs at once: the one that finds no key, then finds that the other made it
    while it looked, signs with that key; certificates the other signed still verify."""
    from rmpeer.machine import signing

    theirs = signing.load_key(create=True)
    real, calls = signing.read_own, []

    def not_yet(path, **kw):          # the first look comes before the other run's key
        calls.append(path)
        if len(calls) == 1:
            raise FileNotFoundError(path)
        return real(path, **kw)

    monkeypatch.setattr(signing, "read_own", not_yet)     # signing's reader (rmpeer.safewrite's)
    assert signing.load_key(create=True) == theirs and len(calls) == 2


def test_a_certificate_of_a_tier_rmpeer_does_not_know_never_holds(tmp_path, host):
    path = certificate(tmp_path, host, tier="exhaustive")
    assert fresh(path, host) == (False, ["the certificate's tier 'exhaustive' is not one of passive, quick, full"])


def test_a_card_gone_a_card_added_and_a_card_of_another_model_are_named(tmp_path, host):
    """By PCI address, as /proc/driver/nvidia/gpus lists the cards (the fake host's two H200s):
    card 1 taken out, a third put in at 0000:00:08.0; then card 1 back as another model."""
    import shutil

    path = certificate(tmp_path, host)
    gpus = host / "proc/driver/nvidia/gpus"
    moved = gpus / "0000:00:08.0"
    shutil.move(gpus / CARDS[1][0], moved)
    new_uuid = "GPU-00000000-1111-2222-3333-444444444444"
    (moved / "information").write_text((moved / "information").read_text().replace(CARDS[1][1], new_uuid)
                                       .replace(CARDS[1][0], "0000:00:08.0"))
    _, reasons = fresh(path, host)
    assert f"card 1 ({CARDS[1][0]}, {CARDS[1][1]}) is gone" in reasons
    assert f"a card the certificate does not have: card 1 (0000:00:08.0, {new_uuid})" in reasons
    shutil.rmtree(moved)
    write(host, f"/proc/driver/nvidia/gpus/{CARDS[1][0]}/information", (gpus / CARDS[0][0] / "information").read_text()
          .replace(CARDS[0][1], CARDS[1][1]).replace(CARDS[0][0], CARDS[1][0]).replace("NVIDIA H200", "NVIDIA H100"))
    assert fresh(path, host) == (False, ["card 1 model changed NVIDIA H200 -> NVIDIA H100"])


def test_a_host_whose_proc_lists_no_gpu_says_so(tmp_path, host):
    import shutil

    path = certificate(tmp_path, host)
    shutil.rmtree(host / "proc/driver/nvidia/gpus")
    host.joinpath("proc/driver/nvidia/gpus").mkdir()
    _, reasons = fresh(path, host)
    assert reasons[0] == "this host lists no GPU in /proc/driver/nvidia/gpus"


def test_an_iommu_unit_added_is_a_change(tmp_path, host):
    """A list that grew (the units in /sys/class/iommu: dmar0, then dmar0 and dmar1) differs."""
    path = certificate(tmp_path, host)
    (host / "sys/class/iommu/dmar1").mkdir()
    assert fresh(path, host) == (False, ["IOMMU changed (units): ['dmar0'] -> ['dmar0', 'dmar1']"])


def test_a_certificate_of_some_cards_holds_only_for_those(tmp_path, host):
    """certify --if-stale --cards 1 with the certificate of a run of card 0 alone (of the fake
    host's two): it does not cover card 1; asked for card 0 it holds."""
    from rmpeer.machine.selection import HostCard, Selection, request_from

    of = tuple(HostCard(i, i, pci, uuid) for i, (pci, uuid, _) in enumerate(CARDS))
    fp = platform_fingerprint(root=str(host), cache=tmp_path / "cache.json")
    result = RunResult(node=NODE, tier="quick", target={"kind": "live"}, started=STARTED.strftime(rules.ISO),
                       valid_until=valid_until(STARTED, parse_valid_for("24h")), fingerprint=fp, verdict=CERTIFIED,
                       host={"selection": Selection((0,), of, "--cards", "--cards 0").as_dict()})
    path = tmp_path / "certificate.json"
    path.write_text(signed_text(result.to_dict()))     # as certificate() above, with the run's selection
    check = lambda asked: check_fresh(path, "quick", root=str(host), now=NOW, node=NODE,  # noqa: E731
                                      cards=request_from(asked, environ={}))
    assert check("1") == (False, [f"the certificate covers cards 0 (--cards 0), not card 1 ({CARDS[1][1]})"])
    assert check("0") == (True, [])
