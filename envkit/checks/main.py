"""The bundle's command line, one argparse tree for every program it carries:

    python bundle.zip run [--config JSON] [--out FILE] [--python P]  the suite's JSON report
    python bundle.zip list                                           check ids, what each catches
    python bundle.zip capture [--conda-prefix P] [--out F]          installed state, for locks
    python bundle.zip health [--config JSON] [--drain] ...          node health
    torchrun ... bundle.zip collective --out-dir D                  cross-node all-reduce

(`python -m envkit.checks ...` from envkit's source does the same.)"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import List, Optional


def _parser() -> argparse.ArgumentParser:
    from .programs.health import DEFAULT_TIMEOUT_S

    parser = argparse.ArgumentParser(prog="envkit-checks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the suite and print (or write) the JSON report")
    run.add_argument("--config", default="{}", help="verification settings as JSON")
    run.add_argument("--out", help="write the report here instead of stdout")
    run.add_argument("--python", help="interpreter for the checks (default: this one)")
    sub.add_parser("list", help="list check ids and what each catches")
    captured = sub.add_parser("capture", help="print what is installed here, as lock sections")
    captured.add_argument("--conda-prefix", help="the conda environment to read (if any)")
    captured.add_argument("--out", help="write the JSON here instead of stdout")
    health = sub.add_parser("health", help="node health: a fast subset, one line of reason")
    health.add_argument("--config", default="{}", help="verification settings as JSON")
    health.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    health.add_argument("--drain", action="store_true", help="drain this node when unhealthy")
    health.add_argument("--node", help="the node's Slurm name (default $SLURMD_NODENAME)")
    health.add_argument("--python", default=sys.executable, help="interpreter with torch")
    health.add_argument(
        "--npd",
        action="store_true",
        help="node-problem-detector's plugin protocol: exit 0 ok, 1 problem, 2 unknown",
    )
    health.add_argument(
        "--baseline",
        choices=["reset"],
        help="forget this node's recorded topology first (after intended hardware work)",
    )
    collective = sub.add_parser("collective", help="multi-node all-reduce under torchrun")
    collective.add_argument("--out-dir", required=True, help="the run's shared reports folder")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        from .programs.run import run_suite, write_json

        # SIGTERM (a deadline, Ctrl-C at envkit's end) unwinds like Ctrl-C: the session's finally
        # blocks kill the check workers' process groups, so a burn-in stops with the run.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            report = run_suite(json.loads(args.config), args.python)
        except KeyboardInterrupt:
            sys.stderr.write("envkit-checks: stopped\n")
            return 130
        write_json(report, args.out)
        return 1 if report["summary"]["fail"] or report["summary"]["error"] else 0
    if args.command == "list":
        from .suite import chosen

        for spec in chosen([], [], bench=True):
            sys.stdout.write(f"{spec.id:<28} {spec.doc.splitlines()[0] if spec.doc else ''}\n")
        return 0
    if args.command == "capture":
        from .programs.lockstate import capture
        from .programs.run import write_json

        state, arch = capture(args.conda_prefix)
        write_json({"arch": arch, "state": state}, args.out, indent=1, sort=True)
        return 0
    if args.command == "health":
        from .programs.health import main as health

        return health(
            json.loads(args.config),
            args.timeout,
            args.drain,
            args.node,
            args.python,
            reset_baseline=args.baseline == "reset",
            npd=args.npd,
        )
    from .programs.crossnode import main as collective

    return collective(args.out_dir)
