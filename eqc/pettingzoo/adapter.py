"""A PettingZoo environment (AEC or parallel) as the :class:`~eqc.dec_pomdp.DecPOMDP` that eqc's checks drive.

Exact replay: an episode starts from ``reset(seed=s)`` (an :class:`~eqc.pettingzoo.outcomes.EpisodeStart`);
its relabelled copy is ``reset(seed=s)`` again, so the copy's generator is in the same state and
draws the same numbers, followed by the user's ``relabel_state(env.unwrapped, labels)``, which
applies the group element to what the reset drew (the landmarks' positions). OpenSpiel games
played through Shimmy draw chance at chance nodes during the game (Hanabi's deals): there the
adapter records each outcome and the copy is dealt ``relabel_chance(outcome, labels)`` instead
(:mod:`eqc.pettingzoo.chance`). Labels are ``{name: LongTensor}`` as in
:meth:`eqc.dec_pomdp.Symmetry.label_permutations`: label ``c`` becomes ``labels[name][c]``.

Agents are ``env.possible_agents`` in order. An agent that has left the game observes zeros and
has no legal action; in an AEC environment only the agent to act has legal actions, and agents that
are done are stepped with ``None`` (PettingZoo's dead step) inside the same :meth:`step`. The reward
of a step is the sum over agents; :meth:`record` keeps each agent's reward, termination and truncation.
Constructing the adapter refuses what it cannot replay exactly (see :func:`eqc.pettingzoo.replay.probe`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from eqc._checks import check_int
from eqc.pettingzoo.api import cached_observations, is_parallel, observer
from eqc.pettingzoo.chance import chance_control
from eqc.pettingzoo.outcomes import EpisodeStart, StepRecord, compose_labels, labels_as_tensors
from eqc.pettingzoo.spaces import action_mask, check_action, observation_vector, read_spaces

__all__ = ["HookError", "PettingZooDecPOMDP", "RelabelChance", "RelabelState"]

RelabelState = Callable[[Any, dict[str, torch.Tensor]], None]
RelabelChance = Callable[[int, dict[str, torch.Tensor]], int]

#: Largest seed ``torch.Generator.manual_seed`` takes.
MAX_SEED = 2**64 - 1


class HookError(RuntimeError):
    """A user's hook (``relabel_state``, ``relabel_chance``) that failed, named: it raised (the original exception is
    the ``__cause__``), left a state the env cannot observe, or returned what is not a chance outcome. A failing
    hook is a bug to fix, not a counterexample to the declared symmetry."""


class PettingZooDecPOMDP:
    """Drive a PettingZoo environment with :func:`eqc.verification.check_env_symmetry` (or any DecPOMDP loop).

    Args:
        env: an ``AECEnv`` or ``ParallelEnv`` with ``Discrete`` actions and ``Box`` (or ``Dict``) observations.
        relabel_state: ``(env.unwrapped, labels) -> None``, applies the labels to the state drawn by
            ``reset`` (needed when the environment draws anything at reset that the group moves). A
            parallel env is observed again afterwards through ``observe(agent)``; its ``infos`` are not.
            So is an AEC env made by PettingZoo's ``parallel_to_aec``, whose ``observe`` returns the
            observations cached by the parallel env's ``reset``.
        relabel_chance: ``(outcome, labels) -> outcome`` for OpenSpiel games through Shimmy.
        seed: seeds the generator of the episodes' reset seeds.
        observation_key, mask_key: the entries of a ``Dict`` observation (the mask may also sit in ``info``).
        reward_ulps: :meth:`record` equality allows rewards this many units in the last place apart.
        probe_steps: steps of the replay probe run at construction (0 skips it).
    """

    def __init__(
        self,
        env: Any,
        *,
        relabel_state: RelabelState | None = None,
        relabel_chance: RelabelChance | None = None,
        seed: int = 0,
        observation_key: str = "observation",
        mask_key: str = "action_mask",
        reward_ulps: int = 0,
        probe_steps: int = 64,
    ) -> None:
        self.parallel = is_parallel(env)
        for name, hook in (("relabel_state", relabel_state), ("relabel_chance", relabel_chance)):
            if hook is not None and not callable(hook):
                raise TypeError(f"{name} must be a callable or None, got {type(hook).__name__}")
        self.env, self.relabel_state, self.relabel_chance = env, relabel_state, relabel_chance
        self.agents: tuple[str, ...] = tuple(env.possible_agents)
        self.num_agents = len(self.agents)
        self.spaces = read_spaces(env, self.agents, observation_key, mask_key)
        self.reward_ulps = check_int(reward_ulps, "reward_ulps", low=0)
        self._generator = torch.Generator().manual_seed(check_int(seed, "seed", low=0, high=MAX_SEED))
        self._chance = chance_control(env, relabel_chance)
        self._cached = None if self.parallel else cached_observations(env)
        self._observe = observer(env) if self.parallel else None if self._cached is None else observer(self._cached.env)
        if relabel_state is not None and (self.parallel or self._cached is not None) and self._observe is None:
            what = "parallel env" if self.parallel else "AEC env made by parallel_to_aec (it replays the observations of reset)"
            raise ValueError(
                f"relabel_state changes the state after reset, so the {what} {env} must be observed again, but neither "
                f"env.aec_env nor env.unwrapped has observe(agent): give the env an observe(agent) method returning the "
                f"observation of its current state, or pass an AEC env that observes its current state"
            )
        self._started = False
        self._outcome: Any = None
        self._status: dict[str, tuple[bool, bool]] = {}
        self._rewards: dict[str, float] = {}
        self._obs: dict[str, Any] = {}
        self._infos: dict[str, Any] = {}
        from eqc.pettingzoo.replay import probe

        probe(self, check_int(probe_steps, "probe_steps", low=0))

    # ------------------------------------------------------------------ DecPOMDP
    def reset(self, outcome: EpisodeStart | None = None) -> None:
        """Start an episode: a fresh seed from the adapter's generator, or the given :class:`EpisodeStart`."""
        if outcome is None:
            outcome = EpisodeStart(int(torch.randint(2**31 - 1, (), generator=self._generator)))
        if not isinstance(outcome, EpisodeStart):
            raise TypeError(f"outcome must be an EpisodeStart or None, got {type(outcome).__name__}")
        self._begin_chance(outcome.chance)
        result = self.env.reset(seed=outcome.seed)
        self._started = True
        if self.parallel:
            self._obs, self._infos = result
        if outcome.labels is not None and self.relabel_state is not None:
            labels = labels_as_tensors(outcome.labels)
            try:
                self.relabel_state(self.env.unwrapped, labels)
            except Exception as exc:
                raise HookError(f"relabel_state raised {type(exc).__name__}: {exc} (labels {_short(labels)})") from exc
            try:
                self._observe_relabelled()
            except Exception as exc:
                raise HookError(f"relabel_state left a state the env cannot observe: observing it raised {type(exc).__name__}: "
                                f"{exc} (labels {_short(labels)}); the hook must leave a state of the game") from exc
        self._status = {agent: (False, False) for agent in self.agents}
        self._rewards = dict.fromkeys(self.agents, 0.0)
        if not self.parallel:
            self._skip_dead()
        self._outcome = EpisodeStart(outcome.seed, outcome.labels, self._end_chance())

    def step(self, actions: Sequence[int], outcome: tuple[int, ...] | None = None) -> float:
        """One move of the agent to act (AEC) or of every agent still in the game (parallel); the summed reward."""
        self._check_started()
        if self.terminal:
            raise ValueError("the episode has ended: call reset() first")
        if len(actions) != self.num_agents:
            raise ValueError(f"actions must hold one action per agent ({self.num_agents}), got {len(actions)}")
        self._begin_chance(outcome)
        self._rewards = dict.fromkeys(self.agents, 0.0)
        if self.parallel:
            moves = {agent: check_action(actions[i], agent, self.spaces.num_actions)
                     for i, agent in enumerate(self.agents) if agent in self.env.agents}
            self._obs, rewards, terminations, truncations, self._infos = self.env.step(moves)
            self._note(rewards, terminations, truncations)
        else:
            agent = self.env.agent_selection
            self.env.step(check_action(actions[self.agents.index(agent)], agent, self.spaces.num_actions))
            self._note(self.env.rewards, self.env.terminations, self.env.truncations)
            self._skip_dead()
        self._outcome = self._end_chance()
        return float(sum(self._rewards.values()))

    def observations(self) -> torch.Tensor:
        """``float64 [num_agents, observation_dim]``; zeros for agents that have left the game."""
        self._check_started()
        rows = torch.zeros(self.num_agents, self.spaces.observation_dim, dtype=torch.float64)
        for i, agent in enumerate(self.agents):
            if agent in self.env.agents:
                obs = self._obs[agent] if self.parallel else self.env.observe(agent)
                rows[i] = observation_vector(obs, self.spaces, agent)
        return rows

    def legal_actions(self) -> torch.Tensor:
        """``bool [num_agents, num_actions]``: the masks of the agents that may act now."""
        self._check_started()
        legal = torch.zeros(self.num_agents, self.spaces.num_actions, dtype=torch.bool)
        live = self.env.agents if self.parallel else ([self.env.agent_selection] if self.env.agents else [])
        for agent in live:
            if self.parallel:
                obs, info = self._obs.get(agent), self._infos.get(agent)
            else:
                obs, info = self.env.observe(agent), self.env.infos.get(agent)
            legal[self.agents.index(agent)] = action_mask(obs, info, self.spaces, agent)
        return legal

    @property
    def terminal(self) -> bool:
        """Whether every agent has left the game."""
        return not self.env.agents

    @property
    def last_outcome(self) -> Any:
        """The :class:`EpisodeStart` after ``reset``; after a step, its chance outcomes (``None`` without chance nodes)."""
        return self._outcome

    @property
    def last_outcome_probability(self) -> float:
        return 1.0 if self._chance is None else float(self._chance.probability)

    def relabel_outcome(self, outcome: Any, perms: dict[str, torch.Tensor]) -> Any:
        """``outcome`` in the game relabelled by ``perms``: labels composed, chance outcomes through ``relabel_chance``."""
        if isinstance(outcome, EpisodeStart):
            chance = None if outcome.chance is None else self._relabel_chance(outcome.chance, perms)
            return EpisodeStart(outcome.seed, compose_labels(outcome.labels, perms), chance)
        return None if outcome is None else self._relabel_chance(outcome, perms)

    def record(self) -> StepRecord:
        """Each agent's reward, termination and truncation from the last step (pass as ``invariants``)."""
        return StepRecord(
            tuple(a for a in self.agents if a in self.env.agents),
            None if self.parallel or not self.env.agents else self.env.agent_selection,
            tuple(self._rewards[a] for a in self.agents),
            tuple(self._status[a][0] for a in self.agents),
            tuple(self._status[a][1] for a in self.agents),
            self.reward_ulps,
        )

    # ------------------------------------------------------------------ internals
    def _observe_relabelled(self) -> None:
        """Observe every agent in the state ``relabel_state`` left: a parallel env (or the parallel env under
        ``parallel_to_aec``) is observed again; an AEC env is observed now, so that a state it cannot observe is
        blamed on the hook, not found later inside the env."""
        observe = self._observe  # set whenever a relabel_state can be applied (the constructor checks)
        if self.parallel and observe is not None:
            self._obs = {agent: observe(agent) for agent in self._obs}
        elif self._cached is not None and observe is not None:
            self._cached._observations = {agent: observe(agent) for agent in self._cached._observations}
        else:
            for agent in self.env.agents:
                self.env.observe(agent)

    def _check_started(self) -> None:
        if not self._started:
            raise RuntimeError("call reset() before stepping or observing a PettingZooDecPOMDP")

    def _note(self, rewards: dict, terminations: dict, truncations: dict) -> None:
        for agent in self.agents:
            reward = float(rewards.get(agent, 0.0))
            if math.isnan(reward):
                raise ValueError(f"agent {agent!r}: the env gave a NaN reward; eqc compares rewards exactly and NaN equals nothing")
            self._rewards[agent] += reward
            if agent in terminations:
                self._status[agent] = (bool(terminations[agent]), bool(truncations.get(agent, False)))

    def _skip_dead(self) -> None:
        """PettingZoo's dead steps: an AEC agent that is done is stepped with ``None`` until a live one is selected."""
        env = self.env
        while env.agents and (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            env.step(None)
            self._note(env.rewards, env.terminations, env.truncations)

    def _begin_chance(self, forced: tuple[int, ...] | None) -> None:
        if self._chance is not None:
            self._chance.begin(forced)

    def _end_chance(self) -> tuple[int, ...] | None:
        return None if self._chance is None else self._chance.end()

    def _relabel_chance(self, outcomes: tuple[int, ...], perms: dict[str, torch.Tensor]) -> tuple[int, ...]:
        if self.relabel_chance is None:
            return outcomes
        result = []
        for a in outcomes:
            try:
                b = self.relabel_chance(a, perms)
            except Exception as exc:
                raise HookError(f"relabel_chance raised {type(exc).__name__}: {exc} (outcome {a}, labels {_short(perms)})") from exc
            if isinstance(b, bool) or not hasattr(b, "__index__"):  # a HookError: a TypeError would read as a counterexample
                raise HookError(f"relabel_chance must return an int chance outcome, got {type(b).__name__} {b!r} for outcome {a} "
                                f"(labels {_short(perms)})")
            result.append(int(b))
        return tuple(result)


def _short(labels: dict[str, torch.Tensor]) -> str:
    """Labels as ``{name: [..]}`` for a message."""
    return "{" + ", ".join(f"{name!r}: {perm.tolist()}" for name, perm in labels.items()) + "}"
