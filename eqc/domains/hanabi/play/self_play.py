"""Greedy self-play evaluation on fixed seeded decks: of an ``Agent`` on ``HanabiBatch``, and of a
loaded policy in HLE itself (``HanabiEnv``)."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass
from typing import NamedTuple

import torch

from eqc._checks import check_int
from eqc.domains.hanabi.agent.network import ActingAgent, Agent, AgentWrapper, State
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.hle import HanabiEnv
from eqc.domains.hanabi.play.batched import play_seats
from eqc.domains.hanabi.play.hle import common_decks, play_games
from eqc.domains.hanabi.rules import HanabiRules
from eqc.evaluation import mean_sem

__all__ = [
    "EvalResult", "GreedyGames", "PrecisionDifference", "evaluate_agent", "evaluate_in_hle", "greedy_games", "hle_env_for",
    "precision_difference", "summarize",
]


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
    agent: ActingAgent,
    rules: HanabiRules,
    device: torch.device,
    *,
    games: int | None = None,
    deck_seed: int = 1,
    decks: torch.Tensor | None = None,
) -> GreedyGames:
    """Greedy self-play on ``decks`` (long ``[n, rules.deck_size]``) or on the ``games`` decks
    ``common_decks(games, rules, deck_seed)``: the decks HLE evaluation and cross-play deal for that
    deck seed (:func:`~eqc.domains.hanabi.play.batched.play_seats` with the agent in every seat)."""
    if decks is None:
        decks = torch.tensor(common_decks(check_int(games, "games", low=1), rules, deck_seed))
    n = decks.shape[0]
    seats = torch.zeros(n, rules.num_players, dtype=torch.long, device=device)
    scores, bombed, moves = play_seats([agent], [rules], seats, decks.to(device), device, keep=n)
    return GreedyGames(scores, bombed, moves)


def evaluate_agent(agent: ActingAgent, rules: HanabiRules, games: int, deck_seed: int, device: torch.device) -> EvalResult:
    """Greedy self-play of ``agent`` on ``common_decks(games, rules, deck_seed)``: mean ± SEM, bomb-out and perfect rates
    (the same games as ``eqc hanabi eval --hle`` plays in HLE for that deck seed)."""
    played = greedy_games(agent, rules, device, games=games, deck_seed=deck_seed)
    return summarize(played.scores, played.bombed_out, rules.max_score)


def summarize(scores: torch.Tensor, bombed: torch.Tensor, max_score: int) -> EvalResult:
    """``EvalResult`` of per-game scores and bomb-out flags (mean and SEM by :func:`eqc.evaluation.mean_sem`)."""
    stat = mean_sem(scores.double(), "scores")
    return EvalResult(stat.n, stat.mean, stat.sem, float(bombed.double().mean()), float((scores == max_score).double().mean()))


@dataclass(frozen=True)
class PrecisionDifference:
    """Greedy moves of an agent in ``precision`` that the same agent in ``other`` would not make: ``differing``
    of the ``decisions`` made (moves on turn) over ``games`` greedy self-play games played in ``precision``."""

    precision: str
    other: str
    games: int
    decisions: int
    differing: int

    @property
    def share(self) -> float:
        return self.differing / self.decisions if self.decisions else float("nan")

    def __str__(self) -> str:
        return (f"{self.differing:,} of {self.decisions:,} greedy moves ({self.share:.3%}) differ between {self.precision} "
                f"and {self.other} over {self.games} games")

    def as_dict(self) -> dict[str, float | int | str]:
        return {**asdict(self), "share": self.share}


class _Comparing(AgentWrapper):
    """Plays as ``agent``; counts the decisions where ``other`` (the same network in another precision, fed the
    same observations and stepping its own recurrent state) would choose another greedy move."""

    def __init__(self, agent: Agent, other: Agent, device: torch.device) -> None:
        super().__init__(agent)
        self.other = other
        self.decisions = torch.zeros((), dtype=torch.long, device=device)
        self.differing = torch.zeros((), dtype=torch.long, device=device)

    def initial_state(self, rows: int, device: torch.device | str) -> tuple[State, State] | None:
        state = self.agent.initial_state(rows, device)
        return None if state is None else (state, state)

    def step(self, obs: torch.Tensor, legal: torch.Tensor | None,
             state: tuple[State, State] | None = None) -> tuple[torch.Tensor, tuple[State, State] | None]:
        if legal is None:
            raise ValueError("counting greedy decisions needs the legal moves")
        mine, theirs = (None, None) if state is None else state
        q, mine = self.agent.step(obs, legal, mine)
        q_other, theirs = self.other.step(obs, legal, theirs)
        deciding = legal[:, :-1].any(-1)  # on turn: not just the no-op
        self.decisions += deciding.sum()
        self.differing += (deciding & (q.argmax(-1) != q_other.argmax(-1))).sum()
        return q, (None if mine is None else (mine, theirs))


def precision_difference(
    agent: Agent, other: str, rules: HanabiRules, games: int, deck_seed: int, device: torch.device
) -> PrecisionDifference:
    """How many greedy moves of ``agent`` (in its own precision) the same agent in precision ``other`` would
    change, over greedy self-play on ``common_decks(games, rules, deck_seed)`` played by ``agent``."""
    comparing = _Comparing(agent, agent.in_precision(other), device)
    decks = torch.tensor(common_decks(games, rules, deck_seed))
    seats = torch.zeros(games, rules.num_players, dtype=torch.long, device=device)
    play_seats([comparing], [rules], seats, decks.to(device), device)
    return PrecisionDifference(agent.precision, other, games, int(comparing.decisions), int(comparing.differing))


def hle_env_for(policy: TrainedPolicy) -> HanabiEnv:
    """A two-player ``HanabiEnv`` giving the observation variant ``policy`` was trained on."""
    game = policy.spec.game
    if game.num_players != 2:
        raise ValueError(f"HLE evaluation plays two-player games; the policy was trained for {game.num_players} players")
    return HanabiEnv(policy.rules)


def evaluate_in_hle(policy: TrainedPolicy, games: int, deck_seed: int) -> EvalResult:
    """``games`` games of ``policy`` with a copy of itself in HLE, decks from ``deck_seed``."""
    decks = common_decks(games, policy.rules, deck_seed)
    partner = copy.copy(policy)  # its own recurrent state
    results = play_games(policy, partner, decks, env=hle_env_for(policy))
    if results.bombed_out is None:  # play_games flags every game it plays
        raise RuntimeError("play_games returned no bomb-out flags")
    return summarize(results.scores.long(), results.bombed_out, policy.rules.max_score)
