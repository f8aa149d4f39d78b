"""Proof by test that a declared symmetry is a symmetry of an environment.

For an element ``g``, play an episode (random legal actions from a seeded generator,
chance outcomes sampled by the environment), then replay it in the relabelled game: every
chance outcome relabelled by ``g`` (``env.relabel_outcome``) and every action mapped to
``g(a)``. A symmetry requires, at every step and for every agent::

    observations' == rho_obs(g) observations      legal' == rho_act(g) legal
    reward' == reward    terminal' == terminal    P(outcome') == P(outcome)

Rewards may be allowed to differ by ``reward_ulps`` units in the last place (default 0), for
environments that add the same per-label terms in another order once relabelled (floating-point
addition is not associative). The first violation is returned as a :class:`Counterexample`
naming the block. A check that
checks nothing never passes: bad arguments (``max_steps < 1``, a NaN or negative ``atol``) and a
symmetry declared for vectors of other sizes than the environment's are errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch

from eqc._checks import check_float, check_int
from eqc.dec_pomdp import DecPOMDP, Symmetry
from eqc.verification.equivariance import tested_permutations

__all__ = ["DEFAULT_MAX_STEPS", "Counterexample", "assert_env_symmetry", "check_env_symmetry"]

DEFAULT_MAX_STEPS = 10_000
Invariants = Callable[[DecPOMDP], Any]


@dataclass(frozen=True)
class Counterexample:
    """Where the relabelled game departs from the declared symmetry."""

    episode: int
    step: int
    permutation: list[int]  # the group element, as a permutation
    kind: str  # "observation", "legal_actions", "reward", "terminal", "outcome_probability", "invariant", "error"
    agent: int | None = None
    block: str | None = None  # the Layout block that differs (observations and actions)
    coordinate: str | None = None  # e.g. "hand[axis0=2, colour=3, rank=1]"
    expected: Any = None
    actual: Any = None
    detail: str = field(default="")
    history: tuple[Any, ...] = ()  # the original game: (initial outcome, (actions, outcome) per step) up to `step`

    def __str__(self) -> str:
        where = f"episode {self.episode}, step {self.step}, element {self.permutation}"
        who = f", agent {self.agent}" if self.agent is not None else ""
        what = f" in block {self.block!r} at {self.coordinate}" if self.block else ""
        return (
            f"{self.kind} differs{what} ({where}{who}): expected {self.expected}, got {self.actual}"
            + (f"; {self.detail}" if self.detail else "")
        )


@dataclass
class _Trace:
    outcomes: list[Any] = field(default_factory=list)  # outcome of reset, then of each step
    probabilities: list[float] = field(default_factory=list)
    observations: list[torch.Tensor] = field(default_factory=list)
    legal: list[torch.Tensor] = field(default_factory=list)
    actions: list[list[int]] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    terminal: list[bool] = field(default_factory=list)
    invariants: list[Any] = field(default_factory=list)


def _record(env: DecPOMDP, trace: _Trace, invariants: Invariants | None) -> None:
    trace.outcomes.append(env.last_outcome)
    trace.probabilities.append(float(env.last_outcome_probability))
    trace.observations.append(env.observations().detach().clone())
    trace.legal.append(env.legal_actions().detach().clone())
    trace.terminal.append(bool(env.terminal))
    trace.invariants.append(None if invariants is None else invariants(env))


def _random_actions(legal: torch.Tensor, generator: torch.Generator) -> list[int]:
    actions = []
    for row in legal:
        choices = row.nonzero().flatten()
        actions.append(int(choices[torch.randint(len(choices), (1,), generator=generator)]) if len(choices) else 0)
    return actions


def _play(env: DecPOMDP, generator: torch.Generator, max_steps: int, invariants: Invariants | None) -> _Trace:
    trace = _Trace()
    env.reset()
    _record(env, trace, invariants)
    while not trace.terminal[-1] and len(trace.actions) < max_steps:
        actions = _random_actions(trace.legal[-1], generator)
        trace.actions.append(actions)
        trace.rewards.append(float(env.step(actions)))
        _record(env, trace, invariants)
    return trace


def _history(trace: _Trace, t: int) -> tuple[Any, ...]:
    """Enough to rebuild the original game's state at step ``t``: its chance outcomes and actions."""
    return (trace.outcomes[0], *zip(trace.actions[:t], trace.outcomes[1 : t + 1], strict=False))


