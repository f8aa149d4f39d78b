"""Each agent's relabelling in one episode of Other-Play/G-OP, applied to PettingZoo observations, masks and actions.

:class:`Labeller` draws one element per agent with :class:`eqc.symmetrize.OtherPlay` and applies it
with :class:`eqc.symmetrize.Relabelling` (the same tables as eqc's own loops), keeping numpy dtypes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from eqc._checks import check_int
from eqc.dec_pomdp import Symmetry
from eqc.groups import PermutationGroup, identity_permutation
from eqc.pettingzoo.spaces import check_action, read_spaces
from eqc.symmetrize import OtherPlay, Relabelling

__all__ = ["Labeller"]


class Labeller:
    """Per-agent relabelling of observations, masks and actions for one episode."""

    def __init__(self, env: Any, symmetry: Symmetry, seed: int, subgroup: PermutationGroup | None,
                 identity_agent: str | None, observation_key: str, mask_key: str) -> None:
        if not isinstance(symmetry, Symmetry):
            raise TypeError(f"symmetry must be an eqc Symmetry, got {type(symmetry).__name__}")
        self.agents = tuple(env.possible_agents)
        self.spaces = read_spaces(env, self.agents, observation_key, mask_key)
        for what, declared, actual in (("observation", symmetry.observation_layout.dim, self.spaces.observation_dim),
                                       ("action", symmetry.action_layout.dim, self.spaces.num_actions)):
            if declared != actual:
                raise ValueError(f"symmetry: its {what} layout has {declared} coordinates but {env}'s {what}s have {actual}")
        if identity_agent is not None and identity_agent != "random" and identity_agent not in self.agents:
            raise ValueError(f"identity_agent must be None, 'random' or one of {list(self.agents)}, got {identity_agent!r}")
        self.seed, self.identity_agent = check_int(seed, "seed", low=0, high=2**64 - 1), identity_agent
        self.generator = torch.Generator().manual_seed(seed)
        self.other_play = OtherPlay.from_symmetry(symmetry, self.generator, subgroup=subgroup)
        self.relabelling: Relabelling | None = None
        self._by_agent: dict[str, Relabelling] = {}
        _check_bounds(env, self.agents[0], self.other_play, observation_key)

    def draw(self, seed: int | None) -> None:
        """New elements for a new episode; a reset ``seed`` reseeds the draws from ``(self.seed << 32) ^ seed``."""
        if seed is not None:
            self.generator.manual_seed(((self.seed << 32) ^ check_int(seed, "seed", low=0)) % 2**64)
        perms = self.other_play.sample(len(self.agents)).permutations
        if self.identity_agent is not None:
            k = int(torch.randint(len(self.agents), (), generator=self.generator)) if self.identity_agent == "random" \
                else self.agents.index(self.identity_agent)
            perms[k] = identity_permutation(perms.shape[-1])
        r = self.relabelling = self.other_play.relabelling(perms)
        self._by_agent = {
            a: Relabelling(r.permutations[i], r.observation_index[i], r.action_index[i], r.action_coordinates[i])
            for i, a in enumerate(self.agents)
        }

    def of(self, agent: str) -> Relabelling:
        """``agent``'s relabelling in this episode (``RuntimeError`` before the first reset)."""
        if agent not in self.agents:
            raise ValueError(f"unknown agent {agent!r}; the env's agents are {list(self.agents)}")
        if agent not in self._by_agent:
            raise RuntimeError("call reset() before observing or stepping an Other-Play env")
        return self._by_agent[agent]

    def observation(self, agent: str, obs: Any) -> Any:
        r, key = self.of(agent), self.spaces.observation_key
        if key is None:
            return _gather(obs, r.relabel_observations)
        obs = dict(obs)
        obs[key] = _gather(obs[key], r.relabel_observations)
        if self.spaces.mask_key in obs:
            obs[self.spaces.mask_key] = _gather(obs[self.spaces.mask_key], r.relabel_legal_actions)
        return obs

    def info(self, agent: str, info: dict[str, Any]) -> dict[str, Any]:
        if agent not in self._by_agent or self.spaces.mask_key not in info:
            return info
        return {**info, self.spaces.mask_key: _gather(info[self.spaces.mask_key], self.of(agent).relabel_legal_actions)}

    def action(self, agent: str, action: Any) -> Any:
        """The real game's action ``g^-1(a')`` for ``agent``'s action ``a'`` (``None``, a dead step, passes)."""
        relabelling = self.of(agent)
        if action is None:
            return None
        return int(relabelling.to_env_actions(torch.tensor(check_action(action, agent, self.spaces.num_actions))))


def _gather(x: Any, relabel: Any) -> np.ndarray:
    array = np.asarray(x)
    flat = torch.from_numpy(np.ascontiguousarray(array).reshape(-1))
    return relabel(flat).numpy().reshape(array.shape)


def _check_bounds(env: Any, agent: str, op: OtherPlay, observation_key: str) -> None:
    """Relabelled observations must stay in the observation space: its bounds must be invariant."""
    space = env.observation_space(agent)
    space = space.spaces[observation_key] if hasattr(space, "spaces") else space
    if not op.group.is_enumerable:
        return
    index = op.observation_rep.gather_index.numpy()
    for name in ("low", "high"):
        bound = np.asarray(getattr(space, name)).reshape(-1)
        if not np.array_equal(bound[index], np.broadcast_to(bound, index.shape)):
            raise ValueError(
                f"the observation space's {name} bounds are not invariant under the group: relabelled observations would leave it"
            )
