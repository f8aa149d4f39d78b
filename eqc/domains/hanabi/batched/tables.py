"""Constant tables for the batched torch Hanabi (``HanabiBatch``), built once per (game rules, device).

Card ids and move uids: :mod:`eqc.domains.hanabi.rules`. The tables support every game
``HanabiRules`` allows (1-5 colours, 1-5 ranks, any number of players, hand size, information
tokens and lives). Further conventions, for C colours and R ranks:

- ``empty = C * R`` (``rules.num_card_ids``) marks an empty hand slot (colour C and rank R,
  matches no hint).
- move kinds are numbered as in HLE's last-action section: PLAY 0, DISCARD 1, REVEAL_COLOUR 2,
  REVEAL_RANK 3.
- card knowledge is a 12-bit integer per slot whatever the shape: bit c (c < C) colour c
  plausible, bit ``RANK_SHIFT + r`` (r < R) rank r plausible, bit ``COLOUR_HINTED`` colour hinted,
  bit ``RANK_HINTED`` rank hinted; the bits of absent colours and ranks stay 0 (``fresh`` for a new
  card, 0 for an empty slot). A hinted colour leaves exactly that colour plausible, so HLE's
  knowledge bits of a slot are a function of these 12 bits alone (``knowledge_rows``).

The hot path only indexes these tables (``index_select``/``gather``); the observation is assembled
from float rows looked up here, never from per-bit Python code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import torch

from eqc.dec_pomdp import Layout
from eqc.domains.hanabi.dealing import standard_deck
from eqc.domains.hanabi.rules import HanabiRules, card_counts, observation_layout

__all__ = [
    "COLOUR_HINTED",
    "DISCARD",
    "PLAY",
    "RANK_HINTED",
    "RANK_SHIFT",
    "REVEAL_COLOUR",
    "REVEAL_RANK",
    "HanabiTables",
    "tables_for",
]

RANK_SHIFT, COLOUR_HINTED, RANK_HINTED = 5, 10, 11
"""Bit positions in the 12-bit card knowledge (see the module docstring)."""
PLAY, DISCARD, REVEAL_COLOUR, REVEAL_RANK = 0, 1, 2, 3
DECK_ALIGN = 8
"""Decks are stored as uint8 rows padded to a multiple of this (whole int64 words: one copy per re-deal)."""

# Columns of HanabiTables.move_info and card_info.
KIND, SLOT, OFFSET, AND_MATCH, OR_MATCH, AND_OTHER, HINT_BIT, LAST_CODE = range(8)
COLOUR, RANK, BITS, RADIX = range(4)


@dataclass(frozen=True)
class Sections:
    """Start offsets and sizes of the canonical observation's sections, read off the one
    declaration of HLE's observation (:func:`eqc.domains.hanabi.rules.observation_layout`)."""

    deck: int
    deck_len: int
    info: int
    discards: int
    last_action: int
    last_action_len: int
    knowledge: int
    knowledge_per_card: int
    dim: int

    @classmethod
    def of(cls, layout: Layout) -> Sections:
        knowledge = layout.offset("knowledge")
        per_card = layout.block("knowledge").shape[-1]
        last_action = layout.offset("last_action_player")
        return cls(
            deck=layout.offset("deck"),
            deck_len=layout.block("deck").size,
            info=layout.offset("information_tokens"),
            discards=layout.offset("discards"),
            last_action=last_action,
            last_action_len=knowledge - last_action,
            knowledge=knowledge,
            knowledge_per_card=per_card,
            dim=layout.dim,
        )


@dataclass(frozen=True)
class _Move:
    kind: int
    slot: int
    offset: int
    value: int


def _moves(p: int, h: int, num_colours: int, num_ranks: int) -> list[_Move]:
    out = [_Move(DISCARD, s, 0, 0) for s in range(h)] + [_Move(PLAY, s, 0, 0) for s in range(h)]
    out += [_Move(REVEAL_COLOUR, 0, o + 1, c) for o in range(p - 1) for c in range(num_colours)]
    out += [_Move(REVEAL_RANK, 0, o + 1, r) for o in range(p - 1) for r in range(num_ranks)]
    return out


