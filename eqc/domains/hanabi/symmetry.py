"""Hanabi's colour symmetry, declared from the structure of HLE's observation.

``colour_symmetry`` lets a group on the colours act on the layouts of
:mod:`eqc.domains.hanabi.layouts` (which also states the card-id and move-uid conventions).
Under a group element g the feature of colour c moves to colour g(c) (eqc's one convention, see
``eqc.groups``): card (c, r) becomes (g(c), r); ranks, slots, players, tokens and the deck never
move; only the reveal-colour moves are permuted: uid 2h + k*C + c -> 2h + k*C + g(c).

Colour groups by name (``colour_group``), for a game of c colours: ``C{c}`` the rotations
``i -> i+1 (mod c)`` (cyclic), ``D{2c}`` rotations and reflections (dihedral, order 2c, c >= 3),
``S{c}`` every permutation (symmetric), ``A{c}`` the even ones (alternating, c >= 3). For the
standard game these are the paper's C5, D10, S5 and A5.
"""

from __future__ import annotations

from eqc._checks import check_choice, check_int
from eqc.dec_pomdp import Symmetry
from eqc.domains.hanabi.layouts import action_layout, colour_labels, observation_layout
from eqc.domains.hanabi.rules import HanabiRules, check_rules
from eqc.groups import PermutationGroup, alternating, cyclic, dihedral, symmetric

__all__ = ["COLOUR_GROUP_NAMES", "colour_group", "colour_group_name", "colour_group_names", "colour_symmetry"]


def colour_group_names(num_colours: int) -> tuple[str, ...]:
    """The names ``colour_group`` knows for ``num_colours`` colours (see the module docstring), smallest kind first."""
    check_int(num_colours, "num_colours", low=1, high=5)
    c = num_colours
    return (f"C{c}", f"D{2 * c}", f"S{c}", f"A{c}") if c >= 3 else (f"C{c}", f"S{c}")


COLOUR_GROUP_NAMES = tuple(name for c in range(5, 0, -1) for name in colour_group_names(c))
"""Every colour group name, for 5 colours down to 1 (``C5``, ``D10``, ``S5``, ``A5``, ``C4``, ...)."""


def colour_group(name: str) -> PermutationGroup:
    """The colour group called ``name`` (one of ``COLOUR_GROUP_NAMES``; the module docstring says which is which)."""
    check_choice(name, "colour group", COLOUR_GROUP_NAMES)
    kind, size = name[0], int(name[1:])
    builders = {"C": cyclic, "D": lambda n2: dihedral(n2 // 2), "S": symmetric, "A": alternating}
    return builders[kind](size)


def colour_group_name(group: PermutationGroup) -> str:
    """The name (``C5``, ``D10``, ``S3``, ...) of a colour group equal to a named one, else the group's own name."""
    for name in colour_group_names(group.degree) if 1 <= group.degree <= 5 else ():
        known = colour_group(name)
        if known.order == group.order and all(p in known for p in group.elements):
            return name
    return group.name


def colour_symmetry(group: PermutationGroup, rules: HanabiRules | None = None) -> Symmetry:
    """``group`` (on the colours; its degree is the number of colours) acting on Hanabi under ``rules``.

    ``rules`` None means ``HanabiRules()`` (five colours). For two players and the standard
    game the observation representation has dim 658 (308 "minimal"; +20 "greedy_onehot", +55
    "greedy_last_action") and the action representation dim 20.
    """
    if not isinstance(group, PermutationGroup):
        raise TypeError(f"group must be an eqc PermutationGroup (e.g. colour_group('D10')), got {type(group).__name__}")
    if group.degree > 5:
        raise ValueError(f"Hanabi has at most 5 colours, but the group acts on {group.degree} points")
    r = check_rules(rules)
    if r.num_colours != group.degree:
        raise ValueError(
            f"group {colour_group_name(group)} acts on {group.degree} colours but rules.num_colours is {r.num_colours}; "
            f"colour groups of this game: {list(colour_group_names(r.num_colours))}"
        )
    return Symmetry(group, acts_on=colour_labels(r.num_colours), observation_layout=observation_layout(r), action_layout=action_layout(r))
