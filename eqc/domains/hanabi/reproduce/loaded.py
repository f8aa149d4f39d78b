"""Each agent of a reproduction loaded once per form, so that a cell and the tests that read it share its policies."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from eqc.domains.hanabi.agent.policy import TrainedPolicy, load_policy
from eqc.domains.hanabi.reproduce.specs import Cell

__all__ = ["LoadedPolicies"]


class LoadedPolicies:
    """Policies by agent and form (test-time symmetrizer, hidden-state scheme, what its group acts on), loaded on first use on ``device`` in
    ``precision`` (:func:`~eqc.domains.hanabi.agent.policy.load_policy`) and kept for the rest of the reproduction."""

    def __init__(self, device: str, precision: str) -> None:
        self.device, self.precision = device, precision
        self._loaded: dict[tuple[str, str | None, str, str], TrainedPolicy] = {}

    def of(self, cell: Cell, runs: Sequence[Path]) -> list[TrainedPolicy]:
        """The policies of ``runs`` in ``cell``'s form, in order."""
        policies = []
        for run in runs:
            key = (str(Path(run).resolve()), cell.symmetrize, cell.hidden_scheme, cell.acts_on)
            if key not in self._loaded:
                self._loaded[key] = load_policy(run, device=self.device, symmetrize=cell.symmetrize, hidden_scheme=cell.hidden_scheme,
                                                precision=self.precision, acts_on=cell.acts_on)
            policies.append(self._loaded[key])
        return policies
