"""What a hint asks for: the slot a partner plays right after each colour's (or rank's) hint.

In a two-player game, a colour hint ``c`` (move uid ``2h + c``, :mod:`eqc.domains.hanabi.rules`)
followed by the partner's play of slot ``k`` (uid ``h + k``) counts once in ``counts[c, k]``
(:func:`hint_slot_counts`; ``hint="rank"``: rank hints ``r``, uids ``2h + C + r``, the same
way). A colour-equivariant policy plays each slot as often after every
colour's hint (up to sampling noise: the deal is colour-symmetric), so the rows of ``counts`` are
alike; a colour convention ("red means play slot 0, blue slot 3") makes them differ.
:func:`slot_dependence` is the mean total-variation distance between the rows' distributions.
"""

from __future__ import annotations

import itertools

import torch

from eqc.domains.hanabi.rules import HanabiRules

__all__ = ["hint_slot_counts", "slot_dependence"]


def hint_slot_counts(moves: torch.Tensor, rules: HanabiRules, hint: str = "colour") -> tuple[torch.Tensor, int]:
    """Counts long ``[num_colours, hand_size]`` of (colour hint c, the next move plays slot k) in the games
    ``moves`` long ``[T, n]`` (move uids per move and game, -1 once a game is over; two players), and
    how many colour hints were answered by any move. ``hint="rank"``: the same for rank hints, ``[num_ranks, hand_size]``."""
    if hint not in ("colour", "rank"):
        raise ValueError(f"hint must be 'colour' or 'rank', got {hint!r}")
    if rules.num_players != 2:
        raise ValueError(f"hint_slot_counts is two-player (the hint's receiver moves next), got {rules.num_players} players")
    if not isinstance(moves, torch.Tensor) or moves.dim() != 2 or moves.dtype != torch.long:
        raise TypeError(f"moves must be a long tensor [moves, games], got {getattr(moves, 'shape', type(moves).__name__)}")
    h = rules.hand_size
    first, kinds = (2 * h, rules.num_colours) if hint == "colour" else (2 * h + rules.num_colours, rules.num_ranks)
    prev, nxt = moves[:-1].reshape(-1).cpu(), moves[1:].reshape(-1).cpu()
    hinted = (prev >= first) & (prev < first + kinds) & (nxt >= 0)
    play = hinted & (nxt >= h) & (nxt < 2 * h)
    counts = torch.zeros(kinds * h, dtype=torch.long)
    counts.index_add_(0, (prev[play] - first) * h + nxt[play] - h, torch.ones(int(play.sum()), dtype=torch.long))
    return counts.view(kinds, h), int(hinted.sum())


def slot_dependence(counts: torch.Tensor, min_plays: int = 30) -> float:
    """Mean total-variation distance between the slot distributions of every pair of colours answered by at
    least ``min_plays`` plays (0: the colour hinted says nothing about the slot played; 1: disjoint slots);
    NaN with fewer than two such colours. Rarer colours are left out: a handful of plays gives distances
    near 1 by chance."""
    rows = [row / row.sum() for row in counts.double() if row.sum() >= min_plays]
    pairs = list(itertools.combinations(rows, 2))
    return float(sum(0.5 * (a - b).abs().sum() for a, b in pairs) / len(pairs)) if pairs else float("nan")
