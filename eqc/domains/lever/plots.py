"""Cross-play heatmaps of lever-game pools (matplotlib's object API with the Agg canvas: no global backend)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from eqc.domains.lever.evaluate import CrossPlay


def plot_cross_play(results: Mapping[str, CrossPlay], path: str | Path) -> Path:
    """One heatmap per rule (rows: player 1's agent, columns: player 2's agent), saved as a PNG at ``path``."""
    if not results:
        raise ValueError("results is empty: nothing to plot")
    path = Path(path)
    figure = Figure(figsize=(3.2 * len(results) + 1.0, 4.0), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(results), squeeze=False)[0]
    image = None
    for ax, (rule, result) in zip(axes, results.items()):
        image = ax.imshow(result.matrix.numpy(), vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_title(f"{rule}\nXP {result.xp_mean:.2f} ± {result.xp_sem:.2f}, SP {result.sp_mean:.2f}", fontsize=9)
        ax.set_xlabel("agent (player 2)")
        ax.set_ylabel("agent (player 1)")
    figure.colorbar(image, ax=list(axes), shrink=0.8, label="expected payoff")
    figure.suptitle("Lever game: cross-play between independently trained agents")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    return path
