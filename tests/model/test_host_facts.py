"""rmpeer.model.host: a host note of every committed recording read into HostFacts and
written back holds the note as written (the replay's spec and every reader take it through them),
its P2P pairs keyed "a->b" and its copy-engine masks by LCE number as the recorder wrote them."""

import gzip
import json

import pytest

from rmpeer.model.host import Card, HostFacts
from rmpeer.run.targets import committed_transcripts


def host_note(path) -> dict:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return next(d["facts"] for d in map(json.loads, f) if d.get("note") == "host")


@pytest.mark.parametrize("path", committed_transcripts(), ids=lambda p: p.rsplit("/", 1)[-1])
def test_a_recorded_host_note_round_trips(path):
    note = host_note(path)
    facts = HostFacts.from_dict(note)
    assert all(isinstance(c, Card) for c in facts.cards) and len(facts.cards) == len(note["cards"])
    assert set(facts.p2p) == {tuple(int(x) for x in k.split("->")) for k in note["p2p"]}
    assert all(isinstance(lce, int) for c in facts.cards for lce in c.ce_caps)
    back = json.loads(json.dumps(facts.as_dict()))
    # every field the recorder wrote comes back as written (older notes lack the later fields:
    # health, selection; the types give their defaults)
    assert {k: back[k] for k in note if k != "cards"} == {k: v for k, v in note.items() if k != "cards"}
    assert [{k: b[k] for k in c} for b, c in zip(back["cards"], note["cards"])] == note["cards"]
