"""From a config to the objects training uses: the game's rules and batches of games (colour groups: ``eqc.domains.hanabi.symmetry``)."""

from __future__ import annotations

import torch

from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.config import TrainConfig

__all__ = ["game_rules", "make_batch"]


def game_rules(config: TrainConfig) -> HanabiRules:
    """The game and observation variant of ``config`` (``[game]``: the preset, its shape keys, the variant; full observation)."""
    return config.game.rules()


def make_batch(rules: HanabiRules, num_envs: int, device: torch.device, seed: int, *, auto_reset: bool = True) -> HanabiBatch:
    """``num_envs`` games of ``rules`` on ``device``, unchecked (the fast path)."""
    return HanabiBatch(num_envs, rules, device=device, seed=seed, auto_reset=auto_reset, check=False)
