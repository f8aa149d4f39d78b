"""The iterated three-lever game, a toy game of the ERS paper (Muglich, Forkel, van der Pol, Foerster, "Expected
Return Symmetries", ICLR 2025), as an eqc Dec-POMDP.

Where the definition comes from: the paper names the game ("Iterated Three-Lever") among its four environments, but
neither its text nor its public code (``gfppoy/expected-return-symmetries`` at commit ``1b80428``, which holds only
Hanabi and Overcooked V2 scripts and JaxMARL's environments, no lever game) could be read for its rules. Everything
below is therefore **inferred**, from the lever game of Other-Play (Hu et al., 2020) and the paper's claim that
Other-Play over expected-return symmetries avoids conventions Other-Play over the game's symmetries leaves open:

- three levers, each paying 1 when both players pull it in the same round and 0 otherwise (inferred: "three-lever"
  with the one-shot lever game's rule and equal payoffs);
- two rounds (inferred: the fewest in which a round-1 outcome can be acted on);
- before round 2 both players see which lever each player pulled in round 1, by seat (inferred: a shared record of
  the last round). The observation is ``Block("pulled", seat, lever)``: row ``s`` is one-hot on the lever player ``s``
  pulled (all zero in round 1); the action is ``Block("lever", lever)``.

Symmetries: :attr:`IteratedLeverGame.symmetry`, the game's, permutes the levers (S3; the seats stay put: a label
relabelling applies to every agent alike and moves no agent). :attr:`IteratedLeverGame.candidate` adds the swap of the
two rows of the record (``seat``, S2): not a symmetry of the game (the rows say who pulled what), so
``check_env_symmetry`` refuses it, yet after a mismatch in round 1 it exchanges the conventions "both pull player 1's
lever" and "both pull player 2's lever" and keeps "both pull the lever nobody pulled", which is what lets Other-Play
over a group containing it settle on the third lever (:mod:`.ers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import torch

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.domains.lever.game_tree import GameTree, game_tree
from eqc.groups import direct_product, symmetric, trivial

__all__ = ["IteratedLeverGame"]

LEVERS = 3
ROUNDS = 2


class IteratedLeverGame:
    """Two players pull one of three levers at once, twice; each round pays 1 if they pulled the same lever. Implements
    :class:`~eqc.dec_pomdp.DecPOMDP`; there is no chance (``last_outcome`` is ``None``)."""

    num_agents = 2

    def __init__(self) -> None:
        self.lever = Labels("lever", LEVERS)
        self.seat = Labels("seat", self.num_agents)
        self.observation_layout = Layout([Block("pulled", self.seat, self.lever, encoding="one_hot")])
        self.action_layout = Layout([Block("lever", self.lever)])
        self._pulled: tuple[int, ...] | None = None
        self._round: int | None = None

    @cached_property
    def symmetry(self) -> Symmetry:
        """The game's symmetries: S3 on the levers (the seats fixed), on the label sets ``[lever, seat]``."""
        return Symmetry(direct_product(symmetric(LEVERS), trivial(self.num_agents)), [self.lever, self.seat],
                        self.observation_layout, self.action_layout)

    @cached_property
    def candidate(self) -> Symmetry:
        """The candidate group of the expected-return search: S3 on the levers x S2 on the seats' rows (order 12)."""
        return Symmetry(direct_product(symmetric(LEVERS), symmetric(self.num_agents)), [self.lever, self.seat],
                        self.observation_layout, self.action_layout)

    @cached_property
    def tree(self) -> GameTree:
        """Every history (:func:`~eqc.domains.lever.game_tree.game_tree`): 10 observations, 81 endings."""
        return game_tree(self)

    def initial_outcomes(self) -> list[None]:
        return [None]

    # ------------------------------------------------------------------ DecPOMDP protocol
    def reset(self, outcome: object = None) -> None:
        if outcome is not None:
            raise ValueError(f"the iterated lever game has no chance outcomes; reset() takes outcome=None, got {outcome!r}")
        self._pulled, self._round = None, 0

    def step(self, actions: Sequence[int], outcome: object = None) -> float:
        if self._round is None:
            raise RuntimeError("call reset() before step()")
        if self.terminal:
            raise RuntimeError(f"the game has ended after {ROUNDS} rounds; call reset()")
        if outcome is not None:
            raise ValueError(f"the iterated lever game has no chance outcomes; step() takes outcome=None, got {outcome!r}")
        if len(actions) != self.num_agents:
            raise ValueError(f"need one lever per player (2), got {list(actions)!r}")
        pulled = tuple(int(a) for a in actions)
        if any(not 0 <= a < LEVERS for a in pulled):
            raise ValueError(f"levers are 0..{LEVERS - 1}, got {list(pulled)}")
        self._pulled, self._round = pulled, self._round + 1
        return float(pulled[0] == pulled[1])

    def observations(self) -> torch.Tensor:
        if self._round is None:
            raise RuntimeError("call reset() before observations()")
        record = torch.zeros(self.num_agents, LEVERS)
        if self._pulled is not None:
            record[torch.arange(self.num_agents), torch.tensor(self._pulled)] = 1.0
        return record.flatten().expand(self.num_agents, -1).clone()

    def legal_actions(self) -> torch.Tensor:
        return torch.full((self.num_agents, LEVERS), not self.terminal, dtype=torch.bool)

    @property
    def terminal(self) -> bool:
        return self._round is not None and self._round >= ROUNDS

    @property
    def last_outcome(self) -> None:
        return None

    @property
    def last_outcome_probability(self) -> float:
        return 1.0

    def relabel_outcome(self, outcome: object, perms: dict[str, torch.Tensor]) -> object:
        """There are no chance outcomes: returns ``outcome`` (``None``) unchanged."""
        return outcome

    def __repr__(self) -> str:
        return f"IteratedLeverGame({LEVERS} levers paying 1, {ROUNDS} rounds)"