def _relabel(env: DecPOMDP, outcome: Any, labels: dict[str, torch.Tensor]) -> Any:
    return None if outcome is None else env.relabel_outcome(outcome, labels)


def _first_difference(
    expected: torch.Tensor, actual: torch.Tensor, atol: float
) -> tuple[int, int] | None:
    """(agent, coordinate) of the first mismatch, if any."""
    if expected.shape != actual.shape:
        return (-1, -1)
    bad = (expected.double() - actual.double()).abs() > atol if expected.dtype != torch.bool else expected != actual
    if not bool(bad.any()):
        return None
    agent, coord = bad.nonzero()[0].tolist()
    return agent, coord


def _compare_step(
    env: DecPOMDP,
    symmetry: Symmetry,
    trace: _Trace,
    t: int,
    perm: torch.Tensor,
    episode: int,
    atol: float,
    invariants: Invariants | None,
) -> Counterexample | None:
    found = partial(Counterexample, episode=episode, step=t, permutation=perm.tolist(), history=_history(trace, t))
    prob = float(env.last_outcome_probability)
    if not math.isclose(prob, trace.probabilities[t], rel_tol=1e-9, abs_tol=0.0):
        return found(kind="outcome_probability", expected=trace.probabilities[t], actual=prob)
    checks = (
        ("observation", symmetry.observation_rep, symmetry.observation_layout, trace.observations[t], env.observations()),
        ("legal_actions", symmetry.action_rep, symmetry.action_layout, trace.legal[t], env.legal_actions()),
    )
    for kind, rep, layout, original, actual in checks:
        expected = rep.act_permutations(original, perm)
        hit = _first_difference(expected, actual, atol)
        if hit == (-1, -1):
            return found(
                kind=kind, expected=tuple(expected.shape), actual=tuple(actual.shape), detail="shapes differ"
            )
        if hit is not None:
            agent, coord = hit
            block, _ = layout.block_at(coord)
            return found(
                kind=kind, agent=agent, block=block.name, coordinate=layout.describe(coord),
                expected=expected[agent, coord].item(), actual=actual[agent, coord].item(),
            )
    if bool(env.terminal) != trace.terminal[t]:
        return found(kind="terminal", expected=trace.terminal[t], actual=bool(env.terminal))
    if invariants is not None and invariants(env) != trace.invariants[t]:
        return found(kind="invariant", expected=trace.invariants[t], actual=invariants(env))
    return None


