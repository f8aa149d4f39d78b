"""Cross-play between the agents of two cells: the pairs a test of the two cells needs beyond each cell's own.

A test of cells A and B (:mod:`.comparisons`) relabels agents over the matrix of every agent of both cells,
each in its cell's form (pool, test-time symmetrizer, hidden-state scheme), so it needs every agent of A
with every agent of B, in both orders, played as the cells are (seats alternating, the cells' common
decks). For two cells of one pool that includes each agent with itself in the other form. The blocks are
saved at ``DIR/xp/between/<form A>--<form B>.json`` under a key naming both forms, both cells' agents
(digests), games and decks (:mod:`.reuse`), so that tables comparing the same two forms share the games.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.reproduce.reuse import ReuseError, agent_digests, check_result_path, load_result, range_problem, save_result
from eqc.domains.hanabi.reproduce.specs import Cell
from eqc.domains.hanabi.xp import play_pairs

__all__ = ["BLOCKS", "form", "play_between", "union_matrix"]

#: The per-pair matrices between cells A and B: A's agent ``i`` with B's agent ``j`` (``*_ab``, ``[n_a, n_b]``; ``i`` is
#: the row agent, seated as in a cell's matrix) and B's agent ``j`` with A's agent ``i`` (``*_ba``, ``[n_b, n_a]``).
BLOCKS = ("matrix_ab", "matrix_ba", "bomb_out_ab", "bomb_out_ba")


def form(cell: Cell) -> dict[str, object]:
    """What a cell does to its pool's agents (two cells of one form hold the same policies); ``acts_on`` is named only
    when the group acts on something other than the colours, and ``average_over`` only when set (so that saved forms
    keep their keys)."""
    rank = {"acts_on": cell.acts_on} if cell.acts_on != "colour" else {}
    averaged = {"average_over": [list(p) for p in cell.average_over]} if cell.average_over else {}
    return {"pool": cell.pool, "symmetrize": cell.symmetrize, "hidden_scheme": cell.hidden_scheme, **rank, **averaged}


def _form_slug(cell: Cell) -> str:
    if cell.average_over:
        return f"{cell.pool}_averaged_" + "_".join("".join(map(str, p)) for p in cell.average_over)
    if cell.symmetrize is None:
        return cell.pool
    return f"{cell.pool}_{cell.symmetrize}_{cell.hidden_scheme}".lower() + ("" if cell.acts_on == "colour" else f"_{cell.acts_on}")


def play_between(a: Cell, runs_a: Sequence[Path], policies_a: list[TrainedPolicy], b: Cell, runs_b: Sequence[Path],
                 policies_b: list[TrainedPolicy], games: int, deck_seed: int, where: Path, key_extra: dict[str, Any], *, reuse: bool,
                 log: Callable[[str], None]) -> dict[str, torch.Tensor]:
    """The :data:`BLOCKS` between cells ``a`` and ``b`` (their agents ``runs_*`` loaded in their forms as ``policies_*``),
    ``games`` per ordered pair on the decks of ``deck_seed``; taken from ``where`` when ``reuse`` finds them saved under
    the same key (``key_extra``: what else the games depend on, e.g. precisions); :class:`~.reuse.ReuseError` for saved
    blocks that cannot be trusted (unsealed, edited, of another shape, impossible scores or rates)."""
    n_a, n_b = len(runs_a), len(runs_b)
    key = {"between": [form(a), form(b)], "agents": [agent_digests(list(runs_a)), agent_digests(list(runs_b))], "games": games,
           "deck_seed": deck_seed, **key_extra}
    path = where / f"{_form_slug(a)}--{_form_slug(b)}.json"
    check_result_path(path)
    shapes = {"matrix_ab": (n_a, n_b), "matrix_ba": (n_b, n_a), "bomb_out_ab": (n_a, n_b), "bomb_out_ba": (n_b, n_a)}
    what = f"cross-play between the cells {a.label!r} and {b.label!r}"
    if reuse and (saved := load_result(path, key, what)) is not None:
        problem = _problem(saved, shapes, policies_a[0].rules.max_score)
        if problem is not None:
            raise ReuseError(path, what, problem)
        log(f"{a.label} with {b.label}: cross-play between the cells reused from {path}")
        return {name: torch.tensor(saved[name], dtype=torch.float64) for name in BLOCKS}
    pairs = [(i, n_a + j) for i in range(n_a) for j in range(n_b)] + [(n_a + j, i) for j in range(n_b) for i in range(n_a)]
    scores, bombed, _, _ = play_pairs([*policies_a, *policies_b], pairs, games, deck_seed=deck_seed)
    means, rates, split = scores.double().mean(dim=1), bombed.double().mean(dim=1), n_a * n_b
    blocks = {"matrix_ab": means[:split].view(n_a, n_b), "matrix_ba": means[split:].view(n_b, n_a),
              "bomb_out_ab": rates[:split].view(n_a, n_b), "bomb_out_ba": rates[split:].view(n_b, n_a)}
    save_result(path, key, {name: blocks[name].tolist() for name in BLOCKS})
    log(f"{a.label} with {b.label}: {len(pairs)} ordered pairs between the cells played")
    return blocks


def _problem(saved: dict[str, Any], shapes: dict[str, tuple[int, int]], max_score: int) -> str | None:
    """What makes saved blocks unusable (a block missing, of another shape, scores outside [0, ``max_score``] or rates
    outside [0, 1]), else None."""
    for name, shape in shapes.items():
        try:
            block = torch.tensor(saved[name], dtype=torch.float64)
        except KeyError:
            return f"it lacks {name!r}"
        except (TypeError, ValueError, RuntimeError):
            return f"its {name!r} is not a matrix of numbers"
        if tuple(block.shape) != shape:
            return f"its {name!r} has shape {list(block.shape)}, the cells give {list(shape)}"
        problem = range_problem(name, block.flatten().tolist(), 0, 1 if name.startswith("bomb_out") else max_score)
        if problem is not None:
            return problem
    return None


def union_matrix(within_a: torch.Tensor, within_b: torch.Tensor, ab: torch.Tensor, ba: torch.Tensor) -> torch.Tensor:
    """The ``[n_a + n_b]^2`` matrix over A's agents (rows ``0..n_a-1``) then B's, from each cell's own matrix and the blocks."""
    return torch.cat([torch.cat([within_a, ab], dim=1), torch.cat([ba, within_b], dim=1)], dim=0)
