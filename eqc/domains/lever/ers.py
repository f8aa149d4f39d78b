"""Expected-return symmetries of the ERS paper's toy games, found exactly, and what Other-Play over them changes.

The games (:class:`~eqc.domains.lever.iterated.IteratedLeverGame`, :class:`~eqc.domains.lever.cat_dog.CatDogGame`)
each declare their own symmetry group (``game.symmetry``, verified by :func:`eqc.verification.check_env_symmetry`)
and a larger candidate group of label permutations (``game.candidate``). Everything here is exact, over every
deterministic tabular policy (:mod:`~eqc.domains.lever.tabular_policies`):

- :func:`self_play_optima`: every policy optimal in self-play, the pool the ERS paper learns from;
- :func:`learn_toy_group`: :func:`eqc.dec_pomdp.search_label_permutations` over the candidate group on such a pool,
  measuring each member's self-play return relabelled by each element (and, with ``cross_play=True``, the XP variant);
- :func:`other_play_optima`: the Other-Play optimum over a group, every policy attaining it, and their cross-play.

What it finds (``tests/domains/lever/test_ers_games.py``). Cat/Dog: the search keeps 4 of the 8 candidates, among
them "swap the said words only", which the game refuses as a symmetry; Other-Play over the game's swap keeps both
conventions (cross-play -1 between them), Other-Play over the learned group bails out (0.5 with anyone). Iterated
three-lever: self-play coordinates by construction (one policy, both seats, the same observations), so the pool keeps
all 12 candidates, among them the seat swap; Other-Play over S3 keeps three conventions for a round-1 mismatch
(player 1's lever, player 2's lever, the third lever), Other-Play over the learned group only the third: worst
cross-play 1 instead of 0, mean 4/3 instead of 8/9.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

from eqc._checks import check_bool, check_float
from eqc.dec_pomdp import ExpectedReturnGroup, Symmetry, search_label_permutations
from eqc.domains.lever.game_tree import GameTree, check_choices
from eqc.domains.lever.tabular_policies import (
    best,
    cross_play_matrix,
    every_choice,
    other_play_values,
    pool_cross_play,
    pool_returns,
    self_play,
)

__all__ = ["OtherPlayOptima", "ToyGame", "learn_toy_group", "other_play_optima", "self_play_optima"]


class ToyGame(Protocol):
    """A game small enough to enumerate, with its own symmetry and a candidate group of label permutations."""

    @property
    def tree(self) -> GameTree: ...

    @property
    def symmetry(self) -> Symmetry: ...

    @property
    def candidate(self) -> Symmetry: ...


@dataclass(frozen=True)
class OtherPlayOptima:
    """The Other-Play optimum over a group among every deterministic policy.

    Attributes:
        value: the Other-Play objective's maximum.
        choices: ``[M, O]``, every deterministic policy attaining it.
        cross_play: ``[M, M]``, the exact return of seat 1 played by policy ``i`` with seat 2 by policy ``j``.
    """

    value: float
    choices: torch.Tensor
    cross_play: torch.Tensor

    @property
    def worst(self) -> float:
        """The lowest cross-play of two of the optima: what Other-Play over this group guarantees."""
        return float(self.cross_play.min())

    @property
    def mean(self) -> float:
        """The mean cross-play of two optima drawn independently and uniformly (the same one included)."""
        return float(self.cross_play.mean())


def _tree(game: ToyGame) -> GameTree:
    tree = getattr(game, "tree", None)
    if not isinstance(tree, GameTree):
        raise TypeError(f"game must be a toy game with a GameTree .tree (IteratedLeverGame, CatDogGame), got {type(game).__name__}")
    return tree


def self_play_optima(game: ToyGame) -> torch.Tensor:
    """``long [M, O]``: every deterministic policy whose self-play return is the highest."""
    tree = _tree(game)
    choices = every_choice(tree)
    return choices[best(self_play(tree, choices))]


def learn_toy_group(game: ToyGame, *, pool: torch.Tensor | None = None, tolerance: float = 1e-9,
                    cross_play: bool = False) -> ExpectedReturnGroup:
    """The expected-return group of ``game.candidate`` on ``pool`` (``long [M, O]``; default
    :func:`self_play_optima`), within ``tolerance`` of the identity's return. ``cross_play``: also record the XP
    variant (``M * M`` pairs per element: for small pools)."""
    tree = _tree(game)
    tolerance = check_float(tolerance, "tolerance", low=0.0)
    members = self_play_optima(game) if pool is None else check_choices(tree, pool, "pool")
    if members.dim() != 2 or not len(members):
        raise ValueError(f"pool must be a non-empty [members, {len(tree.observations)}] tensor of choices, got {tuple(members.shape)}")
    xp = pool_cross_play(tree, game.candidate, members) if check_bool(cross_play, "cross_play") else None
    return search_label_permutations(game.candidate, pool_returns(tree, game.candidate, members), tolerance=tolerance,
                                     cross_play=xp)


def other_play_optima(game: ToyGame, symmetry: Symmetry, *, atol: float = 1e-9) -> OtherPlayOptima:
    """:class:`OtherPlayOptima` of Other-Play over ``symmetry.group`` (e.g. ``game.symmetry``, or a learned group's
    ``.symmetry``) among every deterministic policy; values within ``atol`` of the maximum tie."""
    tree = _tree(game)
    if not isinstance(symmetry, Symmetry):
        raise TypeError(f"symmetry must be an eqc Symmetry (game.symmetry or a learned group's .symmetry), got {type(symmetry).__name__}")
    choices = every_choice(tree)
    values = other_play_values(tree, symmetry, choices)
    optimal = best(values, atol=check_float(atol, "atol", low=0.0))
    return OtherPlayOptima(float(values.max()), choices[optimal], cross_play_matrix(tree, choices[optimal]))
