"""Decks for Hanabi: the card multiset, validation, sampling, colour relabelling, and the
HLE deal moves used to deal a chosen deck (``DealMoves``).

Conventions (shared with the HLE adapter and the symmetry declaration):

- A card id is ``colour * num_ranks + rank`` (colours R, Y, G, W, B = 0..4, rank 0 is a "1").
- A deck is a sequence of card ids in *dealing order*: ``deck[k]`` is the k-th card dealt at
  a chance node. HLE deals the initial hands player by player (player 0's whole hand first,
  then player 1, ...), then one card after every play or discard to the player who made it.
- A colour permutation ``sigma`` is an image array: colour ``c`` becomes ``sigma[c]``. Relabelling
  a deck maps card (c, r) to (sigma[c], r) at every position.

Only ``DealMoves`` touches HLE, and only through objects handed to it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from eqc._checks import check_int

__all__ = [
    "card_counts",
    "deck_size",
    "standard_deck",
    "as_deck",
    "random_deck",
    "relabel_deck",
    "deck_log_probability",
    "DealMoves",
]


def default_hand_size(num_players: int) -> int:
    """Cards per hand in the standard game: 5 for 2-3 players, 4 for 4-5."""
    return 5 if num_players < 4 else 4


def card_counts(num_ranks: int = 5) -> list[int]:
    """Copies of each rank per colour, as HLE's ``NumberCardInstances``.

    Rank 0 has 3 copies, the highest rank 1 copy, the others 2 (a single rank has 3 copies).
    """
    check_int(num_ranks, "num_ranks", low=1, high=5)
    return [3 if r == 0 else 1 if r == num_ranks - 1 else 2 for r in range(num_ranks)]


def deck_size(num_colours: int = 5, num_ranks: int = 5) -> int:
    """Number of cards in a full deck (50 in the standard game)."""
    check_int(num_colours, "num_colours", low=1, high=5)
    return num_colours * sum(card_counts(num_ranks))


def standard_deck(num_colours: int = 5, num_ranks: int = 5) -> list[int]:
    """The deck's multiset as a sorted list of card ids."""
    counts = card_counts(num_ranks)
    check_int(num_colours, "num_colours", low=1, high=5)
    return [c * num_ranks + r for c in range(num_colours) for r in range(num_ranks) for _ in range(counts[r])]


def as_deck(deck: object, num_colours: int = 5, num_ranks: int = 5) -> tuple[int, ...]:
    """Validate ``deck`` and return it as a tuple of Python ints.

    Accepts a list/tuple of Python ints or a 1-D integer torch tensor / numpy array. The deck
    must be a permutation of the full multiset (see ``standard_deck``); otherwise a
    TypeError/ValueError names what is wrong.
    """
    if isinstance(deck, (torch.Tensor, np.ndarray)):
        if deck.ndim != 1:
            raise ValueError(f"deck must be 1-D, got shape {tuple(deck.shape)}")
        if isinstance(deck, torch.Tensor):
            is_int = not (deck.dtype.is_floating_point or deck.dtype.is_complex or deck.dtype == torch.bool)
        else:
            is_int = np.issubdtype(deck.dtype, np.integer)
        if not is_int:
            raise TypeError(f"deck must hold integers (card ids), got dtype {deck.dtype}")
        items = [int(x) for x in deck.tolist()]
    elif isinstance(deck, (list, tuple)):
        for k, x in enumerate(deck):
            if isinstance(x, bool) or not isinstance(x, int):
                raise TypeError(f"deck[{k}] must be a Python int card id, got {type(x).__name__}")
        items = list(deck)
    else:
        raise TypeError(f"deck must be a list/tuple of ints or a 1-D integer tensor, got {type(deck).__name__}")
    expected = standard_deck(num_colours, num_ranks)
    num_cards = num_colours * num_ranks
    if len(items) != len(expected):
        raise ValueError(f"deck must hold exactly {len(expected)} cards, got {len(items)}")
    for k, x in enumerate(items):
        if not 0 <= x < num_cards:
            raise ValueError(f"deck[{k}] = {x} is not a card id in [0, {num_cards})")
    if sorted(items) != expected:
        have = np.bincount(items, minlength=num_cards)
        want = np.bincount(expected, minlength=num_cards)
        bad = [(i, int(have[i]), int(want[i])) for i in range(num_cards) if have[i] != want[i]]
        i, h, w = bad[0]
        raise ValueError(
            f"deck is not a permutation of the {len(expected)}-card multiset: card {i} "
            f"(colour {i // num_ranks}, rank {i % num_ranks}) appears {h} times, expected {w}"
        )
    return tuple(items)


def random_deck(generator: torch.Generator | None = None, num_colours: int = 5, num_ranks: int = 5) -> tuple[int, ...]:
    """A uniformly shuffled deck drawn with ``generator``."""
    cards = torch.tensor(standard_deck(num_colours, num_ranks), dtype=torch.long)
    order = torch.randperm(len(cards), generator=generator)
    return tuple(cards[order].tolist())


