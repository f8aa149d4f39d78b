"""Convention codes of an agent, and how often a pool's agents share them (the *code lottery*).

A colour-blind slot code ("any colour hint: play slot X") is what an S3-equivariant agent falls back on when it cannot
hold a convention tied to colours (``results/touched``). Two agents with different codes coordinate badly however they
were trained, so a pool whose agents draw their code at random cross-plays as a lottery over codes.

- :func:`agent_codes`: from greedy self-play, the **slot code** (the slot played most often right after a colour hint,
  pooled over the colours) and the **rank-hint code** (per rank, the slot played most often right after that rank's
  hint; -1 when never answered by a play).
- :func:`same_code_matrix`: ``M[i, j] = 1`` when agents i and j share a code. A cell's mean over ordered pairs of distinct
  agents is its **same-code rate**, so ``eqc.evaluation.compare_pools(M, a, b, paired=True)`` is the matched test of
  one pool's rate against another's (the matched swaps of the cross-play tests, on this matrix instead of XP).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import torch

from eqc._checks import check_int
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.xp.conventions import hint_slot_counts
from eqc.domains.hanabi.xp.play import play_pairs
from eqc.io import JsonRecord

__all__ = ["AgentCodes", "agent_codes", "same_code_matrix"]


@dataclass(frozen=True)
class AgentCodes(JsonRecord):
    """An agent's codes (module docstring), its greedy self-play and how many plays followed a colour hint."""

    slot_code: int
    rank_hint_code: tuple[int, ...]
    self_play: float
    colour_hint_plays: int


def agent_codes(policy: TrainedPolicy, *, games: int = 400, deck_seed: int = 1) -> AgentCodes:
    """The codes of ``policy`` from ``games`` greedy self-play games on the common decks of ``deck_seed``."""
    if not isinstance(policy, TrainedPolicy):
        raise TypeError(f"policy must be a TrainedPolicy (load_policy), got {type(policy).__name__}")
    check_int(games, "games", low=1)
    scores, _, moves, _ = play_pairs([policy, policy], [(0, 0)], games, deck_seed=deck_seed, record_moves=games)
    colour, _ = hint_slot_counts(moves[0], policy.rules)
    rank, _ = hint_slot_counts(moves[0], policy.rules, hint="rank")
    pooled = colour.sum(0)
    slot = int(pooled.argmax()) if int(pooled.sum()) else -1
    rank_code = tuple(int(r.argmax()) if int(r.sum()) else -1 for r in rank)
    return AgentCodes(slot, rank_code, float(scores.double().mean()), int(pooled.sum()))


def same_code_matrix(codes: Sequence[Hashable]) -> torch.Tensor:
    """``[N, N]`` float64: 1 where agents i and j have equal codes (the diagonal is 1 and is never read by a pool's rate)."""
    n = len(codes)
    return torch.tensor([[float(codes[i] == codes[j]) for j in range(n)] for i in range(n)], dtype=torch.float64)
