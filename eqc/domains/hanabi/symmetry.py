"""Hanabi's colour symmetry, declared from the structure of HLE's observation.

``colour_symmetry`` lets a group on the colours act on the layouts of
:mod:`eqc.domains.hanabi.rules` (which also states the card-id and move-uid conventions).
Under a group element g the feature of colour c moves to colour g(c) (eqc's one convention, see
``eqc.groups``): card (c, r) becomes (g(c), r); ranks, slots, players, tokens and the deck never
move; only the reveal-colour moves are permuted: uid 2h + k*C + c -> 2h + k*C + g(c).

Colour groups by name (``colour_group``): ``C{k}`` the rotations ``i -> i+1 (mod k)`` (cyclic),
``D{2k}`` rotations and reflections (dihedral, order 2k, k >= 3), ``S{k}`` every permutation
(symmetric), ``A{k}`` the even ones (alternating, k >= 3), each acting on colours ``0..k-1``. In a
game of c colours every such group with k <= c is a colour group; for k < c it fixes the colours
``k..c-1`` (in Mini-Hanabi's 3 colours, ``S2`` swaps colours 0 and 1: a subgroup of S3 of order 2).
For the standard game C5, D10, S5 and A5 are the paper's groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from eqc._checks import check_choice, check_int
from eqc.dec_pomdp import CandidateSet, Symmetry, load_candidate_set, load_group_symmetry
from eqc.domains.hanabi.rules import (
    HanabiRules,
    action_layout,
    check_rules,
    colour_labels,
    observation_layout,
    rank_labels,
    slot_labels,
)
from eqc.groups import PermutationGroup, alternating, cyclic, dihedral, direct_product, symmetric

__all__ = ["ACTS_ON", "COLOUR_GROUP_NAMES", "LABEL_SETS", "colour_group", "colour_group_name", "colour_group_names",
           "colour_symmetry", "label_relabelling", "learned_candidates", "learned_symmetry", "rank_relabelling"]


def colour_group_names(num_colours: int) -> tuple[str, ...]:
    """The names of the colour groups of a game of ``num_colours`` colours: those on all its colours first
    (``C{c}``, ``D{2c}``, ``S{c}``, ``A{c}``, smallest kind first), then those fixing colours, k = c-1 down to 2."""
    check_int(num_colours, "num_colours", low=1, high=5)
    if num_colours == 1:
        return ("C1", "S1")
    return tuple(name for k in range(num_colours, 1, -1) for name in _names_on(k))


def _names_on(k: int) -> tuple[str, ...]:
    return (f"C{k}", f"D{2 * k}", f"S{k}", f"A{k}") if k >= 3 else (f"C{k}", f"S{k}")


COLOUR_GROUP_NAMES = (*colour_group_names(5), "C1", "S1")
"""Every colour group name (``C5``, ``D10``, ``S5``, ``A5``, ``C4``, ..., ``C1``, ``S1``)."""


def colour_group(name: str, num_colours: int | None = None) -> PermutationGroup:
    """The colour group called ``name`` (one of ``COLOUR_GROUP_NAMES``; the module docstring says which is
    which) in a game of ``num_colours`` colours (None: as many as the group moves, ``C3`` -> 3)."""
    check_choice(name, "colour group", COLOUR_GROUP_NAMES)
    kind, size = name[0], int(name[1:])
    k = size // 2 if kind == "D" else size
    builders = {"C": cyclic, "D": dihedral, "S": symmetric, "A": alternating}
    group = builders[kind](k)
    if num_colours is None or num_colours == k:
        return group
    if name not in colour_group_names(num_colours):
        raise ValueError(f"colour group {name} moves {k} colours but the game has {num_colours}; "
                         f"colour groups of this game: {list(colour_group_names(num_colours))}")
    fixed = list(range(k, num_colours))
    generators = [[*g.tolist(), *fixed] for g in group.generators]
    return PermutationGroup.from_generators(generators, degree=num_colours, name=f"{name} (colours 0..{k - 1} of {num_colours})")


def colour_group_name(group: PermutationGroup) -> str:
    """The name (``C5``, ``D10``, ``S2``, ...) of a colour group equal to a named one, else the group's own name."""
    for name in colour_group_names(group.degree) if 1 <= group.degree <= 5 else ():
        known = colour_group(name, group.degree)
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


