"""Conditional action matrices ``P(a_t of one agent | a_(t-1) of its partner)`` and their heatmaps.

Rows index the partner's previous action, columns the response. In a two-player turn-based game
consecutive moves of a game's action sequence are such (previous, response) pairs; ``actors``
restricts the count to the responses of chosen players (e.g. one agent in cross-play).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from eqc._checks import check_int

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

__all__ = ["action_pair_counts", "conditional_action_matrix", "plot_action_matrix"]


def _int_sequence(seq: object, name: str) -> list[int]:
    if isinstance(seq, torch.Tensor):
        if seq.dim() != 1 or seq.dtype.is_floating_point or seq.dtype.is_complex or seq.dtype == torch.bool:
            raise TypeError(f"{name} must be a 1-D integer tensor, got shape {tuple(seq.shape)} {seq.dtype}")
        return [int(v) for v in seq.tolist()]
    if not isinstance(seq, Sequence) or isinstance(seq, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of ints, got {type(seq).__name__}")
    for k, v in enumerate(seq):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name}[{k}] must be a Python int, got {type(v).__name__}")
    return list(seq)


def action_pair_counts(
    sequences: Sequence[Sequence[int]],
    num_actions: int,
    *,
    actors: Sequence[Sequence[int]] | None = None,
    responders: Sequence[int] | None = None,
) -> torch.Tensor:
    """``[num_actions, num_actions]`` long counts of ``(sequence[t-1], sequence[t])`` over all games.

    ``actors`` (parallel to ``sequences``: who made each move) with ``responders`` counts only the
    pairs whose response ``sequence[t]`` was made by one of ``responders`` and whose previous move
    was made by someone else. Without them every consecutive pair counts.
    """
    check_int(num_actions, "num_actions", low=1)
    if not isinstance(sequences, Sequence) or isinstance(sequences, (str, bytes)):
        raise TypeError(f"sequences must be a sequence of action sequences, got {type(sequences).__name__}")
    if (actors is None) != (responders is None):
        raise ValueError("actors and responders must be given together")
    if actors is not None and len(actors) != len(sequences):
        raise ValueError(f"actors must hold one sequence per game ({len(sequences)}), got {len(actors)}")
    # Read only where actors are given, which come with responders (checked above).
    wanted = set() if responders is None else set(_int_sequence(responders, "responders"))
    counts = torch.zeros(num_actions, num_actions, dtype=torch.long)
    for g, raw in enumerate(sequences):
        seq = _int_sequence(raw, f"sequences[{g}]")
        for t, a in enumerate(seq):
            if not 0 <= a < num_actions:
                raise ValueError(f"sequences[{g}][{t}] = {a} is not an action in [0, {num_actions})")
        who = None
        if actors is not None:
            who = _int_sequence(actors[g], f"actors[{g}]")
            if len(who) != len(seq):
                raise ValueError(f"actors[{g}] must have one entry per move ({len(seq)}), got {len(who)}")
        for t in range(1, len(seq)):
            if who is not None and (who[t] not in wanted or who[t - 1] == who[t]):
                continue
            counts[seq[t - 1], seq[t]] += 1
    return counts


def conditional_action_matrix(counts: torch.Tensor) -> torch.Tensor:
    """Row-normalised float64 counts: ``P(response | previous)``; rows never observed are NaN."""
    if not isinstance(counts, torch.Tensor) or counts.dim() != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"counts must be a square 2-D tensor, got {getattr(counts, 'shape', type(counts).__name__)}")
    if bool((counts < 0).any()):
        raise ValueError("counts must be non-negative")
    c = counts.double()
    totals = c.sum(dim=1, keepdim=True)
    return torch.where(totals > 0, c / totals.clamp(min=1e-300), torch.full_like(c, float("nan")))


def plot_action_matrix(
    matrix: torch.Tensor,
    labels: Sequence[str],
    *,
    title: str | None = None,
    path: str | Path | None = None,
    ax: Axes | None = None,
) -> Figure | SubFigure:
    """Heatmap of a conditional action matrix; returns the matplotlib Figure.

    y-axis: the partner's previous action, x-axis: the response (as in the paper's figures).
    Uses matplotlib's object API on an Agg canvas, so the global backend is untouched. Draws into
    ``ax`` when given; saves to ``path`` when given.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not isinstance(matrix, torch.Tensor) or matrix.dim() != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"matrix must be a square 2-D tensor, got {getattr(matrix, 'shape', type(matrix).__name__)}")
    if isinstance(labels, (str, bytes)) or len(labels) != matrix.shape[0]:
        raise ValueError(f"labels must hold one name per action ({matrix.shape[0]}), got {labels!r}")
    figure: Figure | SubFigure
    if ax is None:
        n = matrix.shape[0]
        figure = Figure(figsize=(0.3 * n + 2.0, 0.3 * n + 1.5), layout="constrained")
        FigureCanvasAgg(figure)
        ax = figure.add_subplot()
    else:
        figure = ax.figure
    image = ax.imshow(matrix.detach().double().cpu().numpy(), vmin=0.0, vmax=1.0, cmap="viridis")
    ticks = range(len(labels))
    ax.set_xticks(ticks, list(labels), rotation=90, fontsize=7)
    ax.set_yticks(ticks, list(labels), fontsize=7)
    ax.set_xlabel("response a_t")
    ax.set_ylabel("partner's previous action a_(t-1)")
    if title is not None:
        ax.set_title(title)
    figure.colorbar(image, ax=ax, label="P(a_t | a_(t-1))")
    if path is not None:
        figure.figure.savefig(path)  # the root Figure: ``figure`` itself, or the one holding a SubFigure
    return figure
