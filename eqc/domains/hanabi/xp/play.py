"""Batched greedy cross-play of trained agents on ``HanabiBatch``, every ordered pair on common decks.

Every pair ``(i, j)`` (self-play ``i == i`` included) plays the same ``games`` decks
(:func:`eqc.domains.hanabi.play.hle.common_decks` of ``deck_seed``): in game ``k`` agent ``i`` sits in
seat ``k % 2`` (seat 0 moves first), as :func:`~eqc.domains.hanabi.play.hle.play_games` seats
its ``policy_a``, so any game can be replayed in HLE (:mod:`eqc.domains.hanabi.xp.verify`).
All pairs' games run as one batch (in chunks of ``num_envs``) through
:func:`eqc.domains.hanabi.play.batched.play_seats`, the loop greedy self-play uses too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from eqc._checks import check_int, check_list
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.play.batched import play_seats
from eqc.domains.hanabi.play.hle import common_decks
from eqc.domains.hanabi.rules import HanabiRules
from eqc.evaluation import CrossPlayResult, GameResults, cross_play

__all__ = ["XPGames", "cross_play_games", "play_pairs"]



@dataclass(frozen=True)
class XPGames:
    """Per-game results of every ordered pair, ``pairs[p] = (i, j)`` in row-major order.

    Attributes:
        num_agents: A.
        pairs: the ``A * A`` ordered pairs (``i == j`` is self-play).
        scores: long ``[A * A, games]``; ``bombed_out``: bool, the same shape.
        moves: long ``[A * A, T, K]``, the move uids of the first K games (-1 once a game is over).
        decks: long ``[games, deck size]``, the decks every pair played; ``deck_seed`` dealt them.
        max_score: the game's perfect score (``HanabiRules.max_score``).
    """

    num_agents: int
    pairs: tuple[tuple[int, int], ...]
    scores: torch.Tensor
    bombed_out: torch.Tensor
    moves: torch.Tensor
    decks: torch.Tensor
    deck_seed: int
    max_score: int = 25

    @property
    def games(self) -> int:
        """Games per pair."""
        return self.scores.shape[1]

    def pair(self, i: int, j: int) -> GameResults:
        """The games of agent ``i`` (seat ``k % 2`` in game ``k``) with agent ``j``."""
        p = check_int(i, "i", low=0, high=self.num_agents - 1) * self.num_agents + check_int(j, "j", low=0, high=self.num_agents - 1)
        scores = self.scores[p]
        return GameResults(scores.double(), self.bombed_out[p].clone(), scores == self.max_score)

    def summary(self) -> CrossPlayResult:
        """XP and SP statistics by :func:`eqc.evaluation.cross_play` (mean ± SEM over pairs, rates)."""
        return cross_play(list(range(self.num_agents)), self.pair)

    def mean_nonzero(self, cross: bool = True) -> float:
        """Mean score of the XP (or SP) games that did not score 0 (NaN when there are none)."""
        mask = torch.tensor([(i != j) == cross for i, j in self.pairs])
        scores = self.scores[mask].flatten().double()
        kept = scores[scores > 0]
        return float(kept.mean()) if kept.numel() else float("nan")


def _check_policies(policies: object) -> list[TrainedPolicy]:
    items = check_list(policies, "policies", item="TrainedPolicy objects (load_policy)")
    if len(items) < 2:
        raise ValueError(f"policies must hold at least 2 agents for cross-play, got {len(items)}")
    for k, policy in enumerate(items):
        if not isinstance(policy, TrainedPolicy):
            raise TypeError(f"policies[{k}] must be a TrainedPolicy (from load_policy), got {type(policy).__name__}")
        if policy.spec.game.num_players != 2:
            raise ValueError(f"policies[{k}] was trained for {policy.spec.game.num_players} players; cross-play here is two-player")
        if policy.rules.game != items[0].rules.game:
            raise ValueError(f"policies[{k}] plays another game than policies[0] ({_shape(policy.rules)} vs {_shape(items[0].rules)}); "
                             "agents of different games cannot cross-play")
    return items


def _shape(rules: HanabiRules) -> str:
    """The game of ``rules`` in words, for errors."""
    return (f"{rules.num_colours} colours x {rules.num_ranks} ranks, hand {rules.hand_size}, "
            f"{rules.max_info_tokens} information tokens, {rules.max_lives} lives")


def cross_play_games(
    policies: Sequence[TrainedPolicy],
    games: int,
    *,
    deck_seed: int = 1,
    record_moves: int = 0,
    num_envs: int | None = None,
) -> XPGames:
    """Greedy games of every ordered pair of ``policies`` (self-play included) on ``games`` common decks.

    ``record_moves``: keep the moves of the first this many games of each pair (for HLE replays).
    ``num_envs``: games stepped together (default 2048 on CPU, the fastest here; 65536 on CUDA).
    Games run on the policies' device (load them all on one).
    """
    policies = _check_policies(policies)
    A = len(policies)
    pairs = tuple((i, j) for i in range(A) for j in range(A))
    scores, bombed, moves, decks = play_pairs(policies, pairs, games, deck_seed=deck_seed, record_moves=record_moves, num_envs=num_envs)
    return XPGames(A, pairs, scores, bombed, moves, decks, deck_seed, policies[0].rules.max_score)


def play_pairs(
    policies: Sequence[TrainedPolicy],
    pairs: Sequence[tuple[int, int]],
    games: int,
    *,
    deck_seed: int = 1,
    record_moves: int = 0,
    num_envs: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Greedy games of the ordered ``pairs`` ``(i, j)`` of ``policies`` on ``games`` common decks, seated as
    in the module docstring. Returns ``scores`` long and ``bombed_out`` bool ``[len(pairs), games]``, the
    moves ``[len(pairs), T, record_moves]`` of the first ``record_moves`` games (-1 once over), and the decks."""
    check_int(games, "games", low=1)
    check_int(deck_seed, "deck_seed", low=0, high=2**63 - 1)
    check_int(record_moves, "record_moves", low=0, high=games)
    device = policies[0].device
    if any(p.device != device for p in policies):
        raise ValueError(f"policies must all be on one device, got {sorted({str(p.device) for p in policies})}")
    agents = [p.agent for p in policies]
    if num_envs is None:
        num_envs = 65536 if device.type == "cuda" else 2048
    check_int(num_envs, "num_envs", low=1)
    rules = [p.rules for p in policies]
    decks = torch.tensor(common_decks(games, rules[0], deck_seed), dtype=torch.long)
    # entry e = p * games + k: pair p, game k; agent i sits in seat k % 2
    entries = torch.arange(len(pairs) * games)
    pair_of, game_of = entries // games, entries % games
    pair_tensor = torch.tensor(list(pairs), dtype=torch.long).view(-1, 2)
    first_seat = game_of % 2
    seats = torch.empty(len(entries), 2, dtype=torch.long)
    seats[entries, first_seat] = pair_tensor[pair_of, 0]
    seats[entries, 1 - first_seat] = pair_tensor[pair_of, 1]
    scores = torch.empty(len(entries), dtype=torch.long)
    bombed = torch.empty(len(entries), dtype=torch.bool)
    kept: list[tuple[torch.Tensor, torch.Tensor]] = []  # (entries, moves [T, n]) of recorded games
    for start in range(0, len(entries), num_envs):
        chunk = entries[start : start + num_envs]
        record = game_of[chunk] < record_moves
        keep = int(record.sum())
        order = torch.cat([chunk[record], chunk[~record]])  # recorded games first
        s, b, m = play_seats(agents, rules, seats[order].to(device), decks[game_of[order]].to(device), device, keep)
        scores[order], bombed[order] = s.cpu(), b.cpu()
        if keep:
            kept.append((order[:keep], m.cpu()))
    steps = max((m.shape[0] for _, m in kept), default=0)
    moves = torch.full((len(pairs), steps, record_moves), -1, dtype=torch.long)
    for e, m in kept:
        moves[pair_of[e], : m.shape[0], game_of[e]] = m.T
    return scores.view(len(pairs), games), bombed.view(len(pairs), games), moves, decks
