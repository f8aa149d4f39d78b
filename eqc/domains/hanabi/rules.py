"""``HanabiRules``: one validated description of a Hanabi game and of the observation agents see.

Every Hanabi entry point takes it (``HanabiEnv``, ``HanabiBatch``, ``observation_layout``,
``action_layout``, ``colour_symmetry``, ``RuleAgent``, evaluation), so the game's parameters are
written and checked in one place. This module also lays out HLE's observation vector and move
uids as eqc ``Layout`` s (``observation_layout``, ``action_layout``): the observation variant is
part of the rules, and its length (``HanabiRules.obs_dim``) is the layout's.

Example::

    rules = HanabiRules(num_players=2, knowledge="v0_belief")
    rules.num_moves, rules.obs_dim, rules.deck_size      # 20, 658, 50
    HanabiRules.preset("mini", num_players=3)            # a named game (PRESETS), other fields on top
    HanabiRules.from_dict(rules.to_dict()) == rules      # True: plain JSON for checkpoints
    dataclasses.replace(rules, sad="greedy_onehot")      # a variant, validated again

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
8. card knowledge (not in the "minimal" observation): block ``knowledge``, player x slot x a record
   (``knowledge_record``) of ``plausible`` (colour x rank), ``colour_hinted`` (colour) and
   ``rank_hinted`` (rank);
9. the SAD block (see ``eqc.domains.hanabi.rules.SAD_VARIANTS``): ``greedy_onehot``: the move
   uids laid out as ``action_layout`` with block names prefixed ``greedy_``; ``greedy_last_action``:
   section 7 with block names prefixed ``greedy_``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from types import MappingProxyType
from typing import Any

from eqc._checks import check_choice, check_int
from eqc.dec_pomdp import Block, Labels, Layout

__all__ = [
    "KNOWLEDGE", "OBSERVATION_TYPES", "PRESETS", "SAD_VARIANTS", "SHAPE_FIELDS",
    "HanabiRules", "action_layout", "card_counts", "check_rules", "colour_labels", "default_hand_size", "knowledge_record",
    "last_action_blocks", "observation_layout", "rank_labels", "slot_labels",
]

OBSERVATION_TYPES = ("full", "minimal")
"""``full``: HLE's CARD_KNOWLEDGE observation (card-knowledge section included); ``minimal``: without it."""
KNOWLEDGE = ("canonical", "v0_belief")
"""``canonical``: HLE's card-knowledge bits; ``v0_belief``: OBL's v0 belief (see ``batched.variants``)."""
SAD_VARIANTS = ("off", "greedy_onehot", "greedy_last_action")
"""What is appended to every observation for SAD (Hu & Foerster 2020):

- ``off``: nothing;
- ``greedy_onehot``: a one-hot over move uids (``num_moves`` floats) of the greedy move of the
  player who acted last, in that actor's frame, shown to every player but the actor, zeros before
  the first move (eqc's compact variant);
- ``greedy_last_action``: hanabi_SAD's exact block: HLE's last-action section (55 floats for 2
  players) of the state reached by applying the last actor's greedy move, instead of the move
  made, to the state before that move (no card is dealt after it), from each player's view; every
  player sees it, the actor included; zeros before the first move.
"""


SHAPE_FIELDS = ("num_colours", "num_ranks", "hand_size", "max_info_tokens", "max_lives")
"""The fields of ``HanabiRules`` that a preset fixes (the deck's shape, hand and tokens)."""
PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "full": MappingProxyType({"num_colours": 5, "num_ranks": 5, "hand_size": None, "max_info_tokens": 8, "max_lives": 3}),
    "small": MappingProxyType({"num_colours": 2, "num_ranks": 5, "hand_size": 2, "max_info_tokens": 3, "max_lives": 1}),
    "mini": MappingProxyType({"num_colours": 3, "num_ranks": 3, "hand_size": 3, "max_info_tokens": 5, "max_lives": 3}),
})
"""Named games, as values of ``SHAPE_FIELDS``:

- ``full``: HLE's default game: 5 colours x 5 ranks, hand 5 for 2-3 players and 4 for 4-5
  (``hand_size`` None), 8 information tokens, 3 lives (max score 25);
- ``small``: HLE's Hanabi-Small: 2 colours x 5 ranks, hand 2, 3 information tokens, 1 life (max 10);
- ``mini``: jax-aht's Mini-Hanabi: 3 colours x 3 ranks, hand 3, 5 information tokens, 3 lives (max 9).
"""


