"""Declarations of two environments eqc did not write, each a few lines (proved in ``tests/pettingzoo``).

- mpe2's ``simple_spread_v3``: permutations of the landmarks move the landmark block of every
  agent's observation (``velocity(2), position(2), landmarks(N x 2), other agents((N-1) x 2),
  communication((N-1) x 2)``) and leave the five moves and the rewards alone. The reset draws the
  landmarks' positions, so :func:`move_landmarks` relabels them (``relabel_state``). Its reward sums
  over the landmarks, so the relabelled game adds the same terms in another order: pass
  ``reward_ulps=4``.
- PettingZoo's ``hanabi_v5`` (OpenSpiel's Hanabi through Shimmy): the same observation and 20 moves
  as HLE, so eqc's :func:`~eqc.domains.hanabi.symmetry.colour_symmetry` declares it; deals happen at chance
  nodes whose outcome is the card id ``colour * 5 + rank``, relabelled by :func:`relabel_card`.
"""

from __future__ import annotations

from typing import Any

import torch

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.groups import PermutationGroup, symmetric

__all__ = ["hanabi_symmetry", "move_landmarks", "relabel_card", "spread_symmetry"]


def spread_symmetry(num_landmarks: int = 3, group: PermutationGroup | None = None) -> Symmetry:
    """``group`` (default: all permutations) of the landmarks of ``simple_spread_v3(N=num_landmarks)``."""
    landmark, n = Labels("landmark", num_landmarks), num_landmarks
    obs = Layout([Block("velocity", 2), Block("position", 2), Block("landmarks", landmark, 2),
                  Block("other_agents", n - 1, 2), Block("communication", n - 1, 2)])
    return Symmetry(group or symmetric(n), acts_on=landmark, observation_layout=obs, action_layout=Layout([Block("move", 5)]))


def move_landmarks(env: Any, labels: dict[str, torch.Tensor]) -> None:
    """``relabel_state`` for simple_spread: landmark ``c`` of the original is landmark ``labels["landmark"][c]``."""
    landmarks = env.world.landmarks
    positions = [lm.state.p_pos.copy() for lm in landmarks]
    for c, image in enumerate(labels["landmark"].tolist()):
        landmarks[image].state.p_pos = positions[c]


def hanabi_symmetry(group: PermutationGroup | None = None, num_players: int = 2) -> Symmetry:
    """``group`` (default S5) of the colours of ``hanabi_v5(players=num_players)``, by eqc's HLE declaration."""
    from eqc.domains.hanabi import HanabiRules, colour_symmetry

    return colour_symmetry(group or symmetric(5), HanabiRules(num_players=num_players))


def relabel_card(card: int, labels: dict[str, torch.Tensor]) -> int:
    """``relabel_chance`` for hanabi_v5: the dealt card ``colour * 5 + rank`` with its colour relabelled."""
    colour, rank = divmod(card, 5)
    return int(labels["colour"][colour]) * 5 + rank
