"""``eqc lever``: train lever-game pools under the five rules, print the cross-play table,
write ``DIR/lever_xp.json`` and ``DIR/lever_xp.png``.

Wire it into a parser with ``add_lever_parser(subparsers)``; the parsed namespace's ``run``
is :func:`run_lever`. :func:`eqc.domains.lever.experiment.lever_experiment` is the same without argparse.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from eqc.domains.lever.experiment import JSON_NAME, PLOT_NAME, format_table, lever_experiment
from eqc.domains.lever.game import DEFAULT_PAYOFFS
from eqc.domains.lever.train import LeverConfig


def _payoffs(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--payoffs must be comma-separated numbers, got {text!r}") from None


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def add_lever_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``lever`` subcommand to ``subparsers`` (from ``ArgumentParser.add_subparsers``)."""
    defaults = LeverConfig()
    parser = subparsers.add_parser(
        "lever",
        help="the lever game: SP, OP, G-OP, EQ and SP+symmetrizer pools, cross-play table and heatmap",
        description=__doc__,
    )
    parser.add_argument("--seeds", type=_positive_int, default=16, help="agents per pool, each independently seeded (>= 2; default 16)")
    parser.add_argument("--out", type=Path, default=Path("runs/lever"), help="output directory (default runs/lever)")
    parser.add_argument("--device", default="cpu", help="torch device (default cpu)")
    parser.add_argument("--steps", type=_positive_int, default=defaults.steps, help=f"Adam steps per pool (default {defaults.steps})")
    parser.add_argument("--lr", type=float, default=defaults.lr, help=f"learning rate (default {defaults.lr})")
    parser.add_argument("--restarts", type=_positive_int, default=defaults.restarts, help=f"candidates per agent (default {defaults.restarts})")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the pools (default 0)")
    parser.add_argument("--payoffs", type=_payoffs, default=list(DEFAULT_PAYOFFS), help="comma-separated lever payoffs (default nine 1.0 and one 0.9)")
    parser.add_argument("--threads", type=_positive_int, default=1, help="torch CPU threads while training (default 1: the networks are tiny)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(run=run_lever)
    return parser


def run_lever(args: argparse.Namespace) -> int:
    """Run ``eqc lever`` from parsed arguments; prints the table and where the files went. Returns 0, or 2 on bad input."""
    if args.seeds < 2:
        raise SystemExit("eqc lever: --seeds must be at least 2 (cross-play pairs distinct agents)")
    try:
        config = LeverConfig(steps=args.steps, lr=args.lr, restarts=args.restarts, device=args.device)
        results = lever_experiment(
            seeds=args.seeds, out=args.out, payoffs=args.payoffs, config=config, seed=args.seed,
            progress=not args.no_progress, threads=args.threads,
        )
    except (ValueError, TypeError) as err:
        print(f"eqc lever: error: {err}", file=sys.stderr)
        return 2
    print(format_table(results))
    print(f"wrote {Path(args.out) / JSON_NAME} and {Path(args.out) / PLOT_NAME}")
    return 0
