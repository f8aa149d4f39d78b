"""The lever game as a Dec-POMDP, its declared symmetry, and bad input."""

from __future__ import annotations

import math

import pytest
import torch

from eqc.dec_pomdp import DecPOMDP
from eqc.domains.lever import game as lever
from eqc.domains.lever.evaluate import cross_play_matrix
from eqc.groups import symmetric
from eqc.verification import check_env_symmetry, check_group


def test_default_game_is_the_papers() -> None:
    game = lever.lever_game()
    assert isinstance(game, DecPOMDP)
    assert game.payoffs.tolist() == pytest.approx(list(lever.DEFAULT_PAYOFFS))
    assert game.num_levers == 10 and game.num_agents == 2
    assert game.lever.name == "lever" and game.lever.size == 10
    assert [b.name for b in game.observation_layout] == ["payoffs"]
    assert [b.name for b in game.action_layout] == ["lever"]


def test_one_shot_play() -> None:
    game = lever.lever_game()
    game.reset()
    assert torch.equal(game.observations(), game.payoffs.float().expand(2, 10))
    assert bool(game.legal_actions().all()) and not game.terminal
    assert game.step([9, 9]) == pytest.approx(0.9)
    assert game.terminal and not bool(game.legal_actions().any())
    game.reset()
    assert game.step([3, 3]) == 1.0
    game.reset()
    assert game.step([3, 4]) == 0.0
    assert game.last_outcome is None and game.last_outcome_probability == 1.0


def test_symmetry_group_permutes_equal_payoff_levers_only() -> None:
    symmetry = lever.lever_game().symmetry
    group = symmetry.group
    assert group.order == math.factorial(9) and group.degree == 10
    assert bool((group.generators[:, 9] == 9).all())
    assert group.random_permutations(64, torch.Generator().manual_seed(0))[:, 9].eq(9).all()
    assert lever.lever_game().cyclic_symmetry.group.order == 9
    assert lever.lever_cyclic_subgroup().is_subgroup_of(group)


@pytest.mark.parametrize(
    ("payoffs", "order", "classes"),
    [
        ([1.0, 1.0, 0.5, 0.5, 0.5, 2.0], 2 * 6, [[0, 1], [2, 3, 4], [5]]),
        ([3.0, 1.0, 3.0, 1.0], 4, [[0, 2], [1, 3]]),
        ([1.0, 2.0], 1, [[0], [1]]),
    ],
)
def test_several_payoff_classes(payoffs: list[float], order: int, classes: list[list[int]]) -> None:
    assert lever.equal_payoff_classes(payoffs) == classes
    group = lever.lever_group(payoffs)
    assert group.order == order
    if group.is_enumerable:
        check_group(group)
    cyclic = lever.lever_cyclic_subgroup(payoffs)
    assert cyclic.order == math.prod(len(c) for c in classes)
    assert cyclic.is_subgroup_of(group)


def test_declared_symmetry_passes_the_env_check_and_a_wrong_one_fails() -> None:
    game = lever.lever_game()
    generator = torch.Generator().manual_seed(0)
    assert check_env_symmetry(game, game.symmetry, episodes=30, generator=generator) is None
    from eqc.dec_pomdp import Symmetry

    too_big = Symmetry(symmetric(10), acts_on=game.lever, observation_layout=game.observation_layout, action_layout=game.action_layout)
    counterexample = check_env_symmetry(game, too_big, episodes=30, generator=generator)
    assert counterexample is not None and counterexample.kind == "observation"


def test_tabular_version_pays_the_same() -> None:
    game = lever.lever_game([1.0, 0.5, 0.5])
    table = game.to_tabular()
    for a1 in range(3):
        for a2 in range(3):
            table.reset()
            game.reset()
            assert table.step([a1, a2]) == pytest.approx(game.step([a1, a2]))


def sampled_cross_play(game: lever.LeverGame, probabilities: torch.Tensor, episodes: int, generator: torch.Generator) -> torch.Tensor:
    """Monte Carlo estimate of ``cross_play_matrix`` from ``episodes`` games per pair, paid by ``lever.LeverGame.reward``."""
    agents, n = probabilities.shape
    p1 = probabilities[:, None, :].expand(agents, agents, n).reshape(-1, n)
    p2 = probabilities[None, :, :].expand(agents, agents, n).reshape(-1, n)
    a1 = torch.multinomial(p1, episodes, replacement=True, generator=generator)
    a2 = torch.multinomial(p2, episodes, replacement=True, generator=generator)
    return game.reward(a1, a2).mean(-1).reshape(agents, agents)


def test_exact_expected_reward_matches_played_games() -> None:
    game = lever.lever_game()
    generator = torch.Generator().manual_seed(0)
    probabilities = torch.softmax(torch.randn(4, 10, generator=generator), -1)
    exact = cross_play_matrix(game, probabilities)
    sampled = sampled_cross_play(game, probabilities, 20_000, generator)
    assert torch.allclose(exact, sampled, atol=0.015)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        lever.lever_game([1.0])
    with pytest.raises(ValueError, match="finite"):
        lever.lever_game([1.0, float("inf")])
    with pytest.raises(TypeError, match="numbers"):
        lever.lever_game(["a", "b"])
    game = lever.lever_game()
    with pytest.raises(RuntimeError, match="reset"):
        game.step([0, 0])
    game.reset()
    with pytest.raises(ValueError, match="no chance outcomes"):
        game.reset(outcome=(0,))
    with pytest.raises(ValueError, match=r"levers are 0\.\.9"):
        game.step([0, 10])
    with pytest.raises(ValueError, match="one lever per player"):
        game.step([0])
    game.step([0, 0])
    with pytest.raises(RuntimeError, match="one-shot"):
        game.step([0, 0])
