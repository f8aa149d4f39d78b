"""Hanabi's colour symmetry, declared from the structure of HLE's canonical observation.

``observation_layout`` and ``action_layout`` describe HLE's canonical encoding and move uids as
eqc ``Block`` s for any number of players, colours, ranks and hand size; ``colour_symmetry`` lets a
group on the colours act on them. Convention (as everywhere in eqc): under a group element g the
feature of colour c moves to colour g(c); card (c, r) becomes (g(c), r); ranks, slots, players,
tokens and the deck never move.

Observation sections, in HLE's order (card index = colour * num_ranks + rank; players are seats
relative to the observer, 0 = the observer):

1. ``partner_hands``: (P-1) x hand_size x colour x rank, one-hot per card slot;
2. ``missing_card``: P bits, "player holds fewer than hand_size cards";
3. ``deck``: thermometer of the cards left, max_deck_size - P * hand_size bits;
4. ``fireworks``: colour x rank, one-hot of (height - 1), empty at height 0;
5. ``information_tokens``, ``life_tokens``: thermometers;
6. ``discards``: colour x (cards per colour) thermometers, ranks in order;
7. last action: ``last_action_player`` (P), ``last_action_type`` (play, discard, reveal colour,
   reveal rank), ``last_action_target`` (P), ``last_action_colour`` (colour),
   ``last_action_rank`` (rank), ``last_action_reveal_outcome`` (hand_size),
   ``last_action_position`` (hand_size), ``last_action_card`` (colour x rank),
   ``last_action_scored_token`` (2);
8. card knowledge (not in the "minimal" observation), for each player p and slot i:
   ``knowledge_p{p}_slot{i}_plausible`` (colour x rank), ``..._colour_hinted`` (colour),
   ``..._rank_hinted`` (rank);
9. with ``sad=True``: the greedy action, a one-hot over move uids laid out as ``action_layout``
   with block names prefixed ``greedy_``.
"""

from __future__ import annotations

from eqc._checks import check_int
from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.domains.hanabi.dealing import deck_size, default_hand_size
from eqc.groups import PermutationGroup

__all__ = ["colour_labels", "rank_labels", "observation_layout", "action_layout", "colour_symmetry"]

_OBSERVATION_TYPES = ("full", "minimal")


def colour_labels(num_colours: int = 5) -> Labels:
    """The label set the colour symmetry acts on."""
    return Labels("colour", num_colours)


def rank_labels(num_ranks: int = 5) -> Labels:
    """Ranks: named for readability, never acted on."""
    return Labels("rank", num_ranks)


def action_layout(
    num_players: int = 2,
    num_colours: int = 5,
    num_ranks: int = 5,
    hand_size: int | None = None,
    *,
    prefix: str = "",
) -> Layout:
    """HLE's move uids as blocks: discard slot, play slot, reveal (target offset, colour), reveal (offset, rank).

    The target offset is the target's seat relative to the actor, minus one.
    """
    check_int(num_players, "num_players", low=1, high=5)
    if num_players < 2:
        raise ValueError(f"num_players must be in [2, 5], got {num_players}")
    hand_size = default_hand_size(num_players) if hand_size is None else check_int(hand_size, "hand_size", low=1)
    colour = colour_labels(check_int(num_colours, "num_colours", low=1, high=5))
    rank = rank_labels(check_int(num_ranks, "num_ranks", low=1, high=5))
    others = num_players - 1
    return Layout(
        [
            Block(f"{prefix}discard", hand_size),
            Block(f"{prefix}play", hand_size),
            Block(f"{prefix}reveal_colour", others, colour),
            Block(f"{prefix}reveal_rank", others, rank),
        ]
    )


