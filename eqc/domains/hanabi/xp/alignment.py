"""Cross-play after the best colour alignment of each pair: how much of a pool's loss a colour relabelling repairs.

Two agents whose conventions differ only in what the colours are called (one says "red means slot 0",
the other "blue means slot 0") coordinate once one of them plays in a world whose colours are
relabelled by the right element ``g`` of the colour group. For every ordered pair ``(i, j)``, ``i != j``,
and every element ``g``, agent ``i`` plays with agent ``j`` relabelled by ``g``
(:class:`~eqc.domains.hanabi.xp.relabelled.RelabelledAgent`), on common decks with alternating seats
(:mod:`.play`). The **best alignment** of the unordered pair ``{i, j}`` is the element whose mean over
both orderings is highest on the first half of the decks (the *selection* decks); its scores are
reported on the other half (the *held-out* decks), so choosing the best of ``|G|`` elements adds no
selection bias. ``plain`` is the identity's score on the same held-out decks.

What it bounds: the share of a pool's cross-play gap that a colour relabelling can close,
``(XP - plain XP) / (aligned XP - plain XP)`` for any method's XP (:func:`alignable_share`). Conventions
no colour permutation maps (a hint-to-slot code) stay in ``aligned``'s gap to self-play.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from eqc._checks import check_int
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.xp.play import play_pairs
from eqc.domains.hanabi.xp.relabelled import RelabelledAgent

__all__ = ["AlignedCrossPlay", "alignable_share", "aligned_cross_play"]


@dataclass(frozen=True)
class AlignedCrossPlay:
    """Plain and best-aligned cross-play of a pool (see the module docstring).

    Attributes:
        plain: float64 ``[A, A]``, mean score of each ordered pair on the held-out decks (NaN diagonal).
        aligned: float64 ``[A, A]``, the same pair with the partner relabelled by the pair's best element.
        element: long ``[A, A]``, that element (a row of ``group``'s elements; symmetric, -1 on the diagonal):
            ``aligned[i, j]`` is ``i`` with ``j`` relabelled by ``element[i, j]``, ``aligned[j, i]`` is ``j`` with
            ``i`` relabelled by its inverse (the same alignment of the pair).
        group: the colour group's name; ``games``: decks per ordered pair and element (half of them held out).
    """

    plain: torch.Tensor
    aligned: torch.Tensor
    element: torch.Tensor
    group: str
    games: int

    def mean(self, which: str) -> float:
        """Mean over ordered pairs ``i != j`` of ``plain`` or ``aligned``."""
        matrix = {"plain": self.plain, "aligned": self.aligned}[which]
        off = ~torch.eye(matrix.shape[0], dtype=torch.bool)
        return float(matrix[off].mean())


def aligned_cross_play(policies: Sequence[TrainedPolicy], *, group: str | None = None, games: int = 500,
                       deck_seed: int = 1) -> AlignedCrossPlay:
    """Plain and best-aligned cross-play of ``policies`` (at least 2, one game) over the colour group ``group``
    (a colour group name of their game; default every permutation of its colours) on ``games`` common decks
    of ``deck_seed`` per ordered pair and element (at least 4: half select the element, half report it)."""
    policies = list(policies)
    if len(policies) < 2 or not all(isinstance(p, TrainedPolicy) for p in policies):
        raise TypeError("policies must be at least 2 TrainedPolicy objects (load_policy)")
    check_int(games, "games", low=4)
    rules = policies[0].rules
    name = f"S{rules.num_colours}" if group is None else group
    g = colour_group(name, rules.num_colours)
    A, order = len(policies), g.order
    copies = [TrainedPolicy(RelabelledAgent(p.agent, colour_symmetry(g, p.rules), e), p.spec, p.trained_moves, p.device, p.trained_with)
              for p in policies for e in range(order)]  # copy of agent j under element e: A + j * order + e
    pairs = [(i, A + j * order + e) for i in range(A) for j in range(A) if i != j for e in range(order)]
    scores, _, _, _ = play_pairs([*policies, *copies], pairs, games, deck_seed=deck_seed)
    scores = scores.double().view(A, A - 1, order, games)
    select, held = games // 2, slice(games // 2, games)
    plain = torch.full((A, A), math.nan, dtype=torch.float64)
    aligned = torch.full((A, A), math.nan, dtype=torch.float64)
    element = torch.full((A, A), -1, dtype=torch.long)

    def col(i: int, j: int) -> int:  # index of partner j among i's partners
        return j if j < i else j - 1

    inverse = g.inverse

    for i in range(A):
        for j in range(i + 1, A):
            # j relabelled by e beside i is, in distribution, i relabelled by e^-1 beside j (the game is colour-symmetric)
            both = scores[i, col(i, j), :, :select].mean(-1) + scores[j, col(j, i), inverse, :select].mean(-1)
            best = int(both.argmax())
            element[i, j] = element[j, i] = best
            aligned[i, j] = scores[i, col(i, j), best, held].mean()
            aligned[j, i] = scores[j, col(j, i), int(g.inverse[best]), held].mean()
            plain[i, j] = scores[i, col(i, j), 0, held].mean()
            plain[j, i] = scores[j, col(j, i), 0, held].mean()
    return AlignedCrossPlay(plain, aligned, element, name, games)


def alignable_share(xp: float, plain_xp: float, aligned_xp: float) -> float:
    """The share of the colour-alignable gap a method closes, ``(xp - plain_xp) / (aligned_xp - plain_xp)``
    (NaN when alignment gains nothing)."""
    gap = aligned_xp - plain_xp
    return (xp - plain_xp) / gap if gap > 0 else math.nan
