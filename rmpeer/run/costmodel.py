"""A cost model of `rmpeer certify`, fitted to what bench and certify measured on one host,
and its projection to hosts of more cards (labelled a projection: nothing here was run there).

A layout of n sessions costs
    RM setup     per session, per pair of sessions on different cards, per window, and per
                 pair of cards first joined (bench's setup table, fitted by least squares)
    copies       the bytes each read and write check moves, at bench's GB/s (cross-card and
                 same-card)
    checks       per check item (a pytest test: read, write, reservation, map, pair, and the
                 layout's own checks), per byte checked (the pattern written and compared) and
                 per layout (its teardown and clean-up checks), fitted by least squares to
                 certify's per-layout times from its progress log
and a run adds a fixed part (interpreter, collection, RM open, staging, boost, from certify's
logs) and the fitness checks:
    rig          the bandwidth rig, a layout of two sessions per card at BANDWIDTH_SIZE: its RM
                 setup (as a layout's, above), and per session its engine and scratch built and
                 freed, fitted to the rig's stretches of recorded runs (their segments' clock)
    figures      each figure's copies at bench's GB/s (1 + REPEATS measures of one copy, or of
                 CHAIN copies per engine when engines copy at once) and, per measure, the host's
                 part (the copy queued, waited for, its timestamps read), fitted with the rig
    the rest     what certify's fitness group takes beyond the rig and figures on this host (the
                 clocks read after the traffic, the links read, the fitness checks themselves),
                 from certify's logs, taken as fixed
A figure is priced by what it does: the first model priced every figure at the fitness
group's time over its figure count (42.9 ms on 2 x H200), which charged the rig and the
group's fixed reads to the figures and grew them with the figures' count on 8 cards.

Pure functions: inputs are bench.json's dict, certify's progress log texts and a recording's
lines (its notes' clock).
"""

from __future__ import annotations

import itertools
import math
import re
import statistics

from rmpeer.errors import TranscriptError
from rmpeer.run.fitness import BANDWIDTH_SIZE
from rmpeer.shim.records import read_transcript
from rmpeer.tables.layouts import QUICK_LAYOUTS, LayoutMatrix
from rmpeer.traffic.bandwidth import CHAIN, REPEATS, STABLE_SPREAD, MORE_REPEATS, figures_of, rig_layout, tier_pairs

QUICK_BUDGET_S = 30.0
LAYOUT_OWN_CHECKS = 3      # setup_order, teardown_frees_everything, shared_setup_was_torn_down_cleanly
_PROGRESS = re.compile(r"^\s+(\d+(?:\.\d+)?)s\s+(\S+)\s+\S+\s+.*$", re.M)
_TOTAL = re.compile(r"^(?:.*: )?(CERTIFIED|DEGRADED|NOT CERTIFIED|INCOMPLETE) \(.*\) in (\d+(?:\.\d+)?) s", re.M)
_LAYOUTS = re.compile(r"^layouts: (.*); extent (\d+) MiB$", re.M)


# -- small least squares ----------------------------------------------------------------------

def _solve(a: list, b: list) -> list | None:
    """x with a x = b (Gauss-Jordan, partial pivoting), or None when a is singular."""
    n = len(a)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-12:
            return None
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def nonneg_least_squares(rows: list, y: list) -> list:
    """min |X c - y| with every c >= 0, for a handful of columns: the best unconstrained fit
    over every subset of columns whose solution is non-negative (a cost is never negative)."""
    k = len(rows[0])
    best, best_err = [0.0] * k, sum(v * v for v in y)
    for size in range(1, k + 1):
        for cols in itertools.combinations(range(k), size):
            xtx = [[sum(r[i] * r[j] for r in rows) for j in cols] for i in cols]
            xty = [sum(r[i] * v for r, v in zip(rows, y)) for i in cols]
            sol = _solve(xtx, xty)
            if sol is None or min(sol) < 0:
                continue
            c = [0.0] * k
            for i, v in zip(cols, sol):
                c[i] = v
            err = sum((sum(ci * ri for ci, ri in zip(c, r)) - v) ** 2 for r, v in zip(rows, y))
            if err < best_err - 1e-15:
                best, best_err = c, err
    return best


# -- what a layout and a run do ---------------------------------------------------------------