def default_hand_size(num_players: int) -> int:
    """Cards per hand in the standard game: 5 for 2-3 players, 4 for 4-5."""
    return 5 if num_players < 4 else 4


def card_counts(num_ranks: int = 5) -> list[int]:
    """Copies of each rank per colour, as HLE's ``NumberCardInstances``.

    Rank 0 has 3 copies, the highest rank 1 copy, the others 2 (a single rank has 3 copies).
    """
    check_int(num_ranks, "num_ranks", low=1, high=5)
    return [3 if r == 0 else 1 if r == num_ranks - 1 else 2 for r in range(num_ranks)]


@dataclass(frozen=True, init=False)
class HanabiRules:
    """The game (HLE's parameters) and the observation variant, validated on construction.

    Args:
        num_players: 2..5.
        num_colours, num_ranks: 1..5 each (standard: 5 and 5).
        hand_size: cards per hand; None means the standard size (5 for 2-3 players, 4 for 4-5)
            and is stored resolved, so ``HanabiRules(hand_size=None) == HanabiRules(hand_size=5)``.
        max_info_tokens: information tokens at the start and at most (standard 8).
        max_lives: life tokens at the start (standard 3).
        observation_type: one of ``OBSERVATION_TYPES``.
        knowledge: one of ``KNOWLEDGE``; ``v0_belief`` needs ``observation_type="full"``.
        sad: one of ``SAD_VARIANTS``.

    Derived: ``num_moves`` (move uids, 20 for 2 players), ``obs_dim`` (one player's observation
    vector, 658 for 2 players, full, no SAD), ``deck_size`` (cards in the *full* deck, 50; the cards
    left in a running game are ``cards_left`` on the environments), ``canonical_dim`` (HLE's
    encoding without the SAD block), ``sad_dim``, ``num_card_ids`` (colours x ranks).
    """

    num_players: int = 2
    num_colours: int = 5
    num_ranks: int = 5
    hand_size: int = 5  # resolved: the constructor's None is the standard size for num_players
    max_info_tokens: int = 8
    max_lives: int = 3
    observation_type: str = "full"
    knowledge: str = "canonical"
    sad: str = "off"

    def __init__(self, num_players: int = 2, num_colours: int = 5, num_ranks: int = 5, hand_size: int | None = None,
                 max_info_tokens: int = 8, max_lives: int = 3, observation_type: str = "full", knowledge: str = "canonical",
                 sad: str = "off") -> None:
        # Written out (not generated) so that the attribute hand_size is an int while the argument may be None.
        check_int(num_players, "num_players", low=2, high=5)
        values = {"num_players": num_players, "num_colours": num_colours, "num_ranks": num_ranks,
                  "hand_size": default_hand_size(num_players) if hand_size is None else hand_size,
                  "max_info_tokens": max_info_tokens, "max_lives": max_lives, "observation_type": observation_type,
                  "knowledge": knowledge, "sad": sad}
        for name, value in values.items():
            object.__setattr__(self, name, value)
        self._validate()

    def _validate(self) -> None:
        check_int(self.num_players, "num_players", low=2, high=5)
        check_int(self.num_colours, "num_colours", low=1, high=5)
        check_int(self.num_ranks, "num_ranks", low=1, high=5)
        check_int(self.hand_size, "hand_size", low=1, high=8)  # HLE keeps reveal outcomes in 8-bit masks
        check_int(self.max_info_tokens, "max_info_tokens", low=1, high=100)
        check_int(self.max_lives, "max_lives", low=1, high=100)
        for name, choices in (("observation_type", OBSERVATION_TYPES), ("knowledge", KNOWLEDGE), ("sad", SAD_VARIANTS)):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, one of {list(choices)}, got {type(value).__name__} {value!r}")
            check_choice(value, name, choices)
        if self.knowledge == "v0_belief" and self.observation_type != "full":
            raise ValueError("knowledge='v0_belief' rewrites the card-knowledge section, which only observation_type='full' has")
        dealt = self.num_players * self.hand_size
        if dealt >= self.deck_size:
            raise ValueError(
                f"hand_size * num_players = {dealt} exceeds the deck: a {self.deck_size}-card deck "
                f"({self.num_colours} colours x {self.num_ranks} ranks) must keep at least one card to draw"
            )

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> HanabiRules:
        """The game ``PRESETS[name]`` with ``overrides`` (any fields, e.g. ``num_players``, ``sad``, or a shape field) on top."""
        check_choice(name, "preset", tuple(PRESETS))
        return cls(**{**PRESETS[name], **overrides})

    # ------------------------------------------------------------------ derived
    @property
    def game(self) -> HanabiRules:
        """These rules with the default observation variant: the game itself, which agents that play together must share."""
        return dataclasses.replace(self, observation_type="full", knowledge="canonical", sad="off")

    @property
    def max_score(self) -> int:
        """The perfect score: every colour played up to its highest rank."""
        return self.num_colours * self.num_ranks

    @property
    def deck_size(self) -> int:
        """Cards in the full deck (50 in the standard game); never the cards left."""
        return self.num_colours * sum(card_counts(self.num_ranks))

    @property
    def num_card_ids(self) -> int:
        """Distinct cards (colours x ranks); card ids are ``0..num_card_ids-1``."""
        return self.num_colours * self.num_ranks

    @property
    def num_moves(self) -> int:
        """Move uids: 2 * hand_size + (num_players - 1) * (num_colours + num_ranks)."""
        return 2 * self.hand_size + (self.num_players - 1) * (self.num_colours + self.num_ranks)

    @cached_property
    def canonical_dim(self) -> int:
        """Length of HLE's canonical encoding (the observation without the SAD block)."""
        return observation_layout(dataclasses.replace(self, sad="off")).dim

    @cached_property
    def sad_dim(self) -> int:
        """Length of the SAD block (0 when ``sad="off"``)."""
        return self.obs_dim - self.canonical_dim

    @cached_property
    def obs_dim(self) -> int:
        """Length of one player's observation vector for this variant (``observation_layout(self).dim``)."""
        return observation_layout(self).dim

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of the fields (hand_size resolved)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HanabiRules:
        """Inverse of :meth:`to_dict`; missing keys take their defaults, unknown keys are an error."""
        if not isinstance(data, Mapping):
            raise TypeError(f"data must be a mapping (from HanabiRules.to_dict), got {type(data).__name__}")
        allowed = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(allowed), key=str)
        if unknown:
            raise ValueError(f"unknown HanabiRules key(s) {unknown}; allowed keys: {allowed}")
        return cls(**dict(data))


