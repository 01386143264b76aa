"""`rmpeer fleet ...`: the subcommands of fleet mode (rmpeer/cli/__init__.py calls add_parser and run)."""

from __future__ import annotations

import argparse

from rmpeer.cli.cards import add_options as add_card_options, passed_on
from rmpeer.model.result import TIERS


def minutes(text: str) -> int:
    """A job's time limit: whole minutes, at least 1 (Slurm reads --time=0 as no limit at all)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of minutes") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: at least 1 minute (Slurm reads 0 as no time limit)")
    return value

HELP = """Run rmpeer across a fleet from the cluster's own hooks. Files for Slurm (prolog,
HealthCheckProgram, NHC check) and Kubernetes (Indexed Job, node-problem-detector plugin,
RBAC) come with `rmpeer fleet files ENGINE DIR`. Exit codes of `fleet node` are certify's:
0 CERTIFIED, 1 NOT CERTIFIED, 4 DEGRADED; 2, 3, 5, 6, 7 the tool gave no verdict (never drains)."""


def add_parser(sub) -> None:
    f = sub.add_parser("fleet", help="certify a fleet through Slurm or Kubernetes (hooks, sweep, collect)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    fs = f.add_subparsers(dest="fleet_command", required=True)

    n = fs.add_parser("node", help="one node's run, as a hook calls it: exit code and one reason line")
    n.add_argument("--tier", choices=TIERS, default="quick")
    where = n.add_mutually_exclusive_group(required=True)
    where.add_argument("--output", help="the folder for this node's status.json and certificate")
    where.add_argument("--shared", help="a sweep's shared folder: this node writes <shared>/<node>/")
    n.add_argument("--if-stale", help="a certificate that, while fresh for this platform and tier, skips the run")
    n.add_argument("--require-idle", action="store_true", help="no verdict (exit 7) while other processes hold the GPUs")
    n.add_argument("--deadline", metavar="SECONDS",
                   help="certify's --deadline: the run ends INCOMPLETE (exit 5) if it has not ended by then")
    n.add_argument("--require-complete", action="store_true",
                   help="certify's --require-complete: no verdict (exit 8) when a check could not run")
    n.add_argument("--run-id", metavar="ID",
                   help="the hook's id of this run, written into status.json: a hook drains only on its own run's "
                        "status (rmpeer/integrations)")
    add_card_options(n, env_help=False)

    s = fs.add_parser("sweep", help="submit one sbatch --exclusive job over the nodes (several above --max-nodes)")
    s.add_argument("--nodes", required=True, help="a Slurm host list, e.g. gpu[001-128]")
    s.add_argument("--tier", choices=TIERS, default="full")
    s.add_argument("--shared", required=True, help="a folder every node can write: <shared>/<node>/")
    s.add_argument("--max-nodes", type=int, default=300, help="nodes per job (default 300)")
    s.add_argument("--time", type=minutes, default=30, help="the job's time limit in minutes (default 30)")
    s.add_argument("--partition")
    s.add_argument("--rmpeer", help="the rmpeer command on the nodes (default: this one's path)")
    s.add_argument("--wait", action="store_true", help="return when the jobs have ended (sbatch --wait)")

    c = fs.add_parser("collect", help="the node table and merged outputs of a sweep; --drain acts on them")
    c.add_argument("dir", help="the sweep's shared folder")
    c.add_argument("--drain", action="store_true",
                   help="drain failed nodes (reason 'rmpeer: ...'), re-run once a node below its floors only, "
                        "resume passing nodes whose reason starts with 'rmpeer:'")
    c.add_argument("--degraded", choices=("drain", "keep"), default="drain",
                   help="what --drain does with a DEGRADED node (default drain)")
    c.add_argument("--time", type=minutes, default=30, help="time limit of a re-run in minutes (default 30)")
    c.add_argument("--rmpeer", help="the rmpeer command on the nodes, for a re-run (default: this one's path)")
    c.add_argument("--no-report", action="store_true", help="do not build the merged HTML report")

    lb = fs.add_parser("label", help="Kubernetes: node label and taint patches from collected results")
    lb.add_argument("dir", help="a folder of per-node result folders (<dir>/<node>/)")
    lb.add_argument("--apply", action="store_true", help="patch the nodes (kubernetes client, kubeconfig or in-cluster)")

    fl = fs.add_parser("files", help="copy the shipped Slurm or Kubernetes files into a folder")
    fl.add_argument("engine", choices=("slurm", "kubernetes"))
    fl.add_argument("dir")


def run(args) -> int:
    """The subcommand's options as plain values: nothing in rmpeer.fleet takes the Namespace."""
    from rmpeer.cli.certify_options import run_argv
    from rmpeer.fleet.collect import collect
    from rmpeer.fleet.files import main_files
    from rmpeer.fleet.label import main_label
    from rmpeer.fleet.node import main_node
    from rmpeer.fleet.sweep import submit

    if args.fleet_command == "node":
        return main_node(tier=args.tier, output=args.output, shared=args.shared, certify=run_argv,
                         if_stale=args.if_stale, require_idle=args.require_idle, run_id=args.run_id or "",
                         cards=passed_on(args), deadline=args.deadline, require_complete=args.require_complete)
    if args.fleet_command == "sweep":
        return submit(nodes=args.nodes, tier=args.tier, shared=args.shared, max_nodes=args.max_nodes,
                      time_min=args.time, partition=args.partition, rmpeer=args.rmpeer, wait=args.wait)
    if args.fleet_command == "collect":
        return collect(args.dir, drain=args.drain, degraded=args.degraded, time_min=args.time, rmpeer=args.rmpeer,
                       report=not args.no_report)
    if args.fleet_command == "label":
        return main_label(args.dir, apply=args.apply)
    return main_files(args.engine, args.dir)
