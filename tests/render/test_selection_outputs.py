"""JUnit and Allure name the cards a verdict covers: a run that took some of the host's cards
says which (and from what), and JUnit lists each card's and pair's verdict by UUID. Expected
values are the recordings' own: the `--cards 0` recording of docs/evidence (its card's UUID
is the one `cards-refused.log` there names) and a whole 2 x H200 recording."""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
EVIDENCE = (Path(__file__).resolve().parents[2] / "docs" / "evidence" / "h200x1-20261201T1050Z-cards-failclosed-tiers"
            / "cards" / "h200x1-20261201T105035Z.jsonl.gz")
WHOLE = transcripts_dir() / "h200x2-20261130T162924Z.jsonl.gz"
CARD0 = "GPU-bde19341-7b86-8419-3409-ea726090eb0e"
H200X2 = ("GPU-cce536fc-5671-8c56-30c3-5f6fa3d29c2e", "GPU-4821d93e-f1d3-9cac-e8ee-6c12458d2645")
needs_evidence = pytest.mark.skipif(not EVIDENCE.is_file(), reason="docs/evidence/ is in the checkout, not the wheel")


def certify(tmp_path, recording, *extra):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(recording),
                           "--output", str(tmp_path / "out"), *extra], capture_output=True, text=True,
                          env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp_path / "out"


def properties(path: Path) -> list:
    return [(p.get("name"), p.get("value")) for p in ET.parse(path).getroot().iter("property")
            if p.get("name") in ("selection", "card", "pair")]


@needs_evidence
def test_junit_names_the_selection_and_each_cards_verdict(tmp_path):
    certify(tmp_path, EVIDENCE, "--tier", "passive", "--junit", str(tmp_path / "j.xml"))
    assert properties(tmp_path / "j.xml") == [
        ("selection", f"cards: 0, the host's only card (from --cards): 0 = {CARD0}"), ("card", f"0 ({CARD0}): CERTIFIED")]


def test_a_whole_host_has_no_selection_and_every_card_and_pair(tmp_path):
    certify(tmp_path, WHOLE, "--junit", str(tmp_path / "j.xml"))
    assert properties(tmp_path / "j.xml") == [
        ("card", f"0 ({H200X2[0]}): CERTIFIED"), ("card", f"1 ({H200X2[1]}): CERTIFIED"), ("pair", "0-1: CERTIFIED")]


@needs_evidence
def test_allures_environment_names_the_selection(tmp_path):
    out = certify(tmp_path, EVIDENCE, "--tier", "quick")
    env = next(out.rglob("environment.properties")).read_text()
    assert f"replay\\:h200x1.selection=cards: 0, the host's only card (from --cards): 0 = {CARD0}\n" in env