def relabel_deck(deck: Sequence[int], colour_permutation: Sequence[int] | torch.Tensor, num_ranks: int = 5) -> tuple[int, ...]:
    """Card (c, r) -> (sigma[c], r) at every position; ``sigma`` is an image array."""
    sigma = [int(x) for x in (colour_permutation.tolist() if isinstance(colour_permutation, torch.Tensor) else colour_permutation)]
    if sorted(sigma) != list(range(len(sigma))):
        raise ValueError(f"colour_permutation must be a permutation of 0..{len(sigma) - 1}, got {sigma}")
    out = []
    for x in deck:
        c, r = divmod(int(x), num_ranks)
        if c >= len(sigma):
            raise ValueError(f"card id {x} has colour {c}, outside the permutation's {len(sigma)} colours")
        out.append(sigma[c] * num_ranks + r)
    return tuple(out)


def deck_log_probability(num_colours: int = 5, num_ranks: int = 5) -> float:
    """Log-probability of any one deck order under uniform shuffling (the same for every deck).

    Identical copies are indistinguishable, so P = prod_cards(count!) / N!.
    """
    counts = card_counts(num_ranks)
    n = deck_size(num_colours, num_ranks)
    return num_colours * sum(math.lgamma(k + 1) for k in counts) - math.lgamma(n + 1)


class DealMoves:
    """HLE deal moves (C++ ``HanabiMove`` of type kDeal), one per card id, for controlled dealing.

    HLE 0.0.4's C API has no constructor for a chosen deal move, but it does return copies of
    the moves in a state's history (``HistoryItemMove``), deal moves included. We play one
    scratch game (HLE's own random dealing; always discard when legal, else hint, so the
    whole deck gets dealt), keep the first deal move seen for each card id and check its
    type, colour and rank through the C API. The moves are genuine HLE objects: nothing is
    written into C++ memory. ``StateApplyMove`` copies a move, so each object is reusable.
    """

    DEAL = 5  # HanabiMove::kDeal

    def __init__(self, ffi: object, lib: object, c_game: object, num_colours: int, num_ranks: int, hand_size: int) -> None:
        self._lib = lib
        self._moves: list[object | None] = [None] * (num_colours * num_ranks)
        state = ffi.new("pyhanabi_state_t*")
        lib.NewState(c_game, state)
        uid_moves = []
        try:
            for uid in range(lib.MaxMoves(c_game)):
                m = ffi.new("pyhanabi_move_t*")
                lib.GetMoveByUid(c_game, uid, m)
                uid_moves.append(m)
            discards, hints = uid_moves[:hand_size], uid_moves[2 * hand_size :]
            for _ in range(100_000):
                if lib.StateEndOfGameStatus(state) != 0:
                    break
                if lib.StateCurPlayer(state) == -1:
                    lib.StateDealRandomCard(state)
                    continue
                move = next((m for m in discards + hints if lib.MoveIsLegal(state, m)), None)
                if move is None:
                    break
                lib.StateApplyMove(state, move)
            for i in range(lib.StateLenMoveHistory(state)):
                item = ffi.new("pyhanabi_history_item_t*")
                lib.StateGetMoveHistory(state, i, item)
                move = ffi.new("pyhanabi_move_t*")
                lib.HistoryItemMove(item, move)
                lib.DeleteHistoryItem(item)
                card = lib.MoveColor(move) * num_ranks + lib.MoveRank(move)
                if lib.MoveType(move) == self.DEAL and 0 <= card < len(self._moves) and self._moves[card] is None:
                    self._moves[card] = move
                else:
                    lib.DeleteMove(move)
        finally:
            for m in uid_moves:
                lib.DeleteMove(m)
            lib.DeleteState(state)
        missing = [k for k, m in enumerate(self._moves) if m is None]
        if missing:
            self.close()
            raise RuntimeError(f"could not obtain HLE deal moves for card ids {missing}")
        for card, m in enumerate(self._moves):
            got = (lib.MoveType(m), lib.MoveColor(m), lib.MoveRank(m))
            if got != (self.DEAL, card // num_ranks, card % num_ranks):
                self.close()
                raise RuntimeError(f"HLE deal move for card {card} reads back as (type, colour, rank) = {got}")

    def __getitem__(self, card: int) -> object:
        move = self._moves[card]
        if move is None:
            raise RuntimeError("DealMoves was closed")
        return move

    def close(self) -> None:
        """Free the C++ move objects (also done on garbage collection)."""
        for k, m in enumerate(self._moves):
            if m is not None:
                self._lib.DeleteMove(m)
                self._moves[k] = None

    def __del__(self) -> None:
        if getattr(self, "_moves", None) is not None:
            self.close()
