"""The minimal Dec-POMDP interface that eqc's checks and training loops drive.

Chance is made explicit so that a symmetry can be tested exactly: every source of
randomness in an episode is an *outcome* (a deck order, a next state, ...) that the
environment reports after ``reset``/``step`` and accepts back to force the same
(or a relabelled) outcome in another copy of the game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import torch

__all__ = ["DecPOMDP"]


@runtime_checkable
class DecPOMDP(Protocol):
    """An n-agent Dec-POMDP with explicit chance outcomes.

    Turn-based games mark non-acting agents by an all-False row of :meth:`legal_actions`;
    their entry in ``actions`` is ignored.
    """

    num_agents: int

    def reset(self, outcome: Any = None) -> None:
        """Start an episode; ``outcome`` forces the initial chance outcome (``None`` samples one)."""

    def step(self, actions: Sequence[int], outcome: Any = None) -> float:
        """Apply one action per agent; ``outcome`` forces the step's chance outcome. Returns the reward."""

    def observations(self) -> torch.Tensor:
        """``float [num_agents, observation_dim]``: each agent's current observation."""

    def legal_actions(self) -> torch.Tensor:
        """``bool [num_agents, num_actions]``: the legal actions of each agent."""

    @property
    def terminal(self) -> bool:
        """Whether the episode has ended."""

    @property
    def last_outcome(self) -> Any:
        """The chance outcome realised by the last ``reset``/``step`` (``None`` when there was none)."""

    @property
    def last_outcome_probability(self) -> float:
        """Probability of :attr:`last_outcome` given the history (1.0 for deterministic steps)."""

    def relabel_outcome(self, outcome: Any, perms: dict[str, torch.Tensor]) -> Any:
        """``outcome`` with every label relabelled by ``perms`` (from ``Symmetry.label_permutations``)."""
