"""Other-Play and G-OP as PettingZoo wrappers: they agree with eqc.symmetrize.OtherPlay and keep returns."""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("mpe2")

import numpy as np
import torch
from pettingzoo.utils.wrappers import BaseWrapper

from eqc.groups import cyclic, identity_permutation, symmetric
from eqc.pettingzoo import OtherPlayAEC, OtherPlayParallel, other_play
from eqc.pettingzoo.examples import hanabi_symmetry, spread_symmetry
from eqc.symmetrize import OtherPlay


def make_hanabi(**kwargs):
    pytest.importorskip("pyspiel")
    import pettingzoo

    return pettingzoo.make("aec", "classic/hanabi-v5", **kwargs)


def make_spread():
    from mpe2 import simple_spread_v3

    return simple_spread_v3.parallel_env(N=3, max_cycles=25)


class Recorder(BaseWrapper):
    """Records the actions the real game receives."""

    def __init__(self, env):
        super().__init__(env)
        self.received = []

    def step(self, action):
        self.received.append(action)
        self.env.step(action)


def linear_policy(dim_obs: int, num_actions: int, seed: int = 0):
    """A fixed deterministic policy: the legal action with the largest ``W o``."""
    weights = torch.randn(num_actions, dim_obs, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)

    def act(obs: torch.Tensor, mask: torch.Tensor) -> int:
        return int(torch.where(mask, weights @ obs, -torch.inf).argmax())

    return act


def relabelled(policy, symmetry, perm: torch.Tensor):
    """The policy as it plays in the game relabelled by ``perm``: ``a' = g(pi(rho(g)^-1 o', rho(g)^-1 mask'))``."""
    g_of = symmetry.action_rep.coordinate_map(perm)

    def act(obs: torch.Tensor, mask: torch.Tensor) -> int:
        back = symmetry.observation_rep.act_permutations(obs, perm, inverse=True)
        legal = symmetry.action_rep.act_permutations(mask.double(), perm, inverse=True).bool()
        return int(g_of[policy(back, legal)])

    return act


def play_aec(env, policies, seed: int) -> list[tuple[str, float]]:
    env.reset(seed=seed)
    rewards = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        rewards.append((agent, reward))
        if terminated or truncated:
            env.step(None)
            continue
        x, mask = torch.as_tensor(obs["observation"], dtype=torch.float64), torch.as_tensor(obs["action_mask"]).bool()
        env.step(policies(agent)(x, mask))
    return rewards


@pytest.mark.parametrize(("subgroup", "identity_agent"), [(None, "random"), (cyclic(5), None)])
def test_relabelled_policies_score_what_the_plain_policy_scores_in_hanabi(subgroup, identity_agent):
    sym = hanabi_symmetry(symmetric(5))
    policy = linear_policy(658, 20)
    wrapped = other_play(make_hanabi(), sym, seed=7, subgroup=subgroup, identity_agent=identity_agent)
    assert isinstance(wrapped, OtherPlayAEC)
    moved = 0
    for seed in range(4):
        plain = play_aec(make_hanabi(), lambda agent: policy, seed)
        def policies(agent, agents=wrapped.possible_agents):
            return relabelled(policy, sym, wrapped.relabelling.permutations[agents.index(agent)])

        assert play_aec(wrapped, policies, seed) == plain  # every reward, exactly, in the same order
        perms = wrapped.relabelling.permutations
        moved += int((perms != identity_permutation(5)).any(dim=1).sum())
        if subgroup is not None:
            assert all(p in subgroup for p in perms)
    assert moved >= 3  # the wrapper did relabel


def test_the_wrapper_agrees_with_eqc_other_play():
    sym = hanabi_symmetry(symmetric(5))
    inner = Recorder(make_hanabi())
    wrapped = other_play(inner, sym, seed=3, subgroup=cyclic(5))
    wrapped.reset(seed=11)
    expected = OtherPlay.from_symmetry(sym, torch.Generator().manual_seed((3 << 32) ^ 11), subgroup=cyclic(5)).sample(2)
    assert torch.equal(wrapped.relabelling.permutations, expected.permutations)
    hinted = 0
    for t in range(12):
        if not wrapped.agents:
            break
        agent = wrapped.agent_selection
        i = wrapped.possible_agents.index(agent)
        raw, seen = inner.observe(agent), wrapped.observe(agent)
        raw_x, raw_mask = torch.as_tensor(raw["observation"]), torch.as_tensor(raw["action_mask"])
        assert torch.equal(torch.as_tensor(seen["observation"]), expected.relabel_observations(raw_x.expand(2, -1))[i])
        assert torch.equal(torch.as_tensor(seen["action_mask"]), expected.relabel_legal_actions(raw_mask.expand(2, -1))[i])
        assert seen["observation"].dtype == raw["observation"].dtype and seen["action_mask"].dtype == np.int8
        if wrapped.terminations[agent] or wrapped.truncations[agent]:
            wrapped.step(None)  # a dead step passes through
            assert inner.received[-1] is None
            continue
        legal = np.flatnonzero(seen["action_mask"])
        hints = legal[(legal >= 10) & (legal < 15)]  # colour hints: the moves the colours move
        choice = int(hints[t % len(hints)] if len(hints) else legal[t % len(legal)])
        hinted += int(len(hints) > 0)
        wrapped.step(choice)
        assert inner.received[-1] == int(expected.to_env_actions(torch.tensor([choice, choice]))[i])
    assert hinted >= 3


