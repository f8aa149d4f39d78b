"""Cross-play of lever-game agent pools, exact: :func:`eqc.evaluation.cross_play` on expected payoffs.

``matrix[i, j]`` is the expected payoff when player 1 of agent ``i`` plays with player 2 of
agent ``j`` (both sample a lever independently): ``sum_a payoffs[a] pi_i(a) pi_j(a)``. The
summary (SP, XP as mean ± SEM over pairs) is :func:`eqc.evaluation.cross_play`'s, with each
pair's exact expected payoff entered as its single result.
"""

from __future__ import annotations

import torch

from eqc._checks import check_tensor
from eqc.domains.lever.game import LeverGame
from eqc.evaluation.cross_play import CrossPlayResult, cross_play

__all__ = ["cross_play_matrix", "lever_cross_play"]


def cross_play_matrix(game: LeverGame, probabilities_1: torch.Tensor, probabilities_2: torch.Tensor | None = None) -> torch.Tensor:
    """``float64 [A, A]``: player 1 of agent ``i`` (``probabilities_1[i]``) with player 2 of agent ``j``.

    ``probabilities_*``: ``[A, n]`` action distributions; ``probabilities_2`` defaults to
    ``probabilities_1`` (agents whose two players share one policy).
    """
    p1 = check_tensor(probabilities_1, "probabilities_1")
    p2 = p1 if probabilities_2 is None else check_tensor(probabilities_2, "probabilities_2")
    for name, p in (("probabilities_1", p1), ("probabilities_2", p2)):
        if p.dim() != 2 or p.shape[1] != game.num_levers:
            raise ValueError(f"{name} must have shape [agents, {game.num_levers}], got {tuple(p.shape)}")
        if bool((p < 0).any()) or bool(((p.sum(-1) - 1).abs() > 1e-4).any()):
            raise ValueError(f"{name} rows must be probability distributions")
    if p1.shape != p2.shape:
        raise ValueError(f"both pools need the same shape, got {tuple(p1.shape)} and {tuple(p2.shape)}")
    return game.expected_reward(p1[:, None, :].double(), p2[None, :, :].double())


def lever_cross_play(
    game: LeverGame, probabilities_1: torch.Tensor, probabilities_2: torch.Tensor | None = None
) -> CrossPlayResult:
    """XP and SP of a pool (at least 2 agents) from :func:`cross_play_matrix`, summarised by :func:`eqc.evaluation.cross_play`.

    ``result.mean`` is the matrix; ``result.xp``/``result.sp`` are mean ± SEM over pairs; the
    per-pair SEMs and the bomb-out/perfect rates are NaN (one exact value per pair, no such flags).
    """
    matrix = cross_play_matrix(game, probabilities_1, probabilities_2)
    return cross_play(range(matrix.shape[0]), lambda i, j: matrix[i, j : j + 1])
