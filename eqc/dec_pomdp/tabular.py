"""A small Dec-POMDP given by explicit probability and reward tables.

Every agent shares one action set ``0..num_actions-1`` and one observation set
``0..num_observations-1`` (a relabelling of either is then applied to all agents alike,
as in Other-Play). Tables, for ``n`` agents, ``S`` states, ``A`` actions, ``O`` observations:

- ``initial [S]``: the initial state distribution;
- ``transition [S, A, ..., A, S]``: ``T[s, a_1, ..., a_n, s']``;
- ``reward [S, A, ..., A]``: ``R[s, a_1, ..., a_n]`` (paid on the step taken in ``s``);
- ``observation [n, S, O]``: ``O_i[s, o]``, the probability that agent ``i`` observes ``o``
  in state ``s`` (the initial state, and every next state).

An episode lasts ``horizon`` steps. Chance is explicit (see :class:`~eqc.dec_pomdp.DecPOMDP`):
the outcome of ``reset`` and of each ``step`` is ``(state, (o_1, ..., o_n))``, which may be
forced through ``outcome=``. ``observations()`` is each agent's current observation one-hot;
every action is always legal. The label sets are ``"state"``, ``"action"``, ``"observation"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import torch

from eqc._checks import check_int
from eqc.dec_pomdp.layout import Block, Labels, Layout

__all__ = ["PROBABILITY_ATOL", "Outcome", "TabularDecPOMDP"]

#: Tolerance for "probabilities sum to 1".
PROBABILITY_ATOL = 1e-6

Outcome = tuple[int, tuple[int, ...]]


def _as_table(value: object, name: str) -> torch.Tensor:
    try:
        table = torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"{name} must be a numeric array, got {type(value).__name__}: {err}") from None
    if not bool(torch.isfinite(table).all()):
        raise ValueError(f"{name} must hold finite numbers")
    return table


def _check_distribution(table: torch.Tensor, name: str, axes: str) -> None:
    if bool((table < 0).any()):
        raise ValueError(f"{name} holds negative probabilities")
    sums = table.sum(-1).reshape(table.shape[:-1] or (1,))
    bad = ((sums - 1).abs() > PROBABILITY_ATOL).nonzero()
    if bad.numel():
        where = tuple(bad[0].tolist())
        at = f" at index {where}" if table.dim() > 1 else ""
        raise ValueError(f"{name} must sum to 1 over its last axis ({axes}){at}; it sums to {float(sums[where]):.6g}")


class TabularDecPOMDP:
    """A finite Dec-POMDP from tables; implements the :class:`~eqc.dec_pomdp.DecPOMDP` protocol.

    Args:
        initial: ``[S]`` initial state distribution.
        transition: ``[S, A, ..., A, S]`` (one ``A`` axis per agent).
        reward: ``[S, A, ..., A]``.
        observation: ``[n, S, O]`` per-agent observation probabilities given the state.
        horizon: number of steps per episode.
        seed: seeds the environment's own ``torch.Generator`` (chance outcomes when not forced).
    """

    def __init__(
        self,
        initial: object,
        transition: object,
        reward: object,
        observation: object,
        horizon: int,
        *,
        seed: int = 0,
    ) -> None:
        b0 = _as_table(initial, "initial")
        trans = _as_table(transition, "transition")
        rew = _as_table(reward, "reward")
        obs = _as_table(observation, "observation")
        if b0.dim() != 1 or b0.numel() == 0:
            raise ValueError(f"initial must have shape [num_states], got {tuple(b0.shape)}")
        num_states = b0.numel()
        if obs.dim() != 3 or obs.shape[1] != num_states or obs.shape[0] < 1 or obs.shape[2] < 1:
            raise ValueError(
                f"observation must have shape [num_agents, num_states={num_states}, num_observations], got {tuple(obs.shape)}"
            )
        num_agents = obs.shape[0]
        if rew.dim() != 1 + num_agents or rew.shape[0] != num_states:
            raise ValueError(
                f"reward must have shape [num_states={num_states}] + [num_actions] * num_agents={num_agents}, "
                f"got {tuple(rew.shape)}"
            )
        num_actions = rew.shape[1]
        if num_actions < 1 or any(size != num_actions for size in rew.shape[1:]):
            raise ValueError(f"every agent must have the same number of actions (>= 1); reward has shape {tuple(rew.shape)}")
        expected = (num_states,) + (num_actions,) * num_agents + (num_states,)
        if tuple(trans.shape) != expected:
            raise ValueError(f"transition must have shape {expected} ([S] + [A] * n + [S]), got {tuple(trans.shape)}")
        check_int(horizon, "horizon", low=1)
        check_int(seed, "seed", low=-(2**63), high=2**64 - 1)
        _check_distribution(b0, "initial", "states")
        _check_distribution(trans, "transition", "next states")
        _check_distribution(obs, "observation", "observations")
        self.initial, self.transition, self.reward, self.observation = b0, trans, rew, obs
        self.num_agents = num_agents
        self.num_states, self.num_actions, self.num_observations = num_states, num_actions, obs.shape[2]
        self.horizon = horizon
        self.generator = torch.Generator().manual_seed(seed)
        self._state: int | None = None
        self._obs: tuple[int, ...] = ()
        self._t = 0
        self._last_outcome: Outcome | None = None
        self._last_probability = 1.0

    # ------------------------------------------------------------------ labels and layouts
    @cached_property
    def labels(self) -> dict[str, Labels]:
        """The label sets ``state``, ``action``, ``observation``."""
        return {
            "state": Labels("state", self.num_states),
            "action": Labels("action", self.num_actions),
            "observation": Labels("observation", self.num_observations),
        }

    @cached_property
    def observation_layout(self) -> Layout:
        """One agent's observation vector: a one-hot over the observation labels."""
        return Layout([Block("observation", self.labels["observation"], encoding="one_hot")])

    @cached_property
    def action_layout(self) -> Layout:
        """One agent's action vector (logits / legal mask) over the action labels."""
        return Layout([Block("action", self.labels["action"])])

    @cached_property
    def state_layout(self) -> Layout:
        """The state as a one-hot over the state labels."""
        return Layout([Block("state", self.labels["state"], encoding="one_hot")])

    # ------------------------------------------------------------------ protocol
    @property
    def state(self) -> int:
        """The current (hidden) state."""
        self._require_started()
        assert self._state is not None
        return self._state

    @property
    def terminal(self) -> bool:
        return self._state is not None and self._t >= self.horizon

    @property
    def last_outcome(self) -> Outcome | None:
        return self._last_outcome

    @property
    def last_outcome_probability(self) -> float:
        return self._last_probability

    def reset(self, outcome: Outcome | None = None) -> None:
        """Start an episode; ``outcome = (state, observations)`` forces the initial state and observations."""
        self._t = 0
        self._enter(self.initial, outcome, "reset")

    def step(self, actions: Sequence[int], outcome: Outcome | None = None) -> float:
        """Play the joint action ``actions``; ``outcome = (next_state, observations)`` forces the chance outcome."""
        self._require_started()
        if self.terminal:
            raise RuntimeError("the episode has ended (horizon reached); call reset()")
        joint = self._check_actions(actions)
        reward = float(self.reward[(self.state, *joint)])
        self._t += 1
        self._enter(self.transition[(self.state, *joint)], outcome, "step")
        return reward

    def observations(self) -> torch.Tensor:
        self._require_started()
        return torch.nn.functional.one_hot(torch.tensor(self._obs), self.num_observations).float()

    def legal_actions(self) -> torch.Tensor:
        self._require_started()
        return torch.ones(self.num_agents, self.num_actions, dtype=torch.bool)

    def relabel_outcome(self, outcome: Outcome, perms: dict[str, torch.Tensor]) -> Outcome:
        """``(state, observations)`` relabelled: state ``s`` -> ``perms["state"][s]``, each ``o`` -> ``perms["observation"][o]``.

        A label set missing from ``perms`` is left unchanged; a key that is not one of this game's
        label sets (a misspelling such as ``"states"``) is refused rather than silently ignored.
        """
        if not isinstance(perms, dict):
            raise TypeError(f"perms must be a dict {{label set name: LongTensor}}, got {type(perms).__name__}")
        unknown = sorted(set(perms) - set(self.labels))
        if unknown:
            raise ValueError(f"perms has unknown label set(s) {unknown}; this game's label sets are {sorted(self.labels)}")
        state, obs = self._check_outcome(outcome)
        state_perm = perms.get("state")
        obs_perm = perms.get("observation")
        new_state = int(state_perm[state]) if state_perm is not None else state
        new_obs = tuple(int(obs_perm[o]) for o in obs) if obs_perm is not None else obs
        return new_state, new_obs

    # ------------------------------------------------------------------ internals
    def _enter(self, state_distribution: torch.Tensor, outcome: Outcome | None, where: str) -> None:
        if outcome is None:
            state = int(torch.multinomial(state_distribution, 1, generator=self.generator))
            obs = tuple(
                int(torch.multinomial(self.observation[i, state], 1, generator=self.generator))
                for i in range(self.num_agents)
            )
        else:
            state, obs = self._check_outcome(outcome)
        probability = float(state_distribution[state])
        for i, o in enumerate(obs):
            probability *= float(self.observation[i, state, o])
        if probability == 0.0:
            raise ValueError(f"{where}: outcome (state {state}, observations {obs}) has probability 0")
        self._state, self._obs = state, obs
        self._last_outcome, self._last_probability = (state, obs), probability

    def _check_outcome(self, outcome: object) -> Outcome:
        if not isinstance(outcome, tuple) or len(outcome) != 2:
            raise TypeError(f"an outcome is a tuple (state, observations), got {outcome!r}")
        state, obs = outcome
        if isinstance(state, bool) or not isinstance(state, int) or not 0 <= state < self.num_states:
            raise ValueError(f"outcome state must be an int in 0..{self.num_states - 1}, got {state!r}")
        obs = tuple(obs)
        if len(obs) != self.num_agents:
            raise ValueError(f"outcome needs one observation per agent ({self.num_agents}), got {obs!r}")
        for o in obs:
            if isinstance(o, bool) or not isinstance(o, int) or not 0 <= o < self.num_observations:
                raise ValueError(f"outcome observations must be ints in 0..{self.num_observations - 1}, got {obs!r}")
        return state, obs

    def _check_actions(self, actions: Sequence[int]) -> tuple[int, ...]:
        joint = tuple(int(a) for a in actions)
        if len(joint) != self.num_agents:
            raise ValueError(f"need one action per agent ({self.num_agents}), got {list(actions)!r}")
        if any(not 0 <= a < self.num_actions for a in joint):
            raise ValueError(f"actions must lie in 0..{self.num_actions - 1}, got {list(joint)}")
        return joint

    def _require_started(self) -> None:
        if self._state is None:
            raise RuntimeError("call reset() before using the environment")

    def __repr__(self) -> str:
        return (
            f"TabularDecPOMDP({self.num_agents} agents, {self.num_states} states, {self.num_actions} actions, "
            f"{self.num_observations} observations, horizon {self.horizon})"
        )
