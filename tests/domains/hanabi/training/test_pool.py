"""Seed pools: seed parsing, finished seeds are not retrained, and a Ray worker killed mid-run resumes."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from eqc.domains.hanabi.training.checkpoint import load_checkpoint
from eqc.domains.hanabi.training.pool import parse_seeds, seed_dir, train_pool

SEEDS = [("0-3", [0, 1, 2, 3]), ("5", [5]), ("0,2,5-6", [0, 2, 5, 6]), (" 1 - 2 ", [1, 2]), ("3,3", [3])]
BAD = [("", "must look like"), ("a-b", "must look like"), ("5-2", "is empty"), ("0-99999", "10,000")]


@pytest.mark.parametrize(("text", "seeds"), SEEDS)
def test_parse_seeds(text: str, seeds: list[int]) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_seeds(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_seeds(text)


def test_local_pool_trains_each_seed_once(tmp_path: Path, tiny_config) -> None:
    config = tiny_config(run={"total_moves": 2048, "eval_every_moves": 2048, "eval_games": 16})
    record = train_pool(config, [0, 1], tmp_path, use_ray=False, log=lambda _: None)
    assert {s["state"] for s in record["status"].values()} == {"finished"}
    stamps = {s: (seed_dir(tmp_path, s) / "checkpoint.pt").stat().st_mtime_ns for s in (0, 1)}
    weights = [load_checkpoint(seed_dir(tmp_path, s))["learner"]["modules"]["network"]["head.weight"] for s in (0, 1)]
    assert not bool((weights[0] == weights[1]).all())  # different seeds, different agents
    messages: list[str] = []
    train_pool(config, [0, 1, 2], tmp_path, use_ray=False, log=messages.append)
    assert messages[0] == "2 of 3 seeds already finished; training 1"
    assert {s: (seed_dir(tmp_path, s) / "checkpoint.pt").stat().st_mtime_ns for s in (0, 1)} == stamps
    assert (tmp_path / "pool.json").exists()


def test_ray_pool_survives_a_killed_worker(tmp_path: Path, tiny_config) -> None:
    ray = pytest.importorskip("ray")
    config = tiny_config(run={"total_moves": 40_960, "eval_every_moves": 40_960, "eval_games": 16, "checkpoint_minutes": 0.002})
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        result: dict = {}
        worker = threading.Thread(target=lambda: result.update(train_pool(config, [0, 1], tmp_path, log=lambda _: None)))
        worker.start()
        run = seed_dir(tmp_path, 0)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if (run / "checkpoint.pt").exists() and (run / "worker.pid").exists():
                break
            time.sleep(0.1)
        first_pid = int((run / "worker.pid").read_text())
        killed_at = load_checkpoint(run)["learner"]["counters"]["moves"]
        os.kill(first_pid, signal.SIGKILL)  # the worker dies mid-run; Ray retries the task
        worker.join(timeout=300)
        assert not worker.is_alive()
    finally:
        ray.shutdown()
    assert {s["state"] for s in result["status"].values()} == {"finished"}
    assert int((run / "worker.pid").read_text()) != first_pid  # a new worker finished the seed
    final = load_checkpoint(run)["learner"]["counters"]["moves"]
    assert final >= 40_960 and killed_at < 40_960
