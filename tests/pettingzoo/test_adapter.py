"""PettingZooDecPOMDP and check_pettingzoo_symmetry on the ColourMatch game of conftest.py."""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")

import numpy as np
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


def test_an_env_that_passed_the_probe_by_chance_is_named_not_the_declaration(colour_match, colour_symmetry):
    """A reset that ignores its seed (the global generator) can pass the two-episode probe when two draws agree; the
    counterexample that follows is then the env's, not the declaration's, and the check says so."""
    import numpy as np

    np.random.seed(4)  # its first two draws of a colour agree, so the probe's two runs from one seed agree
    assert len(set(np.random.randint(4, size=2))) == 1
    np.random.seed(4)
    adapter = PettingZooDecPOMDP(colour_match(global_rng=True), relabel_state=relabel_secret)  # passes by chance
    with pytest.raises(ValueError, match=r"does not replay itself: .* says nothing about the declared symmetry"):
        check_pettingzoo_symmetry(adapter, colour_symmetry(), episodes=5)


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


def native_parallel_env(observable: bool = True):
    """A natively parallel env (not made by aec_to_parallel): one agent sees a colour drawn at reset and is
    rewarded for naming it; ``observe(agent)`` returns the observation of its current state when ``observable``."""
    from gymnasium import spaces
    from pettingzoo import ParallelEnv

    class Native(ParallelEnv):
        metadata = {"name": "native_v0"}  # noqa: RUF012

        def __init__(self):
            self.possible_agents, self.render_mode = ["a"], None

        def observation_space(self, agent):
            return spaces.Box(0.0, 1.0, (4,), np.float32)

        def action_space(self, agent):
            return spaces.Discrete(4)

        def _observe(self, agent):
            return np.eye(4, dtype=np.float32)[self.secret]

        def reset(self, seed=None, options=None):
            self.agents, self.secret = ["a"], int(np.random.default_rng(seed).integers(4))
            return {"a": self._observe("a")}, {"a": {}}

        def step(self, actions):
            self.agents = []
            return {}, {"a": float(actions["a"] == self.secret)}, {"a": True}, {"a": False}, {"a": {}}

    if observable:
        Native.observe = Native._observe
    return Native()


def native_symmetry():
    from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
    from eqc.groups import symmetric

    colour = Labels("colour", 4)
    return Symmetry(symmetric(4), acts_on=colour, observation_layout=Layout([Block("secret", colour)]),
                    action_layout=Layout([Block("colour", colour)]))


def test_an_aec_env_from_parallel_to_aec_is_observed_again_after_relabel_state():
    """parallel_to_aec's observe replays the observations cached at reset: before, a true symmetry was reported wrong."""
    from pettingzoo.utils.conversions import parallel_to_aec

    env = parallel_to_aec(native_parallel_env())
    assert check_pettingzoo_symmetry(env, native_symmetry(), relabel_state=relabel_secret, episodes=20) is None
    stale = PettingZooDecPOMDP(env, relabel_state=relabel_secret)
    stale._cached = None  # what the adapter did before: the cached observation of the unrelabelled secret
    assert check_pettingzoo_symmetry(stale, native_symmetry(), episodes=20).kind == "observation"


def test_an_env_that_cannot_be_observed_again_is_refused_with_advice_that_works():
    from pettingzoo.utils.conversions import parallel_to_aec

    for env, what in ((native_parallel_env(observable=False), "parallel env"),
                      (parallel_to_aec(native_parallel_env(observable=False)), "AEC env made by parallel_to_aec")):
        with pytest.raises(ValueError, match=f"so the {what}.* must be observed again.*give the env an observe\\(agent\\) method"):
            PettingZooDecPOMDP(env, relabel_state=relabel_secret)


