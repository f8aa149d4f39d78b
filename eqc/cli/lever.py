"""``eqc lever``: the main demo. ``add_lever_parser(subparsers)`` registers it; ``run_lever(args)`` runs it.

``eqc.domains.lever.lever_experiment`` is the same experiment without argparse.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eqc.cli.common import (
    add_threads_flag,
    device,
    float_in,
    output_dir,
    positive_int,
    prepare_output_dir,
    seed_list,
)
from eqc.domains.lever.experiment import JSON_NAME, PLOT_NAME, format_table, lever_experiment
from eqc.domains.lever.game import DEFAULT_PAYOFFS, check_payoffs
from eqc.domains.lever.train import LeverConfig

__all__ = ["MAX_LEVERS", "add_lever_parser", "run_lever"]

#: Most levers ``--payoffs`` accepts. Building the symmetry group of n levers (Schreier-Sims over
#: S(n-1)) dominates the cost and grows steeply: 40 levers take about 6 s, 60 about 25 s on one core.
MAX_LEVERS = 64

DESCRIPTION = """\
Train pools of lever-game agents under five rules and cross-play them.

Two players each pull one of the levers; they are paid the lever's payoff only if they pull the
same one (default: nine levers pay 1.0, one pays 0.9). Rules: sp (self-play), op (Other-Play over
the full symmetry group), gop (G-OP over a cyclic subgroup, symmetrized at test time), eq (the
symmetrized network trained by self-play), sp+sym (the sp agents symmetrized at test time).

Prints the cross-play table and writes OUT/lever_xp.json (per rule: SP/XP means, the XP standard
error, the per-pair matrix, seeds, the configuration and the eqc version) and the heatmap
OUT/lever_xp.png. Every flag is checked before training starts.
"""


def _payoffs(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be comma-separated numbers, got {text!r}") from None
    try:
        check_payoffs(values)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err).replace("payoffs must", "must", 1)) from None
    if len(values) > MAX_LEVERS:
        raise argparse.ArgumentTypeError(
            f"{len(values)} levers is more than the {MAX_LEVERS} supported: the symmetry group's cost grows "
            "steeply with the number of levers (40 take about 6 s, 60 about 25 s)"
        )
    return values


def _coefficients(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be comma-separated numbers, got {text!r}") from None
    if not values or any(not v >= 0 or v == float("inf") for v in values):
        raise argparse.ArgumentTypeError(f"must be one or more finite coefficients >= 0, got {text!r}")
    return values


def add_lever_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``lever`` subcommand to ``subparsers`` (from ``ArgumentParser.add_subparsers``)."""
    defaults = LeverConfig()
    parser = subparsers.add_parser(
        "lever",
        help="the main demo: train SP, OP, G-OP, EQ and SP+sym lever-game pools; cross-play table and heatmap",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seeds", type=seed_list(2), default=list(range(16)),
                        help="one agent per seed in each pool, at least 2: '0-15', '0,2,5-7' (default 0-15)")
    parser.add_argument("--out", type=output_dir, default="runs/lever", help="output directory, created if needed (default runs/lever)")
    parser.add_argument("--device", type=device, default="cpu", help="torch device: cpu, cuda or cuda:N (default cpu)")
    parser.add_argument("--steps", type=positive_int, default=defaults.steps, help=f"Adam steps per pool (default {defaults.steps})")
    parser.add_argument("--lr", type=float_in(0.0, low_open=True), default=defaults.lr, help=f"learning rate, > 0 (default {defaults.lr})")
    parser.add_argument(
        "--restarts", type=positive_int, default=defaults.restarts,
        help=f"candidates per agent, the best kept (default {defaults.restarts})",
    )
    parser.add_argument(
        "--payoffs", type=_payoffs, default=list(DEFAULT_PAYOFFS),
        help=f"comma-separated lever payoffs, 2 to {MAX_LEVERS} levers (default nine 1.0 and one 0.9)",
    )
    parser.add_argument(
        "--entropy-sweep", type=_coefficients, default=None, metavar="C1,C2,...",
        help="instead of the five rules: self-play pools trained with payoff + c x entropy for each coefficient c (0 added as "
        "the baseline), sampled and greedified; writes OUT/lever_entropy.json and .md (eqc.domains.lever.entropy)",
    )
    add_threads_flag(parser)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(run=run_lever)
    return parser


def run_lever(args: argparse.Namespace) -> int:
    """Run ``eqc lever`` from parsed arguments: prepare ``--out``, train, print the table and where the files went.

    Raises :class:`eqc.cli.common.FlagError` (``eqc`` exits 2 with usage) when ``--out`` cannot be written.
    """
    out = prepare_output_dir(Path(args.out), "--out")
    config = LeverConfig(steps=args.steps, lr=args.lr, restarts=args.restarts, device=args.device)
    if args.entropy_sweep is not None:
        from eqc.domains.lever.entropy import entropy_sweep, render_entropy_sweep
        from eqc.domains.lever.game import lever_game
        from eqc.io import json_safe, write_json_atomic, write_text_atomic

        record = entropy_sweep(lever_game(args.payoffs), args.entropy_sweep, seeds=args.seeds, config=config)
        record["command"] = " ".join(args.command_line)
        write_json_atomic(out / "lever_entropy.json", json_safe(record))  # NaN (no jackknife under 3 agents) as null
        text = render_entropy_sweep(record) + f"\nProduced by `{record['command']}`.\n"
        write_text_atomic(out / "lever_entropy.md", text)
        print(text)
        return 0
    results = lever_experiment(
        seeds=args.seeds, out=out, payoffs=args.payoffs, config=config,
        progress=not args.no_progress, threads=None,
    )
    print(format_table(results))
    print(f"wrote {out / JSON_NAME} and {out / PLOT_NAME}")
    return 0
