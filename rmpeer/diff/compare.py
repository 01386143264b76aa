"""`rmpeer diff A B`: what changed in RM's behaviour between two runs.

A and B are transcripts (`rmpeer certify --record`) or certificates (certificate.json, in
the format "rmpeer-result/1" or the earlier one; gzip or not): the same host on two drivers,
two hosts on one driver, or two runs of one host. The aspects compared, each from whatever
the two files hold:

- RM statuses: every call's outcome, grouped by its step label (not its sequence number,
  so runs of different length still align), and how many calls each step made;
- struct sizes: request and params structs (observed in a transcript; from drivers.yaml's
  entry for a certificate's ABI);
- reply fields: the host facts RM gave, compared recursively;
- clocks: the P-state at each moment, the boosted MHz within the tolerance, the boost's RM
  statuses; links: each card's NVLinks;
- test outcomes, the target label taken out of the test id;
- bandwidth per pair, within the tolerance.

"Differs" means behaviour differs. So:
- volatile readings (timestamps, durations, free memory, temperatures, idle clock MHz) are
  left out, and the output names the rules that left something out (VOLATILE, CLOCK_PHASES);
- an aspect or a field one side does not record is "not comparable", never "differs";
- a step or a check one side's rmpeer never made is "not comparable: only in A/B", both
  rmpeers named, never a difference: a step family with no call at all on one side, or a check
  with no test there, that the side's manifest does not hold (rmpeer.model.steps: generated
  from the code, in every file made since 2026-12-05). A file with no manifest is inferred:
  Side.unmade (the family first came in a committed recording of a host of as many cards made
  later, rmpeer.diff.load.unmade_families), a family no committed recording holds, made by the
  newer side, or a check an older certificate holds no test of. So is a step one side's run
  does not make by how it was run (compare_calls: the passive tier makes no setup, copy or
  bandwidth step; --no-boost makes no perf:boost step and reads the clocks in fewer phases),
  the settings of both named. Any other step one side did not call (alloc:p2p on one card,
  perf:boost deleted from a boosted run) differs as ever;
- runs of different coverage compare only the layouts both ran, and the output says so.
Exit 0: same behaviour; 1: behaviour differs; 2: usage error (unreadable file, bad option).
Reading the files is rmpeer.diff.load (each into a Side, rmpeer.diff.side); the table and
the JSON document are rmpeer.diff.render; rmpeer.diff.write writes that document and the
Allure results; the command line is rmpeer.cli.diff. This module and the renderer import
rmpeer.diff.side and model alone (an import-linter contract): they read nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from rmpeer.diff.side import CLOCK_PHASES, IDENTITY, MISSING, UNBOOSTED_PHASES, VOLATILE, Side, percent, step_family
from rmpeer.model.selection import selection_words

# Readings that change between two runs of one healthy host: (rule, why, field-name pattern).
CLOCK_HOW_READ = {"mhz_source", "rm_reasons", "nvml_reason", "library_reason"}   # how a reading was taken, not what
FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")   # a field; "0", "0->1": entries (cards, pairs)


def volatile_rule(key: str) -> str | None:
    """The VOLATILE rule that leaves the field `key` out, if any."""
    for name, _, pattern in VOLATILE:
        if re.fullmatch(pattern, str(key)):
            return name
    return None


@dataclass
class Aspect:
    name: str
    source: str = ""
    differences: list = field(default_factory=list)   # (key, a, b)
    info: list = field(default_factory=list)
    not_comparable: str = ""
    left_out: Counter = field(default_factory=Counter)   # volatile rule -> fields left out
    absent: list = field(default_factory=list)           # fields only one side records

    @property
    def differs(self) -> bool:
        return bool(self.differences)


@dataclass
class Coverage:
    """The layouts both runs ran (None: a side does not say which it ran)."""

    common: set | None
    only_a: list = field(default_factory=list)
    only_b: list = field(default_factory=list)

    def includes(self, layout) -> bool:
        return self.common is None or layout is None or layout in self.common


def coverage(a: Side, b: Side) -> Coverage:
    if a.layouts is None or b.layouts is None:
        return Coverage(None)
    return Coverage(set(a.layouts) & set(b.layouts), [x for x in a.layouts if x not in b.layouts],
                    [x for x in b.layouts if x not in a.layouts])


# ---- comparing ----------------------------------------------------------------------------

def _counts(outcomes) -> str:
    if not outcomes:
        return "not called"
    return ", ".join(f"{name} x{n}" for name, n in Counter(outcomes).most_common())


def _why_not(a: Side, b: Side, aspect: str) -> str:
    """Why an aspect cannot be compared, naming the file(s) that lack it."""
    reasons = [(name, s.why_not[aspect]) for name, s in (("A", a), ("B", b)) if aspect in s.why_not]
    if len(reasons) == 2 and reasons[0][1] == reasons[1][1]:
        return f"A and B: {reasons[0][1]}"
    return "; ".join(f"{name}: {why}" for name, why in reasons) or "neither file records it"


def compare_calls(a: Side, b: Side, cover: Coverage) -> list[Aspect]:
    statuses, counts = Aspect("RM statuses"), Aspect("RM call counts")
    for aspect in (statuses, counts):
        aspect.source = "every call's outcome, grouped by its step label"
        if a.calls is None or b.calls is None:
            aspect.not_comparable = _why_not(a, b, "calls")
        elif a.sources.get("calls") != b.sources.get("calls"):
            aspect.not_comparable = f"A holds {a.sources.get('calls')}, B {b.sources.get('calls')}"
    if statuses.not_comparable:
        return [statuses, counts]
    by_label = []
    for side in (a, b):
        calls: dict = {}
        for layout, label, result in side.calls:
            if cover.includes(layout):
                calls.setdefault(label, []).append(result)
        by_label.append(calls)
    ca, cb = by_label
    families = [{step_family(label) for label in calls} for calls in (ca, cb)]
    only: dict = {"A": [], "B": []}
    unrun: dict = {"A": [], "B": []}        # steps only one side ran, by how the other was run
    recounted: list = []                     # steps whose count follows how each side was run
    for label in sorted(set(ca) | set(cb)):
        sa, sb = ca.get(label, []), cb.get(label, [])
        if sa == sb:
            continue
        family = step_family(label)
        unknown_to = ("A" if not sa and family not in families[0] and _unknown(a, b, family) else
                      "B" if not sb and family not in families[1] and _unknown(b, a, family) else None)
        if unknown_to:
            only["B" if unknown_to == "A" else "A"].append(label)
            continue
        unrun_by = ("A" if not sa and _not_run(a, b, family) else "B" if not sb and _not_run(b, a, family) else None)
        if unrun_by:
            unrun["B" if unrun_by == "A" else "A"].append(label)
        elif set(sa) != set(sb):
            statuses.differences.append((label, _counts(sa), _counts(sb)))
        elif Counter(sa) != Counter(sb):
            if _recounted(a, b, family):
                recounted.append(label)
            else:
                counts.differences.append((label, _counts(sa), _counts(sb)))
        else:
            statuses.differences.append((label, "order: " + " ".join(sa[:6]), "order: " + " ".join(sb[:6])))
    for side, labels in only.items():
        if labels:
            other = "B" if side == "A" else "A"
            fams = sorted({step_family(x) for x in labels})
            statuses.info.append(f"not comparable (only in {side}): {len(labels)} step(s) of "
                                 f"{', '.join(f + ':*' for f in fams)}, which {other}'s rmpeer never made "
                                 f"(A: {_made_by(a)}; B: {_made_by(b)})")
    for side, labels in unrun.items():
        if labels:
            having, lacking = (a, b) if side == "A" else (b, a)
            fams = sorted({step_family(x) for x in labels})
            statuses.info.append(f"not comparable (only in {side}): {len(labels)} step(s) of "
                                 f"{', '.join(f + ':*' for f in fams)}, which {'B' if side == 'A' else 'A'}'s run "
                                 f"does not make: {_how_run(lacking, having)} ({_settings(a, b)})")
    if recounted:
        counts.info.append(f"not comparable: how many calls {len(recounted)} step(s) made "
                           f"({', '.join(sorted({step_family(x) + ':*' for x in recounted}))}), which follows "
                           f"how each run was made ({_settings(a, b)})")
    return [statuses, counts]


# What a run makes depends on how it was run, beside what its rmpeer can make: a step that
# one side's run does not make is not comparable, as a step its rmpeer never made is not.
# The passive tier reads RM's facts alone (rmpeer.run.passive): no layout, channel, copy or
# bandwidth rig, so any step it did not call is one its run does not make, and its call
# counts (one clock reading, not one per phase) are its own. Without the boost (--no-boost),
# rmpeer.rm.perf neither raises nor clears it, and rmpeer.run.fitness reads the clocks in
# fewer phases (no boosted and released readings).
BOOST_ONLY = {"perf:boost"}
BOOST_PHASE_READS = {"perf:pstate", "perf:clock-levels"}


def _tier(side: Side) -> str | None:
    return side.context.get("tier")


def _not_run(side: Side, other: Side, family: str) -> bool:
    """Whether the side's run does not make this family, by how it was run (not its rmpeer)."""
    if (_tier(side) == "passive") != (_tier(other) == "passive"):
        return True
    return family in BOOST_ONLY and _asked(side) is False and _asked(other) is True