def test_keywords_beside_a_built_adapter_are_refused_not_ignored(colour_match, colour_symmetry):
    adapter = PettingZooDecPOMDP(colour_match(), relabel_state=relabel_secret)
    with pytest.raises(ValueError, match=r"built with its own reward_ulps, mask_key; pass reward_ulps=, mask_key= to PettingZooDecPOMDP"):
        check_pettingzoo_symmetry(adapter, colour_symmetry(), reward_ulps=4, mask_key="mask")
    assert check_pettingzoo_symmetry(adapter, colour_symmetry(), relabel_state=relabel_secret, episodes=5) is None  # the same: fine


def test_an_exception_in_a_hook_is_raised_naming_the_hook(colour_match, colour_symmetry):
    """Before, it was reported as a counterexample ("error differs ... expected None, got None")."""
    from eqc.pettingzoo import HookError

    def broken(env, labels):
        raise KeyError("secret")

    with pytest.raises(HookError, match=r"relabel_state raised KeyError: 'secret' \(labels \{'colour': \[") as info:
        check_pettingzoo_symmetry(colour_match(), colour_symmetry(), relabel_state=broken, episodes=2)
    assert isinstance(info.value.__cause__, KeyError)


@pytest.mark.parametrize("api", ["aec", "parallel"])
def test_a_hook_that_leaves_a_state_the_env_cannot_observe_is_named(colour_match, colour_symmetry, api):
    """Before, numpy's IndexError came out of the env's observe, far from the hook that caused it."""
    from eqc.pettingzoo import HookError

    def off_the_board(env, labels):
        env.secret = 99  # no such colour: observe() indexes out of its vector

    env = colour_match() if api == "aec" else aec_to_parallel(colour_match())
    with pytest.raises(HookError, match=r"relabel_state left a state the env cannot observe: observing it raised IndexError: .*"
                                        r"\(labels \{'colour': \[") as info:
        check_pettingzoo_symmetry(env, colour_symmetry(), relabel_state=off_the_board, episodes=2)
    assert isinstance(info.value.__cause__, IndexError)


def test_nan_observations_and_rewards_are_named_as_such(colour_match, colour_symmetry):
    """Before, NaN (which equals nothing) made the probe report "cannot be replayed exactly"."""

    class NaNObservation(colour_match):
        def observe(self, agent):
            obs = super().observe(agent)
            obs[-1] = np.nan
            return obs

    class NaNReward(colour_match):
        def step(self, action):
            super().step(action)
            self.rewards = {a: float("nan") for a in self.rewards}

    with pytest.raises(ValueError, match=r"agent 'sender': observation holds NaN \(at coordinates \[14\]\)"):
        PettingZooDecPOMDP(NaNObservation(), relabel_state=relabel_secret)
    with pytest.raises(ValueError, match="agent 'sender': the env gave a NaN reward"):
        PettingZooDecPOMDP(NaNReward(), relabel_state=relabel_secret)


def test_adapter_misuse_is_a_clear_error(colour_match, colour_symmetry):
    with pytest.raises(ValueError, match=r"seed must be in \[0, 18446744073709551615\], got 18446744073709551616"):
        PettingZooDecPOMDP(colour_match(), relabel_state=relabel_secret, seed=2**64)
    with pytest.raises(ValueError, match=r"seed must be in \[0, 18446744073709551615\]"):
        check_pettingzoo_symmetry(colour_match(), colour_symmetry(), relabel_state=relabel_secret, seed=2**64)

    class Empty(colour_match):
        def __init__(self):
            super().__init__()
            self.possible_agents = []

    with pytest.raises(ValueError, match=r"has no agents \(possible_agents is empty\)"):
        PettingZooDecPOMDP(Empty())
    adapter = PettingZooDecPOMDP(colour_match(), relabel_state=relabel_secret, probe_steps=0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before stepping or observing"):
        adapter.step([0, 0])
    adapter.reset()
    with pytest.raises(TypeError, match=r"agent 'sender': an action must be an integer in \[0, 4\), got float 1.7"):
        adapter.step([1.7, 0])
    with pytest.raises(ValueError, match=r"keys \['action_mask', 'obs'\] but no 'mask'"):
        PettingZooDecPOMDP(colour_match(dict_observations=True), relabel_state=relabel_secret, observation_key="obs", mask_key="mask")
