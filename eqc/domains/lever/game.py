"""The lever game (Hu et al., 2020; Muglich et al., 2022, sec. 2.5) as an eqc Dec-POMDP.

Two players each pull one of ``n`` levers at once; if they pull the same lever ``a`` both
get ``payoffs[a]``, otherwise 0. The default game has nine levers paying 1.0 and one (the
last, lever 9) paying 0.9. Each player observes the payoff vector (a block over the label
set ``lever``) and acts with one lever (a block over ``lever``).

The symmetries permute levers of equal payoff: the direct product of the symmetric groups
on the equal-payoff classes, acting on the ``n`` lever points (symmetric(9) on levers 0..8
for the default game, order 9! = 362,880). Under a symmetry ``g`` the feature of lever ``c``
moves to lever ``g(c)`` (the payoff vector is invariant; actions are relabelled).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import torch

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.dec_pomdp.tabular import TabularDecPOMDP
from eqc.groups import PermutationGroup

__all__ = [
    "DEFAULT_PAYOFFS",
    "PAYOFF_DECIMALS",
    "LeverGame",
    "check_payoffs",
    "equal_payoff_classes",
    "lever_cyclic_subgroup",
    "lever_game",
    "lever_group",
]

#: Nine levers paying 1.0 and one paying 0.9 (the paper's example).
DEFAULT_PAYOFFS: tuple[float, ...] = (1.0,) * 9 + (0.9,)
#: Payoffs equal to this many decimals are interchangeable levers.
PAYOFF_DECIMALS = 9


def check_payoffs(payoffs: Sequence[float] | torch.Tensor) -> torch.Tensor:
    """Validate a payoff list (at least two finite numbers) and return it as ``float64 [n]``."""
    try:
        values = torch.as_tensor(payoffs, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"payoffs must be a sequence of numbers, got {payoffs!r}") from None
    if values.dim() != 1 or values.numel() < 2:
        raise ValueError(f"payoffs must be a flat list of at least 2 lever payoffs, got shape {tuple(values.shape)}")
    if not bool(torch.isfinite(values).all()):
        raise ValueError(f"payoffs must be finite, got {values.tolist()}")
    return values


def equal_payoff_classes(payoffs: Sequence[float] | torch.Tensor) -> list[list[int]]:
    """The levers grouped by payoff (equal to :data:`PAYOFF_DECIMALS` decimals), in order of first appearance."""
    values = check_payoffs(payoffs)
    classes: dict[float, list[int]] = {}
    for lever, value in enumerate(values.tolist()):
        classes.setdefault(round(value, PAYOFF_DECIMALS), []).append(lever)
    return list(classes.values())


def _class_generators(classes: list[list[int]], n: int, *, symmetric: bool) -> list[list[int]]:
    """Image arrays of ``n`` points: a cycle through each class, plus (``symmetric``) a swap of its first two levers."""
    generators = []
    for levers in classes:
        if len(levers) < 2:
            continue
        cycle = list(range(n))
        for k, lever in enumerate(levers):
            cycle[lever] = levers[(k + 1) % len(levers)]
        generators.append(cycle)
        if symmetric and len(levers) > 2:
            swap = list(range(n))
            swap[levers[0]], swap[levers[1]] = levers[1], levers[0]
            generators.append(swap)
    return generators


def lever_group(payoffs: Sequence[float] | torch.Tensor = DEFAULT_PAYOFFS) -> PermutationGroup:
    """All symmetries: the product of the symmetric groups on the equal-payoff classes (order = product of factorials)."""
    classes = equal_payoff_classes(payoffs)
    n = sum(len(c) for c in classes)
    name = " x ".join(f"S{len(c)}" for c in classes if len(c) > 1) or "trivial"
    return PermutationGroup.from_generators(_class_generators(classes, n, symmetric=True), degree=n, name=name)


def lever_cyclic_subgroup(payoffs: Sequence[float] | torch.Tensor = DEFAULT_PAYOFFS) -> PermutationGroup:
    """A small subgroup transitive on every equal-payoff class: one cyclic group per class.

    For the default game this is cyclic(9) on the nine 1.0 levers (order 9), the group G-OP and
    the symmetrizer use, since exact symmetrization over symmetric(9) is refused as too large.
    """
    classes = equal_payoff_classes(payoffs)
    n = sum(len(c) for c in classes)
    name = " x ".join(f"C{len(c)}" for c in classes if len(c) > 1) or "trivial"
    return PermutationGroup.from_generators(_class_generators(classes, n, symmetric=False), degree=n, name=name)


class LeverGame:
    """The one-shot, two-player lever game; implements :class:`~eqc.dec_pomdp.DecPOMDP`.

    There is no chance (``last_outcome`` is ``None``). Both players act in the single step;
    after it the game is terminal and no action is legal.
    """

    num_agents = 2

    def __init__(self, payoffs: Sequence[float] | torch.Tensor = DEFAULT_PAYOFFS) -> None:
        self.payoffs = check_payoffs(payoffs)
        self.num_levers = self.payoffs.numel()
        self.lever = Labels("lever", self.num_levers)
        self.observation_layout = Layout([Block("payoffs", self.lever)])
        self.action_layout = Layout([Block("lever", self.lever)])
        self._started = False
        self._terminal = False

    # ------------------------------------------------------------------ symmetry
    @cached_property
    def symmetry(self) -> Symmetry:
        """The full symmetry group (:func:`lever_group`) acting on the ``lever`` labels."""
        return Symmetry(
            lever_group(self.payoffs), acts_on=self.lever, observation_layout=self.observation_layout, action_layout=self.action_layout
        )

    @cached_property
    def cyclic_symmetry(self) -> Symmetry:
        """The symmetry restricted to :func:`lever_cyclic_subgroup` (used by G-OP and the symmetrizer)."""
        return self.symmetry.restrict(lever_cyclic_subgroup(self.payoffs))

    # ------------------------------------------------------------------ batched maths
    def observation(self, device: torch.device | str = "cpu") -> torch.Tensor:
        """One player's observation, the payoff vector ``float32 [n]``."""
        return self.payoffs.to(device=device, dtype=torch.float32)

    def reward(self, actions_1: torch.Tensor, actions_2: torch.Tensor) -> torch.Tensor:
        """Batched payoff of lever choices: ``payoffs[a]`` where ``actions_1 == actions_2``, else 0."""
        payoffs = self.payoffs.to(actions_1.device)
        return torch.where(actions_1 == actions_2, payoffs[actions_1], torch.zeros((), device=actions_1.device))

    def expected_reward(self, probabilities_1: torch.Tensor, probabilities_2: torch.Tensor) -> torch.Tensor:
        """Exact expected payoff ``sum_a payoffs[a] p1[a] p2[a]`` of two action distributions ``[..., n]``."""
        return (self.payoffs.to(probabilities_1.device) * probabilities_1 * probabilities_2).sum(-1)

    def to_tabular(self) -> TabularDecPOMDP:
        """The same game as a :class:`~eqc.dec_pomdp.tabular.TabularDecPOMDP` (one state, one observation)."""
        n = self.num_levers
        return TabularDecPOMDP(
            initial=[1.0],
            transition=torch.ones(1, n, n, 1),
            reward=torch.diag(self.payoffs).unsqueeze(0),
            observation=torch.ones(2, 1, 1),
            horizon=1,
        )

    # ------------------------------------------------------------------ DecPOMDP protocol
    def reset(self, outcome: object = None) -> None:
        if outcome is not None:
            raise ValueError(f"the lever game has no chance outcomes; reset() takes outcome=None, got {outcome!r}")
        self._started, self._terminal = True, False

    def step(self, actions: Sequence[int], outcome: object = None) -> float:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._terminal:
            raise RuntimeError("the lever game is one-shot and has ended; call reset()")
        if outcome is not None:
            raise ValueError(f"the lever game has no chance outcomes; step() takes outcome=None, got {outcome!r}")
        if len(actions) != 2:
            raise ValueError(f"need one lever per player (2), got {list(actions)!r}")
        a1, a2 = (int(a) for a in actions)
        for a in (a1, a2):
            if not 0 <= a < self.num_levers:
                raise ValueError(f"levers are 0..{self.num_levers - 1}, got {a}")
        self._terminal = True
        return float(self.payoffs[a1]) if a1 == a2 else 0.0

    def observations(self) -> torch.Tensor:
        return self.payoffs.float().expand(2, self.num_levers).clone()

    def legal_actions(self) -> torch.Tensor:
        return torch.full((2, self.num_levers), not self._terminal, dtype=torch.bool)

    @property
    def terminal(self) -> bool:
        return self._terminal

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
        return f"LeverGame(payoffs={self.payoffs.tolist()}, symmetry {self.symmetry.group.name})"


def lever_game(payoffs: Sequence[float] | torch.Tensor | None = None) -> LeverGame:
    """The lever game with ``payoffs`` (default: nine levers paying 1.0 and one paying 0.9)."""
    return LeverGame(DEFAULT_PAYOFFS if payoffs is None else payoffs)
