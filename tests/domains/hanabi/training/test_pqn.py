"""The PQN-style learner: Q(lambda) returns, and Other-Play / G-OP relabelling of the acting player."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.symmetry import colour_symmetry
from eqc.domains.hanabi.training.pqn import PQNLearner, lambda_returns
from eqc.domains.hanabi.training.setup import colour_group, game_rules

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


@pytest.mark.parametrize(("rule", "group"), [("op", "S5"), ("gop", "C5"), ("gop", "D10")])
def test_acting_player_sees_and_plays_in_its_relabelled_game(tiny_config, rule: str, group: str) -> None:
    config = tiny_config(run={"num_envs": 16}, rule={"objective": rule, "group": group})
    learner = PQNLearner(config, seed=3, device=CPU)
    sym = colour_symmetry(colour_group(group), game_rules(config))
    perms = learner.perms
    assert all(p in sym.group for p in perms.view(-1, 5))  # elements of the rule's group
    identity = torch.arange(5)
    kept = (perms == identity).all(-1)  # [B, P]: one player per game keeps the identity (VDN's Other-Play)
    assert bool(kept.any(-1).all())
    env = learner.env
    obs, legal, acting_relabelling = learner._acting_view()
    current = env.state.current
    raw_obs = env.observations()[torch.arange(16), current]
    acting = perms[torch.arange(16), current]
    torch.testing.assert_close(obs, sym.observation_rep.act_permutations(raw_obs, acting))
    expected_legal = sym.action_rep.act_permutations(env.legal_move_mask(), acting)
    assert torch.equal(legal[:, :-1], expected_legal) and not bool(legal[:, -1].any())
    # A move chosen in the relabelled game is played as g^-1 of it in the real game.
    choice = legal.float().argmax(-1)
    played = acting_relabelling.to_env_actions(choice)
    assert torch.equal(sym.action_rep.act_index_permutations(played, acting), choice)
    before = env.state.moves_made.clone()
    learner.env_step(choice, acting_relabelling)
    assert bool((env.state.moves_made == before + 1).logical_or(env.state.ended).all())


def test_relabellings_are_redrawn_only_for_games_that_ended(tiny_config) -> None:
    learner = PQNLearner(tiny_config(run={"num_envs": 64}, rule={"objective": "op"}), seed=0, device=CPU)
    for _ in range(40):
        before = learner.perms.clone()
        _, legal, acting = learner._acting_view()
        _, ended = learner.env_step(legal.float().argmax(-1), acting)
        unchanged = (learner.perms == before).all(-1).all(-1)
        assert bool(unchanged[~ended].all())


def test_symmetrized_network_is_trained_and_deployed_symmetrized(tmp_path, tiny_config) -> None:
    from eqc.domains.hanabi import load_policy
    from eqc.domains.hanabi.training.run import train
    from eqc.verification import equivariance_error

    config = tiny_config(rule={"symmetrize": "C5"})
    train(config, tmp_path, seed=0, progress=False, log=lambda _: None)
    policy = load_policy(tmp_path)  # trained symmetrized: stays symmetrized without --symmetrize
    assert policy.agent.group is not None and policy.agent.group.order == 5
    sym = colour_symmetry(colour_group("C5"), game_rules(config))
    obs = torch.rand(8, sym.observation_rep.dim, generator=torch.Generator().manual_seed(0))

    def q(x: torch.Tensor) -> torch.Tensor:
        return policy.agent.step(x, None)[0][:, :-1]  # Q of HLE's moves (the no-op is fixed)

    assert equivariance_error(q, sym.observation_rep, sym.action_rep, obs).max_error < 1e-4  # float32