def _recounted(a: Side, b: Side, family: str) -> bool:
    """Whether a family's call count follows a setting the two runs were made with apart."""
    if (_tier(a) == "passive") != (_tier(b) == "passive"):
        return True
    return family in BOOST_PHASE_READS and {_asked(a), _asked(b)} == {True, False}


def _how_run(side: Side, other: Side) -> str:
    """Why `side`'s run does not make a step `other`'s run made."""
    if _tier(side) == "passive":
        return "it ran the passive tier (RM's facts alone: no layout, copy or bandwidth)"
    if _tier(other) == "passive":
        return "the other ran the passive tier, which reads some facts its own way (the GPU processes once)"
    return "it ran without the boost (--no-boost)"


def _settings(a: Side, b: Side) -> str:
    return "; ".join(f"{name}: tier {_tier(s) or 'not recorded'}, boost asked {_yes(_asked(s))}"
                     for name, s in (("A", a), ("B", b)))


def _unknown(side: Side, other: Side, family: str) -> bool:
    """Whether the side's rmpeer did not make this family: not in its manifest; for a file
    with no manifest, Side.unmade, or a family no committed recording of such a host holds,
    made by the other side's newer rmpeer."""
    made = side.makes("families")
    if made is not None:
        return family not in made
    if family in side.unmade:
        return True
    mine, theirs = str(side.context.get("created") or ""), str(other.context.get("created") or "")
    return side.recorded_families is not None and family not in side.recorded_families and bool(mine) and mine < theirs


