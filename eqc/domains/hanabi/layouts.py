"""HLE's observation vector and move uids as eqc ``Layout`` s, and the conventions they fix.

Conventions (stated here once; every Hanabi module refers to them):

- **Card ids.** Card (colour c, rank r) has id ``c * num_ranks + r``; colours R, Y, G, W, B are
  0..4 and rank 0 is a "1". ``num_card_ids`` (25 in the standard game) is the empty-slot marker where one is needed.
  A deck lists card ids in dealing order: the initial hands player by player (player 0's whole
  hand first, slot 0 first), then one card after every play or discard, to the player who made it.
- **Move uids** (HLE's, for P players, hand size h, C colours, R ranks): discard slot ``0..h-1``;
  play slot ``h..2h-1``; reveal colour ``c`` to the player at offset ``o`` (1 = next player)
  ``2h + (o-1)*C + c``; reveal rank ``r`` ``2h + (P-1)*C + (o-1)*R + r``. For 2 players: 0-4
  discard, 5-9 play, 10-14 reveal colour, 15-19 reveal rank. Slot 0 is a hand's oldest card.
- **Players** in an observation are seats relative to the observer (0 = the observer); player 0
  acts first.

Observation sections, in HLE's order (``observation_layout``):

1. ``partner_hands``: (P-1) x hand_size x colour x rank, one-hot per card slot;
2. ``missing_card``: P bits, "player holds fewer than hand_size cards";
3. ``deck``: thermometer of the cards left, max_deck_size - P * hand_size bits;
4. ``fireworks``: colour x rank, one-hot of (height - 1), empty at height 0;
5. ``information_tokens``, ``life_tokens``: thermometers;
6. ``discards``: colour x (cards per colour) thermometers, ranks in order;
7. last action (``last_action_blocks``): ``last_action_player`` (P), ``last_action_type`` (play,
   discard, reveal colour, reveal rank), ``last_action_target`` (P), ``last_action_colour``
   (colour), ``last_action_rank`` (rank), ``last_action_reveal_outcome`` (hand_size),
   ``last_action_position`` (hand_size), ``last_action_card`` (colour x rank),
   ``last_action_scored_token`` (2);
8. card knowledge (not in the "minimal" observation), for each player p and slot i:
   ``knowledge_p{p}_slot{i}_plausible`` (colour x rank), ``..._colour_hinted`` (colour),
   ``..._rank_hinted`` (rank);
9. the SAD block (see ``eqc.domains.hanabi.rules.SAD_VARIANTS``): ``greedy_onehot``: the move
   uids laid out as ``action_layout`` with block names prefixed ``greedy_``; ``greedy_last_action``:
   section 7 with block names prefixed ``greedy_``.
"""

from __future__ import annotations

from eqc._checks import check_int
from eqc.dec_pomdp import Block, Labels, Layout
from eqc.domains.hanabi.rules import HanabiRules, check_rules

__all__ = ["action_layout", "colour_labels", "last_action_blocks", "observation_layout", "rank_labels"]


def colour_labels(num_colours: int = 5) -> Labels:
    """The label set the colour symmetry acts on."""
    return Labels("colour", num_colours)


def rank_labels(num_ranks: int = 5) -> Labels:
    """Ranks: named for readability, never acted on."""
    return Labels("rank", num_ranks)


def action_layout(rules: HanabiRules | None = None, *, prefix: str = "") -> Layout:
    """Move uids (see the module docstring) as blocks: discard slot, play slot, reveal (offset, colour), reveal (offset, rank).

    The reveal blocks' first axis is the target's seat relative to the actor, minus one.
    ``rules`` None means ``HanabiRules()``.
    """
    r = check_rules(rules)
    colour, rank = colour_labels(r.num_colours), rank_labels(r.num_ranks)
    return Layout(
        [
            Block(f"{prefix}discard", r.hand_size),
            Block(f"{prefix}play", r.hand_size),
            Block(f"{prefix}reveal_colour", r.num_players - 1, colour),
            Block(f"{prefix}reveal_rank", r.num_players - 1, rank),
        ]
    )


def last_action_blocks(rules: HanabiRules, prefix: str = "") -> list[Block]:
    """Section 7 of the observation (HLE's ``EncodeLastAction``): 55 floats for 2 players."""
    colour, rank = colour_labels(rules.num_colours), rank_labels(rules.num_ranks)
    p, h = rules.num_players, rules.hand_size
    return [
        Block(f"{prefix}last_action_player", p, encoding="one_hot"),
        Block(f"{prefix}last_action_type", 4, encoding="one_hot"),
        Block(f"{prefix}last_action_target", p, encoding="one_hot"),
        Block(f"{prefix}last_action_colour", colour, encoding="one_hot"),
        Block(f"{prefix}last_action_rank", rank, encoding="one_hot"),
        Block(f"{prefix}last_action_reveal_outcome", h, encoding="binary"),
        Block(f"{prefix}last_action_position", h, encoding="one_hot"),
        Block(f"{prefix}last_action_card", colour, rank, encoding="one_hot", one_hot_axes=2),
        Block(f"{prefix}last_action_scored_token", 2, encoding="binary"),
    ]


def observation_layout(rules: HanabiRules | None = None, *, max_deck_size: int | None = None) -> Layout:
    """One player's observation for ``rules`` (see the module docstring) as a Layout.

    ``rules`` None means ``HanabiRules()``. ``max_deck_size`` (layout only) defaults to
    ``rules.deck_size``; it must be a multiple of ``num_colours`` because discards are encoded
    colour by colour. The v0 belief changes values, not the layout.
    """
    r = check_rules(rules)
    colour, rank = colour_labels(r.num_colours), rank_labels(r.num_ranks)
    max_deck_size = r.deck_size if max_deck_size is None else check_int(max_deck_size, "max_deck_size", low=1)
    if max_deck_size % r.num_colours:
        raise ValueError(f"max_deck_size ({max_deck_size}) must be a multiple of num_colours ({r.num_colours})")
    p, h = r.num_players, r.hand_size
    if max_deck_size <= p * h:
        raise ValueError(f"max_deck_size ({max_deck_size}) must exceed num_players * hand_size ({p * h})")
    blocks = [
        Block("partner_hands", p - 1, h, colour, rank, encoding="one_hot", one_hot_axes=2),
        Block("missing_card", p, encoding="binary"),
        Block("deck", max_deck_size - p * h, encoding="binary"),
        Block("fireworks", colour, rank, encoding="one_hot", one_hot_axes=1),
        Block("information_tokens", r.max_info_tokens, encoding="binary"),
        Block("life_tokens", r.max_lives, encoding="binary"),
        Block("discards", colour, max_deck_size // r.num_colours, encoding="binary"),
        *last_action_blocks(r),
    ]
    if r.observation_type == "full":
        for player in range(p):
            for i in range(h):
                name = f"knowledge_p{player}_slot{i}"
                blocks += [
                    Block(f"{name}_plausible", colour, rank, encoding="binary"),
                    Block(f"{name}_colour_hinted", colour, encoding="one_hot"),
                    Block(f"{name}_rank_hinted", rank, encoding="one_hot"),
                ]
    if r.sad == "greedy_onehot":
        blocks += [Block(b.name, *b.axes, encoding="binary") for b in action_layout(r, prefix="greedy_")]
    elif r.sad == "greedy_last_action":
        blocks += last_action_blocks(r, prefix="greedy_")
    return Layout(blocks)
