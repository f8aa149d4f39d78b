"""Training runs: metrics, curve, checkpoints, resuming (also after kill -9), refusing another run."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi.agent.files import load_checkpoint
from eqc.domains.hanabi.training.driver import RunDirectoryError, TrainingDiverged
from eqc.domains.hanabi.training.run import train
from eqc.domains.hanabi.training.run_log import METRICS


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "metrics.csv") as f:
        return list(csv.DictReader(f))


def test_run_writes_metrics_curve_and_checkpoint(tmp_path: Path, tiny_config) -> None:
    summary = train(tiny_config(), tmp_path, seed=3, progress=False, log=lambda _: None)
    rows = _rows(tmp_path)
    assert list(rows[0]) == list(METRICS)
    assert [int(r["moves"]) for r in rows] == [0, 2048, 4096]
    assert summary.moves == 4096 and summary.stopped == "total_moves" and not summary.resumed
    assert (tmp_path / "learning_curve.png").stat().st_size > 1000
    data = load_checkpoint(tmp_path)
    assert data["seed"] == 3 and data["config"]["run"]["num_envs"] == 64
    assert data["learner"]["counters"]["moves"] == 4096 and data["learner"]["counters"]["updates"] == 16


def test_resume_continues_where_the_run_stopped(tmp_path: Path, tiny_config) -> None:
    train(tiny_config(), tmp_path, seed=0, progress=False, log=lambda _: None)
    first = load_checkpoint(tmp_path)["learner"]
    longer = tiny_config(run={"total_moves": 8192})  # a resumable key may change
    summary = train(longer, tmp_path, seed=0, progress=False, log=lambda _: None)
    assert summary.resumed and summary.moves == 8192
    assert [int(r["moves"]) for r in _rows(tmp_path)] == [0, 2048, 4096, 6144, 8192]
    second = load_checkpoint(tmp_path)["learner"]
    assert second["counters"]["updates"] == 2 * first["counters"]["updates"]
    assert second["counters"]["wall_s"] > first["counters"]["wall_s"]


def test_resumed_run_equals_an_uninterrupted_one(tmp_path: Path, tiny_config) -> None:
    """Networks, optimizer, generators, counters and the games in progress all come back: the same weights either way
    (every learner and both ways of stopping: test_exact_resume)."""
    whole = tiny_config(run={"total_moves": 4096, "eval_every_moves": 4096})
    train(whole, tmp_path / "a", seed=1, progress=False, log=lambda _: None)
    half = tiny_config(run={"total_moves": 2048, "eval_every_moves": 4096})
    train(half, tmp_path / "b", seed=1, progress=False, log=lambda _: None)
    train(whole, tmp_path / "b", seed=1, progress=False, log=lambda _: None)
    a = load_checkpoint(tmp_path / "a")["learner"]
    b = load_checkpoint(tmp_path / "b")["learner"]
    assert a["counters"]["updates"] == b["counters"]["updates"]
    assert set(a["modules"]["network"]) == set(b["modules"]["network"])
    assert all(torch.equal(v, b["modules"]["network"][k]) for k, v in a["modules"]["network"].items())


def test_out_holding_another_run_is_refused(tmp_path: Path, tiny_config) -> None:
    train(tiny_config(), tmp_path, seed=0, progress=False, log=lambda _: None)
    with pytest.raises(RunDirectoryError, match=r"another config.*\[optim\] lr: 0.0003 in the run, 0.001 now"):
        train(tiny_config(optim={"lr": 1e-3}), tmp_path, seed=0, progress=False)
    with pytest.raises(RunDirectoryError, match="seed 0, not 5"):
        train(tiny_config(), tmp_path, seed=5, progress=False)
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(RunDirectoryError, match="is a file"):
        train(tiny_config(), file, seed=0, progress=False)


def test_a_run_from_before_a_new_config_key_resumes(tmp_path: Path, tiny_config) -> None:
    """A key added to the schema later (with its default) is no difference: the older run resumes."""
    from eqc.domains.hanabi.agent.files import load_checkpoint, save_checkpoint

    train(tiny_config(), tmp_path, seed=0, progress=False, log=lambda _: None)
    data = load_checkpoint(tmp_path)
    del data["config"]["network"]["dueling_centre"]
    save_checkpoint(tmp_path / "checkpoint.pt", {k: data[k] for k in ("config", "seed", "learner", "metrics")})
    messages: list[str] = []
    train(tiny_config(run={"total_moves": 8192}), tmp_path, seed=0, progress=False, log=messages.append)
    assert any(m.startswith("resuming") for m in messages)


def test_the_checkpoint_decides_what_run_a_directory_holds(tmp_path: Path, tiny_config) -> None:
    import shutil

    other = tmp_path / "other"
    train(tiny_config(), other, seed=1, progress=False, log=lambda _: None)
    (tmp_path / "run").mkdir()
    shutil.copy(other / "checkpoint.pt", tmp_path / "run" / "checkpoint.pt")  # a foreign checkpoint, no config.json
    with pytest.raises(RunDirectoryError, match="holds a run with seed 1, not 0"):
        train(tiny_config(), tmp_path / "run", seed=0, progress=False)
    with pytest.raises(RunDirectoryError, match=r"another config.*\[optim\] lr"):
        train(tiny_config(optim={"lr": 1e-3}), tmp_path / "run", seed=1, progress=False)
    failed = tmp_path / "failed"  # a start that failed before its first checkpoint leaves config.json only
    failed.mkdir()
    (failed / "config.json").write_text('{"seed": 0, "config": {"optim": {"lr": 0.5}}}')
    assert train(tiny_config(), failed, seed=0, progress=False, log=lambda _: None).moves == 4096
    pool = tmp_path / "pool"
    (pool / "seed_0").mkdir(parents=True)
    with pytest.raises(RunDirectoryError, match="is a pool directory"):
        train(tiny_config(), pool, seed=0, progress=False)
    with pytest.raises(RunDirectoryError, match="must name a run directory"):
        train(tiny_config(), "", seed=0, progress=False)


def test_max_minutes_stops_and_says_so(tmp_path: Path, tiny_config) -> None:
    config = tiny_config(run={"total_moves": 10**9})
    summary = train(config, tmp_path, seed=0, max_minutes=0.05, progress=False, log=lambda _: None)
    assert summary.stopped == "max_minutes" and 0 < summary.moves < 10**9


def test_kill_minus_nine_then_rerun_resumes(tmp_path: Path, tiny_config) -> None:
    config = tiny_config(run={"total_moves": 10**9, "eval_every_moves": 4096, "checkpoint_minutes": 0.005})
    (tmp_path / "tiny.toml").write_text(config.to_toml())
    out = tmp_path / "run"
    command = [sys.executable, "-m", "eqc.cli", "hanabi", "train", "--config", str(tmp_path / "tiny.toml"),
               "--seed", "0", "--out", str(out), "--no-progress"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[0].decode()
        if (out / "checkpoint.pt").exists() and load_checkpoint(out)["learner"]["counters"]["moves"] >= 8192:
            break
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = load_checkpoint(out)["learner"]["counters"]["moves"]  # never a half-written file
    assert killed_at >= 8192
    rerun = subprocess.run([*command, "--max-minutes", "0.05"], env=env, capture_output=True, text=True, timeout=180)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"resuming {out} at {killed_at:,} moves" in rerun.stdout
    assert load_checkpoint(out)["learner"]["counters"]["moves"] > killed_at
    steps = [int(r["moves"]) for r in _rows(out)]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)  # no duplicated rows after the kill


def test_a_run_being_trained_is_not_trained_twice(tmp_path: Path, tiny_config) -> None:
    import fcntl

    tmp_path.mkdir(exist_ok=True)
    with open(tmp_path / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another process trains this directory
        with pytest.raises(RunDirectoryError, match="being trained by another process"):
            train(tiny_config(), tmp_path, seed=0, progress=False)
    train(tiny_config(), tmp_path, seed=0, progress=False, log=lambda _: None)  # free again


def test_bad_arguments_are_refused_before_any_work(tmp_path: Path, tiny_config) -> None:
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        train({"run": {}}, tmp_path / "a", progress=False)
    with pytest.raises(ValueError, match="seed must be in"):
        train(tiny_config(), tmp_path / "b", seed=-1, progress=False)
    with pytest.raises(ValueError, match="max_minutes must be in"):
        train(tiny_config(), tmp_path / "c", max_minutes=0, progress=False)
    with pytest.raises(ValueError, match="did you mean 'cuda'"):
        train(tiny_config(), tmp_path / "d", device="gpu", progress=False)
    assert not any((tmp_path / name).exists() for name in "abcd")


def test_a_diverging_loss_stops_the_run_with_a_message(tmp_path: Path, tiny_config) -> None:
    config = tiny_config(optim={"lr": 1e6, "grad_clip": 0.0}, run={"total_moves": 40_960, "eval_every_moves": 2048})
    with pytest.raises(TrainingDiverged, match=r"the loss diverged .* lower \[optim\] lr \(1e\+06\)"):
        train(config, tmp_path, seed=0, progress=False, log=lambda _: None)


def test_without_a_terminal_progress_is_a_line_per_evaluation(tmp_path: Path, tiny_config) -> None:
    messages: list[str] = []
    train(tiny_config(), tmp_path, seed=0, progress=True, log=messages.append)  # pytest's stderr is not a terminal
    assert messages[0].startswith("precision fp32: ")  # the precision the run trains in, and why
    assert [m.split()[1] for m in messages[1:]] == ["moves"] * 3 and "greedy score" in messages[-1]


def test_a_refused_run_leaves_no_trace(tmp_path: Path, tiny_config, monkeypatch) -> None:
    """A refusal once the directory is locked (here: TensorBoard without its package) leaves no directory and no .lock."""
    import builtins

    from eqc.domains.hanabi.config.schema import ConfigError

    real_import = builtins.__import__

    def no_tensorboard(name, *args, **kwargs):
        if name.startswith(("tensorboard", "torch.utils.tensorboard")):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tensorboard)
    out = tmp_path / "new_run"
    with pytest.raises(ConfigError, match="tensorboard"):
        train(tiny_config(run={"tensorboard": True}), out, seed=0, progress=False)
    assert not out.exists()
    out.mkdir()
    with pytest.raises(ConfigError, match="tensorboard"):
        train(tiny_config(run={"tensorboard": True}), out, seed=0, progress=False)
    assert out.is_dir() and list(out.iterdir()) == []


def test_a_refused_resume_leaves_no_lock(tmp_path: Path, tiny_config) -> None:
    """Refused once locked (a checkpoint of another config, or of another seed), train leaves no .lock behind."""
    out = tmp_path / "run"
    train(tiny_config(), out, seed=0, progress=False, log=lambda _: None)
    (out / ".lock").unlink()
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(RunDirectoryError, match="holds a run with seed 0, not 1"):
        train(tiny_config(), out, seed=1, progress=False, log=lambda _: None)
    with pytest.raises(RunDirectoryError, match="holds a run of another config"):
        train(tiny_config(optim={"lr": 1e-2}), out, seed=0, progress=False, log=lambda _: None)
    assert sorted(p.name for p in out.iterdir()) == before
