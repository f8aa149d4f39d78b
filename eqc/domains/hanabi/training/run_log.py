"""Where a training run reports: ``metrics.csv``, ``learning_curve.png``, TensorBoard, and progress.

Progress is a bar on a terminal (against whichever limit binds: the move budget, or the wall-clock
``max_minutes``, with its ETA), and one line per evaluation otherwise (``nohup ... > log`` gets
readable lines, not thousands of carriage returns).
"""

from __future__ import annotations

import csv
import io
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from eqc.io import atomic_write, write_text_atomic

__all__ = ["METRICS", "RunLog", "plot_curve"]

METRICS = (
    "moves", "updates", "wall_s", "eval_score", "eval_sem", "eval_bomb_out_rate", "eval_perfect_rate",
    "train_score", "train_episodes", "loss", "epsilon", "entropy", "moves_per_s", "updates_per_s",
)


def plot_curve(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """Greedy evaluation score (± SEM) against wall-clock minutes and against moves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows:
        return
    minutes = [r["wall_s"] / 60 for r in rows]
    moves = [r["moves"] / 1e6 for r in rows]
    score = [r["eval_score"] for r in rows]
    sem = [r["eval_sem"] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, x, label in ((axes[0], minutes, "wall-clock minutes"), (axes[1], moves, "moves (millions)")):
        ax.errorbar(x, score, yerr=sem, marker="o", markersize=3, capsize=2)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("greedy self-play score")
    axes[0].set_ylim(0, None)
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write(path, lambda f: f.write(buf.getvalue()))


class RunLog:
    """The metrics rows of one run and everything written from them.

    Args:
        out: the run directory.
        title: the learning curve's title.
        rows: rows already logged (a resumed run's); :attr:`rows` is every row so far, this call's appended.
        progress: a progress bar when stderr is a terminal; without one, a line per evaluation goes to ``log``.
        log: where lines go.
        total_moves, start_moves: the move budget and where this call starts.
        max_minutes: this call's wall-clock limit (None: none); the bar follows it when it binds.
        tensorboard: a ``SummaryWriter`` or None.
        columns: the columns of ``metrics.csv`` (:data:`METRICS`, then the learner's other scalars); a key of a row
            outside them gets a column after them, not dropped (a row without a column's key leaves it empty).
    """

    def __init__(self, out: Path, title: str, rows: list[dict[str, Any]], *, progress: bool, log: Callable[[str], None],
                 total_moves: int, start_moves: int, max_minutes: float | None, tensorboard: Any = None,
                 columns: Sequence[str] = METRICS) -> None:
        self.out, self.title, self.log, self.tensorboard = out, title, log, tensorboard
        self.columns = tuple(columns)
        self._rows = list(rows)
        self.start = time.monotonic()
        self.bar = None
        if progress and sys.stderr.isatty():
            from tqdm import tqdm

            if max_minutes is not None:  # the clock binds: a bar in seconds, moves as a postfix
                self.bar = tqdm(total=round(60 * max_minutes), unit="s", dynamic_ncols=True, desc="time")
            else:
                self.bar = tqdm(total=total_moves, initial=start_moves, unit="move", unit_scale=True, dynamic_ncols=True)
        self.lines = self.bar is None
        self.timed = max_minutes is not None

    @property
    def rows(self) -> tuple[dict[str, Any], ...]:
        """Every evaluation row of the run so far, oldest first."""
        return tuple(self._rows)

    def advanced(self, moves: int) -> None:
        """The run made moves up to ``moves``."""
        if self.bar is None:
            return
        if self.timed:
            self.bar.n = min(self.bar.total, round(time.monotonic() - self.start))
            self.bar.set_postfix_str(f"{moves:,} moves", refresh=False)
            self.bar.refresh()
        else:
            self.bar.update(moves - self.bar.n)

    def evaluated(self, row: dict[str, Any]) -> None:
        """Record one evaluation row: CSV, curve, TensorBoard, progress."""
        self._rows.append(row)
        columns = list(dict.fromkeys((*self.columns, *(k for r in self._rows for k in r))))
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=columns)
        writer.writeheader()
        for r in self._rows:
            writer.writerow({k: r.get(k, "") for k in columns})
        write_text_atomic(self.out / "metrics.csv", text.getvalue())
        plot_curve(self._rows, self.out / "learning_curve.png", self.title)
        if self.tensorboard is not None:
            for key, value in row.items():
                self.tensorboard.add_scalar(key, value, row["moves"])
        if self.bar is not None:
            self.bar.set_postfix_str(f"{row['moves']:,} moves, score {row['eval_score']:.2f}")
        elif self.lines:
            self.log(f"{row['moves']:>12,} moves  {row['wall_s'] / 60:6.1f} min  greedy score {row['eval_score']:.2f} "
                     f"± {row['eval_sem']:.2f} over evaluation games (bomb-out {row['eval_bomb_out_rate']:.1%})")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.tensorboard is not None:
            self.tensorboard.close()
