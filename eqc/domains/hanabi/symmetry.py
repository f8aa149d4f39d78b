"""Hanabi's colour symmetry, declared from the structure of HLE's observation.

``colour_symmetry`` lets a group on the colours act on the layouts of
:mod:`eqc.domains.hanabi.layouts` (which also states the card-id and move-uid conventions).
Under a group element g the feature of colour c moves to colour g(c) (eqc's one convention, see
``eqc.groups``): card (c, r) becomes (g(c), r); ranks, slots, players, tokens and the deck never
move; only the reveal-colour moves are permuted: uid 2h + k*C + c -> 2h + k*C + g(c).
"""

from __future__ import annotations

from eqc.dec_pomdp import Symmetry
from eqc.domains.hanabi.layouts import action_layout, colour_labels, observation_layout, rank_labels, resolve_rules
from eqc.domains.hanabi.rules import HanabiRules
from eqc.groups import PermutationGroup

# observation_layout, action_layout and the label sets live in ``layouts``; re-exported for old imports.
__all__ = ["action_layout", "colour_labels", "colour_symmetry", "observation_layout", "rank_labels"]


def colour_symmetry(
    group: PermutationGroup,
    rules: HanabiRules | int | None = None,
    *,
    num_players: int | None = None,
    observation_type: str | None = None,
    sad: bool | None = None,
    num_ranks: int | None = None,
    hand_size: int | None = None,
    max_information_tokens: int | None = None,
    max_life_tokens: int | None = None,
) -> Symmetry:
    """``group`` (on the colours; its degree is the number of colours) acting on Hanabi under ``rules``.

    ``colour_symmetry(group, rules)``; the old ``colour_symmetry(group, num_players, *,
    observation_type, sad, num_ranks, hand_size, max_information_tokens, max_life_tokens)`` still
    works (the number of colours is then the group's degree). For two players and the standard
    game the observation representation has dim 658 (308 "minimal"; +20 "greedy_onehot", +55
    "greedy_last_action") and the action representation dim 20.
    """
    if not isinstance(group, PermutationGroup):
        raise TypeError(f"group must be an eqc PermutationGroup (e.g. eqc.groups.dihedral(5)), got {type(group).__name__}")
    if group.degree > 5:
        raise ValueError(f"Hanabi has at most 5 colours, but the group acts on {group.degree} points")
    legacy = dict(
        num_players=num_players, observation_type=observation_type, sad=sad, num_ranks=num_ranks, hand_size=hand_size,
        max_information_tokens=max_information_tokens, max_life_tokens=max_life_tokens,
    )
    if not isinstance(rules, HanabiRules):
        legacy["num_colours"] = group.degree
    r = resolve_rules(rules, **legacy)
    if r.num_colours != group.degree:
        raise ValueError(f"the group acts on {group.degree} points but rules.num_colours is {r.num_colours}")
    return Symmetry(group, acts_on=colour_labels(r.num_colours), observation=observation_layout(r), action=action_layout(r))
