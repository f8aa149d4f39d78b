"""Cross-play heatmaps of lever-game pools (matplotlib's object API with the Agg canvas: no global backend)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize, TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from eqc.evaluation.cross_play import CrossPlayResult

__all__ = ["plot_cross_play"]


def _norm(results: Mapping[str, CrossPlayResult]) -> tuple[Normalize, str]:
    """One colour scale for every panel, covering 0 and every entry; diverging around 0 when an entry is negative."""
    low = min(0.0, *(float(r.mean.min()) for r in results.values()))
    high = max(0.0, *(float(r.mean.max()) for r in results.values()))
    if low < 0 < high:
        return TwoSlopeNorm(vcenter=0.0, vmin=low, vmax=high), "RdBu_r"
    if low == high:  # all zero
        high = 1.0
    return Normalize(vmin=low, vmax=high), "viridis"


def plot_cross_play(results: Mapping[str, CrossPlayResult], path: str | Path | None = None) -> Figure:
    """One heatmap per rule (rows: player 1's agent, columns: player 2's agent); saved as a PNG at ``path`` if given.

    All panels share one colour scale that spans 0 and every expected payoff, negative ones
    included (a diverging map centred on 0 then). Agent ticks are integers. Returns the Figure.
    """
    if not results:
        raise ValueError("results is empty: nothing to plot")
    figure = Figure(figsize=(3.2 * len(results) + 1.0, 4.0), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(results), squeeze=False)[0]
    norm, cmap = _norm(results)
    image = None
    for ax, (rule, result) in zip(axes, results.items(), strict=True):
        image = ax.imshow(result.mean.numpy(), norm=norm, cmap=cmap)
        ax.set_title(f"{rule}\nXP {result.xp.mean:.2f} ± {result.xp.sem:.2f}, SP {result.sp.mean:.2f}", fontsize=9)
        ax.set_xlabel("agent (player 2)")
        ax.set_ylabel("agent (player 1)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if image is not None:  # one panel per rule, at least one
        figure.colorbar(image, ax=list(axes), shrink=0.8, label="expected payoff")
    figure.suptitle("Lever game: cross-play between independently trained agents")
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=100)
    return figure
