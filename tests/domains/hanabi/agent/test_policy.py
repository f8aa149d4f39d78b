"""``load_policy``: trained agents play HLE exactly as they play HanabiBatch; test-time symmetrization."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi import load_policy
from eqc.domains.hanabi.play.hle import common_decks, play_games
from eqc.domains.hanabi.play.self_play import greedy_games
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.run import train
from eqc.groups import cyclic, dihedral

CPU = torch.device("cpu")


def _train(tmp_path: Path, config) -> Path:
    out = tmp_path / "run"
    train(config, out, seed=0, progress=False, log=lambda _: None)
    return out


def _r2d2_sad(tiny_config):
    return tiny_config(
        run={"algorithm": "r2d2", "num_envs": 32, "total_moves": 3_000, "eval_every_moves": 3_000},
        game={"sad": "greedy_last_action"},
        network={"hidden_size": 32, "mlp_layers": 1, "lstm_layers": 1, "layer_norm": False},
        optim={"optimizer": "adam", "lr": 3e-3, "adam_eps": 1.5e-5, "grad_clip": 5.0},
        r2d2={"batch_size": 8, "buffer_episodes": 256, "warmup_episodes": 32, "updates_per_step": 1.0},
    )


@pytest.mark.parametrize("kind", ["pqn", "r2d2_sad"])
def test_hle_replays_the_batched_evaluation_game_for_game(tmp_path: Path, tiny_config, kind: str) -> None:
    """The same decks, greedy self-play: HLE (one observation at a time, recurrent agents stepping on
    every move through ``observe``) and HanabiBatch make the same moves and scores in every game."""
    pytest.importorskip("hanabi_learning_environment")
    from eqc.domains.hanabi.play.self_play import hle_env_for

    config = tiny_config(run={"total_moves": 20_480, "eval_every_moves": 20_480}) if kind == "pqn" else _r2d2_sad(tiny_config)
    policy = load_policy(_train(tmp_path, config))
    decks = common_decks(40, HanabiRules(), deck_seed=7)
    batched = greedy_games(policy.agent, policy.rules, CPU, decks=torch.tensor(decks))
    hle = play_games(policy, copy.copy(policy), decks, env=hle_env_for(policy))
    assert hle.scores.long().tolist() == batched.scores.tolist()
    for k, moves in enumerate(hle.actions):  # every move of every game
        assert list(moves) == [m for m in batched.moves[:, k].tolist() if m >= 0], f"game {k}"
    assert sum(len(m) for m in hle.actions) > 5 * len(decks)


def test_symmetrize_at_test_time_and_bad_arguments(tmp_path: Path, tiny_config) -> None:
    out = _train(tmp_path, tiny_config())
    assert load_policy(out).agent.group is None
    assert load_policy(out, symmetrize="C5").agent.group.order == 5
    assert load_policy(out / "checkpoint.pt", symmetrize=dihedral(5)).agent.group.order == 10
    with pytest.raises(ValueError, match="symmetrize must be one of"):
        load_policy(out, symmetrize="Z7")
    with pytest.raises(TypeError, match="symmetrize must be None"):
        load_policy(out, symmetrize=5)
    with pytest.raises(ValueError, match="hidden_scheme must be one of"):
        load_policy(out, hidden_scheme="avg")
    with pytest.raises(ValueError, match="did you mean 'cuda'"):
        load_policy(out, device="gpu")
    policy = load_policy(out)
    legal = torch.zeros(20, dtype=torch.bool)
    with pytest.raises(ValueError, match=r"v0_belief observation the agent was trained on"):
        policy(torch.zeros(713), legal)
    with pytest.raises(ValueError, match="no legal move"):
        policy(torch.zeros(658), legal)
    legal[3] = True
    assert policy(torch.zeros(658), legal) == 3


def test_a_group_object_is_compared_by_its_elements_not_its_name(tmp_path: Path, tiny_config) -> None:
    """Before, ``dihedral(5)`` was refused for an agent trained over D10: its name is "dihedral(5)", not "D10"."""
    out = _train(tmp_path, tiny_config(network={"symmetrize": "D10"}))
    assert load_policy(out, symmetrize=dihedral(5)).agent.group == dihedral(5)
    assert load_policy(out, symmetrize="D10").agent.group == dihedral(5)
    with pytest.raises(ValueError, match=r"symmetrize='cyclic\(5\)': .* was trained symmetrized over D10 and stays so"):
        load_policy(out, symmetrize=cyclic(5))
    with pytest.raises(ValueError, match="trained symmetrized over D10"):
        load_policy(out, symmetrize=dihedral(4))  # another number of colours


def test_eval_on_hanabibatch_and_in_hle_report_the_same_games(tmp_path: Path, tiny_config) -> None:
    pytest.importorskip("hanabi_learning_environment")
    from eqc.domains.hanabi.play.self_play import evaluate_agent, evaluate_in_hle

    policy = load_policy(_train(tmp_path, tiny_config(run={"total_moves": 20_480, "eval_every_moves": 20_480})))
    assert evaluate_agent(policy.agent, policy.rules, 30, 5, CPU) == evaluate_in_hle(policy, 30, 5)


def test_play_games_plays_in_the_policys_variant_or_refuses(tmp_path: Path, tiny_config) -> None:
    """A v0_belief agent fed canonical observations has the right shape and the wrong meaning: never silently."""
    pytest.importorskip("hanabi_learning_environment")
    from eqc.domains.hanabi import HanabiEnv, HanabiRules

    policy = load_policy(_train(tmp_path, tiny_config(run={"total_moves": 20_480, "eval_every_moves": 20_480})))
    assert policy.rules.knowledge == "v0_belief"
    decks = common_decks(20, HanabiRules(), deck_seed=3)
    batched = greedy_games(policy.agent, policy.rules, CPU, decks=torch.tensor(decks))
    own = play_games(policy, copy.copy(policy), decks)  # no env given: the policy's own variant
    assert own.scores.long().tolist() == batched.scores.tolist()
    with pytest.raises(ValueError, match="policy_a was trained on v0_belief/full observations with SAD 'off', but the env gives canonical"):
        play_games(policy, copy.copy(policy), decks, env=HanabiEnv(HanabiRules()))
    with pytest.raises(ValueError, match="env gives canonical"):
        play_games(policy, copy.copy(policy), decks, rules=HanabiRules())


def test_a_policy_appends_the_no_op_on_its_own_device(host_traffic) -> None:
    """The no-op column of the legal mask is made where the mask is (a CPU zero concatenated to a CUDA mask fails)."""
    from eqc.domains.hanabi.agent.network import Agent, QNetwork
    from eqc.domains.hanabi.agent.policy import TrainedPolicy
    from eqc.domains.hanabi.config.agent import AgentSpec, NetworkConfig

    spec = AgentSpec(network=NetworkConfig(hidden_size=16, mlp_layers=1, head="q", precision="fp32"))
    policy = TrainedPolicy(Agent(QNetwork(658, 21, spec.network)), spec, 0, torch.device("cpu"))
    legal = torch.zeros(20, dtype=torch.bool)
    legal[3] = True
    with host_traffic() as traffic:
        assert policy(torch.zeros(658), legal) == 3
    assert not [event for event in traffic.events if event.startswith("policy.py") and "host" in event], traffic.events


def _mini_obs(policy, n: int = 16) -> torch.Tensor:
    """Observations of real Mini-Hanabi states (random legal play on HanabiBatch) in the policy's variant."""
    from eqc.domains.hanabi.batched import HanabiBatch

    env = HanabiBatch(n, policy.rules, seed=3)
    env.reset()
    g = torch.Generator().manual_seed(5)
    for _ in range(4):
        env.step(torch.multinomial(env.legal_move_mask().float(), 1, generator=g).squeeze(1))
    return env.observations()[:, 0]


