"""Proof by test of a declared symmetry on a PettingZoo environment, exactly.

``check_pettingzoo_symmetry(env, symmetry, relabel_state=...)`` wraps ``env`` in a
:class:`~eqc.pettingzoo.PettingZooDecPOMDP` and runs :func:`eqc.verification.check_env_symmetry`
with no tolerance (``atol=0``): observations, action masks, terminations and truncations must be
bit-equal to the relabelled originals, and every agent's reward equal (or within ``reward_ulps``
units in the last place, for rewards that add per-label terms in another order once relabelled).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import torch

from eqc._checks import check_int
from eqc.dec_pomdp import DecPOMDP, Symmetry
from eqc.pettingzoo.adapter import MAX_SEED, PettingZooDecPOMDP, RelabelChance, RelabelState
from eqc.pettingzoo.outcomes import StepRecord
from eqc.pettingzoo.replay import replay_difference
from eqc.verification import Counterexample, check_env_symmetry
from eqc.verification.env_symmetry import DEFAULT_MAX_STEPS

__all__ = ["assert_pettingzoo_symmetry", "check_pettingzoo_symmetry"]


def check_pettingzoo_symmetry(
    env: Any,
    symmetry: Symmetry,
    *,
    relabel_state: RelabelState | None = None,
    relabel_chance: RelabelChance | None = None,
    episodes: int = 10,
    seed: int = 0,
    indices: Sequence[int] | torch.Tensor | None = None,
    permutations: Sequence[Sequence[int]] | torch.Tensor | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    reward_ulps: int = 0,
    observation_key: str = "observation",
    mask_key: str = "action_mask",
) -> Counterexample | None:
    """Play ``episodes`` seeded episodes of ``env`` and their relabelled replays; the first violation, or ``None``.

    Args:
        env: a PettingZoo ``AECEnv`` or ``ParallelEnv`` (or a :class:`PettingZooDecPOMDP` already built).
        symmetry: the declaration; its layouts describe one agent's observation vector and its actions.
        relabel_state, relabel_chance, observation_key, mask_key, reward_ulps: see :class:`PettingZooDecPOMDP`.
        seed: seeds the random legal moves, the group elements and the episodes' reset seeds.
        episodes, indices, permutations, max_steps: as in :func:`eqc.verification.check_env_symmetry`.

    Raises ``ValueError`` naming both sizes when ``symmetry`` was declared for another observation or
    action size, whatever :class:`PettingZooDecPOMDP` refuses (an env it cannot replay exactly), and, before a
    counterexample is returned, when the env turns out not to replay itself after all (the probe's two episodes
    can agree by chance): then the counterexample would blame a correct declaration.
    """
    if not isinstance(symmetry, Symmetry):
        raise TypeError(f"symmetry must be an eqc Symmetry, got {type(symmetry).__name__}")
    check_int(seed, "seed", low=0, high=MAX_SEED)
    if isinstance(env, PettingZooDecPOMDP):
        _check_unused(env, relabel_state=relabel_state, relabel_chance=relabel_chance, reward_ulps=reward_ulps,
                      observation_key=observation_key, mask_key=mask_key)
        adapter = env
    else:
        adapter = PettingZooDecPOMDP(
            env, relabel_state=relabel_state, relabel_chance=relabel_chance, seed=seed,
            observation_key=observation_key, mask_key=mask_key, reward_ulps=reward_ulps,
        )
    _check_sizes(adapter, symmetry)
    found = check_env_symmetry(
        adapter, symmetry, episodes=episodes, generator=torch.Generator().manual_seed(seed), indices=indices,
        permutations=permutations, max_steps=max_steps, atol=0.0, invariants=_record, reward_ulps=adapter.reward_ulps,
    )
    if found is not None and (where := replay_difference(adapter, REPLAY_STEPS)) is not None:
        raise ValueError(
            f"{adapter.env} does not replay itself: episodes from one reset seed with the same moves differ at {where}. So the "
            f"counterexample found ({found.kind} at step {found.step}) says nothing about the declared symmetry: the env draws "
            f"from something reset(seed=...) does not seed (the global numpy or random generators, the clock, ...). The "
            f"replay probe run when the adapter was built passed by chance"
        )
    return _with_rounding_hint(found, built=adapter is env)


#: Steps of each episode :func:`replay_difference` plays before a counterexample is reported.
REPLAY_STEPS = 64


def _record(env: DecPOMDP) -> StepRecord:
    """:meth:`PettingZooDecPOMDP.record` of the adapter ``check_env_symmetry`` drives (it passes the env it was given)."""
    if not isinstance(env, PettingZooDecPOMDP):
        raise TypeError(f"expected the PettingZooDecPOMDP under test, got {type(env).__name__}")
    return env.record()


def _check_unused(adapter: PettingZooDecPOMDP, **given: Any) -> None:
    """Refuse adapter settings passed beside an adapter already built with other ones (they would be ignored)."""
    defaults = {"relabel_state": None, "relabel_chance": None, "reward_ulps": 0, "observation_key": "observation",
                "mask_key": "action_mask"}
    built = {"relabel_state": adapter.relabel_state, "relabel_chance": adapter.relabel_chance, "reward_ulps": adapter.reward_ulps,
             "observation_key": adapter.spaces.observation_key or "observation", "mask_key": adapter.spaces.mask_key}
    ignored = [name for name, value in given.items() if value != defaults[name] and value != built[name]]
    if ignored:
        raise ValueError(f"env is a PettingZooDecPOMDP already built with its own {', '.join(ignored)}; pass "
                         f"{', '.join(f'{n}=' for n in ignored)} to PettingZooDecPOMDP(...) when building it, or pass the env itself")


def _with_rounding_hint(found: Counterexample | None, *, built: bool) -> Counterexample | None:
    """Say so when a reward differs only by rounding (a few units in the last place)."""
    if found is None or found.kind != "reward" or not all(math.isfinite(v) for v in (found.expected, found.actual)):
        return found
    ulps = abs(found.expected - found.actual) / math.ulp(max(abs(found.expected), abs(found.actual)))
    if ulps > 16:
        return found
    where = "to PettingZooDecPOMDP(...) when building it" if built else ""
    hint = (f"{ulps:.0f} unit(s) in the last place apart: if the env adds per-label terms (a sum over landmarks) in "
            f"another order once relabelled, pass reward_ulps={max(4, int(ulps))}" + (f" {where}" if where else ""))
    return dataclasses.replace(found, detail=hint)


def assert_pettingzoo_symmetry(env: Any, symmetry: Symmetry, **kwargs: Any) -> None:
    """:func:`check_pettingzoo_symmetry`, raising ``AssertionError`` with the counterexample (for your test suites)."""
    __tracebackhide__ = True
    found = check_pettingzoo_symmetry(env, symmetry, **kwargs)
    if found is not None:
        raise AssertionError(f"the declared symmetry is not a symmetry of {getattr(env, 'env', env)}: {found}")


def _check_sizes(adapter: PettingZooDecPOMDP, symmetry: Symmetry) -> None:
    env, spaces = adapter.env, adapter.spaces
    agent = adapter.agents[0]
    for what, declared, actual, space in (
        ("observation", symmetry.observation_layout.dim, spaces.observation_dim, env.observation_space(agent)),
        ("action", symmetry.action_layout.dim, spaces.num_actions, env.action_space(agent)),
    ):
        if declared != actual:
            raise ValueError(
                f"symmetry: its {what} layout has {declared} coordinates but {env}'s {what}s have {actual} "
                f"({what} space of {agent!r}: {space}); was it declared for another configuration of the env?"
            )