def layout_shape(cards, extent: int) -> dict:
    """The work of one layout (its sessions' cards) at `extent` bytes per buffer."""
    cards = tuple(cards)
    n = len(cards)
    others = [(i, j) for i in range(n) for j in range(i + 1, n) if cards[i] != cards[j]]
    per_card = {c: cards.count(c) for c in set(cards)}
    same_windows = sum(k * k for k in per_card.values())
    windows = n * n
    return {"sessions": n, "pairs": len(others), "windows": windows,
            "card_pairs": len({frozenset((cards[i], cards[j])) for i, j in others}),
            "items": 4 * windows + len(others) + LAYOUT_OWN_CHECKS,
            "bytes_checked": 2 * windows * extent,          # a read and a write through each window
            "same_card_bytes": 2 * same_windows * extent, "cross_card_bytes": 2 * (windows - same_windows) * extent}


def fitness_figures(cards: int, tier: str = "full") -> int:
    """Bandwidth figures certify's fitness measures (bandwidth.measure): same-card per card,
    read and write per ordered pair, bidirectional per pair, and all at once above 2 cards;
    the quick tier's pairs on more than 2 cards are each card's ring neighbours
    (bandwidth.tier_pairs)."""
    return len(tier_figures(cards, tier))


def tier_figures(cards: int, tier: str = "full") -> list:
    """The ops of the figures certify's fitness measures on `cards` cards (bandwidth.figures_of)."""
    return [op for _, _, op in figures_of(cards, pairs=tier_pairs(cards, tier))]


def _copies_s(op: str, n: int, c: dict) -> float:
    """One measure's copy time at bench's rates: engines that copy at once (bidirectional,
    all) each move CHAIN copies side by side, the measure lasting one engine's chain."""
    if op == "same-card":
        return n / (c["same_card_gbps"] * 1e9)
    return (CHAIN if op in ("bidirectional", "all") else 1) * n / (c["cross_card_gbps"] * 1e9)


def figures_work(ops: list, c: dict, n: int = BANDWIDTH_SIZE, spreads=None) -> tuple:
    """(seconds of copies, measures) of figures `ops` at n bytes: 1 + REPEATS measures each,
    MORE_REPEATS more where a figure's spread was over STABLE_SPREAD (`spreads`, a recording's)."""
    spreads = spreads or [0.0] * len(ops)
    measures = [1 + REPEATS + (MORE_REPEATS if spread > STABLE_SPREAD else 0) for spread in spreads]
    return sum(k * _copies_s(op, n, c) for op, k in zip(ops, measures)), sum(measures)


def rig_shape(cards: int) -> dict:
    return layout_shape(rig_layout(cards).cards, BANDWIDTH_SIZE)


def _setup_s(shape: dict, c: dict) -> float:
    return (c["setup_per_session_s"] * shape["sessions"] + c["setup_per_pair_s"] * shape["pairs"]
            + c["setup_per_window_s"] * shape["windows"] + c["setup_per_card_pair_s"] * shape["card_pairs"])


def rig_stretch(lines: list) -> dict | None:
    """The bandwidth rig's stretch of a recorded run, from its notes' clock (t_ns): its setup
    (segment setup:bandwidth), engines and figures (bandwidth:rig:... up to the bandwidth
    note), and teardown (teardown:bandwidth up to the next note). {cards, seconds, figures:
    [(op, bytes, spread)]}, or None for a recording without the rig (a passive run)."""
    notes = [x for x in lines if isinstance(x, dict) and "note" in x and "t_ns" in x]
    name = lambda x: "bandwidth:rig" if (x.get("key") or "").startswith("bandwidth:rig:") else (x.get("key") or x["note"])
    at = {name(x): i for i, x in enumerate(notes)}
    need = ("setup:bandwidth", "bandwidth:rig", "bandwidth", "teardown:bandwidth")
    if any(k not in at for k in need) or at["teardown:bandwidth"] + 1 >= len(notes):
        return None
    t = lambda k: notes[at[k]]["t_ns"]
    figures = notes[at["bandwidth"]].get("figures") or []
    seconds = ((t("bandwidth") - t("setup:bandwidth")) + (notes[at["teardown:bandwidth"] + 1]["t_ns"]
                                                           - t("teardown:bandwidth"))) / 1e9
    cards = len({f[k] for f in figures for k in ("src_card", "dst_card") if f[k] >= 0})
    return {"cards": cards, "seconds": seconds,
            "figures": [(f["op"], f["bytes"], f.get("spread", 0.0)) for f in figures]}


