"""check_env_symmetry on a small signalling game: a hidden colour is dealt; agent 0 sees it and
sends one of n signals; agent 1 sees the signal and guesses the colour; reward 1 if right."""

from __future__ import annotations

import pytest
import torch

from eqc.dec_pomdp import Block, DecPOMDP, Labels, Layout, Symmetry
from eqc.groups import cyclic, symmetric
from eqc.verification import assert_env_symmetry, check_env_symmetry

N = 4
colour = Labels("colour", N)
OBS = Layout([Block("hidden", colour, encoding="one_hot"), Block("signal", colour, encoding="one_hot"), Block("turn", 2)])
ACT = Layout([Block("choose", colour)])


class SignalGame:
    num_agents = 2

    def __init__(self, seed: int = 0, bias: bool = False) -> None:
        self.generator = torch.Generator().manual_seed(seed)
        self.bias = bias  # colour 0 pays double: breaks the symmetry

    def reset(self, outcome=None):
        self.colour = int(torch.randint(N, (1,), generator=self.generator)) if outcome is None else int(outcome)
        self.signal, self.t = None, 0
        self.last_outcome, self.last_outcome_probability = self.colour, 1 / N

    def observations(self):
        obs = torch.zeros(2, OBS.dim)
        obs[0, self.colour] = 1.0
        if self.signal is not None:
            obs[1, N + self.signal] = 1.0
        obs[:, 2 * N + min(self.t, 1)] = 1.0
        return obs

    def legal_actions(self):
        legal = torch.zeros(2, N, dtype=torch.bool)
        if self.t < 2:
            legal[self.t] = True
        return legal

    @property
    def terminal(self):
        return self.t >= 2

    def step(self, actions, outcome=None):
        a = actions[self.t]
        self.last_outcome, self.last_outcome_probability = None, 1.0
        if self.t == 0:
            self.signal, self.t = a, 1
            return 0.0
        self.t = 2
        return float(a == self.colour) * (2.0 if self.bias and a == 0 else 1.0)

    def relabel_outcome(self, outcome, perms):
        return int(perms["colour"][outcome])


def test_game_implements_the_protocol():
    env = SignalGame()
    env.reset()
    assert isinstance(env, DecPOMDP)


def test_true_symmetry_passes():
    env = SignalGame()
    sym = Symmetry(symmetric(N), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    assert check_env_symmetry(env, sym, episodes=30, generator=torch.Generator().manual_seed(1)) is None
    assert_env_symmetry(env, sym.restrict(cyclic(N)), episodes=10)


def test_wrong_declaration_is_reported_with_its_block():
    # claim the signal block is fixed by colour relabelling; it is not (signals are colour-labelled actions)
    wrong_obs = Layout([Block("hidden", colour), Block("signal", N), Block("turn", 2)])
    sym = Symmetry(symmetric(N), acts_on=colour, observation_layout=wrong_obs, action_layout=ACT)
    found = check_env_symmetry(SignalGame(), sym, episodes=30)
    assert found is not None and found.kind == "observation" and found.block == "signal" and found.agent == 1
    assert "signal[" in str(found)
    with pytest.raises(AssertionError, match="block 'signal'"):
        assert_env_symmetry(SignalGame(), sym, episodes=30)


def test_environment_that_breaks_the_symmetry_is_caught_by_reward():
    sym = Symmetry(symmetric(N), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    found = check_env_symmetry(SignalGame(bias=True), sym, episodes=50, generator=torch.Generator().manual_seed(2))
    assert found is not None and found.kind == "reward"


def test_bad_arguments():
    sym = Symmetry(symmetric(N), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    with pytest.raises(ValueError, match="episodes"):
        check_env_symmetry(SignalGame(), sym, episodes=0)
    with pytest.raises(TypeError, match="Symmetry"):
        check_env_symmetry(SignalGame(), "S4")
    with pytest.raises(ValueError, match="elements"):
        check_env_symmetry(SignalGame(), sym.restrict(cyclic(N)), episodes=1, elements=torch.tensor([[1, 0, 2, 3]]))


def test_invariants_hook_compares_quantities_outside_the_observation():
    sym = Symmetry(symmetric(N), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    assert check_env_symmetry(SignalGame(), sym, episodes=10, invariants=lambda env: env.t) is None
    found = check_env_symmetry(SignalGame(), sym, episodes=10, invariants=lambda env: env.colour)
    assert found is not None and found.kind == "invariant"


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(max_steps=0), ValueError, r"max_steps must be in \[1, inf\], got 0"),
        (dict(max_steps=-3), ValueError, "max_steps must be in"),
        (dict(atol=float("nan")), ValueError, "atol must be a finite number"),
        (dict(atol=-1.0), ValueError, r"atol must be in \[0.0, inf\]"),
        (dict(atol="0"), TypeError, "atol must be a real number"),
        (dict(episodes=2.0), TypeError, "episodes must be a Python int"),
        (dict(generator=0), TypeError, "generator must be a torch.Generator"),
        (dict(elements=torch.tensor([])), ValueError, "elements is empty"),
        (dict(episodes=2, elements=torch.tensor([1])), ValueError, r"one element per episode \(2\), got 1"),
    ],
)
def test_a_check_that_would_check_nothing_is_an_error_not_a_pass(kwargs, error, match):
    # the wrong declaration of test_wrong_declaration_is_reported_with_its_block: it must never "hold"
    wrong = Symmetry(
        symmetric(N),
        acts_on=colour,
        observation_layout=Layout([Block("hidden", colour), Block("signal", N), Block("turn", 2)]),
        action_layout=ACT,
    )
    with pytest.raises(error, match=match):
        check_env_symmetry(SignalGame(), wrong, **kwargs)


def test_elements_as_indices_or_permutations():
    sym = Symmetry(symmetric(N), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    by_index = check_env_symmetry(SignalGame(), sym, episodes=3, elements=torch.tensor([0, 5, 23]))
    by_perm = check_env_symmetry(SignalGame(), sym, episodes=3, elements=sym.group.elements[[0, 5, 23]])
    assert by_index is None and by_perm is None


def test_a_symmetry_declared_for_other_sizes_names_both_sizes():
    # e.g. a Hanabi symmetry for 3 players checked against a 2-player env: the observation sizes differ
    bigger = Layout([*OBS.blocks, Block("third_player", colour)])
    sym = Symmetry(symmetric(N), acts_on=colour, observation_layout=bigger, action_layout=ACT)
    with pytest.raises(
        ValueError,
        match=rf"observation layout has {bigger.dim} coordinates but env.observations\(\) has shape \[2, {OBS.dim}\]"
        r".*num_agents = 2.*another number of players",
    ):
        check_env_symmetry(SignalGame(), sym, episodes=1)
    sym = Symmetry(symmetric(N), acts_on=colour, observation_layout=OBS, action_layout=Layout([Block("choose", colour), Block("pass", 1)]))
    with pytest.raises(ValueError, match=rf"action layout has {N + 1} coordinates but env.legal_actions\(\) has shape \[2, {N}\]"):
        check_env_symmetry(SignalGame(), sym, episodes=1)


def test_assert_env_symmetry_hides_its_frame_from_pytest():
    from eqc.verification import env_symmetry

    assert "__tracebackhide__" in env_symmetry.assert_env_symmetry.__code__.co_varnames
