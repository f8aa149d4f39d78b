"""Precision as a run option: bf16 autocast of the trunk, float32 Q-values, losses and optimizer state, in
every learner, in evaluation and in loaded policies; the share of greedy moves another precision changes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi.agent.files import load_checkpoint
from eqc.domains.hanabi.agent.network import Agent, QNetwork
from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.agent.spec import ConfigError
from eqc.domains.hanabi.play.self_play import precision_difference
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.run import RunDirectoryError, make_learner, train

CPU = torch.device("cpu")


def _network(config: TrainConfig, seed: int = 0) -> QNetwork:
    rules = config.game.rules()
    torch.manual_seed(seed)
    return QNetwork(rules.obs_dim, rules.num_moves + 1, config.network)


def test_bf16_runs_the_trunk_in_bfloat16_and_returns_float32_q(tiny_config) -> None:
    config = tiny_config()
    network = _network(config)
    seen: list[torch.dtype] = []
    network.mlp[0].register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    obs = torch.rand(16, network.obs_dim)
    legal = torch.ones(16, network.num_actions, dtype=torch.bool)
    q32, _ = Agent(network).step(obs, legal)
    q16, _ = Agent(network, precision="bf16").step(obs, legal)
    assert seen == [torch.float32, torch.bfloat16]
    assert q16.dtype == torch.float32 and q32.dtype == torch.float32
    assert not torch.equal(q16, q32)  # really another computation ...
    torch.testing.assert_close(q16, q32, atol=0.05, rtol=0.05)  # ... of the same function


def test_fp32_agent_is_the_plain_network(tiny_config) -> None:
    """fp32 results are unchanged: the agent computes exactly the network's head over its trunk."""
    network = _network(tiny_config(network={"dueling": False}))
    obs = torch.rand(8, network.obs_dim)
    q, _ = Agent(network).step(obs, None)
    assert torch.equal(q, network.head(network.mlp(obs)))


def test_in_precision_shares_the_network_and_refuses_unknown_names(tiny_config) -> None:
    agent = Agent(_network(tiny_config()))
    other = agent.in_precision("bf16")
    assert other.network is agent.network and other.precision == "bf16" and agent.precision == "fp32"
    with pytest.raises(ValueError, match=r"precision must be one of \('fp32', 'bf16'\), got 'fp16'"):
        agent.in_precision("fp16")
    with pytest.raises(ValueError, match="precision must be one of"):
        Agent(agent.network, precision="half")


def test_symmetrized_bf16_agent_stays_equivariant(tiny_config) -> None:
    """The symmetrizer averages float32 outputs of bf16 copies: equivariant up to float32 summation order."""
    config = tiny_config()
    sym = colour_symmetry(colour_group("D10"), config.game.rules())
    agent = Agent(_network(config), sym.observation_rep, sym.action_rep, precision="bf16")
    obs = torch.rand(32, sym.observation_rep.dim)
    q, _ = agent.step(obs, None)
    for g in range(sym.observation_rep.group.order):
        moved, _ = agent.step(sym.observation_rep.act(obs, g), None)
        expected = torch.cat([sym.action_rep.act(q[:, :-1], g), q[:, -1:]], dim=-1)
        torch.testing.assert_close(moved, expected, atol=1e-5, rtol=1e-5)


def test_precision_key_is_validated() -> None:
    with pytest.raises(ConfigError, match=r"\[run\] precision must be one of \('fp32', 'bf16'\), got 'float16'"):
        TrainConfig().replace(run={"precision": "float16"})


def _learners(tiny_config) -> dict[str, TrainConfig]:
    recurrent = {"hidden_size": 32, "mlp_layers": 1, "lstm_layers": 1}
    return {
        "pqn": tiny_config(),
        "pqn_rnn": tiny_config(network=recurrent, run={"num_envs": 32}),
        "r2d2": tiny_config(
            run={"algorithm": "r2d2", "num_envs": 32}, network={**recurrent, "layer_norm": False},
            r2d2={"batch_size": 8, "buffer_episodes": 256, "warmup_episodes": 32, "updates_per_step": 1.0, "target_update": 20},
        ),
    }


@pytest.mark.parametrize("kind", ["pqn", "pqn_rnn", "r2d2"])
def test_every_learner_learns_in_bf16_with_float32_state(tiny_config, kind: str) -> None:
    config = _learners(tiny_config)[kind].replace(run={"precision": "bf16"})
    learner = make_learner(config, 0, CPU)
    before = {k: v.clone() for k, v in learner.network.state_dict().items()}
    for _ in range(40 if kind == "r2d2" else 4):
        logged = learner.iteration()
    assert learner.updates > 0 and learner.agent.precision == "bf16"
    assert torch.isfinite(torch.as_tensor(logged["loss"]))
    assert all(p.dtype == torch.float32 for p in learner.network.parameters())
    moments = [v for s in learner.optimizer.state.values() for v in s.values() if torch.is_tensor(v) and v.dim() > 0]
    assert moments and all(m.dtype == torch.float32 for m in moments)
    assert any(not torch.equal(before[k], v) for k, v in learner.network.state_dict().items())


def test_a_bf16_run_trains_resumes_records_and_evaluates(tmp_path: Path, tiny_config) -> None:
    config = tiny_config(run={"precision": "bf16"})
    train(config, tmp_path, seed=0, progress=False, log=lambda _: None)
    summary = train(config.replace(run={"total_moves": 8192}), tmp_path, seed=0, progress=False, log=lambda _: None)
    assert summary.resumed and summary.moves == 8192
    assert load_checkpoint(tmp_path)["config"]["run"]["precision"] == "bf16"
    with pytest.raises(RunDirectoryError, match=r"\[run\] precision: 'bf16' in the run, 'fp32' now"):
        train(tiny_config(run={"total_moves": 8192}), tmp_path, seed=0, progress=False)
    assert load_policy(tmp_path).agent.precision == "bf16"  # evaluated as trained by default
    assert load_policy(tmp_path, precision="fp32").agent.precision == "fp32"
    with pytest.raises(ValueError, match="precision must be one of"):
        load_policy(tmp_path, precision="bfloat16")


def test_precision_difference_counts_changed_greedy_moves(tmp_path: Path, tiny_config) -> None:
    train(tiny_config(run={"total_moves": 8192}), tmp_path, seed=0, progress=False, log=lambda _: None)
    policy = load_policy(tmp_path)
    same = precision_difference(policy.agent, "fp32", policy.rules, 50, 1, CPU)
    assert same.decisions > 100 and same.differing == 0 and same.share == 0.0
    other = precision_difference(policy.agent, "bf16", policy.rules, 50, 1, CPU)
    assert other.decisions == same.decisions  # played by the same fp32 agent on the same decks
    assert 0 <= other.differing < other.decisions
    assert "greedy moves" in str(other) and other.as_dict()["share"] == other.share


def test_eval_in_another_precision_says_how_many_moves_differ(tmp_path: Path, tiny_config) -> None:
    train(tiny_config(), tmp_path, seed=0, progress=False, log=lambda _: None)
    command = [sys.executable, "-m", "eqc.cli", "hanabi", "eval", "--checkpoint", str(tmp_path), "--games", "20",
               "--precision", "bf16", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "run in bf16" in done.stdout and "trained in fp32:" in done.stdout
    record = json.loads(done.stdout.strip().splitlines()[-1])
    assert record["precision"] == "bf16" and record["precision_difference"]["other"] == "fp32"
    assert record["precision_difference"]["decisions"] > 0
    bad = subprocess.run([*command[:-3], "--precision", "fp16"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--precision" in bad.stderr and "'fp16'" in bad.stderr
