"""check_env_symmetry on a small signalling game: a hidden colour is dealt; agent 0 sees it and
sends one of n signals; agent 1 sees the signal and guesses the colour; reward 1 if right."""

from __future__ import annotations

import pytest
import torch

from eqc.dec_pomdp import Block, DecPOMDP, Labels, Layout, Symmetry
from eqc.groups import cyclic, dihedral, symmetric
from eqc.verification import assert_env_symmetry, check_env_symmetry

N = 4


def layouts(n: int) -> tuple[Labels, Layout, Layout]:
    """The colour labels, observation and action layouts of the game with ``n`` colours."""
    colour = Labels("colour", n)
    obs = Layout([Block("hidden", colour, encoding="one_hot"), Block("signal", colour, encoding="one_hot"), Block("turn", 2)])
    return colour, obs, Layout([Block("choose", colour)])


colour, OBS, ACT = layouts(N)


class SignalGame:
    num_agents = 2

    def __init__(self, seed: int = 0, bias: bool = False, colours: int = N) -> None:
        self.generator = torch.Generator().manual_seed(seed)
        self.bias = bias  # colour 0 pays double: breaks the symmetry
        self.n = colours

    def reset(self, outcome=None):
        self.colour = int(torch.randint(self.n, (1,), generator=self.generator)) if outcome is None else int(outcome)
        self.signal, self.t = None, 0
        self.last_outcome, self.last_outcome_probability = self.colour, 1 / self.n

    def observations(self):
        obs = torch.zeros(2, 2 * self.n + 2)
        obs[0, self.colour] = 1.0
        if self.signal is not None:
            obs[1, self.n + self.signal] = 1.0
        obs[:, 2 * self.n + min(self.t, 1)] = 1.0
        return obs

    def legal_actions(self):
        legal = torch.zeros(2, self.n, dtype=torch.bool)
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
    with pytest.raises(ValueError, match=r"permutations\[0\] = \[1, 0, 2, 3\] is not an element of cyclic\(4\)"):
        check_env_symmetry(SignalGame(), sym.restrict(cyclic(N)), episodes=1, permutations=torch.tensor([[1, 0, 2, 3]]))
    with pytest.raises(TypeError, match="indices= or permutations=, got both"):
        check_env_symmetry(SignalGame(), sym, episodes=1, indices=[0], permutations=[[0, 1, 2, 3]])


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
        (dict(indices=torch.tensor([], dtype=torch.long)), ValueError, "indices is empty"),
        (dict(indices=[]), ValueError, "indices is empty"),
        (dict(permutations=torch.zeros(0, N, dtype=torch.long)), ValueError, "permutations is empty"),
        (dict(episodes=2, indices=torch.tensor([1])), ValueError, r"indices must hold one element per episode \(2\), got 1"),
        (dict(episodes=2, permutations=[[1, 0, 2, 3]]), ValueError, r"permutations must hold one element per episode \(2\)"),
        (dict(indices=torch.tensor([0.0])), TypeError, r"indices must hold integers \(element indices\)"),
        (dict(indices=torch.tensor([24])), ValueError, r"indices holds element indices outside 0\.\.23"),
        (dict(permutations=[[0, 0, 1, 2]]), ValueError, r"permutations\[0\] = \[0, 0, 1, 2\] is not a permutation of 0\.\.3"),
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


def test_elements_as_indices_or_permutations_give_identical_reports():
    sym = Symmetry(symmetric(N), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    by_index = check_env_symmetry(SignalGame(), sym, episodes=3, indices=torch.tensor([0, 5, 23]))
    by_perm = check_env_symmetry(SignalGame(), sym, episodes=3, permutations=sym.group.elements[[0, 5, 23]])
    assert by_index is None and by_perm is None
    signal_fixed = Layout([Block("hidden", colour), Block("signal", N), Block("turn", 2)])
    wrong = Symmetry(symmetric(N), acts_on=colour, observation_layout=signal_fixed, action_layout=ACT)
    rows = [0, 7, 5, 23, 9, 9]
    by_index = check_env_symmetry(SignalGame(), wrong, episodes=6, indices=rows, generator=torch.Generator().manual_seed(5))
    by_perm = check_env_symmetry(SignalGame(), wrong, episodes=6, permutations=wrong.group.elements[rows].tolist(),
                                 generator=torch.Generator().manual_seed(5))
    assert by_index is not None and by_index == by_perm
    assert by_index.permutation == wrong.group.elements[rows[by_index.episode]].tolist()


def test_the_d10_rotation_of_issue_22_is_tested_as_meant_or_refused():
    """``elements=torch.tensor([1, 2, 3, 4, 0])`` on D10 used to test the elements of *index* 1, 2, 3, 4, 0 (the shape
    decided), not the rotation meant. The form is now named: the old call is refused, the 1-D tensor given as
    permutations is refused as ambiguous with both spellings in the message, and each named form does what it says."""
    colour5, obs5, act5 = layouts(5)
    wrong = Symmetry(  # claims the signal (a colour-labelled action) is fixed: fails for every element that moves it
        dihedral(5), acts_on=colour5, observation_layout=Layout([Block("hidden", colour5), Block("signal", 5), Block("turn", 2)]),
        action_layout=act5,
    )
    assert check_env_symmetry(SignalGame(colours=5), Symmetry(dihedral(5), colour5, obs5, act5), episodes=5) is None
    rotation = [1, 2, 3, 4, 0]
    with pytest.raises(TypeError, match="unexpected keyword argument 'elements'"):
        check_env_symmetry(SignalGame(colours=5), wrong, episodes=5, elements=torch.tensor(rotation))
    with pytest.raises(
        ValueError,
        match=r"permutations must be permutations of shape \[k, 5\] \(one row per element\), got a 1-D tensor of shape \[5\], "
        r"which is ambiguous.*Write permutations=torch.tensor\(\[\[1, 2, 3, 4, 0\]\]\) for one element as a permutation, or "
        r"indices=torch.tensor\(\[1, 2, 3, 4, 0\]\) for element indices",
    ):
        check_env_symmetry(SignalGame(colours=5), wrong, episodes=1, permutations=torch.tensor(rotation))
    with pytest.raises(ValueError, match=r"indices must be element indices of shape \[k\] \(1-D\), got shape \[1, 5\]; .* permutations="):
        check_env_symmetry(SignalGame(colours=5), wrong, episodes=1, indices=torch.tensor([rotation]))
    found = check_env_symmetry(SignalGame(colours=5), wrong, episodes=5, permutations=torch.tensor([rotation] * 5))
    assert found is not None and found.episode == 0 and found.permutation == rotation  # a rotation moves every signal
    by_index = check_env_symmetry(SignalGame(colours=5), wrong, episodes=5, indices=torch.tensor(rotation))
    assert by_index is not None and by_index.permutation == dihedral(5).elements[rotation[by_index.episode]].tolist()
    assert dihedral(5).elements[rotation[0]].tolist() != rotation  # index 1 is a reflection, not the rotation


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