def rank_relabelling(group: PermutationGroup, rules: HanabiRules | None = None) -> Symmetry:
    """``group`` (on the ranks; its degree is the number of ranks) permuting the rank labels of Hanabi's observation
    and moves under ``rules``: card (c, r) becomes (c, g(r)) in hands, fireworks, the last move and card knowledge,
    and rank hints are permuted; the discard counts (per colour, not per rank label) stay.

    Ranks are **not** a symmetry of Hanabi (a 1 is playable first, a 5 last): this is a control. Symmetrized over it
    by the same formula and the same number of forward passes as over a colour group, an agent shows what averaging
    forward passes does when the group is not the game's."""
    r = check_rules(rules)
    if group.degree != r.num_ranks:
        raise ValueError(f"group {group.name} acts on {group.degree} points but rules.num_ranks is {r.num_ranks}")
    return Symmetry(group, acts_on=rank_labels(r.num_ranks), observation_layout=observation_layout(r), action_layout=action_layout(r))


#: Hanabi's label sets a relabelling may act on: colours (the game's symmetry), hand slots and ranks (not symmetries).
LABEL_SETS = ("colour", "slot", "rank")


def label_relabelling(groups: Mapping[str, PermutationGroup], rules: HanabiRules | None = None) -> Symmetry:
    """The direct product of ``groups`` (label set name -> group on it; names from :data:`LABEL_SETS`) relabelling
    Hanabi's observation and moves under ``rules``; the group's points are the label sets in the order given.

    A slot relabelling sigma moves what is said of slot i to slot sigma(i): the partner hands' and the card
    knowledge's slots, the last move's revealed slots and position, and the discard and play moves. Slot order is
    card age, so no slot relabelling is a symmetry of the game (``check_env_symmetry`` says where it fails); one may
    still preserve an agent's expected return (:mod:`eqc.dec_pomdp.expected_return`). Example: colour S3 x slot S3 on
    Mini-Hanabi, ``label_relabelling({"colour": symmetric(3), "slot": symmetric(3)}, HanabiRules.preset("mini"))``.
    """
    r = check_rules(rules)
    if not isinstance(groups, Mapping) or not groups:
        raise TypeError(f"groups must be a non-empty mapping of label set name -> PermutationGroup, got {groups!r}")
    sizes = {"colour": r.num_colours, "slot": r.hand_size, "rank": r.num_ranks}
    labels = {"colour": colour_labels, "slot": slot_labels, "rank": rank_labels}
    for name, group in groups.items():
        if name not in LABEL_SETS:
            raise ValueError(f"groups: unknown label set {name!r}; Hanabi's label sets are {list(LABEL_SETS)}")
        if not isinstance(group, PermutationGroup):
            raise TypeError(f"groups[{name!r}] must be a PermutationGroup, got {type(group).__name__}")
        if group.degree != sizes[name]:
            raise ValueError(f"groups[{name!r}] acts on {group.degree} points but the game has {sizes[name]} {name}s")
    product = direct_product(*groups.values()) if len(groups) > 1 else next(iter(groups.values()))
    acts_on = [labels[name](sizes[name]) for name in groups]
    return Symmetry(product, acts_on=acts_on, observation_layout=observation_layout(r), action_layout=action_layout(r))


def learned_symmetry(path: str | Path, rules: HanabiRules | None = None) -> Symmetry:
    """The group of the expected-return group file at ``path`` (``eqc hanabi symmetries learn``) acting on the
    observation and moves of ``rules``: what Other-Play over it draws from. ValueError naming the file and what is
    wrong (not such a file, not a group, label sets of another game)."""
    r = check_rules(rules)
    return load_group_symmetry(path, observation_layout(r), action_layout(r))


def learned_candidates(path: str | Path, rules: HanabiRules | None = None) -> CandidateSet:
    """The candidate set of learned neural maps saved at ``path`` (``eqc hanabi symmetries neural``), checked to fit the
    observation encoding and the moves of ``rules``: what Other-Play over it draws from. FileNotFoundError or ValueError
    naming the file and what is wrong (unreadable, damaged weights, maps of another observation size or move count)."""
    r = check_rules(rules)
    found = load_candidate_set(path)
    first = found.maps[0].map
    if (first.observation_size, first.num_moves) != (r.obs_dim, r.num_moves):
        raise ValueError(f"{path}: its maps act on observations of size {first.observation_size} and {first.num_moves} "
                         f"moves, but this game's encoding has observations of size {r.obs_dim} and {r.num_moves} moves "
                         "(learn the maps against agents of this game, [game] and its observation knowledge included)")
    return found


#: What a test-time group may permute: ``"colour"`` (Hanabi's symmetry) or ``"rank"`` (not one: the smoothing control).
ACTS_ON = ("colour", "rank")