def check_rules(rules: object, name: str = "rules") -> HanabiRules:
    """``rules`` if it is a ``HanabiRules``, the standard 2-player game ``HanabiRules()`` if None; else TypeError naming ``name``.

    Every Hanabi entry point takes the game this way and no other: the game's parameters are
    fields of ``HanabiRules``, never keywords of the entry point.
    """
    if rules is None:
        return HanabiRules()
    if not isinstance(rules, HanabiRules):
        raise TypeError(
            f"{name} must be a HanabiRules (e.g. HanabiRules(num_players=3) or HanabiRules.preset('mini')), "
            f"got {type(rules).__name__} {rules!r}"
        )
    return rules


# ---------------------------------------------------------------------- layouts
def colour_labels(num_colours: int = 5) -> Labels:
    """The label set the colour symmetry acts on."""
    return Labels("colour", num_colours)


def rank_labels(num_ranks: int = 5) -> Labels:
    """Ranks: not a symmetry of the game; acted on only by the rank control (``symmetry.rank_relabelling``)."""
    return Labels("rank", num_ranks)


def slot_labels(hand_size: int = 5) -> Labels:
    """A hand's slots (slot 0 the oldest card): not a symmetry of the game (slot order is card age); acted on by
    slot relabellings (``symmetry.label_relabelling``), candidates for expected-return symmetries."""
    return Labels("slot", hand_size)


