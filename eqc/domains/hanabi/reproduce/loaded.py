"""Each agent of a reproduction loaded once per form, so that a cell and the tests that read it share its policies."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from eqc.domains.hanabi.agent.policy import TrainedPolicy, load_policy
from eqc.domains.hanabi.reproduce.specs import Cell
from eqc.domains.hanabi.symmetry import colour_symmetry
from eqc.domains.hanabi.xp.relabelled import AveragedAgent
from eqc.groups import symmetric

__all__ = ["LoadedPolicies"]


class LoadedPolicies:
    """Policies by agent and form (test-time symmetrizer, hidden-state scheme, what its group acts on, averaging), loaded
    on first use on ``device`` in ``precision`` (:func:`~eqc.domains.hanabi.agent.policy.load_policy`) and kept for the
    rest of the reproduction."""

    def __init__(self, device: str, precision: str) -> None:
        self.device, self.precision = device, precision
        self._loaded: dict[tuple[str, str | None, str, str, tuple[tuple[int, ...], ...]], TrainedPolicy] = {}

    def of(self, cell: Cell, runs: Sequence[Path]) -> list[TrainedPolicy]:
        """The policies of ``runs`` in ``cell``'s form, in order."""
        policies = []
        for run in runs:
            key = (str(Path(run).resolve()), cell.symmetrize, cell.hidden_scheme, cell.acts_on, cell.average_over)
            if key not in self._loaded:
                policy = load_policy(run, device=self.device, symmetrize=cell.symmetrize, hidden_scheme=cell.hidden_scheme,
                                     precision=self.precision, acts_on=cell.acts_on)
                self._loaded[key] = _averaged(policy, cell.average_over) if cell.average_over else policy
            policies.append(self._loaded[key])
        return policies


def _averaged(policy: TrainedPolicy, permutations: tuple[tuple[int, ...], ...]) -> TrainedPolicy:
    """``policy`` averaged over its copies relabelled by the colour ``permutations`` (:class:`AveragedAgent`)."""
    group = symmetric(policy.rules.num_colours)
    symmetry = colour_symmetry(group, policy.rules)
    rows = tuple(int(group.permutation_to_index(torch.tensor(p))) for p in permutations)
    agent = AveragedAgent(policy.agent, symmetry, rows)
    return TrainedPolicy(agent, policy.spec, policy.trained_moves, policy.device, policy.trained_with)
