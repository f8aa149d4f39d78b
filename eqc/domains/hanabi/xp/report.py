"""Cross-play results on disk: ``xp.json`` (self-describing), ``xp.csv`` (one row per ordered pair), ``xp.png``.

Every file is written atomically (temporary file, then rename). ``xp.json`` holds the format,
the agents (path, symmetrization, training), games per pair, the deck seed and seating, the eqc
and torch versions, the summary (:meth:`CrossPlayResult.as_dict` plus the means of non-zero
games) and the per-pair matrices (row: agent ``i`` in seat ``k % 2`` of game ``k``; column: its partner).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from eqc._checks import check_list
from eqc.domains.hanabi.agent.files import versions
from eqc.domains.hanabi.xp.play import XPGames
from eqc.evaluation import pool_summary
from eqc.io import atomic_write, json_safe, write_json_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FORMAT", "heatmap_title", "plot_xp", "redraw_xp", "write_xp", "xp_record"]

FORMAT = "eqc-hanabi-xp"
SEATING = "common_decks(games_per_pair, rules, deck_seed); in game k the row agent sits in seat k % 2 (seat 0 moves first)"
CSV_FIELDS = (
    "first", "second", "first_name", "second_name", "kind", "games", "mean", "sem", "bomb_out_rate", "perfect_rate", "mean_nonzero",
)


def _check(games: object, agents: object) -> list[Mapping]:
    if not isinstance(games, XPGames):
        raise TypeError(f"games must be XPGames (from cross_play_games), got {type(games).__name__}")
    items = check_list(agents, "agents", item="agent descriptions (describe_policy)")
    if len(items) != games.num_agents or not all(isinstance(a, Mapping) for a in items):
        raise ValueError(f"agents must hold one description (a dict) per agent ({games.num_agents}), got {len(items)}")
    return items


def _nonzero_means(games: XPGames) -> torch.Tensor:
    positive = games.scores > 0
    sums = (games.scores * positive).sum(1).double()
    return (sums / positive.sum(1)).view(games.num_agents, games.num_agents)  # NaN where every game scored 0


def xp_record(games: XPGames, agents: Sequence[Mapping], extra: Mapping | None = None) -> dict[str, Any]:
    """The contents of ``xp.json`` (see the module docstring); ``extra`` (e.g. the command) is merged in."""
    agents = _check(games, agents)
    summary = games.summary()
    record = {
        "format": FORMAT,
        "format_version": 1,
        "versions": versions(),
        "games_per_pair": games.games,
        "deck_seed": games.deck_seed,
        "seating": SEATING,
        "agents": [dict(a) for a in agents],
        "summary": {
            "num_agents": games.num_agents,
            "xp_pairs": summary.xp.n,
            "xp_mean_nonzero": games.mean_nonzero(cross=True),
            "sp_mean_nonzero": games.mean_nonzero(cross=False),
            **{k: v for k, v in summary.as_dict().items() if not isinstance(v, list)},
        },
        "matrix": {**{k: v for k, v in summary.as_dict().items() if isinstance(v, list)}, "mean_nonzero": _nonzero_means(games).tolist()},
    }
    return json_safe({**record, **(dict(extra) if extra else {})})


def plot_xp(matrix: torch.Tensor, labels: Sequence[str], *, max_score: int, title: str | None = None) -> Figure:
    """Heatmap of pair means ``[A, A]`` (row: first agent, column: partner; SP on the diagonal); a matplotlib Figure.

    The colour scale runs from 0 to ``max_score``, the game's perfect score (``HanabiRules.max_score``:
    25 in the standard game, 9 in Mini-Hanabi), so a colour means the same share of a perfect game in
    every heatmap of one game.
    """
    if isinstance(max_score, bool) or not isinstance(max_score, int) or max_score < 1:
        raise ValueError(f"max_score must be a positive int (the game's perfect score), got {max_score!r}")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    a = matrix.shape[0]
    figure = Figure(figsize=(0.55 * a + 3.0, 0.5 * a + 2.5), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    image = ax.imshow(matrix.double().numpy(), vmin=0.0, vmax=float(max_score), cmap="viridis")
    if a <= 20:
        for i in range(a):
            for j in range(a):
                value = float(matrix[i, j])
                ax.text(j, i, f"{value:.1f}", ha="center", va="center", fontsize=7, color="white" if value < 0.6 * max_score else "black")
    ax.set_xticks(range(a), list(labels), rotation=90, fontsize=7)
    ax.set_yticks(range(a), list(labels), fontsize=7)
    ax.set_xlabel("partner")
    ax.set_ylabel("agent (seat k % 2 in game k)")
    if title:
        ax.set_title(title, fontsize=9)
    figure.colorbar(image, ax=ax, label="mean score")
    return figure


def write_xp(out: str | Path, games: XPGames, agents: Sequence[Mapping], *, extra: Mapping | None = None) -> dict[str, Path]:
    """Write ``xp.json``, ``xp.csv`` and ``xp.png`` into ``out`` (created); returns their paths by kind.

    ``agents[i]`` describes agent ``i`` (:func:`~eqc.domains.hanabi.xp.pools.describe_policy`,
    with a ``name`` for the plot and the CSV when present).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    record = xp_record(games, agents, extra)
    names = [str(a.get("name", i)) for i, a in enumerate(agents)]
    paths = {"json": out / "xp.json", "csv": out / "xp.csv", "png": out / "xp.png"}
    write_json_atomic(paths["json"], record)
    summary, nonzero = games.summary(), _nonzero_means(games)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for i, j in games.pairs:
        cells = (summary.mean, summary.sem, summary.bomb_out_rate, summary.perfect_rate, nonzero)
        values = ["" if math.isnan(float(t[i, j])) else repr(float(t[i, j])) for t in cells]
        writer.writerow([i, j, names[i], names[j], "sp" if i == j else "xp", int(summary.num_games[i, j]), *values])
    atomic_write(paths["csv"], lambda f: f.write(text.getvalue().encode()))
    _save_heatmap(paths["png"], summary.mean, names, record, games.max_score)
    return paths


