"""The judged verdict in the words the outputs give it: the verdict line naming the bad cards
and pairs (from RunResult.by_card, rmpeer.judge.cards) and the checks that could not run
(RunResult.not_checked), and the per-card share of the JSON line and JUnit. A result that
carries no per-card verdict (never judged) blames no card: its host verdict stands alone."""

from __future__ import annotations

from rmpeer.model.result import CERTIFIED, CUT_SHORT, INCOMPLETE, INFO, WARNING_CHECKS, short
from rmpeer.render.text import escaped

SHOWN = 3
LINE_CHARS = 400         # the verdict text at most: a log line a person reads whole
CARD_REASON_CHARS = 120  # a blamed card's reason, at most, and at least (when 3 cards share the line)
CARD_REASON_MIN = 40
NO_CARDS = {"cards": [], "pairs": []}   # the per-card verdict of a result never judged


def _to_blame(row: dict) -> bool:
    """A card or pair with a fault of its own: not merely INCOMPLETE because the host's run was."""
    return row["verdict"] not in (CERTIFIED, INCOMPLETE) or (
        row["verdict"] == INCOMPLETE and row["reasons"] != [CUT_SHORT])


def verdict_text(result, limit: int = LINE_CHARS) -> str:
    """The host's verdict, naming its bad cards and pairs when it is not CERTIFIED:
    'NOT CERTIFIED: card 3 (GPU-...): <its first root cause>; pairs 0-3, 1-3', at most
    `limit` long (LINE_CHARS: certify gives it what its verdict line leaves), each reason cut
    between words. The verdict alone when no card or pair
    is to blame (the fault is the host's). A reason may quote what a recording or the kernel
    log holds (an Xid's text): escaped, as every line of certify's is."""
    if result.verdict == CERTIFIED:
        return result.verdict
    per = result.by_card or NO_CARDS
    bad_cards = [c for c in per["cards"] if _to_blame(c)]
    bad_pairs = [p for p in per["pairs"] if _to_blame(p)]
    tail = []
    if len(bad_cards) > SHOWN:
        tail.append(f"and {len(bad_cards) - SHOWN} more cards")
    if bad_pairs:
        names = ", ".join(p["pair"] for p in bad_pairs[:8]) + (", ..." if len(bad_pairs) > 8 else "")
        tail.append(f"pair{'s' if len(bad_pairs) > 1 else ''} {names}")
    heads = [f"card {c['card']} ({c['uuid'] or 'uuid unknown'})" for c in bad_cards[:SHOWN]]
    fixed = len(result.verdict) + 2 + sum(len(h) + 4 for h in heads) + sum(len(t) + 2 for t in tail)
    room = max(CARD_REASON_MIN, min(CARD_REASON_CHARS, (limit - fixed) // max(1, len(heads))))
    parts = [f"{h}: {short(c['reasons'][0], room) if c['reasons'] else c['verdict']}"
             for h, c in zip(heads, bad_cards)] + tail
    # within `limit` whatever the cards' and pairs' names take: the last words give way
    return escaped(short(f"{result.verdict}: {'; '.join(parts)}", limit)) if parts else result.verdict


def compact(result) -> dict:
    """The JSON line's share: the selection, each card's and pair's verdict, the reasons of
    those that are not CERTIFIED."""
    per = result.by_card or NO_CARDS
    keep = lambda row, *keys: {k: row[k] for k in keys} | (  # noqa: E731
        {"reasons": row["reasons"][:SHOWN]} if row["verdict"] != CERTIFIED else {})
    sel = result.host.get("selection") or {}
    return {"selection": {"cards": sel.get("cards"), "uuids": sel.get("uuids"), "how": sel.get("how")} if sel else None,
            "cards": [keep(c, "card", "uuid", "verdict") for c in per["cards"]],
            "pairs": [keep(p, "pair", "verdict") for p in per["pairs"]]}


def unchecked_phrase(items: list) -> str:
    """'xid (/dev/kmsg: Permission denied ...), gpu-processes (...)'."""
    return ", ".join(f"{i['check']} ({i['reason']})" for i in items)




def warning_lines(result) -> list:
    """The warnings under the verdict line: a figure fallen from this host's own history, an
    ECC or remapped-row count grown, a history that could not be used. Never a reason: they
    change no verdict (unless --drift-fails made them DEGRADE, when they are reasons too)."""
    out = []
    for f in result.findings:
        if f.check in WARNING_CHECKS and f.severity == INFO:
            out.append(f"{f.check}: {f.subject}: {f.found}" if f.check == "history" else
                       f"{f.check}: {f.subject}: {f.found} (expected {f.expected})")
    return out
