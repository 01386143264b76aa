"""The Allure results of a run, drawn from its RunResult alone: one per check, titled in the
reader's words, and the verdict's and the findings' (rmpeer.render.entries). Pure: each is a
dict of Allure's result format, and its attachments (name, file name, MIME type, text);
rmpeer.pytest_plugin.reporting writes them.

A check is a result of its own whatever ran it (docs/architecture.md, "Checks, pytest items
and the results people read"): the report counts what the certificate counts. The uuids are
derived from the certificate's id and the check's, so the same RunResult renders the same
files, and Allure's history id names the host and the check, so that two hosts' results in
one report are two results, never a retry, and a host's runs form its history."""

from __future__ import annotations

import json
import uuid

from rmpeer.model.host import HostFacts
from rmpeer.render.entries import BROKEN, FAILED, PASSED, SKIPPED, UNKNOWN

HOST_LABEL = "rmpeer_host"       # every result's host: the report's host table groups by it
CHECK_STATUS = {"passed": PASSED, "failed": FAILED, "skipped": SKIPPED, "error": BROKEN}
REPLAY_KIND, LIVE_KIND = "request regression (replay)", "hardware conformance"


def result_uuid(result, key: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"rmpeer:{result.certificate_id}:{key}"))


def entry(result, host: str, *, key: str, name: str, status: str, labels: list, span: tuple,
          parameters: list = (), message: str = "", text: str = "", attachments: list = ()) -> dict:
    """One Allure result of the run, filed under its host; `span` (start, stop) in ms."""
    out = {"uuid": result_uuid(result, key), "historyId": f"{key}:{host}", "testCaseId": key, "name": name,
           "fullName": key, "status": status, "stage": "finished", "start": span[0], "stop": span[1],
           "parameters": [{"name": "host", "value": host}, *parameters],
           "labels": [*labels, {"name": "parentSuite", "value": host}, {"name": HOST_LABEL, "value": host}],
           "attachments": [{"name": a[0], "source": a[1], "type": a[2]} for a in attachments]}
    if message or text:
        out["statusDetails"] = {"message": message, "trace": text}
        # Allure shows the error block for failed and broken results alone: an INCOMPLETE
        # verdict (unknown) says its reasons in its description
        out["description"] = text
    return out


def attachment(result, key: str, name: str, mime: str, text: str) -> tuple:
    """(name, file name, MIME type, text) of one attachment of the result `key`."""
    ext = {"application/json": "json", "image/svg+xml": "svg"}.get(mime, "txt")
    return name, f"{result_uuid(result, 'attachment:' + key + ':' + name)}-attachment.{ext}", mime, text


def _cards_of(result) -> dict:
    return {lay.name: list(lay.cards) for lay in result.layouts}


def _figure(result, subject: str):
    """The bandwidth figure a bandwidth-floor check's subject ("read 0->1") names."""
    op, _, pair = subject.partition(" ")
    src, _, dst = pair.partition("->")
    return next((f for f in result.bandwidth if f.get("op") == op and str(f.get("src_card")) == src
                 and str(f.get("dst_card")) == dst), None)


def check_title(c, cards: list | None, figure: dict | None) -> str:
    """'read interleaved s0 (card 0) -> t1 (card 1)', 'bandwidth-floor read 0->1: 395.1 GB/s
    (256 MiB)', 'xid host': the check and its subject, as JUnit and the terminal name them."""
    if c.s is not None and cards and max(c.s, c.t) < len(cards):
        return f"{c.check} {c.layout} s{c.s} (card {cards[c.s]}) -> t{c.t} (card {cards[c.t]})"
    title = f"{c.check} {c.subject}"
    if figure and isinstance(figure.get("gbps"), (int, float)):
        size = f"{figure['bytes'] >> 20} MiB" if isinstance(figure.get("bytes"), int) else "its size"
        title += f": {figure['gbps']:.1f} GB/s ({size})"
    return title


def _span(c, run: tuple) -> tuple:
    """The check's own span in ms, inside the run's (a rounding of the run's duration never
    puts a check past its end); a check with none sits at the run's start."""
    span = c.span
    if isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(x, (int, float)) for x in span):
        start = min(max(int(span[0] * 1000), run[0] + 1), run[1])
        return start, min(max(int(span[1] * 1000), start), run[1])
    return run[0] + 1, run[0] + 1


