"""Hanabi evaluation on HLE: common decks, seats, cross-play, equivariance on relabelled decks."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn

pytest.importorskip("hanabi_learning_environment")

from eqc.domains.hanabi.agent.rule_agent import RuleAgent
from eqc.domains.hanabi.dealing import as_deck, relabel_deck
from eqc.domains.hanabi.play.hle import (
    action_labels,
    action_matrix_counts,
    common_decks,
    hanabi_cross_play,
    play_games,
    policy_from_module,
)
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import colour_symmetry
from eqc.evaluation import conditional_action_matrix
from eqc.groups import cyclic, dihedral
from eqc.symmetrize import Symmetrizer

pytestmark = pytest.mark.hanabi


@pytest.fixture(scope="module")
def decks() -> list[tuple[int, ...]]:
    return common_decks(6, HanabiRules(), deck_seed=11)


def _hand_played_score(env, agent: RuleAgent, deck: tuple[int, ...]) -> tuple[int, list[int]]:
    env.reset(deck)
    moves = []
    while not env.terminal:
        p = env.current_player
        move = agent.act(env.observations()[p], env.legal_actions()[p])
        env.step([move if q == p else -1 for q in range(2)])
        moves.append(move)
    return env.score, moves


def test_common_decks_are_seeded_and_valid() -> None:
    a, b = common_decks(3, HanabiRules(), deck_seed=5), common_decks(3, HanabiRules(), deck_seed=5)
    assert a == b and a != common_decks(3, HanabiRules(), deck_seed=6)
    assert all(as_deck(d) == d for d in a)


def test_rule_agents_match_games_played_by_hand(hle_env, decks) -> None:
    env, agent = hle_env(2), RuleAgent()
    games = play_games(agent.act, RuleAgent().act, decks, env=env)
    for k, deck in enumerate(decks):
        score, moves = _hand_played_score(env, agent, deck)
        assert games.scores[k].item() == score
        assert list(games.actions[k]) == moves
    assert games.scores.dtype == torch.float64 and games.scores.mean() > 10
    assert torch.equal(games.perfect, games.scores == 25)
    assert not bool((games.bombed_out & (games.scores != 0)).any())


def test_seats_alternate(hle_env, decks) -> None:
    games = play_games(RuleAgent().act, RuleAgent().act, decks[:4], env=hle_env(2))
    assert games.a_seat == (0, 1, 0, 1)
    for k, movers in enumerate(games.movers):
        first = 0 if games.a_seat[k] == 0 else 1  # seat 0 moves first
        assert movers[:4] == (first, 1 - first, first, 1 - first)
    fixed = play_games(RuleAgent().act, RuleAgent().act, decks[:2], env=hle_env(2), alternate_seats=False)
    assert fixed.a_seat == (0, 0)


def test_identical_rule_agents_cross_play_equals_self_play(hle_env, decks) -> None:
    result = hanabi_cross_play([RuleAgent().act, RuleAgent().act, RuleAgent().act], decks[:3], env=hle_env(2))
    assert torch.equal(result.xp_scores(), result.games[0][0].scores.repeat(6))
    assert result.xp.mean == result.sp.mean and result.xp.sem == 0.0
    assert result.xp_bomb_out_rate == result.sp_bomb_out_rate


def _relabel_moves(moves: tuple[int, ...], sigma: list[int]) -> tuple[int, ...]:
    """Colour hints 10 + c -> 10 + sigma[c] (two players, hand size 5); other moves are fixed."""
    return tuple(10 + sigma[m - 10] if 10 <= m < 15 else m for m in moves)


def _random_net(seed: int) -> nn.Module:
    with torch.random.fork_rng(devices=[]):  # seeded weights without touching the global RNG other tests see
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(658, 32), nn.ReLU(), nn.Linear(32, 20))


def _batched_rule_agent(agent: RuleAgent):
    def module(obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        moves = torch.tensor([agent.act(o, m) for o, m in zip(obs, legal, strict=False)])
        return nn.functional.one_hot(moves, agent.num_moves).float()

    return module


def test_rule_agent_and_its_symmetrization_play_relabelled_decks_identically(hle_env, decks) -> None:
    """Colour equivariance: on deck sigma(d) the games are those on d with colour hints relabelled."""
    env, agent = hle_env(2), RuleAgent()
    group = dihedral(5)
    symmetry = colour_symmetry(group)
    symmetrizer = Symmetrizer(_batched_rule_agent(agent), symmetry.observation_rep, symmetry.action_rep, pass_mask=True)
    symmetrized = policy_from_module(symmetrizer, pass_mask=True)
    base = play_games(agent.act, agent.act, decks[:3], env=env)
    for sigma in ([1, 2, 3, 4, 0], [0, 4, 3, 2, 1], [2, 0, 1, 4, 3]):  # two elements of D10, one of S5 only
        relabelled = [relabel_deck(d, sigma) for d in decks[:3]]
        games = play_games(agent.act, agent.act, relabelled, env=env)
        assert torch.equal(games.scores, base.scores)  # identical game by game
        assert games.actions == tuple(_relabel_moves(m, sigma) for m in base.actions)
    sigma = [0, 4, 3, 2, 1]
    sym_games = play_games(symmetrized, symmetrized, [relabel_deck(d, sigma) for d in decks[:2]], env=env)
    assert torch.equal(sym_games.scores, base.scores[:2])
    assert sym_games.actions == tuple(_relabel_moves(m, sigma) for m in base.actions[:2])


def test_symmetrized_random_network_is_equivariant_in_play_and_the_plain_one_is_not(hle_env, decks) -> None:
    env = hle_env(2)
    net = _random_net(3)
    symmetry = colour_symmetry(cyclic(5))
    equivariant = policy_from_module(Symmetrizer(net, symmetry.observation_rep, symmetry.action_rep))
    plain = policy_from_module(net)
    sigma = [3, 4, 0, 1, 2]  # a rotation: in C5
    relabelled = [relabel_deck(d, sigma) for d in decks]
    base, moved = play_games(equivariant, equivariant, decks, env=env), play_games(equivariant, equivariant, relabelled, env=env)
    assert torch.equal(base.scores, moved.scores) and torch.equal(base.bombed_out, moved.bombed_out)
    assert moved.actions == tuple(_relabel_moves(m, sigma) for m in base.actions)
    plain_base, plain_moved = play_games(plain, plain, decks, env=env), play_games(plain, plain, relabelled, env=env)
    assert plain_moved.actions != tuple(_relabel_moves(m, sigma) for m in plain_base.actions)


def test_policy_from_module_masks_illegal_moves() -> None:
    values = torch.arange(20.0)  # the highest value is on uid 19
    policy = policy_from_module(lambda x: values[None].expand(x.shape[0], 20))
    legal = torch.zeros(20, dtype=torch.bool)
    legal[[2, 7, 11]] = True
    assert policy(torch.zeros(658), legal) == 11
    with pytest.raises(ValueError, match="one value per move"):
        policy_from_module(lambda x: torch.zeros(1, 19))(torch.zeros(658), legal)
    with pytest.raises(TypeError, match="module"):
        policy_from_module(3)


def test_action_matrix_of_played_games(hle_env, decks) -> None:
    games = play_games(RuleAgent().act, RuleAgent().act, decks[:3], env=hle_env(2))
    both, a, b = (action_matrix_counts(games, responder=r) for r in ("both", "a", "b"))
    assert int(both.sum()) == sum(len(m) - 1 for m in games.actions)
    assert torch.equal(a + b, both)
    game = games.actions[0]
    by_hand = torch.zeros(20, 20, dtype=torch.long)
    for prev, now in itertools.pairwise(game):
        by_hand[prev, now] += 1
    first = play_games(RuleAgent().act, RuleAgent().act, decks[:1], env=hle_env(2))
    assert torch.equal(action_matrix_counts(first), by_hand)
    rows = conditional_action_matrix(both)
    observed = both.sum(1) > 0
    assert torch.allclose(rows[observed].sum(1), torch.ones(int(observed.sum()), dtype=torch.float64))
    labels = action_labels()
    assert labels[:2] == ["D1", "D2"] and labels[5] == "P1" and labels[10] == "C1" and labels[-1] == "R5" and len(labels) == 20


def test_bad_input_is_named(hle_env, decks) -> None:
    env, agent = hle_env(2), RuleAgent()
    with pytest.raises(ValueError, match="policy_b returned move"):
        play_games(agent.act, lambda o, m: int((~m).nonzero()[0]), decks[:1], env=env)  # always an illegal move
    with pytest.raises(TypeError, match="policy_a must return a Python int"):
        play_games(lambda o, m: torch.tensor(5), agent.act, decks[:1], env=env)
    with pytest.raises(TypeError, match="policy_a"):
        play_games(None, agent.act, decks[:1], env=env)
    with pytest.raises(ValueError, match="decks"):
        play_games(agent.act, agent.act, [], env=env)
    with pytest.raises(ValueError, match="deck"):
        play_games(agent.act, agent.act, [decks[0][:-1]], env=env)
    with pytest.raises(ValueError, match="2-player"):
        play_games(agent.act, agent.act, decks[:1], env=hle_env(3))
    with pytest.raises(ValueError, match="responder"):
        action_matrix_counts(play_games(agent.act, agent.act, decks[:1], env=env), responder="c")
    with pytest.raises(ValueError, match="num_games"):
        common_decks(0, HanabiRules())


def test_play_games_takes_rules_and_their_observation_variant() -> None:
    from eqc.domains.hanabi.hle import HanabiEnv
    from eqc.domains.hanabi.rules import HanabiRules

    rules = HanabiRules(sad="greedy_last_action")
    seen = []

    def policy(obs: torch.Tensor, legal: torch.Tensor) -> int:
        seen.append(obs.shape[0])
        return int(legal.nonzero()[0, 0])

    decks = common_decks(2, rules, deck_seed=1)
    games = play_games(policy, policy, decks, rules=rules)
    assert len(games.scores) == 2 and set(seen) == {rules.obs_dim} == {713}
    with pytest.raises(ValueError, match="pass one or the other"):
        play_games(policy, policy, decks, env=HanabiEnv(), rules=rules)
