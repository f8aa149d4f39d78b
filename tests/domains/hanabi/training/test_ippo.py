"""Independent PPO with parameter sharing: advantages, the learner, sampled play, configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from eqc.cli import main
from eqc.domains.hanabi.agent.files import export_policy
from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.agent.sampled import SampledAgent, policy_logits, sample_moves
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.play.self_play import greedy_games
from eqc.domains.hanabi.training.config import load_config
from eqc.domains.hanabi.training.ippo import IPPO, IPPOLearner, gae
from eqc.domains.hanabi.training.learners import make_learner
from eqc.domains.hanabi.training.run import train
from eqc.domains.hanabi.xp.play import cross_play_games

CPU = torch.device("cpu")
QUIET = {"progress": False, "log": lambda _: None}


def _ippo(tiny_config, **changes: dict):
    return tiny_config(run={"algorithm": "ippo", **changes.pop("run", {})},
                       ppo={"rollout_steps": 8, "epochs": 1, "minibatches": 2, **changes.pop("ppo", {})}, **changes)


def test_gae_by_hand() -> None:
    rewards = torch.tensor([[1.0], [0.0], [2.0]])
    ended = torch.tensor([[False], [True], [False]])
    values = torch.tensor([[0.5], [1.0], [0.25]])
    gamma, lam = 0.9, 0.5
    # t=2: delta = 2 + 0.9 * 4 - 0.25 = 5.35; A = 5.35
    # t=1: the game ended: delta = 0 - 1 = -1; A = -1
    # t=0: delta = 1 + 0.9 * 1.0 - 0.5 = 1.4; A = 1.4 + 0.9 * 0.5 * -1 = 0.95
    advantages = gae(rewards, ended, values, torch.tensor([4.0]), gamma, lam)
    assert torch.allclose(advantages, torch.tensor([[0.95], [-1.0], [5.35]]))


def test_sampling_follows_the_softmax_and_never_picks_an_illegal_move() -> None:
    generator = torch.Generator().manual_seed(0)
    logits = torch.tensor([[0.0, 0.0, -1e9], [5.0, -1e9, 0.0]]).repeat(4000, 1)
    moves = sample_moves(logits, generator).view(4000, 2)
    assert bool((moves[:, 0] != 2).all()) and bool((moves[:, 1] != 1).all())
    assert abs(float((moves[:, 0] == 0).double().mean()) - 0.5) < 0.05
    assert abs(float((moves[:, 1] == 0).double().mean()) - 1 / (1 + torch.e**-5)) < 0.02


def test_the_learner_trains_resumes_exports_and_plays_greedy_and_sampled(tmp_path: Path, tiny_config,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    config = _ippo(tiny_config)
    learner = make_learner(config, 0, CPU)
    assert isinstance(learner, IPPOLearner)
    stats = learner.iteration()
    assert torch.isfinite(stats["loss"]) and 0 < float(stats["entropy"]) <= float(torch.log(torch.tensor(20.0)))
    assert learner.moves_played == 8 * 64 and learner.updates == 2
    summary = train(config, tmp_path / "run", seed=0, **QUIET)
    assert summary.moves >= 4096 and (tmp_path / "run" / "metrics.csv").read_text().splitlines()[0].count("entropy") == 1
    resumed = train(config.replace(run={"total_moves": 8192}), tmp_path / "run", seed=0, **QUIET)
    assert resumed.resumed and resumed.moves >= 8192
    export_policy(tmp_path / "run", tmp_path / "policy")
    policy = load_policy(tmp_path / "policy")
    obs, legal = torch.randn(5, policy.obs_dim), torch.ones(5, policy.num_moves + 1, dtype=torch.bool)
    logits, _, _ = policy_logits(policy.agent, obs, legal)
    q, _ = policy.agent.step(obs, legal)
    assert torch.equal(q.argmax(-1), logits.argmax(-1))  # greedy play is the argmax of the logits
    assert cross_play_games([policy, load_policy(tmp_path / "policy", symmetrize="C5")], 4).scores.shape == (4, 4)
    sampled = SampledAgent(policy.agent, torch.Generator().manual_seed(1))
    played = greedy_games(sampled, policy.rules, CPU, games=8)
    assert played.scores.shape == (8,)
    assert main(["hanabi", "eval", "--checkpoint", str(tmp_path / "policy"), "--games", "8", "--sampled", "--json"]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert record["sampled"]["games"] == 8 and "mean" in record


def test_sampled_evaluation_is_refused_where_it_means_nothing(tmp_path: Path, tiny_config, capsys: pytest.CaptureFixture[str]) -> None:
    train(tiny_config(), tmp_path / "pqn", seed=0, **QUIET)
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "eval", "--checkpoint", str(tmp_path / "pqn"), "--games", "4", "--sampled"])
    assert info.value.code == 2 and "--sampled: plays agents whose logits are a policy (trained by IPPO); " in capsys.readouterr().err


def test_ippo_configs_are_checked(tiny_config) -> None:
    with pytest.raises(ConfigError, match=r"\[network\] dueling must be true for 'ippo'"):
        _ippo(tiny_config, network={"dueling": False})
    with pytest.raises(ConfigError, match=r"\[ppo\] minibatches must not exceed num_envs \(64\) with an LSTM"):
        _ippo(tiny_config, network={"lstm_layers": 1}, ppo={"minibatches": 65})
    with pytest.raises(ConfigError, match=r"\[ppo\] clip must be in \(0, 1\)"):
        _ippo(tiny_config, ppo={"clip": 1.5})
    with pytest.raises(ConfigError, match=r"\[ppo\] entropy_coef must be >= 0"):
        _ippo(tiny_config, ppo={"entropy_coef": -0.1})
    assert load_config("ippo_mini").run.algorithm == "ippo" and load_config("ippo_cpu").settings(IPPO).gae_lambda == 0.9


def test_the_recurrent_learner_replays_its_rollout_through_the_lstm_as_it_played_it(tiny_config) -> None:
    """Before any update, replaying each game's rollout from the stored start states gives the logits and values of
    the rollout itself: states are carried between rollouts and zeroed exactly where games ended."""
    learner = make_learner(_ippo(tiny_config, network={"lstm_layers": 1}, ppo={"rollout_steps": 40}), 0, CPU)
    assert isinstance(learner, IPPOLearner) and learner.recurrent
    learner.optimize = lambda loss: None  # no updates: the network that played is the one that replays
    learner.iteration()  # a first rollout, so that the second starts from states carried over
    start = (learner.rollout.lstm_state[0].clone(), learner.rollout.lstm_state[1].clone())
    stats = learner.iteration()
    assert bool(learner.rollout.ended.any()) and torch.isfinite(stats["loss"])  # games ended inside the rollout
    games = torch.arange(learner.num_envs)
    logits, values = learner.replay(games, start)
    assert values is not None
    log_prob = torch.log_softmax(logits, -1).gather(2, learner.rollout.action.unsqueeze(2)).squeeze(2)
    assert torch.allclose(log_prob, learner.log_prob, atol=1e-5) and torch.allclose(values, learner.rollout.value, atol=1e-5)
    fresh = (torch.zeros_like(start[0]), torch.zeros_like(start[1]))
    fresh_values = learner.replay(games, fresh)[1]
    assert fresh_values is not None and not torch.allclose(fresh_values, learner.rollout.value, atol=1e-5)  # the start state matters


def test_a_recurrent_ippo_agent_trains_resumes_exports_and_plays_sampled(tmp_path: Path, tiny_config) -> None:
    config = _ippo(tiny_config, network={"lstm_layers": 1})
    assert train(config, tmp_path / "run", seed=0, **QUIET).moves >= 4096
    assert train(config.replace(run={"total_moves": 8192}), tmp_path / "run", seed=0, **QUIET).resumed
    export_policy(tmp_path / "run", tmp_path / "policy")
    policy = load_policy(tmp_path / "policy")
    assert policy.agent.recurrent
    sampled = SampledAgent(policy.agent, torch.Generator().manual_seed(1))
    assert sampled.recurrent and greedy_games(sampled, policy.rules, CPU, games=8).scores.shape == (8,)
    assert cross_play_games([policy, load_policy(tmp_path / "policy", symmetrize="C5")], 4).scores.shape == (4, 4)
