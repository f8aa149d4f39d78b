"""Symmetry discovery: the coloured graph's automorphisms are exactly the Dec-POMDP's Other-Play symmetries."""

from __future__ import annotations

import math
import time

import pytest
import torch

from eqc.dec_pomdp.discovery import (
    DiscoveredSymmetry,
    discover_agent_symmetries,
    discover_symmetries,
    permute_agents,
    symmetry_graph,
)
from eqc.dec_pomdp.tabular import TabularDecPOMDP
from eqc.domains.lever import lever_game
from eqc.groups import PermutationGroup
from eqc.verification import check_env_symmetry


def signalling_game(colours: int = 3, prior: list[float] | None = None) -> TabularDecPOMDP:
    """Two steps: agent 0 sees a hidden colour and signals with an action; agent 1 sees the
    signal and guesses the colour (reward 1 if right). Signals and guesses share the action set.

    States: colours ``0..c-1``; then ``(colour, signal)`` as ``c + c*colour + signal``; then an end state.
    Observations: 0 = nothing, ``1+k`` = colour k, ``1+c+k`` = signal k.
    """
    c = colours
    prior = prior or [1.0 / c] * c
    states = c + c * c + 1
    end = states - 1
    initial = torch.zeros(states)
    initial[:c] = torch.tensor(prior)
    transition = torch.zeros(states, c, c, states)
    reward = torch.zeros(states, c, c)
    observation = torch.zeros(2, states, 1 + 2 * c)
    for colour in range(c):
        for a0 in range(c):
            transition[colour, a0, :, c + c * colour + a0] = 1.0  # the sender's action is the signal
        observation[0, colour, 1 + colour] = 1.0
        observation[1, colour, 0] = 1.0
        for signal in range(c):
            s = c + c * colour + signal
            transition[s, :, :, end] = 1.0
            for guess in range(c):
                reward[s, :, guess] = float(guess == colour)
            observation[0, s, 0] = 1.0
            observation[1, s, 1 + c + signal] = 1.0
    transition[end, :, :, end] = 1.0
    observation[:, end, 0] = 1.0
    return TabularDecPOMDP(initial, transition, reward, observation, horizon=2)


def random_game(seed: int) -> TabularDecPOMDP:
    """Generic random tables: almost surely no symmetry at all."""
    g = torch.Generator().manual_seed(seed)
    states, actions, obs = 3, 3, 3
    initial = torch.rand(states, generator=g)
    transition = torch.rand(states, actions, actions, states, generator=g)
    observation = torch.rand(2, states, obs, generator=g)
    return TabularDecPOMDP(
        initial / initial.sum(),
        transition / transition.sum(-1, keepdim=True),
        torch.rand(states, actions, actions, generator=g),
        observation / observation.sum(-1, keepdim=True),
        horizon=2,
    )


def is_table_symmetry(game: TabularDecPOMDP, found: DiscoveredSymmetry, perm: torch.Tensor) -> bool:
    """Check the defining equations directly on the tables (independent of the graph)."""
    ps, pa, po = (perm[found.segments[name].start : found.segments[name].stop] - found.segments[name].start
                  for name in ("state", "action", "observation"))
    n = game.num_agents
    if not torch.equal(game.initial[ps], game.initial):  # b0[phi s] for s = 0.. equals b0[s]
        return False
    reward = game.reward
    transition = game.transition
    for axis in range(n):
        reward = reward.index_select(1 + axis, pa)
        transition = transition.index_select(1 + axis, pa)
    reward = reward.index_select(0, ps)
    transition = transition.index_select(0, ps).index_select(n + 1, ps)
    observation = game.observation.index_select(1, ps).index_select(2, po)
    return (
        torch.allclose(reward, game.reward)
        and torch.allclose(transition, game.transition)
        and torch.allclose(observation, game.observation)
    )


def test_ten_lever_game_has_nine_factorial_symmetries_fixing_the_odd_lever() -> None:
    game = lever_game().to_tabular()
    start = time.perf_counter()
    found = discover_symmetries(lever_game())
    assert isinstance(found, PermutationGroup) and found.degree == 12
    elapsed = time.perf_counter() - start
    assert found.order == math.factorial(9) == 362_880
    assert elapsed < 20, f"discovery took {elapsed:.1f}s"
    assert found.segments == {"state": range(0, 1), "action": range(1, 11), "observation": range(11, 12)}
    assert found.generators.shape[0] <= 9  # a generating set, not a list of 362,880 elements
    odd_lever = found.segments["action"].start + 9
    moved = found.group.random_permutations(256, torch.Generator().manual_seed(0))
    assert bool((found.generators[:, odd_lever] == odd_lever).all())
    assert bool((moved[:, odd_lever] == odd_lever).all())
    for perm in found.generators:
        assert is_table_symmetry(game, found, perm)
    swap_odd = torch.arange(12)
    swap_odd[[1, 10]] = swap_odd[[10, 1]]  # lever 0 <-> the 0.9 lever: not a symmetry
    assert not is_table_symmetry(game, found, swap_odd)
    assert swap_odd not in found.group
    assert check_env_symmetry(game, found.symmetry, episodes=20, generator=torch.Generator().manual_seed(1)) is None


@pytest.mark.parametrize(
    ("payoffs", "order"),
    [([1.0, 1.0, 1.0, 0.5, 0.5, 2.0, 2.0, 2.0, 2.0], 6 * 2 * 24), ([1.0, 2.0, 3.0], 1), ([0.3, 0.3], 2)],
)
def test_lever_games_with_several_payoff_classes(payoffs: list[float], order: int) -> None:
    found = discover_symmetries(lever_game(payoffs).to_tabular())
    assert found.order == order
    assert found.group == _restricted_lever_group(payoffs, found)


