"""Greedy self-play evaluation of an ``Agent`` on ``HanabiBatch``, on fixed seeded decks."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NamedTuple

import torch

from eqc.domains.hanabi.batched_play import play_seats
from eqc.domains.hanabi.evaluate import common_decks
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.network import Agent
from eqc.evaluation import mean_sem

__all__ = ["EvalResult", "GreedyGames", "evaluate_agent", "greedy_games", "summarize"]


@dataclass(frozen=True)
class EvalResult:
    """Greedy self-play over ``games`` games: mean score, its standard error, bomb-out and perfect rates."""

    games: int
    mean: float
    sem: float
    bomb_out_rate: float
    perfect_rate: float

    def __str__(self) -> str:
        rates = f"bomb-out {self.bomb_out_rate:.1%}, perfect {self.perfect_rate:.1%}"
        return f"{self.mean:.2f} ± {self.sem:.2f} over {self.games} games ({rates})"

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)



class GreedyGames(NamedTuple):
    """Per-game results of greedy self-play: ``scores`` long ``[n]``, ``bombed_out`` bool ``[n]`` and
    ``moves`` long ``[T, n]``, the move uid made at each move of each game (-1 once it is over)."""

    scores: torch.Tensor
    bombed_out: torch.Tensor
    moves: torch.Tensor


def greedy_games(
    agent: Agent, rules: HanabiRules, device: torch.device, *, games: int | None = None, seed: int = 0, decks: torch.Tensor | None = None
) -> GreedyGames:
    """Greedy self-play on ``decks`` (long ``[n, 50]``) or on the ``games`` decks ``common_decks(games, seed)``:
    the decks HLE evaluation and cross-play deal for that seed (:func:`~eqc.domains.hanabi.batched_play.play_seats`
    with the agent in every seat)."""
    if decks is None:
        decks = torch.tensor(common_decks(games, seed))
    n = decks.shape[0]
    seats = torch.zeros(n, rules.num_players, dtype=torch.long, device=device)
    scores, bombed, moves = play_seats([agent], [rules], seats, decks.to(device), device, keep=n)
    return GreedyGames(scores, bombed, moves)


def evaluate_agent(agent: Agent, rules: HanabiRules, games: int, seed: int, device: torch.device) -> EvalResult:
    """Greedy self-play of ``agent`` on ``common_decks(games, seed)``: mean ± SEM, bomb-out and perfect rates
    (the same games as ``eqc hanabi eval --hle`` plays in HLE for that seed)."""
    played = greedy_games(agent, rules, device, games=games, seed=seed)
    return summarize(played.scores, played.bombed_out, rules.max_score)


def summarize(scores: torch.Tensor, bombed: torch.Tensor, max_score: int) -> EvalResult:
    """``EvalResult`` of per-game scores and bomb-out flags (mean and SEM by :func:`eqc.evaluation.mean_sem`)."""
    stat = mean_sem(scores.double(), "scores")
    return EvalResult(stat.n, stat.mean, stat.sem, float(bombed.double().mean()), float((scores == max_score).double().mean()))
