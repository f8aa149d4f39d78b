"""The PQN-style learner: Q(lambda) returns, symmetrized training, no host round trip per iteration."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.training.learner import LearnerSetup
from eqc.domains.hanabi.training.pqn import PQN, PQNLearner, lambda_returns

CPU = torch.device("cpu")


def test_lambda_returns_by_hand() -> None:
    rewards = torch.tensor([[1.0], [0.0], [2.0]])
    ended = torch.tensor([[False], [True], [False]])
    values = torch.tensor([[10.0], [20.0], [30.0]])  # greedy value after each move
    gamma, lam = 0.5, 0.25
    g2 = 2.0 + gamma * 30.0  # the last return bootstraps from values[-1]
    g1 = 0.0  # the game ended: no bootstrap
    g0 = 1.0 + gamma * ((1 - lam) * 10.0 + lam * g1)
    torch.testing.assert_close(lambda_returns(rewards, ended, values, gamma, lam), torch.tensor([[g0], [g1], [g2]]))
    one_step = lambda_returns(rewards, ended, values, gamma, 0.0)
    torch.testing.assert_close(one_step[0], torch.tensor([1.0 + gamma * 10.0]))


def test_symmetrized_network_is_trained_and_deployed_symmetrized(tmp_path, tiny_config) -> None:
    from eqc.domains.hanabi import load_policy
    from eqc.domains.hanabi.training.run import train
    from eqc.verification import equivariance_error

    config = tiny_config(network={"symmetrize": "C5"})
    train(config, tmp_path, seed=0, progress=False, log=lambda _: None)
    policy = load_policy(tmp_path)  # trained symmetrized: stays symmetrized without --symmetrize
    assert policy.agent.group is not None and policy.agent.group.order == 5
    sym = colour_symmetry(colour_group("C5"), config.game.rules())
    obs = torch.rand(8, sym.observation_rep.dim, generator=torch.Generator().manual_seed(0))

    def q(x: torch.Tensor) -> torch.Tensor:
        return policy.agent.step(x, None)[0][:, :-1]  # Q of HLE's moves (the no-op is fixed)

    assert equivariance_error(q, sym.observation_rep, sym.action_rep, obs).max_error < 1e-4  # float32


def test_epsilon_ladder_is_hanabi_sads() -> None:
    from eqc.domains.hanabi.training.pqn import PQNConfig, epsilon_ladder

    p = PQNConfig(exploration="ladder", eps_start=0.1, eps_end=1e-8, ladder_rungs=80)
    eps = epsilon_ladder(p, 200, torch.device("cpu"))
    k = torch.arange(200) % 80
    torch.testing.assert_close(eps, 0.1 ** (1 + 7 * k.double() / 79), rtol=1e-12, atol=0)


def test_ladder_explores_per_game(tiny_config) -> None:
    """Two rungs, eps 1 and 1e-8: odd games always play the greedy move, even games explore uniformly."""
    from eqc.domains.hanabi.training.learners import make_learner
    from eqc.domains.hanabi.training.pqn import exploration_epsilon

    config = tiny_config(pqn={"exploration": "ladder", "eps_start": 1.0, "eps_end": 1e-8, "ladder_rungs": 2})
    learner = make_learner(config, 0, torch.device("cpu"))
    eps = exploration_epsilon(config.settings(PQN), 0, 64, torch.device("cpu"))
    q = torch.randn(64, 21)
    legal = torch.ones(64, 21, dtype=torch.bool)
    draws = torch.stack([learner.explore(q, legal, eps) for _ in range(20)])
    assert torch.equal(draws[:, 1::2], q.argmax(-1)[1::2].expand(20, -1))
    assert (draws[:, 0::2] != q.argmax(-1)[0::2]).float().mean() > 0.8
    logged = learner.iteration()
    assert abs(float(logged["epsilon"]) - 0.5) < 1e-6


def test_ladder_needs_positive_ends(tiny_config) -> None:
    from eqc.domains.hanabi.config.schema import ConfigError

    with pytest.raises(ConfigError, match=r"\[pqn\] eps_end must be > 0 with exploration 'ladder'"):
        tiny_config(pqn={"exploration": "ladder", "eps_end": 0.0})
    with pytest.raises(ConfigError, match=r"\[pqn\] exploration must be one of \('decay', 'ladder'\)"):
        tiny_config(pqn={"exploration": "apex"})


@pytest.mark.parametrize(("rule", "group"), [("sp", None), ("op", None), ("gop", "D10")])
def test_an_iteration_never_goes_through_the_host(tiny_config, host_traffic, rule: str, group: str | None) -> None:
    """On a GPU every read of a value stalls the pipeline, and a tensor built without ``device=`` lands on the CPU:
    after the first iteration, none happens in eqc's code (the Other-Play relabelling used to map each move on
    the CPU, and the group's index checks read the indices back)."""
    config = tiny_config(rule={"objective": rule} | ({"group": group} if group else {}))
    learner = PQNLearner(LearnerSetup.of(config, 0, CPU), config.settings(PQN))
    learner.iteration()
    with host_traffic() as traffic:
        for _ in range(2):
            learner.iteration()
    assert traffic.events == []


def test_the_host_traffic_check_sees_the_old_relabelling(tiny_config, host_traffic) -> None:
    """Negative control: relabelling by permutations (the learner's path before issue 25) maps them on the CPU
    and is caught; the checker ignores what the test itself does."""
    config = tiny_config(rule={"objective": "op"})
    learner = PQNLearner(LearnerSetup.of(config, 0, CPU), config.settings(PQN))
    other_play = learner.games.other_play
    perms = other_play.group.elements[learner.games.element_indices]
    other_play.relabelling(perms)  # tables built once, outside
    with host_traffic() as traffic:
        other_play.relabelling(perms)
        torch.zeros(3)  # made here, not by eqc: not counted
    assert any(event.startswith("group.py:_check_permutations read") for event in traffic.events)  # membership, on the host
    assert not any(event.startswith("test_") for event in traffic.events)