def _restricted_lever_group(payoffs: list[float], found: DiscoveredSymmetry):
    """The declared lever symmetry, embedded on the discovered group's points (actions shifted by one state)."""
    from eqc.domains.lever import lever_group
    from eqc.groups import PermutationGroup

    declared = lever_group(payoffs)
    start, degree = found.segments["action"].start, found.group.degree
    generators = []
    for g in declared.generators:
        image = torch.arange(degree)
        image[start : start + len(payoffs)] = g + start
        generators.append(image)
    return PermutationGroup.from_generators(generators, degree=degree)


@pytest.mark.parametrize("colours", [3, 4])
def test_signalling_game_hidden_colour_symmetry(colours: int) -> None:
    game = signalling_game(colours)
    found = discover_symmetries(game)
    assert found.order == math.factorial(colours)  # relabel colours, signals (= actions) and guesses together
    generator = torch.Generator().manual_seed(2)
    for perm in torch.cat([found.generators, found.group.random_permutations(8, generator)]):
        assert is_table_symmetry(game, found, perm)
        labels = found.label_permutations(permutation=perm)
        assert torch.equal(labels["state"][:colours], labels["action"])  # a colour moves with its action
    assert check_env_symmetry(game, found.symmetry, episodes=30, generator=generator) is None


def test_games_without_symmetry_give_the_trivial_group() -> None:
    skewed = signalling_game(3, prior=[0.5, 0.3, 0.2])
    assert discover_symmetries(skewed).order == 1
    assert discover_symmetries(random_game(0)).order == 1
    # the symmetric game's group is *not* a symmetry of the skewed one: the env check must notice
    wrong = discover_symmetries(signalling_game(3)).symmetry
    counterexample = check_env_symmetry(skewed, wrong, episodes=30, generator=torch.Generator().manual_seed(0))
    assert counterexample is not None and counterexample.kind == "outcome_probability"


def test_two_colour_signalling_game_has_order_two() -> None:
    game = signalling_game(2)
    found = discover_symmetries(game)
    assert found.order == 2
    (perm,) = found.generators
    labels = found.label_permutations(permutation=perm)
    assert labels["action"].tolist() == [1, 0]
    assert labels["observation"].tolist() == [0, 2, 1, 4, 3]
    assert labels["state"].tolist()[:2] == [1, 0]


def test_agent_symmetries_are_reported_separately() -> None:
    lever = lever_game().to_tabular()
    assert discover_agent_symmetries(lever).order == 2  # the two players are interchangeable
    assert discover_symmetries(lever).group.degree == 12  # and agents are not among the points
    assert discover_agent_symmetries(signalling_game(2)).order == 1  # sender and receiver differ
    swapped = permute_agents(signalling_game(2), [1, 0])
    assert torch.equal(swapped.observation[0], signalling_game(2).observation[1])
    assert torch.equal(swapped.reward.transpose(1, 2), signalling_game(2).reward)


def test_graph_has_one_node_per_table_entry_and_label() -> None:
    game = signalling_game(2)
    graph, points = symmetry_graph(game)
    assert len(points) == game.num_states + game.num_actions + game.num_observations
    entries = game.num_states * game.num_actions**2
    assert graph.number_of_nodes() == len(points) + entries


def test_bad_input_is_refused() -> None:
    with pytest.raises(TypeError, match="TabularDecPOMDP or have a to_tabular"):
        discover_symmetries("lever game")
    with pytest.raises(ValueError, match="decimals"):
        discover_symmetries(signalling_game(2), decimals=-1)
    with pytest.raises(ValueError, match="permutation of the 2 agents"):
        permute_agents(signalling_game(2), [0, 0])
    found = discover_symmetries(signalling_game(2))
    with pytest.raises(ValueError, match="last dimension"):
        found.label_permutations(permutation=torch.arange(3))
    with pytest.raises(ValueError, match="not an element"):
        found.label_permutations(permutation=torch.tensor([1, 0, *range(2, found.degree)]))


def test_vf2_alone_finds_the_same_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """Individualisation-refinement is only a shortcut: with it disabled, VF2 finds the same group."""
    import eqc.dec_pomdp.discovery as discovery

    expected = discover_symmetries(signalling_game(3))
    monkeypatch.setattr(discovery, "_individualise_greedily", lambda *args: None)
    found = discover_symmetries(signalling_game(3))
    assert found.order == expected.order == 6
    assert found.group == expected.group


def test_automorphism_check_rejects_a_non_symmetry() -> None:
    import eqc.dec_pomdp.discovery as discovery

    graph, _points = symmetry_graph(lever_game([1.0, 1.0, 0.5]).to_tabular())
    identity = {v: v for v in graph}
    assert discovery._is_automorphism(graph, identity)
    swap_good = {**identity, ("action", 0): ("action", 1), ("action", 1): ("action", 0)}
    swap_bad = {**identity, ("action", 0): ("action", 2), ("action", 2): ("action", 0)}
    for swap, ok in ((swap_good, True), (swap_bad, False)):
        # move the entry nodes along with the actions
        mapping = dict(swap)
        for node in graph:
            if node[0] == "entry":
                s, joint = node[1], node[2]
                mapping[node] = ("entry", s, tuple(swap[("action", a)][1] for a in joint))
        assert discovery._is_automorphism(graph, mapping) is ok
