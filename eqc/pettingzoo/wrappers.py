"""Other-Play and G-OP as a PettingZoo wrapper: any PettingZoo training loop gets them by wrapping its env.

At every ``reset`` each agent is given a group element ``g`` (from
:class:`eqc.symmetrize.OtherPlay`, seeded; one agent may keep the identity, as in Hu et al.): it
observes ``rho_obs(g) o``, its action mask is ``rho_act(g) mask`` (in the observation dict or its
``info``), and the action ``a'`` it picks is played as ``g^-1(a')``, exactly as
:class:`eqc.symmetrize.Relabelling` does for eqc's own loops. Other-Play draws from the symmetry's
group, G-OP from a ``subgroup`` of it. ``relabelling`` holds the current elements.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pettingzoo.utils.env import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper, BaseWrapper

from eqc.dec_pomdp import Symmetry
from eqc.groups import PermutationGroup
from eqc.pettingzoo.relabel import Labeller
from eqc.symmetrize import Relabelling

__all__ = ["OtherPlayAEC", "OtherPlayParallel", "other_play"]


if TYPE_CHECKING:  # PettingZoo ships no types: to mypy the mixin's base is Any, as the wrapper class after it is
    from pettingzoo.utils.wrappers import BaseWrapper as _Wrapper
else:
    _Wrapper = object


class _Relabelled(_Wrapper):
    """What both wrappers share: the per-episode ``Labeller`` and its relabelling."""

    def __init__(self, env: AECEnv | ParallelEnv, symmetry: Symmetry, *, seed: int = 0, subgroup: PermutationGroup | None = None,
                 identity_agent: str | None = None, observation_key: str = "observation", mask_key: str = "action_mask") -> None:
        super().__init__(env)
        self._labeller = Labeller(env, symmetry, seed, subgroup, identity_agent, observation_key, mask_key)

    @property
    def relabelling(self) -> Relabelling | None:
        """This episode's elements, one row per agent of ``possible_agents``."""
        return self._labeller.relabelling


class OtherPlayAEC(_Relabelled, BaseWrapper):
    """An ``AECEnv`` as each agent sees it under Other-Play/G-OP (see the module docstring)."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._labeller.draw(seed)

    def observe(self, agent: str) -> Any:
        self._labeller.of(agent)  # refuses before reset
        return self._labeller.observation(agent, self.env.observe(agent))

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        return {agent: self._labeller.info(agent, info) for agent, info in self.env.infos.items()}

    def step(self, action: Any) -> None:
        if self._labeller.relabelling is None:
            raise RuntimeError("call reset() before observing or stepping an Other-Play env")
        self.env.step(self._labeller.action(self.env.agent_selection, action))


class OtherPlayParallel(_Relabelled, BaseParallelWrapper):
    """A ``ParallelEnv`` as each agent sees it under Other-Play/G-OP (see the module docstring)."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        obs, infos = self.env.reset(seed=seed, options=options)
        self._labeller.draw(seed)
        return self._relabel(obs, infos)

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if self._labeller.relabelling is None:
            raise RuntimeError("call reset() before observing or stepping an Other-Play env")
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict {{agent: action}}, got {type(actions).__name__}")
        unknown = [a for a in actions if a not in self.env.agents]
        missing = [a for a in self.env.agents if a not in actions]
        if unknown or missing:
            raise ValueError(f"actions must hold one action for each agent in the game, {list(self.env.agents)}; "
                             + (f"unknown or finished: {unknown}" if unknown else f"missing: {missing}"))
        obs, rewards, terminations, truncations, infos = self.env.step(
            {agent: self._labeller.action(agent, a) for agent, a in actions.items()}
        )
        obs, infos = self._relabel(obs, infos)
        return obs, rewards, terminations, truncations, infos

    def _relabel(self, obs: dict, infos: dict) -> tuple[dict, dict]:
        lab = self._labeller
        return {a: lab.observation(a, o) for a, o in obs.items()}, {a: lab.info(a, i) for a, i in infos.items()}


def other_play(env: AECEnv | ParallelEnv, symmetry: Symmetry, **kwargs: Any) -> OtherPlayAEC | OtherPlayParallel:
    """Wrap ``env`` for Other-Play (or G-OP with ``subgroup=``): :class:`OtherPlayAEC` or :class:`OtherPlayParallel`.

    Keywords: ``seed`` (the draws; ``reset(seed=s)`` reseeds them from ``seed`` and ``s``), ``subgroup``,
    ``identity_agent`` (``None``: every agent relabelled; ``"random"``: one agent per episode keeps the
    identity; an agent's name: that agent does), ``observation_key``, ``mask_key``.
    """
    if isinstance(env, AECEnv):
        return OtherPlayAEC(env, symmetry, **kwargs)
    if isinstance(env, ParallelEnv):
        return OtherPlayParallel(env, symmetry, **kwargs)
    raise TypeError(f"env must be a PettingZoo AECEnv or ParallelEnv, got {type(env).__name__}")
