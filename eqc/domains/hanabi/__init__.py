"""Hanabi: rules, layouts, colour symmetry, the HLE adapter, the batched torch env, agents, evaluation.

Names load lazily so that ``import eqc.domains.hanabi`` works without HLE installed; only
``HanabiEnv`` needs hanabi-learning-environment 0.0.4; ``HanabiBatch`` is pure torch.

Modules: ``rules`` (``HanabiRules``, its observation/action layouts and the card-id and move-uid
conventions), ``symmetry`` (``colour_symmetry``), ``dealing`` (decks), ``hle``
(``HanabiEnv`` on HLE), ``batched`` (``HanabiBatch``); ``agent`` (what is shipped and played: spec,
network, policy, file formats), ``play`` (self-play and cross-play loops, HLE and batched),
``training`` (only what makes an agent), ``xp`` (cross-play of shipped agents) and ``reproduce``
(the paper's tables); ``agent``, ``play`` and ``xp`` never load ``training``, even through other modules;
``reproduce`` loads only the pool trainer and the training config.
"""

from __future__ import annotations

from typing import Any

from eqc._lazy import lazy_attribute, lazy_homes

_HOMES = lazy_homes({
    "eqc.domains.hanabi.rules": ("HanabiRules", "observation_layout", "action_layout"),
    "eqc.domains.hanabi.hle": ("HanabiEnv",),
    "eqc.domains.hanabi.batched": ("HanabiBatch",),
    "eqc.domains.hanabi.symmetry": ("colour_symmetry",),
    "eqc.domains.hanabi.dealing": ("random_deck", "relabel_deck", "standard_deck"),
    "eqc.domains.hanabi.agent.rule_agent": ("RuleAgent",),
    "eqc.domains.hanabi.agent.policy": ("load_policy",),
    "eqc.domains.hanabi.xp": ("cross_play_games", "load_pools", "verify_hle", "action_matrices"),
})

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
