"""Cross-play (XP) and self-play (SP) scores of lever-game agent pools, computed exactly.

``matrix[i, j]`` is the expected payoff when player 1 of agent ``i`` plays with player 2 of
agent ``j`` (both sample a lever independently): ``sum_a payoffs[a] pi_i(a) pi_j(a)``. SP is
the diagonal; XP averages all ordered pairs of distinct agents. The standard error is that
of the mean over those ``A(A-1)`` pair scores (``std / sqrt(A(A-1))``, the usual report).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from eqc.domains.lever.game import LeverGame
from eqc.evaluation.stats import mean_sem


@dataclass(frozen=True)
class CrossPlay:
    """SP and XP of one pool, with the full matrix ``[agents, agents]``."""

    matrix: torch.Tensor
    sp_mean: float
    xp_mean: float
    xp_sem: float

    def as_dict(self) -> dict[str, float]:
        """The JSON record ``{"sp_mean", "xp_mean", "xp_sem"}``."""
        return {"sp_mean": self.sp_mean, "xp_mean": self.xp_mean, "xp_sem": self.xp_sem}


def cross_play_matrix(game: LeverGame, probabilities_1: torch.Tensor, probabilities_2: torch.Tensor | None = None) -> torch.Tensor:
    """``[A, A]``: player 1 of agent ``i`` (``probabilities_1[i]``) with player 2 of agent ``j``.

    ``probabilities_*``: ``[A, n]`` action distributions; ``probabilities_2`` defaults to
    ``probabilities_1`` (agents whose two players share one policy).
    """
    p1 = probabilities_1
    p2 = p1 if probabilities_2 is None else probabilities_2
    for name, p in (("probabilities_1", p1), ("probabilities_2", p2)):
        if p.dim() != 2 or p.shape[1] != game.num_levers:
            raise ValueError(f"{name} must have shape [agents, {game.num_levers}], got {tuple(p.shape)}")
        if bool((p < 0).any()) or bool(((p.sum(-1) - 1).abs() > 1e-4).any()):
            raise ValueError(f"{name} rows must be probability distributions")
    if p1.shape != p2.shape:
        raise ValueError(f"both pools need the same shape, got {tuple(p1.shape)} and {tuple(p2.shape)}")
    return game.expected_reward(p1[:, None, :].double(), p2[None, :, :].double())


def summarize(matrix: torch.Tensor) -> CrossPlay:
    """SP mean (diagonal), XP mean and its standard error (off-diagonal ordered pairs)."""
    agents = matrix.shape[0]
    if matrix.dim() != 2 or matrix.shape[1] != agents:
        raise ValueError(f"matrix must be square [agents, agents], got {tuple(matrix.shape)}")
    if agents < 2:
        raise ValueError("cross-play needs at least 2 agents (pairs of distinct agents)")
    xp = mean_sem(matrix[~torch.eye(agents, dtype=torch.bool)], "off-diagonal (XP) entries")
    return CrossPlay(matrix, float(matrix.diagonal().double().mean()), xp.mean, xp.sem)


def cross_play(game: LeverGame, probabilities: torch.Tensor) -> CrossPlay:
    """:func:`summarize` of :func:`cross_play_matrix` for one pool ``[agents, n]``."""
    return summarize(cross_play_matrix(game, probabilities))


def sampled_cross_play(
    game: LeverGame, probabilities: torch.Tensor, episodes: int, generator: torch.Generator
) -> torch.Tensor:
    """Monte Carlo estimate of :func:`cross_play_matrix` from ``episodes`` played games per pair.

    Each game samples both levers and pays :meth:`LeverGame.reward`; a check of the exact formula.
    """
    agents, n = probabilities.shape
    p1 = probabilities[:, None, :].expand(agents, agents, n).reshape(-1, n)
    p2 = probabilities[None, :, :].expand(agents, agents, n).reshape(-1, n)
    a1 = torch.multinomial(p1, episodes, replacement=True, generator=generator)
    a2 = torch.multinomial(p2, episodes, replacement=True, generator=generator)
    return game.reward(a1, a2).mean(-1).reshape(agents, agents)