def _made_by(side: Side) -> str:
    c = side.context
    how = ("by its manifest" if side.manifest is not None else
           "inferred from when it was made (no manifest)")
    return (f"rmpeer {c.get('rmpeer') or 'of unknown version'}, made {c.get('created') or 'at an unknown time'}, "
            f"{how}")


def _check_unmade(side: Side, other: Side, check: str | None) -> bool:
    """Whether the side's rmpeer did not make this check: not in its manifest; for a
    certificate with no manifest, made before the other side's and holding no test of that
    check at all (its rmpeer had no such check yet)."""
    if check is None:
        return False
    made = side.makes("checks")
    if made is not None:
        return check not in made
    mine, theirs = str(side.context.get("created") or ""), str(other.context.get("created") or "")
    return bool(mine) and mine < theirs and check not in set(side.checks_of.values())


def compare_structs(a: Side, b: Side) -> Aspect:
    aspect = Aspect("struct sizes", source=f"A: {a.sources.get('struct sizes')}; B: {b.sources.get('struct sizes')}")
    if a.structs is None or b.structs is None:
        aspect.not_comparable = _why_not(a, b, "struct sizes")
        return aspect
    for name in sorted(set(a.structs) & set(b.structs)):
        if a.structs[name] != b.structs[name]:
            aspect.differences.append((name, f"{a.structs[name]} bytes", f"{b.structs[name]} bytes"))
    for label, only in (("A", set(a.structs) - set(b.structs)), ("B", set(b.structs) - set(a.structs))):
        if only:
            aspect.info.append(f"used only in {label}: {', '.join(sorted(only))}")
    return aspect


