"""Hanabi: HLE adapter, colour symmetry, decks, agents (and the batched torch env).

Names load lazily so that ``import eqc.domains.hanabi`` works without HLE installed; only
``HanabiEnv`` needs hanabi-learning-environment 0.0.4; ``HanabiBatch`` is pure torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "HanabiEnv": "eqc.domains.hanabi.hle",
    "HanabiBatch": "eqc.domains.hanabi.batched",
    "colour_symmetry": "eqc.domains.hanabi.symmetry",
    "observation_layout": "eqc.domains.hanabi.symmetry",
    "action_layout": "eqc.domains.hanabi.symmetry",
    "random_deck": "eqc.domains.hanabi.dealing",
    "relabel_deck": "eqc.domains.hanabi.dealing",
    "standard_deck": "eqc.domains.hanabi.dealing",
    "RuleAgent": "eqc.domains.hanabi.agents",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
