"""Hanabi: rules, layouts, colour symmetry, the HLE adapter, the batched torch env, agents, evaluation.

Names load lazily so that ``import eqc.domains.hanabi`` works without HLE installed; only
``HanabiEnv`` needs hanabi-learning-environment 0.0.4; ``HanabiBatch`` is pure torch.

Modules: ``rules`` (``HanabiRules``, its observation/action layouts and the card-id and move-uid
conventions), ``symmetry`` (``colour_symmetry``), ``dealing`` (decks), ``hle``
(``HanabiEnv`` on HLE), ``batched`` (``HanabiBatch``); ``agent`` (what is shipped and played: spec,
network, policy, file formats), ``play`` (self-play and cross-play loops, HLE and batched),
``training`` (only what makes an agent), ``xp`` (cross-play of shipped agents) and ``reproduce``
(the paper's tables); ``xp`` and ``reproduce`` never import ``training``, but for the pool trainer.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "HanabiRules": "eqc.domains.hanabi.rules",
    "HanabiEnv": "eqc.domains.hanabi.hle",
    "HanabiBatch": "eqc.domains.hanabi.batched",
    "colour_symmetry": "eqc.domains.hanabi.symmetry",
    "observation_layout": "eqc.domains.hanabi.rules",
    "action_layout": "eqc.domains.hanabi.rules",
    "random_deck": "eqc.domains.hanabi.dealing",
    "relabel_deck": "eqc.domains.hanabi.dealing",
    "standard_deck": "eqc.domains.hanabi.dealing",
    "RuleAgent": "eqc.domains.hanabi.agent.rule_agent",
    "load_policy": "eqc.domains.hanabi.agent.policy",
    "cross_play_games": "eqc.domains.hanabi.xp",
    "load_pools": "eqc.domains.hanabi.xp",
    "verify_hle": "eqc.domains.hanabi.xp",
    "action_matrices": "eqc.domains.hanabi.xp",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