def _bit_rows(num_rows: int, width: int, on: list[list[int]]) -> torch.Tensor:
    """Float [num_rows, width] with ones at ``on[row]``."""
    out = torch.zeros(num_rows, width)
    rows = [row for row, cols in enumerate(on) for _ in cols]
    cols = [col for cols in on for col in cols]
    out[rows, cols] = 1.0
    return out


class HanabiTables:
    """All constant tables for the game of ``rules`` on ``device`` (see the module docstring).

    Sizes below for C colours, R ranks, N = C * R card ids, ``empty = N``, a deck of D cards,
    K = sum(card_counts) cards per colour, M moves. ``max_info``/``max_lives``: the rules' token
    counts; ``layout``: sections of the "full" canonical observation (the "minimal" one is its
    prefix up to ``layout.knowledge``); ``padded_deck``: D rounded up to ``DECK_ALIGN``.

    Step tables (long): ``move_info [M, 8]`` per move uid: kind, slot (0 for hints), target offset
    (0 for plays/discards), knowledge AND-mask for matching cards, OR-mask for matching cards,
    AND-mask for the target's other cards (all -1/0 for non-hints), hinted bit, base of the
    last-action code; ``card_info [N + 1, 4]`` per card id: colour, rank, attribute bits
    ``1<<c | 1<<(RANK_SHIFT+r)`` (0 for ``empty``), discard-code increment (``move_info_rows``,
    ``card_info_rows``: the same transposed, so that a lookup yields contiguous rows); ``shift [h+1, h]`` row s < h
    gathers a hand without slot s (its last slot then receives the drawn card), row h is the
    identity; ``rotation [p, p]`` (o + k) % p; ``targets_of [p, p-1]`` the hint targets' seats
    (offsets 1..p-1) of each actor.

    Discards of one colour are one mixed-radix code ``sum_r count[r] * discard_radix[r]``
    (``num_discard_codes`` codes, 216 for 5 ranks).

    Observation rows (float, one row per index value): ``card_rows [N + 1, N]``, ``knowledge_rows
    [4096, N + C + R]``, ``missing_rows [p * 2^p, p]`` (index o * 2^p + absolute missing mask),
    ``deck_rows [D + 1, deck_len]`` (index: cards left), ``fireworks_rows [R + 1, R]``,
    ``tokens_rows [(I+1)(L+1), I+L]`` (index info * (L+1) + lives), ``discard_rows [codes, K]``,
    ``last_action_rows [p * num_codes + 1, la_len]`` (index actor-relative-to-observer * num_codes +
    code; the last row: no move yet), ``last_action_base [p + 1, p]`` (row ``actor + 1``: the first
    row index per observer; row 0, no move yet: the last row), ``onehot_rows [M + 1, M]`` (one-hot of a move uid; last row zeros).

    Legal-move rows (bool): ``play_discard_rows [2(h+1) + 1, 2h]`` (index 2 * cards-in-hand +
    discard-allowed; the last row for finished games), ``hint_rows [1024, C + R]`` (index: the
    target's knowledge-style colour/rank bits, 0 when hinting is not allowed; columns: colours, then ranks).

    Last-action code (observer-independent): a hint ``(uid - 2h) * 2^h + revealed-slot mask``; a
    play/discard ``(p-1)*(C+R)*2^h + (uid * (N + 1) + card) * 3 + flag``, flag 0: not scored (or a
    discard), 1: scored, 2: scored and regained an information token.
    """

    def __init__(self, rules: HanabiRules, device: torch.device) -> None:
        # One function on purpose: a flat list of lookup tables, each built from the ones above it.
        p, h = rules.num_players, rules.hand_size
        self.num_players, self.hand_size, self.device = p, h, device
        self.num_colours, self.num_ranks = nc, nr = rules.num_colours, rules.num_ranks
        self.num_cards = n = rules.num_card_ids
        self.empty, self.deck_size = n, rules.deck_size
        self.padded_deck = -(-rules.deck_size // DECK_ALIGN) * DECK_ALIGN
        self.fresh = (1 << nc) - 1 | ((1 << nr) - 1) << RANK_SHIFT
        self.max_info, self.max_lives = max_info, max_lives = rules.max_info_tokens, rules.max_lives
        counts = card_counts(nr)
        self.discard_radix = [math.prod(c + 1 for c in counts[:r]) for r in range(nr)]
        self.num_discard_codes = math.prod(c + 1 for c in counts)
        moves = _moves(p, h, nc, nr)
        self.num_moves = m = len(moves)
        self.layout = Sections.of(observation_layout(rules))
        self.deck_len, self.knowledge_per_card = self.layout.deck_len, self.layout.knowledge_per_card
        self.last_action_len = self.layout.last_action_len
        self.num_hint_codes = (p - 1) * (nc + nr) << h
        self.num_codes = self.num_hint_codes + 2 * h * (n + 1) * 3

        info = []
        for uid, mv in enumerate(moves):
            if mv.kind in (REVEAL_COLOUR, REVEAL_RANK):
                first = 0 if mv.kind == REVEAL_COLOUR else RANK_SHIFT
                bit = 1 << (first + mv.value)
                attribute = ((1 << RANK_SHIFT) - 1) << first
                flag = 1 << (COLOUR_HINTED if mv.kind == REVEAL_COLOUR else RANK_HINTED)
                code = (uid - 2 * h) << h
                info.append([mv.kind, mv.slot, mv.offset, ~attribute, bit | flag, ~bit, bit, code])
            else:
                info.append([mv.kind, mv.slot, mv.offset, -1, 0, -1, 0, self.num_hint_codes + uid * (n + 1) * 3])
        self.move_info = torch.tensor(info, dtype=torch.long, device=device)
        self.move_info_rows = self.move_info.t().contiguous()
        cards = [[c // nr, c % nr, (1 << (c // nr)) | (1 << (RANK_SHIFT + c % nr)), self.discard_radix[c % nr]] for c in range(n)]
        cards.append([nc, nr, 0, 0])
        self.card_info = torch.tensor(cards, dtype=torch.long, device=device)
        self.card_bits = self.card_info[:, BITS].contiguous()
        self.card_info_rows = self.card_info.t().contiguous()
        shift = [[j if j < s else min(j + 1, h - 1) for j in range(h)] for s in range(h)] + [list(range(h))]
        self.shift = torch.tensor(shift, dtype=torch.long, device=device)
        self.rotation = torch.tensor([[(o + k) % p for k in range(p)] for o in range(p)], dtype=torch.long, device=device)
        self.others = self.rotation[:, 1:].reshape(-1).contiguous()
        self.rotation_flat = self.rotation.reshape(-1).contiguous()
        self.arange_players = torch.arange(p, device=device)
        self.targets_of = (self.rotation[:, 1:]).contiguous()
        self.slot_bits = torch.tensor([1 << j for j in range(h)], dtype=torch.long, device=device)
        self.card_totals = torch.tensor(counts * nc, dtype=torch.long, device=device)  # copies of each card id
        self.rank_range = torch.arange(nr, device=device)
        self.initial_deck = torch.tensor(standard_deck(nc, nr), dtype=torch.long, device=device)
        self.discard_counts = torch.tensor(
            [[code // self.discard_radix[r] % (counts[r] + 1) for r in range(nr)] for code in range(self.num_discard_codes)],
            dtype=torch.long,
            device=device,
        )

        # Observation rows.
        self.card_rows = _bit_rows(n + 1, n, [[c] for c in range(n)] + [[]]).to(device)
        know = []
        for k in range(1 << (RANK_HINTED + 1)):
            colours = [c for c in range(nc) if k >> c & 1]
            ranks = [r for r in range(nr) if k >> (RANK_SHIFT + r) & 1]
            bits = [c * nr + r for c in colours for r in ranks]
            if k >> COLOUR_HINTED & 1 and len(colours) == 1:
                bits.append(n + colours[0])
            if k >> RANK_HINTED & 1 and len(ranks) == 1:
                bits.append(n + nc + ranks[0])
            know.append(bits)
        self.knowledge_rows = _bit_rows(len(know), self.knowledge_per_card, know).to(device)
        self.missing_rows = _bit_rows(
            p << p, p, [[k for k in range(p) if mask >> ((o + k) % p) & 1] for o in range(p) for mask in range(1 << p)]
        ).to(device)
        self.deck_rows = _bit_rows(
            self.deck_size + 1, self.deck_len, [list(range(min(left, self.deck_len))) for left in range(self.deck_size + 1)]
        ).to(device)
        self.fireworks_rows = _bit_rows(nr + 1, nr, [[height - 1] if height else [] for height in range(nr + 1)]).to(device)
        self.tokens_rows = _bit_rows(
            (max_info + 1) * (max_lives + 1),
            max_info + max_lives,
            [list(range(i)) + [max_info + j for j in range(lives)] for i in range(max_info + 1) for lives in range(max_lives + 1)],
        ).to(device)
        discard_bits = []
        for code in range(self.num_discard_codes):
            bits, start = [], 0
            for r in range(nr):
                bits += [start + i for i in range(code // self.discard_radix[r] % (counts[r] + 1))]
                start += counts[r]
            discard_bits.append(bits)
        self.discard_rows = _bit_rows(self.num_discard_codes, sum(counts), discard_bits).to(device)
        self.last_action_rows = self._last_action_rows(moves).to(device)
        base = [[p * self.num_codes] * p] + [[(a - o) % p * self.num_codes for o in range(p)] for a in range(p)]
        self.last_action_base = torch.tensor(base, dtype=torch.long, device=device)
        self.onehot_rows = _bit_rows(m + 1, m, [[u] for u in range(m)] + [[]]).to(device)

        # Legal-move rows: plays/discards by (cards in hand, discard allowed) plus an all-False
        # row for finished games; hints by the target's colour/rank bits (0 when no hint is allowed).
        pd = [(list(range(cards)) if d else []) + [h + j for j in range(cards)] for cards in range(h + 1) for d in (0, 1)]
        self.play_discard_rows = _bit_rows(len(pd) + 1, 2 * h, [*pd, []]).bool().to(device)
        hint_bits = [c for c in range(nc)] + [RANK_SHIFT + r for r in range(nr)]
        hints = [[i for i, bit in enumerate(hint_bits) if code >> bit & 1] for code in range(1 << COLOUR_HINTED)]
        self.hint_rows = _bit_rows(len(hints), nc + nr, hints).bool().to(device)

    def _last_action_rows(self, moves: list[_Move]) -> torch.Tensor:
        """Float [p * num_codes + 1, la_len]: HLE's last-action section for every (actor, code)."""
        p, h, nc, nr, n = self.num_players, self.hand_size, self.num_colours, self.num_ranks, self.num_cards
        width = self.last_action_len
        kind_at, target_at, colour_at = p, p + 4, 2 * p + 4
        rank_at, outcome_at = colour_at + nc, colour_at + nc + nr
        position_at, card_at = outcome_at + h, outcome_at + 2 * h
        flags_at = card_at + n
        rows = []
        for actor in range(p):
            per_actor: list[list[int]] = [[] for _ in range(self.num_codes)]
            for uid, mv in enumerate(moves):
                if mv.kind in (REVEAL_COLOUR, REVEAL_RANK):
                    value_at = colour_at if mv.kind == REVEAL_COLOUR else rank_at
                    base = [actor, kind_at + mv.kind, target_at + (actor + mv.offset) % p, value_at + mv.value]
                    for mask in range(1 << h):
                        per_actor[(uid - 2 * h) << h | mask] = base + [outcome_at + j for j in range(h) if mask >> j & 1]
                else:
                    for card in range(n):
                        for flag in range(3):
                            bits = [actor, kind_at + mv.kind, position_at + mv.slot, card_at + card]
                            bits += [flags_at] if flag >= 1 else []
                            bits += [flags_at + 1] if flag == 2 else []
                            per_actor[self.num_hint_codes + (uid * (n + 1) + card) * 3 + flag] = bits
            rows += per_actor
        rows.append([])
        return _bit_rows(len(rows), width, rows)


@lru_cache(maxsize=32)
def _cached(game: HanabiRules, device: torch.device) -> HanabiTables:
    return HanabiTables(game, device)


def tables_for(rules: HanabiRules, device: torch.device | str) -> HanabiTables:
    """Shared (read-only) tables for the game of ``rules`` on ``device``."""
    return _cached(rules.game, torch.device(device))
