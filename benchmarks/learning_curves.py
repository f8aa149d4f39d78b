"""Learning curves of training runs side by side: a table at chosen minutes and one figure.

Reads each run directory's ``metrics.csv`` (``eqc hanabi train --out DIR``) and reports, at each
of ``--minutes``, the last greedy evaluation made by then (score ± SEM on the run's fixed decks,
the moves played) and the run's mean moves/s and updates/s up to then. Writes the table as
Markdown to stdout and, with ``--plot``, the curves (score against wall-clock minutes, and against
moves) into one PNG.

    python benchmarks/learning_curves.py --run bf16=runs/ff_bf16 --run fp32=runs/ff_fp32 \
        --run "q probe=runs/q_probe" --minutes 10 30 60 --plot curves.png
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path


def read_rows(run: Path) -> list[dict[str, float]]:
    """The evaluation rows of ``run``'s ``metrics.csv``, numbers as floats, oldest first."""
    path = run / "metrics.csv"
    if not path.is_file():
        raise SystemExit(f"--run: {str(run)!r} holds no metrics.csv (give an eqc hanabi train run directory)")
    with path.open() as f:
        return [{k: float(v) if v not in ("", "nan") else math.nan for k, v in row.items()} for row in csv.DictReader(f)]


def at_minute(rows: list[dict[str, float]], minutes: float) -> dict[str, float] | None:
    """The last row evaluated by ``minutes`` of training, or the final row of a run stopped there (its
    last evaluation comes within 1% after the limit); None: the run stopped earlier."""
    limit = 60 * minutes
    if rows[-1]["wall_s"] < 0.99 * limit:
        return None
    if limit < rows[-1]["wall_s"] <= 1.01 * limit:
        return rows[-1]
    before = [r for r in rows if r["wall_s"] <= limit]
    return before[-1] if before else None


def cell(row: dict[str, float] | None) -> str:
    if row is None:
        return "-"
    return (f"{row['eval_score']:.2f} ± {row['eval_sem']:.2f} ({row['wall_s'] / 60:.1f} min, {row['moves'] / 1e6:.1f}M moves, "
            f"{row['moves'] / row['wall_s']:,.0f} moves/s, {row['updates'] / row['wall_s']:.1f} updates/s)")


def plot(runs: dict[str, list[dict[str, float]]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for label, rows in runs.items():
        axes[0].plot([r["wall_s"] / 60 for r in rows], [r["eval_score"] for r in rows], label=label, linewidth=1.2)
        axes[1].plot([r["moves"] / 1e6 for r in rows], [r["eval_score"] for r in rows], label=label, linewidth=1.2)
    axes[0].set_xlabel("wall-clock minutes (one torch thread)")
    axes[1].set_xlabel("moves (millions)")
    axes[0].set_ylabel("greedy self-play score, 1000 fixed decks")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].set_ylim(0, None)
    axes[0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, metavar="LABEL=DIR", help="a run directory and its label (repeat)")
    parser.add_argument("--minutes", type=float, nargs="+", default=[10.0, 60.0], help="where to read the curves (default 10 60)")
    parser.add_argument("--plot", type=Path, default=None, help="also write the curves to this PNG")
    parser.add_argument("--title", default="greedy self-play score while training", help="the figure's title")
    args = parser.parse_args(argv)
    runs: dict[str, list[dict[str, float]]] = {}
    for item in args.run:
        label, sep, folder = item.partition("=")
        if not sep or not label or not folder:
            parser.error(f"argument --run: must be LABEL=DIR, got {item!r}")
        runs[label] = read_rows(Path(folder))
    header = "| run | " + " | ".join(f"{m:g} min" for m in args.minutes) + " |"
    print(header)
    print("|---|" + "---:|" * len(args.minutes))
    for label, rows in runs.items():
        print(f"| {label} | " + " | ".join(cell(at_minute(rows, m)) for m in args.minutes) + " |")
    if args.plot is not None:
        plot(runs, args.plot, args.title)
        print(f"\nwrote {args.plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
