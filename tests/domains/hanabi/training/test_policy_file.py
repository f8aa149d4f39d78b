"""Policy directories: exported from a run, loaded without pickle, playing exactly as the checkpoint."""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi import load_policy
from eqc.domains.hanabi.evaluate import common_decks
from eqc.domains.hanabi.training.checkpoint import CheckpointError
from eqc.domains.hanabi.training.greedy_eval import greedy_games
from eqc.domains.hanabi.training.policy_file import POLICY_JSON, POLICY_WEIGHTS, export_policy, read_policy
from eqc.domains.hanabi.training.run import train

CPU = torch.device("cpu")


@pytest.fixture(name="run_dir")
def run_dir_fixture(tmp_path: Path, tiny_config) -> Path:
    out = tmp_path / "run"
    train(tiny_config(run={"total_moves": 8_192, "eval_every_moves": 4_096}), out, seed=3, progress=False, log=lambda _: None)
    return out


def test_exported_policy_plays_the_same_games_as_its_checkpoint(run_dir: Path, tmp_path: Path) -> None:
    shipped = export_policy(run_dir, tmp_path / "agents" / "sp" / "seed_3")
    assert {p.name for p in shipped.iterdir()} == {POLICY_JSON, POLICY_WEIGHTS, "metrics.csv", "learning_curve.png"}
    record = json.loads((shipped / POLICY_JSON).read_text())
    assert record["seed"] == 3 and record["moves"] >= 8_192 and record["config"]["run"]["algorithm"] == "pqn"
    from_checkpoint, from_file = load_policy(run_dir), load_policy(shipped)
    assert from_file.trained_moves == from_checkpoint.trained_moves
    decks = torch.tensor(common_decks(50, seed=9))
    a = greedy_games(from_checkpoint.agent, from_checkpoint.rules, CPU, decks=decks)
    b = greedy_games(from_file.agent, from_file.rules, CPU, decks=decks)
    assert torch.equal(a.moves, b.moves) and torch.equal(a.scores, b.scores)
    assert load_policy(shipped / POLICY_WEIGHTS).trained_moves == from_file.trained_moves  # either file names the directory


def test_files_written_before_the_renames_still_load(run_dir: Path, tmp_path: Path) -> None:
    """Policy records and checkpoints of an older eqc (``env_steps``, ``[rule] rule``, ...) load silently."""
    shipped = export_policy(run_dir, tmp_path / "p")
    record = json.loads((shipped / POLICY_JSON).read_text())
    record["env_steps"] = record.pop("moves")
    record["config"]["run"]["total_env_steps"] = record["config"]["run"].pop("total_moves")
    record["config"]["rule"]["rule"] = record["config"]["rule"].pop("objective")
    (shipped / POLICY_JSON).write_text(json.dumps(record))
    checkpoint = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    checkpoint["learner"]["counters"]["env_steps"] = checkpoint["learner"]["counters"].pop("moves")
    checkpoint["metrics"] = [{("eval_bombout" if k == "eval_bomb_out_rate" else k): v for k, v in r.items()} for r in checkpoint["metrics"]]
    torch.save(checkpoint, run_dir / "checkpoint.pt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old_file, old_checkpoint = load_policy(shipped), load_policy(run_dir)
        assert old_file.trained_moves == old_checkpoint.trained_moves >= 8_192
        assert old_file.config == old_checkpoint.config and old_file.config.rule.objective == "sp"
        summary = train(old_file.config.replace(run={"total_moves": 12_288}), run_dir, seed=3, progress=False, log=lambda _: None)
    assert summary.resumed and summary.moves == 12_288


def test_policy_weights_hold_no_pickle(run_dir: Path, tmp_path: Path) -> None:
    shipped = export_policy(run_dir, tmp_path / "p")
    blob = (shipped / POLICY_WEIGHTS).read_bytes()
    assert b"\x80\x04" not in blob[:64] and blob[8:9] == b"{"  # safetensors: 8-byte length, then a JSON header
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(blob)


def test_broken_policy_directories_give_clear_errors(run_dir: Path, tmp_path: Path) -> None:
    shipped = export_policy(run_dir, tmp_path / "p")
    weights = (shipped / POLICY_WEIGHTS).read_bytes()
    (shipped / POLICY_WEIGHTS).write_bytes(weights[: len(weights) // 2])
    with pytest.raises(CheckpointError, match="not a readable safetensors file"):
        read_policy(shipped)
    (shipped / POLICY_WEIGHTS).write_bytes(weights)
    record = json.loads((shipped / POLICY_JSON).read_text())
    (shipped / POLICY_JSON).write_text(json.dumps({**record, "format": "something-else"}))
    with pytest.raises(CheckpointError, match="not an eqc policy file"):
        load_policy(shipped)
    wider = {**record, "config": {**record["config"], "network": {**record["config"]["network"], "hidden_size": 32}}}
    (shipped / POLICY_JSON).write_text(json.dumps(wider))
    with pytest.raises(CheckpointError, match="does not match its config"):
        load_policy(shipped)
    (shipped / POLICY_JSON).write_text("{not json")
    with pytest.raises(CheckpointError, match="not readable JSON"):
        load_policy(shipped)
    (shipped / POLICY_JSON).unlink()
    with pytest.raises(CheckpointError, match="nor is it a policy directory"):
        load_policy(shipped)


def test_an_agent_trained_symmetrized_refuses_another_group(tmp_path: Path, tiny_config) -> None:
    out = tmp_path / "sym"
    config = tiny_config(rule={"symmetrize": "C5"}, run={"total_moves": 1_024, "eval_every_moves": 1_024})
    train(config, out, seed=0, progress=False, log=lambda _: None)
    assert load_policy(out).agent.group.order == 5
    assert load_policy(out, symmetrize="C5").agent.group.order == 5
    with pytest.raises(ValueError, match="trained symmetrized over C5"):
        load_policy(out, symmetrize="D10")