def fit_rig(stretches: list, c: dict) -> dict:
    """Seconds per rig session (its engine and scratch built and freed) and per measure (the
    host's part of one), by least squares over the recorded rig stretches, after the rig's
    RM setup and the copies bench's figures price."""
    rows, y = [], []
    for r in stretches:
        copies, measures = 0.0, 0
        for op, n, spread in r["figures"]:
            s, k = figures_work([op], c, n, [spread])
            copies, measures = copies + s, measures + k
        shape = rig_shape(r["cards"])
        rows.append([shape["sessions"], measures])
        y.append(r["seconds"] - _setup_s(shape, c) - copies)
    per_session, per_measure = nonneg_least_squares(rows, y)
    return {"rig_per_session_s": per_session, "per_measure_s": per_measure}


def rig_seconds(cards: int, tier: str, c: dict) -> float:
    """The rig and figures of certify's fitness on `cards` cards, as the model prices them."""
    shape = rig_shape(cards)
    copies, measures = figures_work(tier_figures(cards, tier), c)
    return _setup_s(shape, c) + c["rig_per_session_s"] * shape["sessions"] + copies + c["per_measure_s"] * measures


def setup_rows(bench: dict) -> list:
    """bench.json's setup table with each row's card pairs (sessions dealt over the cards)."""
    cards = len(bench["host"]["cards"])
    out = []
    for row in bench["setup"]:
        used = min(row["sessions"], cards)
        out.append({**row, "card_pairs": used * (used - 1) // 2})
    return out


def fit_setup(bench: dict) -> dict:
    """Seconds per session, pair, window and first-joined card pair of RM setup. bench times
    each NV50_P2P, reservation and map itself: their medians price pairs and windows (a fit
    could not tell them apart, as every row of a 2-card bench has 4 windows per pair); the
    rest of each row is fitted to its sessions and card pairs (the first NV50_P2P between
    two cards costs several times the later ones)."""
    rows = setup_rows(bench)
    steady = [r["per_pair_ms"] for r in rows if r["per_pair_ms"] is not None and r["pairs"] > r["card_pairs"]]
    per_pair = statistics.median(steady) / 1e3 if steady else 0.0
    per_window = statistics.median([(r["per_reservation_ms"] or 0) + (r["per_map_ms"] or 0) for r in rows]) / 1e3
    rest = [r["ms"] / 1e3 - per_pair * r["pairs"] - per_window * r["windows"] for r in rows]
    per_session, per_card_pair = nonneg_least_squares([[r["sessions"], r["card_pairs"]] for r in rows], rest)
    return {"setup_per_session_s": per_session, "setup_per_pair_s": per_pair, "setup_per_window_s": per_window,
            "setup_per_card_pair_s": per_card_pair}


def copy_rates(bench: dict) -> dict:
    """Median steady GB/s at the largest size bench measured, cross-card and same-card (None
    where bench measured no such copy: a 1-card host has no cross-card one)."""
    size = max(r["bytes"] for r in bench["results"])

    def pick(ops):
        rates = [r["gbps"] for r in bench["results"] if r["bytes"] == size and r["op"] in ops]
        return statistics.median(rates) if rates else None
    return {"cross_card_gbps": pick(("read", "write")), "same_card_gbps": pick(("same-card",))}


# what only a host of two cards or more measures: the NV50_P2P setup between cards and the
# cross-card copy rate. A 1-card host fits everything else on the tree it runs; its projection
# to more cards takes these from a 2-card bench (cross_card_parts), and says so
CROSS_CARD = ("setup_per_pair_s", "setup_per_card_pair_s", "cross_card_gbps")


def cross_card_parts(bench: dict) -> dict:
    """The CROSS_CARD coefficients of a bench.json of 2 cards or more."""
    if len(bench["host"]["cards"]) < 2:
        raise ValueError("the cross-card parts need a bench of 2 cards or more; this one has 1")
    c = {**fit_setup(bench), **copy_rates(bench)}
    return {k: c[k] for k in CROSS_CARD}


def _fixed_part(shape: dict, c: dict) -> float:
    """What bench's figures alone say a layout costs: RM setup and the copies."""
    return (_setup_s(shape, c) + shape["cross_card_bytes"] / (c["cross_card_gbps"] * 1e9)
            + shape["same_card_bytes"] / (c["same_card_gbps"] * 1e9))


def layout_seconds(shape: dict, c: dict) -> float:
    return (_fixed_part(shape, c) + c["per_item_s"] * shape["items"] + c["per_byte_s"] * shape["bytes_checked"]
            + c["per_layout_s"])


# -- certify's progress log -------------------------------------------------------------------

def parse_progress(text: str) -> dict | None:
    """{total_s, layouts: {name: [cards]}, extent, times: {group: seconds}, order} from one
    certify log, or None when it is not one (no layout line or no verdict line)."""
    layouts, total = _LAYOUTS.search(text), _TOTAL.search(text)
    if not layouts or not total:
        return None
    named = {m.group(1): [int(x) for x in m.group(2).split(",") if x.strip()]
             for m in re.finditer(r"(\S+) \[([\d, ]*)\]", layouts.group(1))}
    last, order = {}, []
    for m in _PROGRESS.finditer(text):
        group = m.group(2)
        if group not in last:
            order.append(group)
        last[group] = float(m.group(1))
    times, before = {}, 0.0
    for group in order:
        times[group] = last[group] - before
        before = last[group]
    return {"total_s": float(total.group(2)), "layouts": named, "extent": int(layouts.group(2)) << 20,
            "times": times, "order": order}


def _layout_extent(name: str, extent: int) -> int:
    matrix = LayoutMatrix()
    own = matrix.entries.get(name, {}).get("extent")
    return own or extent


def _host_cards(run: dict) -> int:
    return 1 + max((c for cards in run["layouts"].values() for c in cards), default=0)


def fit(bench: dict, logs: list, stretches: list, cross: dict | None = None) -> dict:
    """The model's coefficients from bench.json, certify logs and the rig's stretches of
    recorded runs (rig_stretch) of the same kind of host; `cross`: the CROSS_CARD ones of a
    2-card bench (cross_card_parts), where bench's host has one card."""
    c = {**fit_setup(bench), **copy_rates(bench), **(cross or {})}
    if c["cross_card_gbps"] is None:
        raise ValueError("bench measured no cross-card copy (one card): the cross-card parts must come "
                         "from a bench of 2 cards or more")
    runs = [r for r in (parse_progress(t) for t in logs) if r]
    if not runs:
        raise ValueError("no certify progress log to fit the per-check and per-byte costs")
    if not stretches:
        raise ValueError("no recorded run with the bandwidth rig's stretch to fit the rig and figure costs")
    rows, y = [], []
    for run in runs:
        first = run["order"][0]
        for name, seconds in run["times"].items():
            if name in run["layouts"] and name != first:     # the first layout carries the start-up
                shape = layout_shape(run["layouts"][name], _layout_extent(name, run["extent"]))
                rows.append([shape["items"], shape["bytes_checked"], 1.0])
                y.append(seconds - _fixed_part(shape, c))
    if not rows:
        raise ValueError("the certify logs hold no layout but the first (the first one carries the start-up)")
    c["per_item_s"], c["per_byte_s"], c["per_layout_s"] = nonneg_least_squares(rows, y)
    c.update(fit_rig(stretches, c))
    fixed, rest = [], []
    for run in runs:
        modelled = sum(layout_seconds(layout_shape(run["layouts"][n], _layout_extent(n, run["extent"])), c)
                       for n in run["layouts"] if n in run["times"])
        fit_s = run["times"].get("fitness", 0.0)
        rest.append(fit_s - rig_seconds(_host_cards(run), "full", c))    # 1 and 2 cards: quick's figures are full's
        fixed.append(run["total_s"] - modelled - fit_s)
    c["per_run_s"] = max(0.0, statistics.median(fixed))
    c["fitness_rest_s"] = max(0.0, statistics.median(rest))
    return c


def predict(c: dict, cards: int, layouts: list, tier: str = "full") -> float:
    """Seconds for a certify run of `layouts` ([(cards tuple, extent)]) on a host of `cards` cards."""
    return (c["per_run_s"] + sum(layout_seconds(layout_shape(lc, ext), c) for lc, ext in layouts)
            + c["fitness_rest_s"] + rig_seconds(cards, tier, c))


def tier_layouts(cards: int, tier: str) -> list:
    """[(cards tuple, extent)] of the layouts a tier runs on a host of `cards` cards."""
    matrix = LayoutMatrix()
    if tier == "quick":
        chosen = [matrix.resolve(name, cards) for name in QUICK_LAYOUTS]
    else:
        chosen = matrix.fitting_with_reasons(cards)[0]
    return [(layout.cards, matrix.tier_extent(layout, tier, cards)) for layout in chosen if layout is not None]


def projection(bench: dict, logs: list, stretches: list, card_counts=(4, 8), cross: dict | None = None) -> dict:
    """bench.json's cost_model: the coefficients, how well they reproduce the measured runs
    of this host, and the quick and full times predicted for `card_counts` cards. `cross`:
    the cross-card parts of a 2-card bench (fit), for a bench of one card."""
    try:
        c = fit(bench, logs, stretches, cross)
    except ValueError as exc:
        return {"reason": str(exc), "projections": None}
    cards = len(bench["host"]["cards"])
    default = LayoutMatrix().default_extent
    measured: dict = {}
    for run in filter(None, map(parse_progress, logs)):
        names = set(run["layouts"])
        tier = "quick" if len(names) < len(tier_layouts(cards, "full")) else "full"
        # a run at another extent (a 1-card fit takes two) is reproduced at its own extent
        label = tier if run["extent"] == default else f"{tier} at {run['extent'] >> 20} MiB"
        layouts = tier_layouts(cards, tier) if run["extent"] == default else [
            (tuple(run["layouts"][n]), _layout_extent(n, run["extent"])) for n in run["layouts"]]
        measured.setdefault(label, (tier, layouts, []))[2].append(run["total_s"])
    reproduces = {label: {"measured_median_s": statistics.median(v), "runs": len(v),
                          "predicted_s": round(predict(c, cards, layouts, tier), 2)}
                  for label, (tier, layouts, v) in measured.items()}
    projections = {str(n): {tier: round(predict(c, n, tier_layouts(n, tier), tier), 1) for tier in ("quick", "full")}
                   for n in card_counts}
    worst = projections.get("8", {}).get("quick")
    return {"kind": "projection: fitted on this host's measurements, not run on hosts of these sizes",
            **({"cross_card_from": "a bench of 2 cards or more: " + ", ".join(CROSS_CARD)} if cross else {}),
            "coefficients": {k: (round(v, 12) if not math.isnan(v) else None) for k, v in c.items()},
            "reproduces": reproduces, "projections": projections, "quick_budget_s": QUICK_BUDGET_S,
            "quick_8_within_budget": None if worst is None else worst < QUICK_BUDGET_S}


def calibration_logs(folder) -> list:
    """The texts of certify's logs in `folder` (tools/device-evidence.sh writes them beside
    bench.json: certify*.log in earlier rounds, quick-N.log and full-N.log by tier since) that
    time a plain run: CERTIFIED, clocks boosted, not recording (a recording writes every call
    and runs slower; those logs are named *record*)."""
    from pathlib import Path

    out = []
    names = ("certify*.log", "quick-[0-9]*.log", "full-[0-9]*.log")
    for path in sorted({p for pattern in names for p in Path(folder).glob(pattern)}):
        if "record" in path.name or "noboost" in path.name:
            continue
        text = path.read_text(errors="replace")
        run = _TOTAL.search(text)
        if run and run.group(1) == "CERTIFIED" and "boost: asked" in text:
            out.append(text)
    return out


def _recording_notes(path) -> list | None:
    """The header and notes of the recording at `path` as the shim reads every recording
    (rmpeer.shim.records.read_transcript: bounded, every line checked), never through a link;
    None when it is not one."""
    try:
        header, lines = read_transcript(path, follow=False)
    except TranscriptError:
        return None
    return [{"header": header}] + [line for line in lines if isinstance(line, dict)]


def calibration_stretches(paths) -> list:
    """The rig's stretches (rig_stretch) of the recordings at `paths` (a folder: its
    *.jsonl.gz, recursively) of plain boosted runs: a --no-boost recording (named *noboost*),
    a derived one (*derived*) and one beside a busy card (*busy*) are left out, as are
    recordings without the rig and files that are no recording (a link, garbled, too big)."""
    from pathlib import Path

    files = []
    for path in map(Path, paths):
        files += sorted(path.rglob("*.jsonl.gz")) if path.is_dir() else [path]
    out = []
    for f in files:
        if any(word in f.name for word in ("noboost", "derived", "busy")):
            continue
        lines = _recording_notes(f)
        if lines is None:
            continue
        run = lines[0]["header"].get("run")
        if isinstance(run, dict) and run.get("boost", True) is False:
            continue
        try:
            stretch = rig_stretch(lines)
        except (KeyError, TypeError, ValueError, AttributeError):   # notes of another shape: no stretch
            stretch = None
        if stretch is not None and stretch["seconds"] > 0:
            out.append(stretch)
    return out


def render_projection(model: dict) -> str:
    """One line for bench's output."""
    if not model.get("projections"):
        return f"cost model: not fitted ({model.get('reason')})"
    parts = [f"{n} cards: quick {p['quick']} s, full {p['full']} s" for n, p in model["projections"].items()]
    return "projected by the cost model (not measured): " + "; ".join(parts)