def knowledge_record(rules: HanabiRules) -> Layout:
    """What HLE encodes of one (player, slot)'s card knowledge: plausible cards, hinted colour, hinted rank."""
    colour, rank = colour_labels(rules.num_colours), rank_labels(rules.num_ranks)
    return Layout([
        Block("plausible", colour, rank, encoding="binary"),
        Block("colour_hinted", colour, encoding="one_hot"),
        Block("rank_hinted", rank, encoding="one_hot"),
    ])


def action_layout(rules: HanabiRules | None = None, *, prefix: str = "") -> Layout:
    """Move uids (see the module docstring) as blocks: discard slot, play slot, reveal (offset, colour), reveal (offset, rank).

    The reveal blocks' first axis is the target's seat relative to the actor, minus one.
    ``rules`` None means ``HanabiRules()``.
    """
    r = check_rules(rules)
    colour, rank, slot = colour_labels(r.num_colours), rank_labels(r.num_ranks), slot_labels(r.hand_size)
    return Layout(
        [
            Block(f"{prefix}discard", slot),
            Block(f"{prefix}play", slot),
            Block(f"{prefix}reveal_colour", r.num_players - 1, colour),
            Block(f"{prefix}reveal_rank", r.num_players - 1, rank),
        ]
    )


def last_action_blocks(rules: HanabiRules, prefix: str = "") -> list[Block]:
    """Section 7 of the observation (HLE's ``EncodeLastAction``): 55 floats for 2 players."""
    colour, rank, slot = colour_labels(rules.num_colours), rank_labels(rules.num_ranks), slot_labels(rules.hand_size)
    p = rules.num_players
    return [
        Block(f"{prefix}last_action_player", p, encoding="one_hot"),
        Block(f"{prefix}last_action_type", 4, encoding="one_hot"),
        Block(f"{prefix}last_action_target", p, encoding="one_hot"),
        Block(f"{prefix}last_action_colour", colour, encoding="one_hot"),
        Block(f"{prefix}last_action_rank", rank, encoding="one_hot"),
        Block(f"{prefix}last_action_reveal_outcome", slot, encoding="binary"),
        Block(f"{prefix}last_action_position", slot, encoding="one_hot"),
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
    colour, rank, slot = colour_labels(r.num_colours), rank_labels(r.num_ranks), slot_labels(r.hand_size)
    max_deck_size = r.deck_size if max_deck_size is None else check_int(max_deck_size, "max_deck_size", low=1)
    if max_deck_size % r.num_colours:
        raise ValueError(f"max_deck_size ({max_deck_size}) must be a multiple of num_colours ({r.num_colours})")
    p, h = r.num_players, r.hand_size
    if max_deck_size <= p * h:
        raise ValueError(f"max_deck_size ({max_deck_size}) must exceed num_players * hand_size ({p * h})")
    blocks = [
        Block("partner_hands", p - 1, slot, colour, rank, encoding="one_hot", one_hot_axes=2),
        Block("missing_card", p, encoding="binary"),
        Block("deck", max_deck_size - p * h, encoding="binary"),
        Block("fireworks", colour, rank, encoding="one_hot", one_hot_axes=1),
        Block("information_tokens", r.max_info_tokens, encoding="binary"),
        Block("life_tokens", r.max_lives, encoding="binary"),
        Block("discards", colour, max_deck_size // r.num_colours, encoding="binary"),
        *last_action_blocks(r),
    ]
    if r.observation_type == "full":
        blocks.append(Block("knowledge", p, slot, knowledge_record(r)))
    if r.sad == "greedy_onehot":
        blocks += [Block(b.name, *b.axes, encoding="binary") for b in action_layout(r, prefix="greedy_")]
    elif r.sad == "greedy_last_action":
        blocks += last_action_blocks(r, prefix="greedy_")
    return Layout(blocks)
