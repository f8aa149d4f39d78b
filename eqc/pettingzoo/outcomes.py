"""The explicit outcomes and per-step records of :class:`~eqc.pettingzoo.PettingZooDecPOMDP`.

A PettingZoo environment draws its chance from its own generator, seeded by ``reset(seed=...)``.
The adapter makes that explicit: an episode starts from an :class:`EpisodeStart` (the seed, the
relabelling applied to what the reset drew, the chance outcomes forced at OpenSpiel chance nodes),
and each step's outcome is the tuple of chance outcomes it met (``None`` without chance nodes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

__all__ = ["EpisodeStart", "Labelling", "StepRecord", "compose_labels", "labels_as_tensors"]

#: Label permutations as plain tuples (hashable, printable): ``((name, (g(0), g(1), ...)), ...)``.
Labelling = tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True)
class EpisodeStart:
    """How an episode starts: ``reset(seed=seed)``, then ``relabel_state(env, labels)`` when ``labels`` is set.

    ``chance``: the outcomes of the chance nodes met during the reset (OpenSpiel games), in order;
    ``None`` lets the environment sample them.
    """

    seed: int
    labels: Labelling | None = None
    chance: tuple[int, ...] | None = None


def labels_as_tensors(labels: Labelling) -> dict[str, torch.Tensor]:
    """``{name: LongTensor [size]}``, the form of :meth:`eqc.dec_pomdp.Symmetry.label_permutations`."""
    return {name: torch.tensor(perm, dtype=torch.long) for name, perm in labels}


def compose_labels(first: Labelling | None, then: dict[str, torch.Tensor]) -> Labelling:
    """Relabel by ``first`` (if any), then by ``then``: label ``c`` goes to ``then[first[c]]``."""
    before = dict(first or ())
    result = []
    for name, perm in then.items():
        images = [int(v) for v in perm.tolist()]
        result.append((name, tuple(images[c] for c in before[name]) if name in before else tuple(images)))
    return tuple(result)


@dataclass(frozen=True, eq=False)
class StepRecord:
    """What a label symmetry leaves unchanged after a step, for each of ``possible_agents`` in order.

    Equality is exact on every field, except that rewards may differ by ``reward_ulps`` units in the
    last place (0 by default: bit-equal).
    """

    agents: tuple[str, ...]  # the agents still in the game
    to_act: str | None  # the agent to act next (AEC); None for parallel environments
    rewards: tuple[float, ...]  # each agent's reward from the last step
    terminated: tuple[bool, ...]
    truncated: tuple[bool, ...]
    reward_ulps: int = 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StepRecord):
            return NotImplemented
        same = (self.agents, self.to_act, self.terminated, self.truncated) == (
            other.agents, other.to_act, other.terminated, other.truncated,
        )
        ulps = max(self.reward_ulps, other.reward_ulps)
        return same and len(self.rewards) == len(other.rewards) and all(
            a == b or abs(a - b) <= ulps * math.ulp(max(abs(a), abs(b))) for a, b in zip(self.rewards, other.rewards, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        rewards = ", ".join(f"{r!r}" for r in self.rewards)
        done = ", ".join("term" if te else "trunc" if tr else "-" for te, tr in zip(self.terminated, self.truncated, strict=True))
        return f"StepRecord(agents={list(self.agents)}, to_act={self.to_act!r}, rewards=[{rewards}], done=[{done}])"
