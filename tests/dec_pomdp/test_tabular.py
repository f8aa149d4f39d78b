"""TabularDecPOMDP: table validation, explicit chance outcomes, and the DecPOMDP protocol."""

from __future__ import annotations

import pytest
import torch

from eqc.dec_pomdp import DecPOMDP
from eqc.dec_pomdp.tabular import TabularDecPOMDP


def coin_game(seed: int = 0, bias: float = 0.5) -> TabularDecPOMDP:
    """Two agents, two states (a hidden coin), two actions; agent 0 sees the coin with noise 0.2."""
    initial = [bias, 1 - bias]
    transition = torch.zeros(2, 2, 2, 2)
    transition[..., 0] = 0.5
    transition[..., 1] = 0.5
    reward = torch.zeros(2, 2, 2)
    for s in range(2):
        reward[s, s, s] = 1.0  # both name the coin
    observation = torch.tensor([[[0.8, 0.2], [0.2, 0.8]], [[0.5, 0.5], [0.5, 0.5]]])
    return TabularDecPOMDP(initial, transition, reward, observation, horizon=3, seed=seed)


def test_is_a_dec_pomdp_with_label_layouts() -> None:
    game = coin_game()
    assert isinstance(game, DecPOMDP)
    assert (game.num_agents, game.num_states, game.num_actions, game.num_observations) == (2, 2, 2, 2)
    assert game.observation_layout.dim == 2 and game.action_layout.dim == 2 and game.state_layout.dim == 2
    assert set(game.labels) == {"state", "action", "observation"}


def test_forced_outcomes_probabilities_rewards_and_horizon() -> None:
    game = coin_game()
    game.reset((1, (1, 0)))
    assert game.state == 1 and game.last_outcome == (1, (1, 0))
    assert game.last_outcome_probability == pytest.approx(0.5 * 0.8 * 0.5)
    assert torch.equal(game.observations(), torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
    assert bool(game.legal_actions().all())
    assert game.step([1, 1], (0, (1, 1))) == 1.0  # both named coin 1 while in state 1
    assert game.last_outcome_probability == pytest.approx(0.5 * 0.2 * 0.5)
    assert game.step([0, 1], (0, (0, 0))) == 0.0
    assert not game.terminal
    game.step([0, 0], (1, (1, 1)))
    assert game.terminal
    with pytest.raises(RuntimeError, match="horizon"):
        game.step([0, 0])


def test_sampling_is_seeded_and_follows_the_tables() -> None:
    def outcomes(seed: int) -> list:
        game = coin_game(seed, bias=0.9)
        result = []
        for _ in range(400):
            game.reset()
            result.append(game.last_outcome)
        return result

    first = outcomes(3)
    assert first == outcomes(3)
    assert first != outcomes(4)
    states = torch.tensor([s for s, _ in first], dtype=torch.float)
    assert (states == 0).float().mean().item() == pytest.approx(0.9, abs=0.05)
    seen = torch.tensor([obs[0] == s for s, obs in first], dtype=torch.float)
    assert seen.mean().item() == pytest.approx(0.8, abs=0.06)


def test_relabel_outcome_applies_state_and_observation_permutations() -> None:
    game = coin_game()
    perms = {"state": torch.tensor([1, 0]), "observation": torch.tensor([1, 0]), "action": torch.tensor([1, 0])}
    assert game.relabel_outcome((0, (0, 1)), perms) == (1, (1, 0))
    assert game.relabel_outcome((0, (0, 1)), {}) == (0, (0, 1))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (dict(initial=[0.5, 0.6]), "initial must sum to 1"),
        (dict(initial=[[1.0]]), "initial must have shape"),
        (dict(reward=torch.zeros(2, 2, 3)), "same number of actions"),
        (dict(reward=torch.zeros(2, 2)), "reward must have shape"),
        (dict(transition=torch.full((2, 2, 2, 3), 1 / 3)), "transition must have shape"),
        (dict(transition=torch.zeros(2, 2, 2, 2)), "transition must sum to 1"),
        (dict(observation=torch.full((2, 3, 2), 0.5)), "observation must have shape"),
        (dict(observation=torch.tensor([[[1.5, -0.5], [0.5, 0.5]]] * 2)), "negative"),
        (dict(reward=torch.full((2, 2, 2), float("nan"))), "finite"),
        (dict(horizon=0), "horizon"),
        (dict(reward="abc"), "numeric"),
    ],
)
def test_bad_tables_are_refused_with_clear_errors(change: dict, message: str) -> None:
    game = coin_game()
    tables = dict(
        initial=game.initial, transition=game.transition, reward=game.reward, observation=game.observation, horizon=3
    )
    tables.update(change)
    with pytest.raises((ValueError, TypeError), match=message):
        TabularDecPOMDP(**tables)


def test_bad_use_is_refused() -> None:
    game = coin_game()
    with pytest.raises(RuntimeError, match="reset"):
        game.observations()
    game.reset()
    with pytest.raises(ValueError, match="one action per agent"):
        game.step([0])
    with pytest.raises(ValueError, match="actions must lie"):
        game.step([0, 2])
    with pytest.raises(TypeError, match="tuple"):
        game.reset(3)
    with pytest.raises(ValueError, match="state"):
        game.reset((5, (0, 0)))
    with pytest.raises(ValueError, match="one observation per agent"):
        game.reset((0, (0,)))
    certain = TabularDecPOMDP([1.0, 0.0], game.transition, game.reward, game.observation, horizon=1)
    with pytest.raises(ValueError, match="probability 0"):
        certain.reset((1, (0, 0)))


def test_relabel_outcome_refuses_a_misspelt_label_set() -> None:
    game = coin_game()
    game.reset()
    swap = torch.tensor([1, 0])
    assert game.relabel_outcome((1, (1, 0)), {"state": swap}) == (0, (1, 0))
    with pytest.raises(ValueError, match=r"unknown label set\(s\) \['states'\]; this game's label sets are"):
        game.relabel_outcome((1, (1, 0)), {"states": swap})
    with pytest.raises(TypeError, match="perms must be a dict"):
        game.relabel_outcome((1, (1, 0)), [swap])


def test_horizon_and_seed_use_the_shared_checks() -> None:
    game = coin_game()
    with pytest.raises(ValueError, match=r"horizon must be in \[1, inf\]"):
        TabularDecPOMDP(game.initial, game.transition, game.reward, game.observation, horizon=0)
    with pytest.raises(TypeError, match="horizon must be a Python int"):
        TabularDecPOMDP(game.initial, game.transition, game.reward, game.observation, horizon=2.0)
    with pytest.raises(ValueError, match="seed must be in"):
        TabularDecPOMDP(game.initial, game.transition, game.reward, game.observation, horizon=1, seed=2**70)
