"""Precision as a run option: bf16 autocast of the trunk, float32 Q-values, losses and optimizer state, in
every learner, in evaluation and in loaded policies; "auto" resolved once when a run starts, recorded, kept on
resume; the share of greedy moves another precision changes.

Nothing here assumes bf16 is fast or bit-equal to fp32: where the processor matters, the CPU probe is
simulated (``eqc.domains.hanabi.agent.precision.cpu_features``), so the tests hold on every processor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from eqc.cli import main
from eqc.domains.hanabi.agent import precision as hardware
from eqc.domains.hanabi.agent.files import export_policy, load_checkpoint
from eqc.domains.hanabi.agent.network import Agent, QNetwork
from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.agent.precision import Bf16SlowWarning
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.play.self_play import precision_difference
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.driver import RunDirectoryError
from eqc.domains.hanabi.training.learners import make_learner
from eqc.domains.hanabi.training.run import train

CPU = torch.device("cpu")
AVX2 = frozenset({"avx", "avx2", "fma"})
NATIVE_BF16 = frozenset({"avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"})  # AMX: bf16 is faster
QUIET = {"progress": False, "log": lambda _: None}


@pytest.fixture
def cpu(monkeypatch: pytest.MonkeyPatch):
    """``cpu(features)``: the CPU probe answers ``features`` from now on (simulates another processor)."""
    def simulate(features: frozenset[str]) -> None:
        monkeypatch.setattr(hardware, "cpu_features", lambda: features)

    return simulate


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
    """The symmetrizer averages float32 outputs of bf16 copies: equivariant up to rounding. Up to bf16's (not float32's):
    a native bf16 matrix product may round a row differently by where it sits in the batch, and a relabelled input
    reorders the copies."""
    config = tiny_config()
    sym = colour_symmetry(colour_group("D10"), config.game.rules())
    agent = Agent(_network(config), sym.observation_rep, sym.action_rep, precision="bf16")
    obs = torch.rand(32, sym.observation_rep.dim)
    q, _ = agent.step(obs, None)
    for g in range(sym.observation_rep.group.order):
        moved, _ = agent.step(sym.observation_rep.act(obs, g), None)
        expected = torch.cat([sym.action_rep.act(q[:, :-1], g), q[:, -1:]], dim=-1)
        torch.testing.assert_close(moved, expected, atol=1e-2, rtol=1e-2)


def test_precision_key_is_validated() -> None:
    assert TrainConfig().network.precision == "auto"
    with pytest.raises(ConfigError, match=r"\[network\] precision must be one of \('auto', 'fp32', 'bf16'\), got 'float16'"):
        TrainConfig().replace(network={"precision": "float16"})


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
    config = _learners(tiny_config)[kind].replace(network={"precision": "bf16"})
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


def test_a_bf16_run_trains_resumes_records_and_evaluates(tmp_path: Path, tiny_config, cpu) -> None:
    cpu(NATIVE_BF16)
    config = tiny_config(network={"precision": "bf16"})
    train(config, tmp_path, seed=0, **QUIET)
    summary = train(config.replace(run={"total_moves": 8192}), tmp_path, seed=0, **QUIET)
    assert summary.resumed and summary.moves == 8192
    assert load_checkpoint(tmp_path)["config"]["network"]["precision"] == "bf16"
    with pytest.raises(RunDirectoryError, match=r"\[network\] precision: 'bf16' in the run, 'fp32' now"):
        train(tiny_config(run={"total_moves": 8192}), tmp_path, seed=0, progress=False)
    assert load_policy(tmp_path).agent.precision == "bf16"  # evaluated as trained by default, where bf16 is native
    assert load_policy(tmp_path, precision="fp32").agent.precision == "fp32"
    cpu(AVX2)
    assert load_policy(tmp_path).agent.precision == "fp32"  # "auto" never runs emulated bf16
    with pytest.raises(ValueError, match="precision must be one of"):
        load_policy(tmp_path, precision="bfloat16")


def test_a_run_records_the_precision_requested_used_and_why(tmp_path: Path, tiny_config, cpu) -> None:
    """In its first log line, config.json, the checkpoint (config and record) and the exported policy."""
    cpu(AVX2)
    lines: list[str] = []
    train(tiny_config(network={"precision": "auto"}), tmp_path / "run", seed=0, progress=False, log=lines.append)
    expected = {"requested": "auto", "used": "fp32", "reason": "auto: fp32, this CPU has no native bf16 (AVX2)"}
    assert lines[0] == "precision fp32: auto: fp32, this CPU has no native bf16 (AVX2)"
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    checkpoint = load_checkpoint(tmp_path / "run")
    assert saved["precision"] == checkpoint["precision"] == expected
    assert saved["config"]["network"]["precision"] == checkpoint["config"]["network"]["precision"] == "fp32"
    policy = export_policy(tmp_path / "run", tmp_path / "policy")
    record = json.loads((policy / "policy.json").read_text())
    assert record["precision"] == expected and record["config"]["network"]["precision"] == "fp32"
    assert load_policy(policy).spec.network.precision == "fp32"  # a loaded agent's spec is concrete


def test_a_resumed_run_keeps_the_precision_it_started_with(tmp_path: Path, tiny_config, cpu, monkeypatch) -> None:
    """Resumed on a machine whose probe would answer otherwise, "auto" is not resolved again."""
    cpu(AVX2)
    config = tiny_config(network={"precision": "auto"})
    train(config, tmp_path, seed=0, **QUIET)
    started = load_checkpoint(tmp_path)["precision"]

    def no_probe() -> frozenset[str]:
        raise AssertionError("a resumed run does not resolve its precision again")

    monkeypatch.setattr(hardware, "cpu_features", no_probe)  # and a bf16 machine would say bf16
    lines: list[str] = []
    summary = train(config.replace(run={"total_moves": 8192}), tmp_path, seed=0, progress=False, log=lines.append)
    assert summary.resumed and summary.moves == 8192
    assert lines[0] == "precision fp32, as the run started: auto: fp32, this CPU has no native bf16 (AVX2)"
    checkpoint = load_checkpoint(tmp_path)
    assert checkpoint["precision"] == started and checkpoint["config"]["network"]["precision"] == "fp32"
    assert train(config.replace(run={"total_moves": 8192}, network={"precision": "fp32"}), tmp_path, seed=0, **QUIET).resumed  # the same
    with pytest.raises(RunDirectoryError, match=r"holds a run of another config; differences: \[network\] precision: 'fp32' in the run, "
                                                r"'bf16' now"):
        train(config.replace(network={"precision": "bf16"}), tmp_path, seed=0, **QUIET)


def test_explicit_bf16_on_emulating_hardware_trains_with_one_warning(tmp_path: Path, tiny_config, cpu) -> None:
    cpu(AVX2)
    with pytest.warns(Bf16SlowWarning) as caught:
        train(tiny_config(network={"precision": "bf16"}, run={"total_moves": 1024, "eval_every_moves": 1024}), tmp_path, seed=0, **QUIET)
    assert [str(w.message) for w in caught if issubclass(w.category, Bf16SlowWarning)] == [
        "precision 'bf16' on cpu: this CPU has no native bf16 (AVX2), so bf16 runs slower than fp32 "
        "('auto' or 'fp32' runs fp32 here)"]
    assert load_checkpoint(tmp_path)["precision"]["used"] == "bf16"


def test_make_learner_resolves_auto_on_its_device(tiny_config, cpu) -> None:
    cpu(NATIVE_BF16)
    assert make_learner(tiny_config(network={"precision": "auto"}), 0, CPU).agent.precision == "bf16"
    cpu(AVX2)
    assert make_learner(tiny_config(network={"precision": "auto"}), 0, CPU).agent.precision == "fp32"


def test_the_cli_takes_auto_and_refuses_other_names(tmp_path: Path, cpu, capsys: pytest.CaptureFixture[str]) -> None:
    cpu(AVX2)
    config = ["--config", "vdn_cpu", *(f"--set={key}" for key in ("run.num_envs=32", "run.total_moves=1024", "run.eval_every_moves=1024",
                                                                  "run.eval_games=16", "network.hidden_size=32", "network.mlp_layers=1"))]
    out = tmp_path / "run"
    assert main(["hanabi", "train", *config, "--out", str(out), "--precision", "auto", "--no-progress"]) == 0
    assert "precision fp32: auto: fp32, this CPU has no native bf16 (AVX2)" in capsys.readouterr().out
    assert load_checkpoint(out)["precision"]["requested"] == "auto"
    assert main(["hanabi", "eval", "--checkpoint", str(out), "--games", "4", "--precision", "auto"]) == 0
    assert "run in fp32" in capsys.readouterr().out
    emulated = tmp_path / "emulated"
    assert main(["hanabi", "train", *config, "--out", str(emulated), "--precision", "bf16", "--no-progress"]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warned == ["eqc: warning: precision 'bf16' on cpu: this CPU has no native bf16 (AVX2), so bf16 runs "
                      "slower than fp32 ('auto' or 'fp32' runs fp32 here)"]  # one line, not Python's file, line and source
    for command in (["train", *config, "--out", str(tmp_path / "x")], ["eval", "--checkpoint", str(out)],
                    ["xp", "--pool", str(out), "--games", "2", "--out", str(tmp_path / "x")], ["relabelled", "--pool", str(out)],
                    ["reproduce", "table1", "--scale", "smoke", "--out", str(tmp_path / "x")]):
        with pytest.raises(SystemExit) as info:
            main(["hanabi", *command, "--precision", "fp16"])
        err = capsys.readouterr().err
        refusal = err.partition("argument --precision: invalid choice: 'fp16' (choose from ")[2]
        assert info.value.code == 2 and all(name in refusal for name in ("auto", "fp32", "bf16")), err
    assert not (tmp_path / "x").exists()


def test_precision_difference_counts_changed_greedy_moves(tmp_path: Path, tiny_config) -> None:
    train(tiny_config(run={"total_moves": 8192}), tmp_path, seed=0, **QUIET)
    policy = load_policy(tmp_path)
    same = precision_difference(policy.agent, "fp32", policy.rules, 50, 1, CPU)
    assert same.decisions > 100 and same.differing == 0 and same.share == 0.0
    other = precision_difference(policy.agent, "bf16", policy.rules, 50, 1, CPU)
    assert other.decisions == same.decisions  # played by the same fp32 agent on the same decks
    assert 0 <= other.differing <= other.decisions  # how many depends on the processor's bf16 arithmetic
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


def test_where_the_flags_do_not_tell_a_run_measures_once_and_keeps_the_decision(tmp_path: Path, tiny_config, cpu,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """avx512_bf16 without AMX: the run times its own training step when it starts, records why, and resumes without
    measuring again (a measurement on a resumed machine could answer otherwise)."""
    from eqc.domains.hanabi.training import driver

    cpu(frozenset({"avx2", "avx512f", "avx512_bf16"}))
    timed: list[TrainConfig] = []

    def measure(config: TrainConfig, device: torch.device) -> tuple[float, float]:
        timed.append(config)
        return 36.3, 24.1

    monkeypatch.setattr(driver, "training_step_ms", measure)
    lines: list[str] = []
    config = tiny_config(network={"precision": "auto"})
    train(config, tmp_path, seed=0, progress=False, log=lines.append)
    reason = ("auto: bf16, this CPU has avx512_bf16 but no AMX (AVX-512): measured one training step of this run's network, "
              "fp32 36.3 ms, bf16 24.1 ms (bf16 needs 1.1x)")
    assert lines[0] == f"precision bf16: {reason}"
    assert len(timed) == 1 and timed[0].network == config.network
    assert load_checkpoint(tmp_path)["precision"] == {"requested": "auto", "used": "bf16", "reason": reason}
    assert json.loads((tmp_path / "config.json").read_text())["precision"]["reason"] == reason
    summary = train(config.replace(run={"total_moves": 8192}), tmp_path, seed=0, **QUIET)
    assert summary.resumed and len(timed) == 1 and load_checkpoint(tmp_path)["precision"]["used"] == "bf16"


@pytest.mark.parametrize("network", [{"hidden_size": 32, "mlp_layers": 1}, {"hidden_size": 16, "mlp_layers": 1, "lstm_layers": 1}])
def test_the_probe_times_both_precisions_and_leaves_the_global_rng_alone(tiny_config, network: dict) -> None:
    from eqc.domains.hanabi.training.probe import training_step_ms

    before = torch.random.get_rng_state()
    fp32_ms, bf16_ms = training_step_ms(tiny_config(network={**network, "symmetrize": "C5"}), CPU)
    assert fp32_ms > 0 and bf16_ms > 0
    assert torch.equal(torch.random.get_rng_state(), before)
