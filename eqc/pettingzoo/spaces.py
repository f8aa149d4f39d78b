"""What eqc reads from a PettingZoo environment's spaces and observations.

An agent's observation is a flat vector: a ``Box`` observation as it is, or the ``observation_key``
entry of a ``Dict`` observation (PettingZoo's convention for games with action masks, which sit
under ``mask_key`` in the same dict or in the agent's ``info``). Actions must be ``Discrete``.
Every agent must have the same sizes: one :class:`~eqc.dec_pomdp.Symmetry` describes them all.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, SupportsIndex

import numpy as np
import torch

__all__ = ["AgentSpaces", "action_mask", "check_action", "observation_vector", "read_spaces"]


@dataclass(frozen=True)
class AgentSpaces:
    """Sizes shared by every agent, and where the vector and the mask sit in a Dict observation."""

    observation_dim: int
    num_actions: int
    observation_key: str | None  # None: the observation is a Box, not a Dict
    mask_key: str
    mask_in_observation: bool


def read_spaces(env: Any, agents: Sequence[str], observation_key: str, mask_key: str) -> AgentSpaces:
    """The :class:`AgentSpaces` of ``env`` (``TypeError``/``ValueError`` naming what is unsupported)."""
    if not agents:
        raise ValueError(f"{env} has no agents (possible_agents is empty); eqc relabels the observations and actions of its agents")
    found = [_one_agent(env, agent, observation_key, mask_key) for agent in agents]
    if any(f != found[0] for f in found):
        sizes = {agent: (f.observation_dim, f.num_actions) for agent, f in zip(agents, found, strict=True)}
        raise ValueError(
            f"agents differ in (observation size, number of actions): {sizes}; eqc describes every agent with "
            f"one observation and one action layout"
        )
    return found[0]


def _one_agent(env: Any, agent: str, observation_key: str, mask_key: str) -> AgentSpaces:
    from gymnasium import spaces

    action_space = env.action_space(agent)
    if not isinstance(action_space, spaces.Discrete):
        raise TypeError(f"agent {agent!r}: eqc relabels discrete actions; its action space is {action_space}, not Discrete")
    space = env.observation_space(agent)
    key, in_obs = None, False
    if isinstance(space, spaces.Dict):
        if observation_key not in space.spaces:
            raise ValueError(
                f"agent {agent!r}: the Dict observation has keys {sorted(space.spaces)} but no {observation_key!r}; "
                f"pass observation_key= naming the entry that holds the observation vector"
            )
        others = sorted(set(space.spaces) - {observation_key})
        if others and mask_key not in space.spaces:
            raise ValueError(
                f"agent {agent!r}: the Dict observation has keys {sorted(space.spaces)} but no {mask_key!r}; pass mask_key= "
                f"naming the entry that holds the action mask (an entry beside the observation is read as the mask)"
            )
        key, in_obs, space = observation_key, mask_key in space.spaces, space.spaces[observation_key]
    if not isinstance(space, spaces.Box):
        raise TypeError(f"agent {agent!r}: eqc reads Box observations (or a Box inside a Dict); got {space}")
    return AgentSpaces(math.prod(space.shape), int(action_space.n), key, mask_key, in_obs)


def observation_vector(obs: Any, spaces: AgentSpaces, agent: str) -> torch.Tensor:
    """The flat observation of ``agent`` as float64 (exact for float32/float64/int observations)."""
    if spaces.observation_key is not None:
        if not isinstance(obs, Mapping) or spaces.observation_key not in obs:
            keys = sorted(obs) if isinstance(obs, Mapping) else type(obs).__name__
            raise ValueError(f"agent {agent!r}: expected a dict observation with key {spaces.observation_key!r}, got {keys}")
        obs = obs[spaces.observation_key]
    vector = torch.as_tensor(np.asarray(obs), dtype=torch.float64).reshape(-1)
    if vector.numel() != spaces.observation_dim:
        raise ValueError(f"agent {agent!r}: observation has {vector.numel()} values, its space {spaces.observation_dim}")
    if bool(vector.isnan().any()):
        where = vector.isnan().nonzero().flatten()[:5].tolist()
        raise ValueError(f"agent {agent!r}: observation holds NaN (at coordinates {where}); eqc compares observations exactly "
                         "and NaN equals nothing, not even itself")
    return vector


def check_action(action: object, agent: str, num_actions: int) -> int:
    """``action`` as an int if it is an integer (Python, numpy, 0-d tensor) in ``[0, num_actions)``; else an error naming ``agent``."""
    try:
        if not isinstance(action, SupportsIndex):
            raise TypeError
        value = operator.index(action)
    except TypeError:
        raise TypeError(f"agent {agent!r}: an action must be an integer in [0, {num_actions}), "
                        f"got {type(action).__name__} {action!r}") from None
    if isinstance(action, bool) or not 0 <= value < num_actions:
        raise ValueError(f"agent {agent!r}: an action must be an integer in [0, {num_actions}), got {action!r}")
    return value


def action_mask(obs: Any, info: Mapping[str, Any] | None, spaces: AgentSpaces, agent: str) -> torch.Tensor:
    """``bool [num_actions]``: the mask in the observation dict, else in ``info``, else all actions."""
    mask = None
    if spaces.mask_in_observation:
        if not isinstance(obs, Mapping) or spaces.mask_key not in obs:
            raise ValueError(f"agent {agent!r}: expected the action mask under {spaces.mask_key!r} in its observation dict")
        mask = obs[spaces.mask_key]
    elif info is not None and spaces.mask_key in info:
        mask = info[spaces.mask_key]
    if mask is None:
        return torch.ones(spaces.num_actions, dtype=torch.bool)
    mask = torch.as_tensor(np.asarray(mask)).reshape(-1)
    if mask.numel() != spaces.num_actions:
        raise ValueError(f"agent {agent!r}: action mask has {mask.numel()} entries, the action space {spaces.num_actions}")
    return mask != 0
