"""Batches of games for training: ``HanabiBatch`` unchecked, the fast path (the game itself: ``config.game.rules()``)."""

from __future__ import annotations

import torch

from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.rules import HanabiRules

__all__ = ["make_batch"]


def make_batch(rules: HanabiRules, num_envs: int, device: torch.device, seed: int, *, auto_reset: bool = True,
               compile: bool = False) -> HanabiBatch:
    """``num_envs`` games of ``rules`` on ``device``, unchecked (the fast path); ``compile``: see ``HanabiBatch``."""
    return HanabiBatch(num_envs, rules, device=device, seed=seed, auto_reset=auto_reset, check=False, compile=compile)
