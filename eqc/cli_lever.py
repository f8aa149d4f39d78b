"""``eqc lever``: train lever-game pools under the five rules, print the cross-play table,
write ``DIR/lever_xp.json`` and ``DIR/lever_xp.png``.

Wire it into a parser with ``add_lever_parser(subparsers)``; the parsed namespace's ``run``
is :func:`run_lever`. :func:`lever_experiment` is the same without argparse.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from eqc.domains.lever.evaluate import CrossPlay, cross_play
from eqc.domains.lever.game import DEFAULT_PAYOFFS, lever_game
from eqc.domains.lever.plots import plot_cross_play
from eqc.domains.lever.train import RULES, LeverConfig, train_pools, training_steps

JSON_NAME = "lever_xp.json"
PLOT_NAME = "lever_xp.png"


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


def lever_experiment(
    *,
    seeds: int = 16,
    out: str | Path | None = None,
    payoffs: Sequence[float] | None = None,
    config: LeverConfig | None = None,
    seed: int = 0,
    progress: bool = True,
    threads: int | None = 1,
) -> dict[str, CrossPlay]:
    """Train the five pools, return ``{rule: CrossPlay}``; with ``out``, also write the JSON and the heatmap there.

    ``threads``: torch CPU threads during training (restored afterwards; ``None`` leaves the
    setting alone). One thread is fastest for these tiny batched networks, especially on
    shared machines where a thread pool spends its time waiting.
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 2:
        raise ValueError(f"seeds (agents per pool) must be an int >= 2 for cross-play, got {seeds!r}")
    game = lever_game(payoffs)
    config = config or LeverConfig()
    with _torch_threads(threads), tqdm(
        total=training_steps(RULES, config), desc="lever pools", unit="step", disable=not progress
    ) as bar:
        pools = train_pools(game, RULES, num_agents=seeds, seed=seed, config=config, on_step=lambda: bar.update(1))
    results = {rule: cross_play(game, pool.probabilities) for rule, pool in pools.items()}
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / JSON_NAME, {rule: r.as_dict() for rule, r in results.items()})
        plot_cross_play(results, out / PLOT_NAME)
    return results


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """Temporarily use ``threads`` torch CPU threads."""
    if threads is None:
        yield
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int or None, got {threads!r}")
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def format_table(results: dict[str, CrossPlay]) -> str:
    """The XP table as aligned text."""
    lines = [f"{'rule':<8} {'SP':>6} {'XP':>6} {'± sem':>7}"]
    for rule, r in results.items():
        lines.append(f"{rule:<8} {r.sp_mean:>6.3f} {r.xp_mean:>6.3f} {r.xp_sem:>7.3f}")
    return "\n".join(lines)


def write_json_atomic(path: Path, data: object) -> None:
    """Write ``data`` as JSON to a temporary file next to ``path``, then ``os.replace`` it into place."""
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run_lever(args: argparse.Namespace) -> int:
    """Run ``eqc lever`` from parsed arguments; prints the table and where the files went. Returns 0."""
    if args.seeds < 2:
        raise SystemExit("eqc lever: --seeds must be at least 2 (cross-play pairs distinct agents)")
    config = LeverConfig(steps=args.steps, lr=args.lr, restarts=args.restarts, device=args.device)
    results = lever_experiment(
        seeds=args.seeds, out=args.out, payoffs=args.payoffs, config=config, seed=args.seed, progress=not args.no_progress,
        threads=args.threads,
    )
    print(format_table(results))
    print(f"wrote {Path(args.out) / JSON_NAME} and {Path(args.out) / PLOT_NAME}")
    return 0