def diff_tree(a, b, path: str = "", aspect: Aspect | None = None) -> list[tuple]:
    """Every leaf where two JSON-like trees differ: (path, value in a, value in b). Volatile
    and identity fields are skipped; a field (not an entry such as a card or a pair) that one
    side lacks is not a difference: it goes to `aspect.absent` as not comparable."""
    aspect = aspect if aspect is not None else Aspect("")
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in list(a) + [k for k in b if k not in a]:
            sub = f"{path}.{key}" if path else str(key)
            if key in IDENTITY:
                continue
            rule = volatile_rule(key)
            if rule:
                aspect.left_out[rule] += 1
                continue
            va, vb = a.get(key, MISSING), b.get(key, MISSING)
            if (va is MISSING or vb is MISSING) and FIELD_NAME.fullmatch(str(key)):
                aspect.absent.append(f"{sub} (only in {'B' if va is MISSING else 'A'})")
                continue
            out += diff_tree(va, vb, sub, aspect)
        return out
    if isinstance(a, list) and isinstance(b, list):
        if all(not isinstance(x, (dict, list)) for x in a + b):
            if a == b:
                return []
            only_a, only_b = sorted(set(a) - set(b), key=str), sorted(set(b) - set(a), key=str)
            if not only_a and not only_b:
                return [(path, "same items, other order" if sorted(a, key=str) == sorted(b, key=str)
                         else f"{len(a)} items", f"{len(b)} items")]
            return [(path, _items(a, only_a), _items(b, only_b))]
        out = [(f"{path} (count)", len(a), len(b))] if len(a) != len(b) else []
        for i in range(max(len(a), len(b))):
            out += diff_tree(a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING, f"{path}[{i}]", aspect)
        return out
    if a is MISSING or b is MISSING or a != b:
        return [(path, a, b)]
    return []


def _items(values, only) -> str:
    return f"{len(values)} items" + (f", only here: {', '.join(map(str, only))}" if only else "")


def _absent_info(aspect: Aspect) -> None:
    if aspect.absent:
        shown = ", ".join(aspect.absent[:4]) + (f" and {len(aspect.absent) - 4} more" if len(aspect.absent) > 4 else "")
        aspect.info.append(f"not comparable, recorded by one side only: {shown}")


def _compare_trees(name: str, source: str, a: Side, b: Side, field: str) -> Aspect:
    """One aspect that is a tree of reply fields on each side, compared recursively."""
    aspect = Aspect(name, source=source)
    ta, tb = getattr(a, field), getattr(b, field)
    if ta is None or tb is None:
        aspect.not_comparable = _why_not(a, b, name)
        return aspect
    aspect.differences = diff_tree(ta, tb, aspect=aspect)
    _absent_info(aspect)
    return aspect


def compare_selection(a: Side, b: Side) -> Aspect:
    """Which of the host's cards each run took (rmpeer.machine.selection), shown; the runs differ when
    one took more or fewer cards, or of a larger host, than the other (UUIDs are identity)."""
    aspect = Aspect("cards selected", "the selection each run recorded (UUIDs, and how they were chosen)")
    if a.facts is None or b.facts is None:
        aspect.not_comparable = _why_not(a, b, "facts")
        return aspect
    words = [selection_words(side.facts) for side in (a, b)]
    if words[0][1] != words[1][1]:
        aspect.differences.append(("cards", words[0][0], words[1][0]))
    else:
        aspect.info += [f"A {words[0][0]}", f"B {words[1][0]}"] if words[0][0] != words[1][0] else [words[0][0]]
    return aspect



