"""Greedy self-play of a trained policy in HLE itself (``HanabiEnv``), on seeded decks."""

from __future__ import annotations

import copy

from eqc.domains.hanabi.evaluate import common_decks, play_games
from eqc.domains.hanabi.training.greedy_eval import EvalResult, summarize
from eqc.domains.hanabi.training.policy import TrainedPolicy
from eqc.domains.hanabi.training.setup import game_rules

__all__ = ["evaluate_in_hle", "hle_env_for"]


def hle_env_for(policy: TrainedPolicy) -> object:
    """A two-player ``HanabiEnv`` giving the observation variant ``policy`` was trained on."""
    from eqc.domains.hanabi import HanabiEnv

    game = policy.config.game
    if game.num_players != 2:
        raise ValueError(f"HLE evaluation plays two-player games; the policy was trained for {game.num_players} players")
    return HanabiEnv(game_rules(policy.config))


def evaluate_in_hle(policy: TrainedPolicy, games: int, seed: int) -> EvalResult:
    """``games`` games of ``policy`` with a copy of itself in HLE, decks from ``seed``."""
    decks = common_decks(games, seed, rules=policy.rules)
    partner = copy.copy(policy)  # its own recurrent state
    results = play_games(policy, partner, decks, env=hle_env_for(policy))
    return summarize(results.scores.long(), results.bombed_out, policy.rules.max_score)