def heatmap_title(mean: torch.Tensor, games_per_pair: int) -> str:
    """The heading of a cross-play heatmap: the XP of the matrix ``mean [A, A]`` with its jackknife standard error over
    agents (:func:`eqc.evaluation.pool_summary`: the agent is the unit; n/a with fewer than 3 agents), not the SEM
    over ordered pairs, which treats the pairs of one agent as independent."""
    if mean.shape[0] < 2:
        return f"one agent, no pair of distinct agents\n{games_per_pair} games; SP on the diagonal"
    summary = pool_summary(mean)
    se = "SE n/a" if math.isnan(summary.sem) else f"± {summary.sem:.2f}"
    return (f"XP {summary.mean:.2f} {se} (jackknife over {summary.agents} agents; {summary.ordered_pairs} ordered pairs)\n"
            f"{games_per_pair} games per pair; SP on the diagonal")


def _save_heatmap(path: Path, mean: torch.Tensor, names: Sequence[str], record: Mapping[str, Any], max_score: int) -> None:
    title = heatmap_title(mean, record["games_per_pair"])
    image = io.BytesIO()
    plot_xp(mean, names, max_score=max_score, title=title).savefig(image, format="png", dpi=120)
    atomic_write(path, lambda f: f.write(image.getvalue()))


def redraw_xp(out: str | Path, max_score: int) -> Path:
    """Draw ``out/xp.png`` again from ``out/xp.json`` (what :func:`write_xp` wrote), with the colour scale from 0 to
    ``max_score``: the heatmap of cross-play reused from disk, drawn by today's code. ``ValueError`` when the file is
    not an xp.json of this format."""
    path = Path(out) / "xp.json"
    try:
        record = json.loads(path.read_text())
        mean = torch.tensor(record["matrix"]["mean"], dtype=torch.float64)
        names = [str(a.get("name", i)) for i, a in enumerate(record["agents"])]
        _ = record["games_per_pair"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not an xp.json written by eqc ({type(exc).__name__}: {exc})") from None
    if record.get("format") != FORMAT or mean.shape != (len(names), len(names)):
        raise ValueError(f"{path} is not an xp.json written by eqc (format {record.get('format')!r}, matrix {list(mean.shape)}, "
                         f"{len(names)} agents)")
    png = Path(out) / "xp.png"
    _save_heatmap(png, mean, names, record, max_score)
    return png
