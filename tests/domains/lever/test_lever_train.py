"""Training lever pools: the paper's argument (sec. 2.5) as measured cross-play.

SP agents coordinate with their own partner (~1.0) but not with each other (~1/9);
OP, G-OP and the symmetrized network converge to the 0.9 lever (XP ~0.9); symmetrizing SP
agents after training spreads them over the nine 1.0 levers (~1/9).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from eqc.domains.lever import RULES, LeverConfig, lever_cross_play, lever_game, train_pool, train_pools
from eqc.verification import assert_equivariant

AGENTS = 6
CONFIG = LeverConfig(steps=80, restarts=12)


@pytest.fixture(scope="module", autouse=True)
def one_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def pools() -> dict:
    return train_pools(lever_game(), RULES, seeds=range(AGENTS), config=CONFIG)


def test_self_play_breaks_symmetry(pools: dict) -> None:
    result = lever_cross_play(lever_game(), pools["sp"].probabilities)
    assert result.sp.mean > 0.97
    assert result.xp.mean < 0.4  # 1/9 in expectation: agents pick different 1.0 levers
    chosen = pools["sp"].probabilities.argmax(-1)
    assert len(set(chosen.tolist())) > 1 and 9 not in chosen.tolist()


@pytest.mark.parametrize("rule", ["op", "gop", "eq"])
def test_symmetry_aware_rules_choose_the_odd_lever(pools: dict, rule: str) -> None:
    result = lever_cross_play(lever_game(), pools[rule].probabilities)
    assert result.xp.mean == pytest.approx(0.9, abs=0.02)
    assert result.sp.mean == pytest.approx(0.9, abs=0.02)
    assert bool((pools[rule].probabilities[:, 9] > 0.97).all())


def test_symmetrizing_self_play_agents_spreads_them_over_the_equal_levers(pools: dict) -> None:
    result = lever_cross_play(lever_game(), pools["sp+sym"].probabilities)
    assert result.xp.mean == pytest.approx(1 / 9, abs=0.02)
    assert result.sp.mean == pytest.approx(1 / 9, abs=0.02)
    assert torch.equal(pools["sp+sym"].selected, pools["sp"].selected)  # the same trained networks


def test_learning_happens() -> None:
    game = lever_game()
    untrained = train_pool(game, "sp", seeds=range(3), config=LeverConfig(steps=1, lr=1e-8, restarts=2))
    assert lever_cross_play(game, untrained.probabilities).sp.mean < 0.2  # near-uniform play: about 0.1
    trained = train_pool(game, "sp", seeds=range(3), config=LeverConfig(steps=80, restarts=2))
    assert lever_cross_play(game, trained.probabilities).sp.mean > 0.97


def test_the_bad_local_optimum_is_real_and_restarts_escape_it(pools: dict) -> None:
    """Some OP candidates end at the uniform-over-1.0-levers policy (1/9); the kept one never does."""
    returns = pools["op"].candidate_returns
    assert bool((returns < 0.2).any()) and bool((returns > 0.85).any())
    assert bool((returns.max(dim=1).values > 0.85).all())


def test_eq_policy_is_exactly_equivariant_after_training(pools: dict) -> None:
    cyclic = lever_game().cyclic_symmetry
    x = torch.randn(AGENTS * CONFIG.restarts, 3, 10, generator=torch.Generator().manual_seed(0))
    assert_equivariant(pools["eq"].policy, cyclic.observation_rep, cyclic.action_rep, x)


def test_seeded_and_reproducible() -> None:
    game = lever_game()
    config = LeverConfig(steps=5, restarts=2)
    first = train_pool(game, "op", seeds=[7, 8], config=config).probabilities
    assert torch.equal(first, train_pool(game, "op", seeds=[7, 8], config=config).probabilities)
    assert not torch.equal(first, train_pool(game, "op", seeds=[8, 9], config=config).probabilities)


def test_other_payoffs_train_too() -> None:
    game = lever_game([1.0, 1.0, 1.0, 0.8])
    pool = train_pool(game, "gop", seeds=range(3), config=LeverConfig(steps=80, restarts=8))
    assert lever_cross_play(game, pool.probabilities).xp.mean == pytest.approx(0.8, abs=0.02)


def test_self_play_is_trained_once_for_sp_and_sp_sym() -> None:
    from eqc.domains.lever.train import training_steps

    config = LeverConfig(steps=3, restarts=2)
    calls = []
    pools = train_pools(lever_game(), ["sp+sym", "sp"], seeds=[0, 1], config=config, on_step=lambda: calls.append(1))
    assert len(calls) == training_steps(["sp+sym", "sp"], config) == 3
    assert list(pools) == ["sp+sym", "sp"]
    assert pools["sp+sym"].network is pools["sp"].network


def test_bad_input() -> None:
    game = lever_game()
    with pytest.raises(ValueError, match="unknown rule"):
        train_pool(game, "xp", seeds=[0, 1])
    with pytest.raises(ValueError, match="at least 1"):
        train_pool(game, "sp", seeds=[])
    with pytest.raises(ValueError, match="steps"):
        LeverConfig(steps=0)
    with pytest.raises(ValueError, match="lr"):
        LeverConfig(lr=-1.0)
    with pytest.raises(ValueError, match="unknown rule"):
        train_pools(game, ["sp", "nope"], seeds=[0, 1])


def test_relabelled_distributions_agree_with_other_plays_discrete_actions() -> None:
    """A player that always pulls lever 2 in its relabelled game pulls g^-1(2) in the real game."""
    from eqc.domains.lever.train import _real_game_probabilities
    from eqc.symmetrize import OtherPlay

    game = lever_game()
    other_play = OtherPlay.from_symmetry(game.symmetry, torch.Generator().manual_seed(0))

    def always_lever_2(x: torch.Tensor) -> torch.Tensor:
        return torch.log(torch.nn.functional.one_hot(torch.full(x.shape[:-1], 2), 10).float())

    probabilities = _real_game_probabilities(always_lever_2, other_play, game.observation(), 4, 5)
    replay = OtherPlay.from_symmetry(game.symmetry, torch.Generator().manual_seed(0)).sample(4, 5, 2)
    expected = replay.to_env_actions(torch.full((4, 5, 2), 2))
    assert torch.equal(probabilities.argmax(-1), expected)
    assert bool((expected != 2).any())  # the relabelling really moved the lever


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_trains_on_cuda() -> None:
    game = lever_game()
    pool = train_pool(game, "gop", seeds=[0, 1], config=LeverConfig(steps=80, restarts=8, device="cuda"))
    assert lever_cross_play(game, pool.probabilities).xp.mean == pytest.approx(0.9, abs=0.02)