def observation_layout(
    num_players: int = 2,
    num_colours: int = 5,
    num_ranks: int = 5,
    hand_size: int | None = None,
    max_deck_size: int | None = None,
    max_information_tokens: int = 8,
    max_life_tokens: int = 3,
    *,
    observation_type: str = "full",
    sad: bool = False,
) -> Layout:
    """HLE's canonical observation (see the module docstring) as a Layout.

    ``max_deck_size`` defaults to HLE's deck size (50 for 5 colours and ranks); it must be a
    multiple of ``num_colours`` because discards are encoded colour by colour.
    """
    check_int(num_players, "num_players", low=1, high=5)
    if num_players < 2:
        raise ValueError(f"num_players must be in [2, 5], got {num_players}")
    if observation_type not in _OBSERVATION_TYPES:
        raise ValueError(f"observation_type must be one of {_OBSERVATION_TYPES}, got {observation_type!r}")
    if not isinstance(sad, bool):
        raise TypeError(f"sad must be a bool, got {type(sad).__name__}")
    colour = colour_labels(check_int(num_colours, "num_colours", low=1, high=5))
    rank = rank_labels(check_int(num_ranks, "num_ranks", low=1, high=5))
    hand_size = default_hand_size(num_players) if hand_size is None else check_int(hand_size, "hand_size", low=1)
    max_deck_size = deck_size(num_colours, num_ranks) if max_deck_size is None else check_int(max_deck_size, "max_deck_size", low=1)
    if max_deck_size % num_colours:
        raise ValueError(f"max_deck_size ({max_deck_size}) must be a multiple of num_colours ({num_colours})")
    thermometer = max_deck_size - num_players * hand_size
    if thermometer < 1:
        raise ValueError(f"max_deck_size ({max_deck_size}) must exceed num_players * hand_size ({num_players * hand_size})")
    P, h = num_players, hand_size
    blocks = [
        Block("partner_hands", P - 1, h, colour, rank, encoding="one_hot", one_hot_axes=2),
        Block("missing_card", P, encoding="binary"),
        Block("deck", thermometer, encoding="binary"),
        Block("fireworks", colour, rank, encoding="one_hot", one_hot_axes=1),
        Block("information_tokens", check_int(max_information_tokens, "max_information_tokens", low=1), encoding="binary"),
        Block("life_tokens", check_int(max_life_tokens, "max_life_tokens", low=1), encoding="binary"),
        Block("discards", colour, max_deck_size // num_colours, encoding="binary"),
        Block("last_action_player", P, encoding="one_hot"),
        Block("last_action_type", 4, encoding="one_hot"),
        Block("last_action_target", P, encoding="one_hot"),
        Block("last_action_colour", colour, encoding="one_hot"),
        Block("last_action_rank", rank, encoding="one_hot"),
        Block("last_action_reveal_outcome", h, encoding="binary"),
        Block("last_action_position", h, encoding="one_hot"),
        Block("last_action_card", colour, rank, encoding="one_hot", one_hot_axes=2),
        Block("last_action_scored_token", 2, encoding="binary"),
    ]
    if observation_type == "full":
        for p in range(P):
            for i in range(h):
                name = f"knowledge_p{p}_slot{i}"
                blocks += [
                    Block(f"{name}_plausible", colour, rank, encoding="binary"),
                    Block(f"{name}_colour_hinted", colour, encoding="one_hot"),
                    Block(f"{name}_rank_hinted", rank, encoding="one_hot"),
                ]
    layout = Layout(blocks)
    if sad:
        greedy = action_layout(num_players, num_colours, num_ranks, hand_size, prefix="greedy_")
        layout = layout + Layout(Block(b.name, *b.axes, encoding="binary") for b in greedy)
    return layout


def colour_symmetry(
    group: PermutationGroup,
    num_players: int = 2,
    *,
    observation_type: str = "full",
    sad: bool = False,
    num_ranks: int = 5,
    hand_size: int | None = None,
    max_information_tokens: int = 8,
    max_life_tokens: int = 3,
) -> Symmetry:
    """``group`` (on the colours; its degree is the number of colours) acting on Hanabi.

    For two players and the standard game the observation representation has dim 658
    (308 for "minimal", +20 with ``sad``) and the action representation dim 20; only the
    reveal-colour moves are permuted: uid 2h + k*C + c -> 2h + k*C + g(c).
    """
    if not isinstance(group, PermutationGroup):
        raise TypeError(f"group must be an eqc PermutationGroup (e.g. eqc.groups.dihedral(5)), got {type(group).__name__}")
    num_colours = group.degree
    if num_colours > 5:
        raise ValueError(f"Hanabi has at most 5 colours, but the group acts on {num_colours} points")
    obs = observation_layout(
        num_players,
        num_colours,
        num_ranks,
        hand_size,
        None,
        max_information_tokens,
        max_life_tokens,
        observation_type=observation_type,
        sad=sad,
    )
    act = action_layout(num_players, num_colours, num_ranks, hand_size)
    return Symmetry(group, acts_on=colour_labels(num_colours), observation=obs, action=act)
