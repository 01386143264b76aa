"""`rmpeer history`: this host's trend per pair, from the history its runs keep beside the
state file (rmpeer.machine.history): each figure over the last runs, its median, and the last
run against it, the way a certify run's drift warning judges it (rmpeer.judge.drift)."""

from __future__ import annotations

from rmpeer.errors import EXIT_OK, ConfigError


def add_parser(sub):
    h = sub.add_parser("history", help="this host's bandwidth per pair over its last runs (the drift warnings' baseline)")
    h.add_argument("--state", metavar="FILE", help="the state file whose history to read (default: certify's, "
                   "RMPEER_STATE or /var/lib/rmpeer/state.json or ~/.cache/rmpeer/state.json)")
    h.add_argument("--target", default="live", metavar="LABEL", help="whose runs (default: live, this host)")
    h.add_argument("--last", type=int, default=10, metavar="N", help="the runs shown, newest last (default 10)")
    h.add_argument("--json", action="store_true", help="the runs as JSON instead of the table")
    return h


def run(args) -> int:
    import json
    from statistics import median as median_of

    from rmpeer.judge.drift import DRIFT_MARGIN, trend_rows
    from rmpeer.machine.history import history_path, load_history
    from rmpeer.machine.state import default_state_path
    from rmpeer.render.text import escaped

    if args.last < 1:
        raise ConfigError(f"--last {args.last}: give at least 1 run")
    path = history_path(args.state or default_state_path())
    runs, problem = load_history(path, args.target)
    if problem:
        raise ConfigError(problem)
    if not runs:
        raise ConfigError(f"{path}: no run of {args.target} in the history yet (a live quick or full "
                          f"certify with the boost keeps one)")
    shown = runs[-args.last:]
    if args.json:
        print(json.dumps(shown, indent=1, default=str))
        return EXIT_OK
    dates = [str(r.get("started") or "?")[5:16].replace("T", " ") for r in shown]
    print(f"history of {escaped(args.target)}: {len(runs)} run(s) in {path}; the last {len(shown)}, "
          f"driver {escaped(str(shown[-1].get('driver')))}")
    width = max([len(k) for k, _ in trend_rows(shown)] + [6])
    print(f"{'figure':<{width}} " + " ".join(f"{d:>11}" for d in dates) + f" {'median':>8} {'last':>7}")
    for key, values in trend_rows(shown):
        nums = [v for v in values if isinstance(v, (int, float))]
        median = median_of(nums) if nums else None
        last = values[-1]
        mark = ""
        if median and isinstance(last, (int, float)):
            change = (last - median) / median
            mark = f"{change:+.1%}" + (" !" if change < -DRIFT_MARGIN else "")
        print(f"{escaped(key):<{width}} " + " ".join(f"{v:>11.1f}" if isinstance(v, (int, float)) else f"{'-':>11}"
                                                     for v in values)
              + f" {median if median is None else round(median, 1):>8} {mark:>7}")
    print(f"GB/s; '!': more than {DRIFT_MARGIN:.0%} below the median (certify's default --drift-margin)")
    return EXIT_OK
