"""Decks for Hanabi: the card multiset, validation, sampling and colour relabelling (no HLE).

Card ids and the dealing order of a deck: see :mod:`eqc.domains.hanabi.rules`. A colour
permutation ``sigma`` is an image array: colour ``c`` becomes ``sigma[c]``; relabelling a deck maps
card (c, r) to (sigma[c], r) at every position. The HLE deal moves that deal a chosen deck are
``eqc.domains.hanabi.hle.native.DealMoves``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from eqc._checks import check_int
from eqc.domains.hanabi.rules import card_counts

__all__ = [
    "as_deck",
    "card_counts",
    "deck_log_probability",
    "deck_size",
    "random_deck",
    "relabel_deck",
    "standard_deck",
]


def deck_size(num_colours: int = 5, num_ranks: int = 5) -> int:
    """Number of cards in a full deck (50 in the standard game; ``HanabiRules.deck_size``)."""
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
