"""From a config to the objects training uses: colour groups, games, the colour symmetry."""

from __future__ import annotations

import torch

from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.config import GROUP_NAMES, TrainConfig
from eqc.groups import PermutationGroup, alternating, cyclic, dihedral, symmetric

__all__ = ["colour_group", "colour_group_name", "game_rules", "make_batch"]


def colour_group(name: str) -> PermutationGroup:
    """The paper's colour groups by name: C5 (rotations), D10 (rotations and reflections), S5, A5."""
    builders = {"C5": lambda: cyclic(5), "D10": lambda: dihedral(5), "S5": lambda: symmetric(5), "A5": lambda: alternating(5)}
    if name not in builders:
        raise ValueError(f"colour group must be one of {GROUP_NAMES}, got {name!r}")
    return builders[name]()


def colour_group_name(group: PermutationGroup) -> str:
    """The name (C5, D10, S5, A5) of a colour group equal to one of the paper's, else the group's own name."""
    for name in GROUP_NAMES:
        known = colour_group(name)
        if known.order == group.order and known.degree == group.degree and all(p in known for p in group.elements):
            return name
    return group.name


def game_rules(config: TrainConfig) -> HanabiRules:
    """The game and observation variant of ``config`` (the standard game; full observation)."""
    g = config.game
    return HanabiRules(num_players=g.num_players, knowledge=g.knowledge, sad=g.sad)


def make_batch(rules: HanabiRules, num_envs: int, device: torch.device, seed: int, *, auto_reset: bool = True) -> HanabiBatch:
    """``num_envs`` games of ``rules`` on ``device``, unchecked (the fast path)."""
    return HanabiBatch(num_envs, rules, device=device, seed=seed, auto_reset=auto_reset, check=False)
