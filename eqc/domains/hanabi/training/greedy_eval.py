"""Greedy self-play evaluation of an ``Agent`` on ``HanabiBatch``, on fixed seeded decks."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NamedTuple

import torch

from eqc.domains.hanabi.evaluate import common_decks
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.network import Agent
from eqc.domains.hanabi.training.setup import make_batch
from eqc.evaluation import mean_sem

__all__ = ["EvalResult", "GreedyGames", "evaluate_agent", "greedy_games", "greedy_moves", "seat_moves", "summarize"]

#: A two-player game lasts at most 89 moves (50 cards, 8 + discards hints); stop well beyond.
MAX_MOVES = 400
#: Read "are all games over?" back from the device every this many moves.
SYNC_EVERY = 8


@dataclass(frozen=True)
class EvalResult:
    """Greedy self-play over ``games`` games: mean score, its standard error, bomb-out and perfect rates."""

    games: int
    mean: float
    sem: float
    bombout: float
    perfect: float

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.sem:.2f} over {self.games} games (bomb-out {self.bombout:.1%}, perfect {self.perfect:.1%})"

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def seat_moves(
    agent: Agent, obs: torch.Tensor, legal: torch.Tensor, on_turn: torch.Tensor | None, state: object
) -> tuple[torch.Tensor, object]:
    """Greedy moves ``[R]`` of ``agent`` in ``R`` seats (-1 for seats not on turn); self- and cross-play share it.

    ``obs [R, D]`` each seat's observation, ``legal [R, M]`` the legal moves of the seat's game,
    ``on_turn`` bool ``[R]`` (None: every seat is on turn). A recurrent agent steps every seat
    (``state`` holds one row per seat), with only the no-op legal off turn; a feed-forward agent
    evaluates the seats on turn only.
    """
    no_op = torch.zeros(obs.shape[0], 1, dtype=torch.bool, device=obs.device)
    acting_legal = torch.cat([legal, no_op], dim=-1)
    if on_turn is None:
        q, state = agent.step(obs, acting_legal, state)
        return q.argmax(-1), state
    if not agent.recurrent:
        moves = torch.full((obs.shape[0],), -1, dtype=torch.long, device=obs.device)
        turn = on_turn.nonzero().squeeze(1)
        if turn.numel() > 0:
            q, _ = agent.step(obs[turn], acting_legal[turn])
            moves[turn] = q.argmax(-1)
        return moves, None
    waiting = torch.cat([torch.zeros_like(legal), ~no_op], dim=-1)  # only the no-op
    q, state = agent.step(obs, torch.where(on_turn.unsqueeze(-1), acting_legal, waiting), state)
    return q.argmax(-1).masked_fill(~on_turn, -1), state


def greedy_moves(agent: Agent, obs: torch.Tensor, legal: torch.Tensor, current: torch.Tensor, state: object) -> tuple[torch.Tensor, object]:
    """Greedy HLE moves ``[B]`` of the players on turn in self-play (:func:`seat_moves` on every seat).

    ``obs [B, P, D]`` all players' observations, ``legal [B, M]`` the acting player's moves.
    """
    B, P, D = obs.shape
    games = torch.arange(B, device=obs.device)
    if not agent.recurrent:
        return seat_moves(agent, obs[games, current], legal, None, None)[0], None
    on_turn = torch.arange(P, device=obs.device).view(1, P) == current.view(B, 1)
    moves, state = seat_moves(agent, obs.reshape(B * P, D), legal.repeat_interleave(P, dim=0), on_turn.reshape(-1), state)
    return moves.view(B, P)[games, current], state


class GreedyGames(NamedTuple):
    """Per-game results of greedy self-play: ``scores`` long ``[n]``, ``bombed_out`` bool ``[n]`` and
    ``moves`` long ``[T, n]``, the move uid made at each move of each game (-1 once it is over)."""

    scores: torch.Tensor
    bombed_out: torch.Tensor
    moves: torch.Tensor


@torch.no_grad()
def greedy_games(
    agent: Agent, config: TrainConfig, device: torch.device, *, games: int | None = None, seed: int = 0, decks: torch.Tensor | None = None
) -> GreedyGames:
    """Greedy self-play on ``decks`` (long ``[n, 50]``) or on the ``games`` decks
    ``common_decks(games, seed)``: the decks HLE evaluation and cross-play deal for that seed."""
    if decks is None:
        decks = torch.tensor(common_decks(games, seed))
    games = decks.shape[0]
    env = make_batch(config, games, device, seed, auto_reset=False)
    env.reset(decks.to(device))
    state = agent.initial_state(games * config.game.num_players, device)
    played = []
    for move in range(MAX_MOVES):
        if move % SYNC_EVERY == 0 and bool(env.state.done.all()):
            break
        moves, state = greedy_moves(agent, env.observations(), env.legal_move_mask(), env.state.current, state)
        played.append(torch.where(env.state.done, -1, moves))
        env.step(moves.clamp(max=env.num_moves - 1))  # finished games ignore their (meaningless) move
    return GreedyGames(env.state.score.clone(), env.state.lives == 0, torch.stack(played))


def evaluate_agent(agent: Agent, config: TrainConfig, games: int, seed: int, device: torch.device) -> EvalResult:
    """Greedy self-play of ``agent`` on ``common_decks(games, seed)``: mean ± SEM, bomb-out and perfect rates
    (the same games as ``eqc hanabi eval --hle`` plays in HLE for that seed)."""
    played = greedy_games(agent, config, device, games=games, seed=seed)
    return summarize(played.scores, played.bombed_out)


def summarize(scores: torch.Tensor, bombed: torch.Tensor, max_score: int = 25) -> EvalResult:
    """``EvalResult`` of per-game scores and bomb-out flags (mean and SEM by :func:`eqc.evaluation.mean_sem`)."""
    stat = mean_sem(scores.double(), "scores")
    return EvalResult(stat.n, stat.mean, stat.sem, float(bombed.double().mean()), float((scores == max_score).double().mean()))
