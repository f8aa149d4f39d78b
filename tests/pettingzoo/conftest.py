"""A small PettingZoo AEC game written here, to test what the third-party environments do not exercise.

"Colour match": a sender sees a secret colour (drawn at reset from the env's generator) and points
at a colour; a guesser sees what was pointed at and the colours it has guessed, and guesses a colour
it has not guessed yet (action mask in ``info``). The sender finishes after the first round (an
agent that finishes early); a right guess ends the game with reward 1 for both; after three
rounds the guesser is truncated. Colour permutations are a symmetry; ``colour_bonus`` breaks it in
the rewards, ``global_rng`` makes the game unreplayable, ``fixed_secret`` removes its chance.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

import numpy as np
import pytest

COLOURS, ROUNDS = 4, 3


@cache
def _colour_match_class() -> type:
    from gymnasium import spaces
    from gymnasium.utils import seeding
    from pettingzoo import AECEnv

    class ColourMatch(AECEnv):
        metadata: ClassVar[dict] = {"name": "colour_match_v0", "is_parallelizable": True}

        def __init__(self, colour_bonus: bool = False, global_rng: bool = False, fixed_secret: int | None = None,
                     dict_observations: bool = False) -> None:
            super().__init__()
            self.possible_agents, self.render_mode = ["sender", "guesser"], None
            self.colour_bonus, self.global_rng, self.fixed_secret = colour_bonus, global_rng, fixed_secret
            self.dict_observations = dict_observations
            box = spaces.Box(0.0, 1.0, (3 * COLOURS + ROUNDS,), np.float32)
            mask = spaces.Box(0, 1, (COLOURS,), np.int8)
            self._obs_space = spaces.Dict({"obs": box, "action_mask": mask}) if dict_observations else box
            self.np_random, _ = seeding.np_random(None)

        def observation_space(self, agent: str) -> Any:
            return self._obs_space

        def action_space(self, agent: str) -> Any:
            return spaces.Discrete(COLOURS)

        def reset(self, seed: int | None = None, options: dict | None = None) -> None:
            if seed is not None:
                self.np_random, _ = seeding.np_random(seed)
            if self.fixed_secret is not None:
                self.secret = self.fixed_secret
            else:
                self.secret = int(np.random.randint(COLOURS) if self.global_rng else self.np_random.integers(COLOURS))
            self.pointed, self.guessed, self.round = None, set(), 0
            self.agents = self.possible_agents[:]
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos = {a: {} for a in self.agents}
            self.agent_selection = "sender"
            self._set_masks()

        def _mask(self, agent: str) -> np.ndarray:
            mask = np.ones(COLOURS, np.int8)
            if agent == "guesser":
                mask[list(self.guessed)] = 0
            return mask

        def _set_masks(self) -> None:
            for agent in self.agents:
                self.infos[agent] = {} if self.dict_observations else {"action_mask": self._mask(agent)}

        def observe(self, agent: str) -> Any:
            obs = np.zeros(3 * COLOURS + ROUNDS, np.float32)
            if agent == "sender":
                obs[self.secret] = 1
            if self.pointed is not None:
                obs[COLOURS + self.pointed] = 1
            obs[[2 * COLOURS + c for c in self.guessed]] = 1
            obs[3 * COLOURS : 3 * COLOURS + self.round] = 1
            return {"obs": obs, "action_mask": self._mask(agent)} if self.dict_observations else obs

        def step(self, action: int | None) -> None:
            agent = self.agent_selection
            if self.terminations[agent] or self.truncations[agent]:
                self._was_dead_step(action)
                return
            self._clear_rewards()
            if agent == "sender":
                self.pointed = int(action)
                self.agent_selection = "guesser"
            else:
                self.guessed.add(int(action))
                self.round += 1
                if int(action) == self.secret:
                    bonus = 0.5 if self.colour_bonus and self.secret == 0 else 0.0
                    self.rewards = {a: 1.0 + bonus for a in self.agents}
                    self.terminations = dict.fromkeys(self.agents, True)
                elif self.round >= ROUNDS:
                    self.truncations = dict.fromkeys(self.agents, True)
                if "sender" in self.agents:
                    self.terminations["sender"] = True  # the sender only plays the first round
                self.agent_selection = "guesser"
                self._deads_step_first()
            self._set_masks()
            self._accumulate_rewards()

    return ColourMatch


@pytest.fixture
def colour_match() -> Any:
    """Factory of :class:`ColourMatch` games (keywords as its constructor)."""
    pytest.importorskip("pettingzoo")
    return _colour_match_class()


def colour_match_symmetry(guessed_moves: bool = True) -> Any:
    """The colour symmetry of ColourMatch; ``guessed_moves=False`` declares the 'guessed' block wrongly (fixed)."""
    from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
    from eqc.groups import symmetric

    colour = Labels("colour", COLOURS)
    guessed = Block("guessed", colour) if guessed_moves else Block("guessed", COLOURS)
    obs = Layout([Block("secret", colour), Block("pointed", colour), guessed, Block("round", ROUNDS)])
    return Symmetry(symmetric(COLOURS), acts_on=colour, observation_layout=obs, action_layout=Layout([Block("colour", colour)]))


@pytest.fixture
def colour_symmetry() -> Any:
    return colour_match_symmetry
