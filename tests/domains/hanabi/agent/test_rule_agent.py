"""Agents on HLE: the rule-based agent and a symmetrized random network play complete games,
with equivariance checked at every step of the game."""

from __future__ import annotations

import pytest
import torch
from torch import nn

pytest.importorskip("hanabi_learning_environment")

from eqc.domains.hanabi.agent.rule_agent import RuleAgent
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import colour_symmetry
from eqc.groups import PermutationRepresentation, cyclic, dihedral, symmetric
from eqc.symmetrize import Symmetrizer
from eqc.verification import assert_equivariant, equivariance_error

pytestmark = pytest.mark.hanabi

S5 = symmetric(5)


def _one_hot_policy(agent: RuleAgent):
    def policy(obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        return nn.functional.one_hot(torch.tensor(agent.act(obs, legal)), agent.num_moves).float()

    return policy


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_rule_agent_plays_legal_complete_games(hle_env, num_players: int) -> None:
    env = hle_env(num_players)
    agent = RuleAgent(env.rules)
    scores = []
    for _ in range(3):
        env.reset()
        while not env.terminal:
            p = env.current_player
            move = agent.act(env.observations()[p], env.legal_actions()[p])
            assert move in env.legal_move_uids()
            env.play(move)
        scores.append(env.score)
    assert sum(scores) / len(scores) >= 8, scores  # random play scores ~0-2; the rules do much better


def test_rule_agent_is_colour_equivariant_in_the_loop(hle_env) -> None:
    env, agent = hle_env(2), RuleAgent()
    symmetry = colour_symmetry(S5)
    policy = _one_hot_policy(agent)
    generator = torch.Generator().manual_seed(0)
    env.reset()
    while not env.terminal:
        p = env.current_player
        obs, legal = env.observations()[p], env.legal_actions()[p]
        elements = S5.random_indices(8, generator)  # 8 fresh elements of S5 at every step
        assert_equivariant(policy, [symmetry.observation_rep, symmetry.action_rep], symmetry.action_rep, (obs, legal), indices=elements)
        env.play(agent.act(obs, legal))


def test_rule_agent_rejects_bad_input() -> None:
    agent = RuleAgent()
    with pytest.raises(ValueError, match="obs"):
        agent.act(torch.zeros(657), torch.ones(20, dtype=torch.bool))
    with pytest.raises(TypeError, match="legal"):  # a float mask is the wrong type
        agent.act(torch.zeros(658), torch.ones(20))
    with pytest.raises(ValueError, match="legal"):
        agent.act(torch.zeros(658), torch.ones(19, dtype=torch.bool))
    with pytest.raises(TypeError, match="obs"):
        agent.act([0.0] * 658, torch.ones(20, dtype=torch.bool))
    with pytest.raises(ValueError, match="no legal move"):
        agent.act(torch.zeros(658), torch.zeros(20, dtype=torch.bool))


def test_rule_agent_takes_rules_and_refuses_beliefs() -> None:
    assert RuleAgent(HanabiRules(num_players=3)).obs_dim == HanabiRules(num_players=3).obs_dim
    assert RuleAgent(HanabiRules(sad="greedy_last_action")).obs_dim == 713
    with pytest.raises(ValueError, match="knowledge='canonical'"):
        RuleAgent(HanabiRules(knowledge="v0_belief"))


def _random_net(obs_dim: int, num_actions: int, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, num_actions))


@pytest.mark.parametrize("group", [dihedral(5), S5], ids=["D10", "S5"])
def test_symmetrized_network_with_rule_agent_plays_equivariantly(hle_env, group) -> None:
    """Player 0: S(random MLP) acting greedily over legal moves; player 1: the rule agent."""
    env, agent = hle_env(2), RuleAgent()
    symmetry = colour_symmetry(group)
    net = _random_net(env.obs_dim, env.num_moves, seed=0)
    policy = Symmetrizer(net, symmetry.observation_rep, symmetry.action_rep)
    generator = torch.Generator().manual_seed(1)
    steps = 0
    for _ in range(3):
        env.reset()
        while not env.terminal:
            p = env.current_player
            obs, legal = env.observations()[p], env.legal_actions()[p]
            if p == 0:
                with torch.no_grad():
                    q = policy(obs[None], legal[None])[0]
                elements = group.random_indices(6, generator)  # fresh elements at every step
                reps = [symmetry.observation_rep, symmetry.action_rep]
                assert_equivariant(policy, reps, symmetry.action_rep, (obs[None], legal[None]), indices=elements)
                move = int(q.argmax())
            else:
                move = agent.act(obs, legal)
            assert move in env.legal_move_uids()
            env.play(move)
            steps += 1
    assert steps >= 15


def test_unsymmetrized_network_and_paper_bug_are_not_equivariant(hle_env) -> None:
    """The check can fail: a plain random network, and a symmetrizer whose hint-colour block uses g^-1."""
    env = hle_env(2)
    symmetry = colour_symmetry(cyclic(5))
    env.reset()
    env.play(next(u for u in env.legal_move_uids() if 10 <= u < 15))  # a colour hint, so the block is non-zero
    obs = env.observations()[1][None]
    net = _random_net(env.obs_dim, env.num_moves, seed=1)
    assert not equivariance_error(net, symmetry.observation_rep, symmetry.action_rep, obs).ok
    table = symmetry.observation_rep.coordinate_permutations.clone()
    s = symmetry.observation_layout.slice("last_action_colour")
    table[:, s] = symmetry.observation_rep.coordinate_permutations[symmetry.group.inverse][:, s]
    buggy = Symmetrizer(net, PermutationRepresentation.from_table(symmetry.group, table), symmetry.action_rep)
    report = equivariance_error(buggy, symmetry.observation_rep, symmetry.action_rep, obs)
    assert not report.ok
    rho_obs, rho_act = symmetry.observation_rep, symmetry.action_rep
    assert equivariance_error(Symmetrizer(net, rho_obs, rho_act), rho_obs, rho_act, obs).ok
