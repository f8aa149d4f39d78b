"""PettingZooDecPOMDP and check_pettingzoo_symmetry on the ColourMatch game of conftest.py."""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")

import torch
from pettingzoo.utils.conversions import aec_to_parallel

from eqc.pettingzoo import EpisodeStart, PettingZooDecPOMDP, assert_pettingzoo_symmetry, check_pettingzoo_symmetry
from eqc.verification import check_env_symmetry


def relabel_secret(env, labels):
    env.secret = int(labels["colour"][env.secret])


@pytest.mark.parametrize("api", ["aec", "parallel"])
def test_a_true_symmetry_holds_exactly(colour_match, colour_symmetry, api):
    env = colour_match() if api == "aec" else aec_to_parallel(colour_match())
    assert check_pettingzoo_symmetry(env, colour_symmetry(), relabel_state=relabel_secret, episodes=30) is None


def test_masks_in_the_observation_dict(colour_match, colour_symmetry):
    env = colour_match(dict_observations=True)
    assert_pettingzoo_symmetry(env, colour_symmetry(), relabel_state=relabel_secret, observation_key="obs", episodes=20)
    with pytest.raises(ValueError, match=r"keys \['action_mask', 'obs'\] but no 'observation'.*observation_key="):
        PettingZooDecPOMDP(env, relabel_state=relabel_secret)


@pytest.mark.parametrize("api", ["aec", "parallel"])
def test_agents_that_finish_early_and_truncation(colour_match, api):
    """The sender leaves after round 1; a guesser that never finds the secret is truncated after 3 rounds."""
    env = colour_match(fixed_secret=3) if api == "aec" else aec_to_parallel(colour_match(fixed_secret=3))
    game = PettingZooDecPOMDP(env)
    game.reset(EpisodeStart(0))
    rewards, guesses = [], []
    while not game.terminal:
        legal = game.legal_actions()
        assert int(legal.any(dim=1).sum()) == (1 if api == "aec" else len(env.agents))  # AEC: only the agent to act
        guesses.append(int(legal[1].nonzero()[0]) if legal[1].any() else None)  # the lowest colour not yet guessed
        rewards.append(game.step([0, guesses[-1] or 0]))
        if game.record().agents == ("guesser",):  # the sender has left: zero observation, no legal action
            assert game.record().terminated == (True, False)
            assert game.observations()[0].abs().sum() == 0 and not game.legal_actions()[0].any()
    assert [g for g in guesses if g is not None] == [0, 1, 2]
    assert game.record().truncated[1] and not game.record().terminated[1] and sum(rewards) == 0.0


def test_a_wrong_declaration_names_the_block_and_the_step(colour_match, colour_symmetry):
    found = check_pettingzoo_symmetry(colour_match(), colour_symmetry(guessed_moves=False), relabel_state=relabel_secret, episodes=20)
    assert found is not None and found.kind == "observation" and found.block == "guessed" and found.step >= 2
    with pytest.raises(AssertionError, match=r"block 'guessed' at guessed\[axis0=\d\] \(episode \d+, step \d+"):
        assert_pettingzoo_symmetry(colour_match(), colour_symmetry(guessed_moves=False), relabel_state=relabel_secret, episodes=20)


def test_rewards_that_break_the_symmetry_are_caught(colour_match, colour_symmetry):
    found = check_pettingzoo_symmetry(colour_match(colour_bonus=True), colour_symmetry(), relabel_state=relabel_secret, episodes=40)
    assert found is not None and found.kind in ("reward", "invariant")


def test_no_chance_needs_no_hook_and_a_fixed_secret_is_not_symmetric(colour_match, colour_symmetry):
    found = check_pettingzoo_symmetry(colour_match(fixed_secret=2), colour_symmetry(), episodes=5)
    assert found is not None and found.block == "secret" and found.step == 0


def test_refuses_what_it_cannot_replay(colour_match, colour_symmetry):
    import numpy as np

    np.random.seed(0)  # its first two draws of a colour differ, so the probe's two runs from one seed differ
    assert list(np.random.randint(4, size=2)) == [0, 3]
    np.random.seed(0)
    with pytest.raises(ValueError, match=r"cannot be replayed exactly: .* differ at step 0: observations.*global numpy"):
        PettingZooDecPOMDP(colour_match(global_rng=True), relabel_state=relabel_secret)
    with pytest.raises(ValueError, match=r"draws chance .* no relabel_state was given"):
        PettingZooDecPOMDP(colour_match())
    with pytest.raises(ValueError, match=r"relabel_chance relabels the chance nodes of an OpenSpiel game"):
        PettingZooDecPOMDP(colour_match(), relabel_chance=lambda outcome, labels: outcome)


def test_bad_input_is_a_clear_error(colour_match, colour_symmetry):
    with pytest.raises(TypeError, match="env must be a PettingZoo AECEnv or ParallelEnv, got dict"):
        PettingZooDecPOMDP({})
    with pytest.raises(TypeError, match="relabel_state must be a callable"):
        PettingZooDecPOMDP(colour_match(), relabel_state=3)
    from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
    from eqc.groups import symmetric

    colour = Labels("colour", 4)
    other = Symmetry(symmetric(4), acts_on=colour, observation_layout=Layout([Block("x", colour, 3)]),
                     action_layout=Layout([Block("a", colour)]))
    with pytest.raises(ValueError, match=r"observation layout has 12 coordinates but colour_match_v0's observations have 15"):
        check_pettingzoo_symmetry(colour_match(), other, relabel_state=relabel_secret)
    game = PettingZooDecPOMDP(colour_match(), relabel_state=relabel_secret)
    with pytest.raises(TypeError, match="outcome must be an EpisodeStart"):
        game.reset(3)
    with pytest.raises(ValueError, match=r"reward_ulps must be in \[0, inf\], got -1"):
        check_env_symmetry(game, colour_symmetry(), reward_ulps=-1)
    with pytest.raises(ValueError, match=r"reward_ulps must be in \[0, inf\], got -1"):
        PettingZooDecPOMDP(colour_match(), relabel_state=relabel_secret, reward_ulps=-1)


def test_the_adapter_is_a_dec_pomdp_for_the_plain_check(colour_match, colour_symmetry):
    """check_env_symmetry drives the adapter directly; the same seed gives the same verdict."""
    game = PettingZooDecPOMDP(colour_match(colour_bonus=True), relabel_state=relabel_secret, seed=1)
    kwargs = dict(episodes=40, invariants=PettingZooDecPOMDP.record)
    found = check_env_symmetry(game, colour_symmetry(), generator=torch.Generator().manual_seed(1), **kwargs)
    game = PettingZooDecPOMDP(colour_match(colour_bonus=True), relabel_state=relabel_secret, seed=1)
    again = check_env_symmetry(game, colour_symmetry(), generator=torch.Generator().manual_seed(1), **kwargs)
    assert found is not None and str(found) == str(again)