def compare_facts(a: Side, b: Side) -> Aspect:
    return _compare_trees("reply fields", "the host facts RM answered (volatile and identity fields left out)",
                          a, b, "facts")


def _beyond(va, vb, tolerance: float) -> bool:
    if va == vb:
        return False
    return not va or abs(vb - va) / abs(va) > tolerance


def compare_clocks(a: Side, b: Side, tolerance: float) -> Aspect:
    """P-states at every moment both read; MHz where RM was asked to hold them (boosted,
    after traffic) within the tolerance; the boost's RM statuses where both asked for it."""
    aspect = Aspect("clocks", source="P-state through RM, MHz through NVML, at each moment of the run")
    if a.clocks is None or b.clocks is None:
        aspect.not_comparable = _why_not(a, b, "clocks")
        return aspect
    volatile = dict(CLOCK_PHASES)
    if _asked(a) is False and _asked(b) is False:
        volatile.update(UNBOOSTED_PHASES)
    for phase in [p for p in a.clocks if p in b.clocks]:
        cards_a, cards_b = a.clocks[phase] or {}, b.clocks[phase] or {}
        for card in sorted(set(cards_a) | set(cards_b), key=str):
            ra, rb = cards_a.get(card, MISSING), cards_b.get(card, MISSING)
            if not isinstance(ra, dict) or not isinstance(rb, dict):
                aspect.differences.append((f"{phase}.{card}", ra, rb))
                continue
            for key in list(ra) + [k for k in rb if k not in ra]:
                where = f"{phase}.{card}.{key}"
                if key in CLOCK_HOW_READ:
                    continue
                if key not in ra or key not in rb:
                    aspect.absent.append(f"{where} (only in {'A' if key in ra else 'B'})")
                    continue
                va, vb = ra[key], rb[key]
                if not key.endswith("_mhz"):
                    if va != vb:
                        aspect.differences.append((where, va, vb))
                elif phase in volatile:
                    aspect.left_out[f"{phase} clock MHz"] += 1
                elif va is None or vb is None:
                    aspect.absent.append(f"{where} (not read by {'A' if va is None else 'B'})")
                elif _beyond(va, vb, tolerance):
                    aspect.differences.append((where, f"{va} MHz", f"{vb} MHz ({(vb - va) / (va or 1):+.1%})"))
    for label, mine, other in (("A", a.clocks, b.clocks), ("B", b.clocks, a.clocks)):
        only = [phase for phase in mine if phase not in other]
        if only:
            aspect.info.append(f"read only in {label}: {', '.join(only)}" + _boost_note(a, b))
    _compare_boost(a, b, aspect)
    _absent_info(aspect)
    return aspect


def _asked(side: Side):
    """Whether the run asked RM for the boost: True, False, or None where it does not say."""
    if side.boost is not None and "asked" in side.boost:
        return side.boost["asked"]
    return side.context.get("boost")


def _boost_note(a: Side, b: Side) -> str:
    asked = [_asked(a), _asked(b)]
    return f" (boost asked: A {_yes(asked[0])}, B {_yes(asked[1])})" if asked[0] != asked[1] else ""


def _yes(value) -> str:
    return {True: "yes", False: "no"}.get(value, "not recorded")


def _compare_boost(a: Side, b: Side, aspect: Aspect) -> None:
    if not (a.boost and b.boost and a.boost.get("asked") and b.boost.get("asked")):
        return
    ra, rb = a.boost.get("results") or {}, b.boost.get("results") or {}
    for card in sorted(set(ra) | set(rb), key=str):
        for step in ("raise", "clear"):
            sa = ((ra.get(card) or {}).get(step) or {}).get("status", MISSING)
            sb = ((rb.get(card) or {}).get(step) or {}).get("status", MISSING)
            if sa != sb:
                aspect.differences.append((f"boost.{card}.{step}", sa, sb))


def compare_links(a: Side, b: Side) -> Aspect:
    return _compare_trees("links", "each card's NVLinks as RM reports them before the traffic", a, b, "links")


