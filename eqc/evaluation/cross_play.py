"""Cross-play (XP) and self-play (SP) of a pool of agents, for any game.

``play(agent_i, agent_j)`` plays some games between two agents and returns their per-game
results. Every ordered pair is played: ``i != j`` is cross-play, ``i == j`` self-play. The
headline numbers follow the usual report: the mean over pair means
and its standard error over the pairs (``A(A-1)`` XP pairs, ``A`` SP pairs). Bomb-out and
perfect-score rates are pooled over all games of the set. Per-game scores of a set
(``xp_scores()``) feed :func:`eqc.evaluation.permutation_test`. Every domain uses this one
function: Hanabi plays games per pair, the lever game enters each pair's exact expected payoff.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch

from eqc.evaluation.stats import MeanSEM, as_sample, mean_sem

__all__ = ["CrossPlayResult", "GameResults", "cross_play"]

A = TypeVar("A")


@dataclass(frozen=True)
class GameResults:
    """Per-game outcomes of one pairing: ``scores`` float64 ``[n]``; optional bool ``[n]`` flags.

    ``bombed_out``: the game ended by losing all lives; ``perfect``: the maximum score was reached.
    Leave a flag ``None`` when the game has no such notion (its rates are then reported as NaN).
    """

    scores: torch.Tensor
    bombed_out: torch.Tensor | None = None
    perfect: torch.Tensor | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scores", as_sample(self.scores, "scores"))
        n = self.scores.numel()
        if n == 0:
            raise ValueError("scores must hold at least one game")
        for name in ("bombed_out", "perfect"):
            flag = getattr(self, name)
            if flag is None:
                continue
            if not isinstance(flag, torch.Tensor) or flag.dtype != torch.bool:
                raise TypeError(f"{name} must be a bool tensor or None, got {getattr(flag, 'dtype', type(flag).__name__)}")
            if flag.shape != (n,):
                raise ValueError(f"{name} must have shape ({n},) like scores, got {tuple(flag.shape)}")

    def __len__(self) -> int:
        return self.scores.numel()


def _as_results(value: object, i: int, j: int) -> GameResults:
    if isinstance(value, GameResults):
        return value
    if isinstance(value, (torch.Tensor, Sequence)):
        return GameResults(as_sample(value, f"play(agents[{i}], agents[{j}])"))
    raise TypeError(f"play must return GameResults or a 1-D sequence of scores, got {type(value).__name__} for pair ({i}, {j})")


def _rate(games: list[GameResults], name: str) -> float:
    flags = [getattr(g, name) for g in games]
    if any(f is None for f in flags):
        return float("nan")
    return float(torch.cat(flags).double().mean())


@dataclass(frozen=True)
class CrossPlayResult:
    """XP/SP summary with per-pair matrices ``[A, A]`` (row: first agent, column: second).

    ``xp``/``sp``: mean ± SEM over pair means. Rates are pooled over games (NaN when the game
    reports no such flag). ``games[i][j]`` keeps every pair's :class:`GameResults`.
    """

    mean: torch.Tensor
    sem: torch.Tensor
    bomb_out_rate: torch.Tensor
    perfect_rate: torch.Tensor
    num_games: torch.Tensor
    xp: MeanSEM
    sp: MeanSEM
    xp_bomb_out_rate: float
    sp_bomb_out_rate: float
    xp_perfect_rate: float
    sp_perfect_rate: float
    games: tuple[tuple[GameResults, ...], ...]

    @property
    def num_agents(self) -> int:
        return self.mean.shape[0]

    def _pairs(self, cross: bool) -> list[GameResults]:
        a = self.num_agents
        return [self.games[i][j] for i in range(a) for j in range(a) if (i != j) == cross]

    def xp_scores(self) -> torch.Tensor:
        """All XP games' scores, pairs in row-major order: a sample for a permutation test."""
        return torch.cat([g.scores for g in self._pairs(True)])

    def sp_scores(self) -> torch.Tensor:
        """All SP games' scores."""
        return torch.cat([g.scores for g in self._pairs(False)])

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready record (matrices as nested lists)."""
        return {
            "xp_mean": self.xp.mean, "xp_sem": self.xp.sem, "sp_mean": self.sp.mean, "sp_sem": self.sp.sem,
            "xp_bomb_out_rate": self.xp_bomb_out_rate, "sp_bomb_out_rate": self.sp_bomb_out_rate,
            "xp_perfect_rate": self.xp_perfect_rate, "sp_perfect_rate": self.sp_perfect_rate,
            "mean": self.mean.tolist(), "sem": self.sem.tolist(), "bomb_out_rate": self.bomb_out_rate.tolist(),
            "perfect_rate": self.perfect_rate.tolist(), "num_games": self.num_games.tolist(),
        }


def cross_play(agents: Sequence[A], play: Callable[[A, A], GameResults | Sequence[float] | torch.Tensor]) -> CrossPlayResult:
    """Play every ordered pair of ``agents`` (at least 2) with ``play`` and summarise XP and SP."""
    if not isinstance(agents, Sequence) or isinstance(agents, (str, bytes)):
        raise TypeError(f"agents must be a sequence (list/tuple) of agents, got {type(agents).__name__}")
    if len(agents) < 2:
        raise ValueError(f"agents must hold at least 2 agents for cross-play, got {len(agents)}")
    if not callable(play):
        raise TypeError(f"play must be callable (agent_i, agent_j) -> per-game results, got {type(play).__name__}")
    a = len(agents)
    games = tuple(tuple(_as_results(play(agents[i], agents[j]), i, j) for j in range(a)) for i in range(a))
    shape = (a, a)
    mean, sem = torch.zeros(shape, dtype=torch.float64), torch.full(shape, float("nan"), dtype=torch.float64)
    bomb, perfect = torch.zeros(shape, dtype=torch.float64), torch.zeros(shape, dtype=torch.float64)
    count = torch.zeros(shape, dtype=torch.long)
    for i in range(a):
        for j in range(a):
            g = games[i][j]
            mean[i, j], count[i, j] = g.scores.mean(), len(g)
            if len(g) >= 2:
                sem[i, j] = mean_sem(g.scores).sem
            bomb[i, j], perfect[i, j] = _rate([g], "bombed_out"), _rate([g], "perfect")
    off = ~torch.eye(a, dtype=torch.bool)
    xp_games = [games[i][j] for i in range(a) for j in range(a) if i != j]
    sp_games = [games[i][i] for i in range(a)]
    return CrossPlayResult(
        mean, sem, bomb, perfect, count,
        xp=mean_sem(mean[off], "XP pair means"), sp=mean_sem(mean.diagonal(), "SP pair means"),
        xp_bomb_out_rate=_rate(xp_games, "bombed_out"), sp_bomb_out_rate=_rate(sp_games, "bombed_out"),
        xp_perfect_rate=_rate(xp_games, "perfect"), sp_perfect_rate=_rate(sp_games, "perfect"),
        games=games,
    )