SHIPPED_PLAIN = Path("results/colour/agents/touched/slots_012")
SHIPPED_TRAINED_SYMMETRIZED = Path("results/induced/agents/sym_s3/seed_0")


@pytest.mark.skipif(not SHIPPED_PLAIN.is_dir(), reason="needs the shipped colour testbed agents (a clone of the repository)")
def test_the_rank_control_averages_over_rank_relabellings_exactly() -> None:
    """Symmetrized over S3 on the ranks, an agent is exactly equivariant to rank relabellings (and colour-symmetrized it is
    not): the control averages the same six forward passes over a group that is not the game's."""
    from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry, rank_relabelling

    rank = load_policy(SHIPPED_PLAIN, symmetrize="S3", acts_on="rank")
    colour = load_policy(SHIPPED_PLAIN, symmetrize="S3")
    obs = _mini_obs(rank)
    s3 = colour_group("S3", 3)
    by_rank, by_colour = rank_relabelling(s3, rank.rules), colour_symmetry(s3, rank.rules)
    moves = by_rank.action_rep.dim
    with torch.no_grad():
        out = rank.agent.raw(obs)[0][:, :moves]
        for g in range(1, s3.order):
            moved = rank.agent.raw(by_rank.observation_rep.act(obs, g))[0][:, :moves]
            torch.testing.assert_close(moved, by_rank.action_rep.act(out, g), rtol=1e-5, atol=1e-5)
        plain = load_policy(SHIPPED_PLAIN).agent.raw(obs)[0][:, :moves]
        colour_out = colour.agent.raw(obs)[0][:, :moves]
        colour_moved = colour.agent.raw(by_colour.observation_rep.act(obs, 1))[0][:, :moves]
    torch.testing.assert_close(colour_moved, by_colour.action_rep.act(colour_out, 1), rtol=1e-5, atol=1e-5)
    assert not torch.allclose(out, plain, atol=1e-3) and not torch.allclose(out, colour_out, atol=1e-3)


def test_the_rank_control_needs_a_group_and_a_plain_agent() -> None:
    if not (SHIPPED_PLAIN.is_dir() and SHIPPED_TRAINED_SYMMETRIZED.is_dir()):
        pytest.skip("needs the shipped agents (a clone of the repository)")
    with pytest.raises(ValueError, match="acts_on='rank' needs a test-time group"):
        load_policy(SHIPPED_PLAIN, acts_on="rank")
    with pytest.raises(ValueError, match="trained symmetrized over S3"):
        load_policy(SHIPPED_TRAINED_SYMMETRIZED, symmetrize="S3", acts_on="rank")
    with pytest.raises(ValueError, match="acts_on"):
        load_policy(SHIPPED_PLAIN, symmetrize="S3", acts_on="slot")