def compare_tests(a: Side, b: Side, cover: Coverage) -> Aspect:
    aspect = Aspect("test outcomes", source="the tests of the layouts both ran, target label taken out of the id")
    if a.tests is None or b.tests is None:
        aspect.not_comparable = _why_not(a, b, "test outcomes")
        return aspect
    if a.sources.get("tests") != b.sources.get("tests"):
        aspect.not_comparable = f"A names its tests by {a.sources.get('tests')}, B by {b.sources.get('tests')}"
        return aspect
    if a.verdict != b.verdict:
        aspect.differences.append(("verdict", a.verdict, b.verdict))
    skipped, only = 0, {"A": Counter(), "B": Counter()}
    for test in sorted(set(a.tests) | set(b.tests)):
        (la, oa), (lb, ob) = a.tests.get(test, (None, "absent")), b.tests.get(test, (None, "absent"))
        if not cover.includes(la if test in a.tests else lb):
            skipped += 1
        elif test not in b.tests and _check_unmade(b, a, a.checks_of.get(test)):
            only["A"][a.checks_of[test]] += 1
        elif test not in a.tests and _check_unmade(a, b, b.checks_of.get(test)):
            only["B"][b.checks_of[test]] += 1
        elif oa != ob:
            aspect.differences.append((test, oa, ob))
    if skipped:
        aspect.info.append(f"{skipped} tests of layouts only one side ran left out")
    for side, checks in only.items():
        if checks:
            other = "B" if side == "A" else "A"
            aspect.info.append(f"not comparable (only in {side}): {sum(checks.values())} test(s) of the check(s) "
                               f"{', '.join(sorted(checks))}, which {other}'s rmpeer never made "
                               f"(A: {_made_by(a)}; B: {_made_by(b)})")
    return aspect


def compare_bandwidth(a: Side, b: Side, tolerance: float) -> Aspect:
    aspect = Aspect(f"bandwidth (±{percent(tolerance)})",
                    source=f"A: {a.sources.get('bandwidth')}; B: {b.sources.get('bandwidth')}")
    if a.bandwidth is None or b.bandwidth is None:
        aspect.not_comparable = _why_not(a, b, "bandwidth")
        return aspect
    common, two_ways = [], Counter()
    for key in sorted(set(a.bandwidth) & set(b.bandwidth)):
        op = a.bandwidth_ops.get(key) or b.bandwidth_ops.get(key)
        ma, mb = a.figure_methods.get(op), b.figure_methods.get(op)
        if ma and mb and ma != mb:
            two_ways[(op, ma, mb)] += 1          # one figure timed two ways: not the same figure
        else:
            common.append(key)
    for (op, ma, mb), n in sorted(two_ways.items()):
        aspect.info.append(f"not comparable: {n} {op} figure(s) timed two ways (A {ma}, B {mb}; "
                           f"rmpeer.traffic.bandwidth.METHODS)")
    for key in common:
        ga, gb = a.bandwidth[key], b.bandwidth[key]
        if _beyond(ga, gb, tolerance):
            change = f" ({(gb - ga) / ga:+.1%})" if ga else ""
            aspect.differences.append((key, f"{ga:.1f} GB/s", f"{gb:.1f} GB/s{change}"))
    aspect.info.append(f"{len(common)} pairs compared")
    for label, only in (("A", set(a.bandwidth) - set(b.bandwidth)), ("B", set(b.bandwidth) - set(a.bandwidth))):
        if only:
            aspect.info.append(f"{len(only)} pairs measured only in {label}")
    if not common:
        aspect.not_comparable = "no pair was measured in both"
    return aspect


def compare(a: Side, b: Side, tolerance: float = 0.05) -> list[Aspect]:
    cover = coverage(a, b)
    return [*compare_calls(a, b, cover), compare_structs(a, b), compare_selection(a, b), compare_facts(a, b),
            compare_clocks(a, b, tolerance), compare_links(a, b), compare_tests(a, b, cover),
            compare_bandwidth(a, b, tolerance)]
