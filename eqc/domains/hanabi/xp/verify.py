"""Replay cross-play games in HLE itself: the batched games must match HLE's game for game."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from eqc._checks import check_int, check_list
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.hle import HanabiEnv
from eqc.domains.hanabi.play.hle import play_games
from eqc.domains.hanabi.play.self_play import hle_env_for
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.xp.play import XPGames

__all__ = ["HLEMismatchError", "verify_hle"]


class HLEMismatchError(AssertionError):
    """A cross-play game scored (or was played) differently on ``HanabiBatch`` and in HLE."""


def verify_hle(games: XPGames, policies: Sequence[TrainedPolicy], k: int, names: Sequence[str] | None = None) -> int:
    """Replay the first ``k`` games of every pair of ``games`` in HLE (each policy a copy with its own
    state) and raise :class:`HLEMismatchError` naming the pair and game at the first difference in
    score or moves. Returns the number of games replayed. Both agents of a pair must read the same
    observation variant (HLE gives one per game)."""
    if not isinstance(games, XPGames):
        raise TypeError(f"games must be XPGames (from cross_play_games), got {type(games).__name__}")
    policies = check_list(policies, "policies", item="TrainedPolicy objects")
    if len(policies) != games.num_agents or not all(isinstance(p, TrainedPolicy) for p in policies):
        raise ValueError(f"policies must be the {games.num_agents} TrainedPolicy objects that played games")
    check_int(k, "k", low=0, high=games.games)
    names = [f"agent {i}" for i in range(games.num_agents)] if names is None else list(names)
    variants = [p.rules for p in policies]
    for i, j in games.pairs:
        if variants[i] != variants[j]:
            raise ValueError(
                f"cannot replay {names[i]} with {names[j]} in HLE: they read different observations ({variants[i]} and {variants[j]})"
            )
    if k == 0:
        return 0
    if games.moves.shape[2] < k:
        raise ValueError(f"games recorded the moves of {games.moves.shape[2]} games per pair; play with record_moves >= {k}")
    decks = [tuple(d) for d in games.decks[:k].tolist()]
    envs: dict[HanabiRules, HanabiEnv] = {}
    for p, (i, j) in enumerate(games.pairs):
        env = envs.setdefault(variants[i], hle_env_for(policies[i]))
        hle = play_games(copy.copy(policies[i]), copy.copy(policies[j]), decks, env=env)
        for g in range(k):
            batched = int(games.scores[p, g])
            pair = f"pair ({names[i]}, {names[j]}), game {g} ({names[i]} in seat {g % 2})"
            if int(hle.scores[g]) != batched:
                raise HLEMismatchError(f"{pair}: HanabiBatch scored {batched}, HLE {int(hle.scores[g])}")
            moves, hle_moves = [m for m in games.moves[p, :, g].tolist() if m >= 0], list(hle.actions[g])
            if hle_moves != moves:
                t = next((t for t, (a, b) in enumerate(zip(hle_moves, moves, strict=False)) if a != b), min(len(moves), len(hle_moves)))
                raise HLEMismatchError(f"{pair}: the moves differ from move {t} (HanabiBatch {moves[t:t + 3]}, HLE {hle_moves[t:t + 3]})")
    return k * len(games.pairs)