def test_parallel_wrapper_keeps_simple_spread_returns_under_g_op():
    sym = spread_symmetry(3)
    policy = linear_policy(18, 5, seed=1)
    wrapped = other_play(make_spread(), sym, seed=0, subgroup=cyclic(3))
    assert isinstance(wrapped, OtherPlayParallel)
    for seed in range(2):
        plain_env = make_spread()
        obs, _ = plain_env.reset(seed=seed)
        seen, _ = wrapped.reset(seed=seed)
        perms = wrapped.relabelling.permutations
        policies = [relabelled(policy, sym, p) for p in perms]
        everything = torch.ones(5, dtype=torch.bool)
        while plain_env.agents:
            agents = plain_env.possible_agents
            obs, plain_rewards, *_ = plain_env.step({a: policy(torch.as_tensor(obs[a], dtype=torch.float64), everything) for a in agents})
            seen, rewards, *_ = wrapped.step({a: policies[i](torch.as_tensor(seen[a], dtype=torch.float64), everything)
                                              for i, a in enumerate(agents)})
            assert rewards == plain_rewards
            for i, a in enumerate(wrapped.agents):
                assert np.array_equal(seen[a], sym.observation_rep.act_permutations(torch.as_tensor(obs[a]), perms[i]).numpy())


def test_identity_agent():
    wrapped = other_play(make_hanabi(), hanabi_symmetry(), seed=0, identity_agent="player_1")
    ids = []
    for seed in range(5):
        wrapped.reset(seed=seed)
        assert torch.equal(wrapped.relabelling.permutations[1], identity_permutation(5))
    wrapped = other_play(make_hanabi(), hanabi_symmetry(), seed=0, identity_agent="random")
    for seed in range(20):
        wrapped.reset(seed=seed)
        ids.append((wrapped.relabelling.permutations == identity_permutation(5)).all(dim=1).tolist())
    assert all(any(row) for row in ids) and {row.index(True) for row in ids} == {0, 1}


def test_bad_input_is_a_clear_error(colour_match, colour_symmetry):
    with pytest.raises(ValueError, match=r"identity_agent must be None, 'random' or one of \['player_0', 'player_1'\], got 'nobody'"):
        other_play(make_hanabi(), hanabi_symmetry(), identity_agent="nobody")
    with pytest.raises(ValueError, match="symmetry: its observation layout has 658 coordinates but hanabi_v5's observations have 956"):
        other_play(make_hanabi(players=3), hanabi_symmetry())
    with pytest.raises(TypeError, match="symmetry must be an eqc Symmetry"):
        other_play(make_hanabi(), "colours")
    with pytest.raises(TypeError, match="env must be a PettingZoo AECEnv or ParallelEnv"):
        other_play(object(), hanabi_symmetry())
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        other_play(colour_match(), colour_symmetry()).observe("sender")

    from gymnasium import spaces

    class Bounded(colour_match):
        def observation_space(self, agent):
            low = np.zeros(15, np.float32)
            low[0] = -1.0  # the secret's colour 0 alone may be negative: relabelling would leave the space
            return spaces.Box(low, 1.0, (15,), np.float32)

    with pytest.raises(ValueError, match="observation space's low bounds are not invariant under the group"):
        other_play(Bounded(), colour_symmetry())


def test_actions_must_be_integers_in_range_and_agents_known(colour_match, colour_symmetry):
    """Before, 1.7 and "2" were played as 1 and 2; a partial action dict reached the env's own error."""
    from pettingzoo.utils.conversions import aec_to_parallel

    wrapped = other_play(colour_match(), colour_symmetry(), seed=0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before observing or stepping"):
        wrapped.step(1)
    wrapped.reset(seed=3)
    for action, error, message in ((1.7, TypeError, "got float 1.7"), ("2", TypeError, "got str '2'"), (4, ValueError, "got 4"),
                                   (True, ValueError, "got True")):
        with pytest.raises(error, match=r"agent 'sender': an action must be an integer in \[0, 4\), " + message):
            wrapped.step(action)
    wrapped.step(np.int64(2))  # numpy integers are integers
    with pytest.raises(ValueError, match=r"unknown agent 'nobody'; the env's agents are \['sender', 'guesser'\]"):
        wrapped.observe("nobody")
    parallel = other_play(aec_to_parallel(colour_match()), colour_symmetry(), seed=0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        parallel.step({"sender": 0, "guesser": 0})
    parallel.reset(seed=3)
    with pytest.raises(ValueError, match=r"one action for each agent in the game, \['sender', 'guesser'\]; missing: \['guesser'\]"):
        parallel.step({"sender": 0})
    with pytest.raises(ValueError, match=r"unknown or finished: \['nobody'\]"):
        parallel.step({"sender": 0, "guesser": 0, "nobody": 1})
    with pytest.raises(TypeError, match="an action must be an integer"):
        parallel.step({"sender": 0.5, "guesser": 0})
    with pytest.raises(ValueError, match=r"seed must be in \[0, 18446744073709551615\]"):
        other_play(colour_match(), colour_symmetry(), seed=2**64)


def test_a_mask_key_missing_from_the_dict_is_refused(colour_match, colour_symmetry):
    """Before, every action was treated as legal and the real, unrelabelled mask was passed through."""
    env = colour_match(dict_observations=True)
    with pytest.raises(ValueError, match=r"keys \['action_mask', 'obs'\] but no 'mask'; pass mask_key="):
        other_play(env, colour_symmetry(), observation_key="obs", mask_key="mask")