def run_labels(result) -> list:
    """What every check's result says of the run: a replay names its recording."""
    if result.is_replay:
        return [{"name": "replay", "value": str(result.target.get("transcript", ""))},
                {"name": "kind", "value": REPLAY_KIND}, {"name": "tag", "value": REPLAY_KIND}]
    return [{"name": "kind", "value": LIVE_KIND}]


def _attachments(result, c, key: str) -> list:
    """What a reader opens under the check: the readings it judged, the RM call it failed on."""
    out = []
    if c.check == "clocks":
        out.append(attachment(result, key, "clocks", "application/json", json.dumps(result.clocks, indent=1, default=str)))
    elif c.check == "nvlink-errors" and c.subject.startswith("card "):
        card = c.subject.split(" ", 1)[1]
        links = result.links.get(card, result.links.get(int(card)) if card.isdigit() else None)
        out.append(attachment(result, key, f"{c.subject} links", "application/json",
                              json.dumps(links, indent=1, default=str)))
    elif c.check == "host-facts":
        out.append(attachment(result, key, "host facts", "application/json", json.dumps(result.host, indent=1, default=str)))
        try:
            from rmpeer.render.heatmap import p2p_matrix_svg

            out.append(attachment(result, key, "P2P capability matrix", "image/svg+xml",
                                  p2p_matrix_svg(HostFacts.from_dict(result.host))))
        except (ValueError, TypeError, KeyError, AttributeError):
            pass       # the facts are attached as they are; a matrix needs them whole
    if c.detail:
        out.append(attachment(result, key, "the call, decoded", "text/plain", c.detail))
    return out


def check_entries(result, host: str, run_span: tuple) -> list:
    """[(result dict, attachments)] for every check of the run, in the order they ran;
    run_span: the run's (start, stop) in ms, as the verdict's result shows it."""
    cards_of, facts = _cards_of(result), result.host or {}
    driver = (f"{facts.get('driver_version')} ({facts.get('flavour')}), ABI {facts.get('abi_release')}"
              if facts.get("driver_version") else None)
    common = run_labels(result)
    out = []
    for c in result.checks:
        key = f"check:{c.id}"
        cards = cards_of.get(c.layout) if c.layout else None
        figure = _figure(result, c.subject) if c.check == "bandwidth-floor" else None
        params = [{"name": "topology", "value": str(result.target.get("label", ""))}]
        if c.layout:
            layout = next((lay for lay in result.layouts if lay.name == c.layout), None)
            params.append({"name": "layout", "value": f"{c.layout} {cards}" if cards is not None else c.layout})
            if layout is not None:
                params.append({"name": "extent", "value": f"{layout.extent >> 20} MiB"})
        if c.s is not None:
            # one parameter naming the pair: s=1,t=15 and s=11,t=5 must never read as one
            params.append({"name": "pair", "value": f"s{c.s}->t{c.t}"})
            if cards and max(c.s, c.t) < len(cards):
                params += [{"name": "card(s)", "value": str(cards[c.s])}, {"name": "card(t)", "value": str(cards[c.t])}]
        elif c.subject.startswith("card "):
            params.append({"name": "card", "value": c.subject})
        if figure is not None:
            params.append({"name": "figure", "value": c.subject})
            if isinstance(figure.get("bytes"), int):
                params.append({"name": "size", "value": f"{figure['bytes'] >> 20} MiB"})
        if driver:
            params.append({"name": "driver", "value": driver})
        labels = [*([{"name": "epic", "value": c.area}] if c.area else []), {"name": "feature", "value": c.check},
                  *([{"name": "story", "value": c.layout}] if c.layout else []), *common]
        status = BROKEN if c.unexpected and c.outcome == "failed" else CHECK_STATUS.get(c.outcome, UNKNOWN)
        files = _attachments(result, c, key)
        out.append((entry(result, host, key=key, name=check_title(c, cards, figure), status=status, labels=labels,
                          span=_span(c, run_span), parameters=params, message=c.reason,
                          text=c.detail or c.reason, attachments=files), files))
    return out