def check_env_symmetry(
    env: DecPOMDP,
    symmetry: Symmetry,
    *,
    episodes: int = 10,
    generator: torch.Generator | None = None,
    indices: Sequence[int] | torch.Tensor | None = None,
    permutations: Sequence[Sequence[int]] | torch.Tensor | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    atol: float = 1e-6,
    invariants: Invariants | None = None,
    reward_ulps: int = 0,
) -> Counterexample | None:
    """Play ``episodes`` episodes and their relabelled replays; return the first violation, or ``None``.

    Args:
        env: any :class:`~eqc.dec_pomdp.DecPOMDP` (one instance; it is reset for each replay).
        symmetry: the declared symmetry, with the env's observation and action layouts.
        generator: drives the random legal actions and the group elements (seeded: reproducible).
        indices, permutations: one element per episode, as element indices ``[episodes]`` or as
            permutations ``[episodes, degree]`` (at most one; see :class:`~eqc.groups.PermutationGroup`),
            instead of uniform random elements.
        max_steps: at most this many steps per episode (>= 1).
        atol: tolerance for observations, rewards and probabilities (finite, >= 0).
        invariants: ``env -> value`` of quantities a symmetry must leave unchanged (e.g. score,
            lives, tokens), compared with ``==`` at every step.
        reward_ulps: rewards also match when they differ by at most this many units in the last
            place of the larger (int >= 0; 0, the default, adds nothing to ``atol``).

    Raises ``TypeError``/``ValueError`` for bad arguments, and ``ValueError`` naming both sizes when
    ``symmetry`` was declared for observation or action vectors of another size than ``env``'s
    (e.g. for another number of players).
    """
    # Over 60 lines on purpose: most of it validates the arguments before any episode is played.
    if not isinstance(symmetry, Symmetry):
        raise TypeError(f"symmetry must be an eqc Symmetry, got {type(symmetry).__name__}")
    check_int(episodes, "episodes", low=1)
    check_int(max_steps, "max_steps", low=1)
    atol = check_float(atol, "atol", low=0.0)
    check_int(reward_ulps, "reward_ulps", low=0)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    if invariants is not None and not callable(invariants):
        raise TypeError(f"invariants must be a callable env -> value, got {type(invariants).__name__}")
    generator = generator if generator is not None else torch.Generator().manual_seed(0)
    group = symmetry.group
    perms = tested_permutations(group, indices=indices, permutations=permutations)
    if perms is None:
        perms = group.random_permutations(episodes, generator)
    elif perms.shape[0] != episodes:
        given = "permutations" if indices is None else "indices"
        raise ValueError(f"{given} must hold one element per episode ({episodes}), got {perms.shape[0]}")
    act_coords = symmetry.action_rep.coordinate_map(perms)
    checked_sizes = False
    for episode, perm in enumerate(perms):
        trace = _play(env, generator, max_steps, invariants)
        if not checked_sizes:
            _check_sizes(env, symmetry, trace)
            checked_sizes = True
        labels = symmetry.label_permutations(permutation=perm)
        try:
            env.reset(_relabel(env, trace.outcomes[0], labels))
        except (ValueError, TypeError) as err:
            return Counterexample(episode, 0, perm.tolist(), "error", detail=f"relabelled reset failed: {err}")
        found = _compare_step(env, symmetry, trace, 0, perm, episode, atol, invariants)
        if found:
            return found
        for t, actions in enumerate(trace.actions, start=1):
            mapped = [int(act_coords[episode, a]) for a in actions]
            try:
                reward = float(env.step(mapped, _relabel(env, trace.outcomes[t], labels)))
            except (ValueError, TypeError) as err:
                return Counterexample(
                episode, t, perm.tolist(), "error", detail=f"relabelled step {mapped} failed: {err}",
                history=_history(trace, t),
            )
            if not _rewards_match(reward, trace.rewards[t - 1], atol, reward_ulps):
                return Counterexample(
                    episode, t, perm.tolist(), "reward", expected=trace.rewards[t - 1], actual=reward,
                    history=_history(trace, t),
                )
            found = _compare_step(env, symmetry, trace, t, perm, episode, atol, invariants)
            if found:
                return found
    return None


def _rewards_match(actual: float, expected: float, atol: float, ulps: int) -> bool:
    """Equal within ``atol``, or within ``ulps`` units in the last place of the larger magnitude."""
    gap = abs(actual - expected)
    return not gap > atol or gap <= ulps * math.ulp(max(abs(actual), abs(expected)))  # `not >`: as before for NaN


def _check_sizes(env: DecPOMDP, symmetry: Symmetry, trace: _Trace) -> None:
    """The declaration must describe the env's vectors: same observation and action sizes."""
    agents = getattr(env, "num_agents", None)
    for what, tensor, layout in (
        ("observations()", trace.observations[0], symmetry.observation_layout),
        ("legal_actions()", trace.legal[0], symmetry.action_layout),
    ):
        if tensor.dim() != 2 or tensor.shape[-1] != layout.dim:
            kind = "observation" if what.startswith("observations") else "action"
            raise ValueError(
                f"the symmetry's {kind} layout has {layout.dim} coordinates but env.{what} has shape "
                f"{list(tensor.shape)} ({tensor.shape[-1] if tensor.dim() else 0} per agent; env.num_agents = {agents}): "
                f"was the symmetry declared for another number of players or another observation variant?"
            )


def assert_env_symmetry(env: DecPOMDP, symmetry: Symmetry, **kwargs: Any) -> None:
    """:func:`check_env_symmetry`, raising ``AssertionError`` with the counterexample.

    Meant for your own test suites: its frame is hidden from pytest tracebacks.
    """
    __tracebackhide__ = True
    found = check_env_symmetry(env, symmetry, **kwargs)
    if found is not None:
        raise AssertionError(f"the declared symmetry is not a symmetry of the environment: {found}")
