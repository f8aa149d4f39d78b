"""The symmetrizer on a PettingZoo policy: a simple_spread network made exactly invariant to landmark relabelling."""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("mpe2")

import torch
from torch import nn

from eqc.pettingzoo import other_play
from eqc.pettingzoo.examples import spread_symmetry
from eqc.symmetrize import Symmetrizer
from eqc.verification import assert_equivariant, equivariance_error


def spread_observations(episodes: int = 2) -> torch.Tensor:
    """Observations of every agent along random episodes of simple_spread, ``float64 [n, 18]``."""
    from mpe2 import simple_spread_v3

    env, rows = simple_spread_v3.parallel_env(N=3, max_cycles=10), []
    moves = torch.Generator().manual_seed(0)
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        while env.agents:
            rows += [torch.as_tensor(o, dtype=torch.float64) for o in obs.values()]
            obs, *_ = env.step({a: int(torch.randint(5, (), generator=moves)) for a in env.agents})
    return torch.stack(rows)


def spread_network(seed: int = 0) -> nn.Module:
    net, weights = nn.Sequential(nn.Linear(18, 64), nn.Tanh(), nn.Linear(64, 5)).double(), torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=weights, dtype=p.dtype))
    return net


def test_the_symmetrized_spread_policy_is_exactly_invariant_to_landmark_relabelling():
    sym = spread_symmetry(3)
    x = spread_observations()
    policy = Symmetrizer(spread_network(), sym.observation_rep, sym.action_rep)
    report = assert_equivariant(policy, sym.observation_rep, sym.action_rep, x)  # all 6 elements of S3
    assert report.max_error < 1e-12
    bare = equivariance_error(spread_network(), sym.observation_rep, sym.action_rep, x)
    assert bare.max_error > 1e-3  # negative control: the network itself is not invariant


def test_other_play_does_not_change_what_an_invariant_policy_does():
    """Its actions do not depend on the landmark labels, so the OP-wrapped game plays out exactly as the plain one."""
    from mpe2 import simple_spread_v3

    sym = spread_symmetry(3)
    symmetrized = Symmetrizer(spread_network(), sym.observation_rep, sym.action_rep)

    def returns(policy: nn.Module, env, seed: int) -> list[dict]:
        obs, _ = env.reset(seed=seed)
        rewards = []
        with torch.no_grad():
            while env.agents:
                logits = {a: policy(torch.as_tensor(o, dtype=torch.float64)) for a, o in obs.items()}
                obs, reward, *_ = env.step({a: int(logits[a].argmax()) for a in env.agents})
                rewards.append(dict(reward))
        return rewards

    wrapped = other_play(simple_spread_v3.parallel_env(N=3, max_cycles=25), sym, seed=0)
    differs = 0
    for seed in range(3):
        plain = returns(symmetrized, simple_spread_v3.parallel_env(N=3, max_cycles=25), seed)
        assert returns(symmetrized, wrapped, seed) == plain
        plain = returns(spread_network(), simple_spread_v3.parallel_env(N=3, max_cycles=25), seed)
        differs += returns(spread_network(), wrapped, seed) != plain
    assert differs >= 1  # negative control: the bare network plays differently once the landmarks are relabelled
