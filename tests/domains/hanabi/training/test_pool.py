"""Seed pools: seed parsing, finished seeds are not retrained, and a Ray worker killed mid-run resumes."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

import eqc.domains.hanabi.training.pool as pool
from eqc.domains.hanabi.agent.files import load_checkpoint
from eqc.domains.hanabi.training.pool import seed_dir, train_pool


def test_local_pool_trains_each_seed_once(tmp_path: Path, tiny_config) -> None:
    config = tiny_config(run={"total_moves": 2048, "eval_every_moves": 2048, "eval_games": 16})
    record = train_pool({s: config for s in (0, 1)}, tmp_path, use_ray=False, log=lambda _: None)
    assert {s["state"] for s in record["status"].values()} == {"finished"}
    assert record["seeds"] == [0, 1] and record["configs"]["1"] == config.to_dict()
    stamps = {s: (seed_dir(tmp_path, s) / "checkpoint.pt").stat().st_mtime_ns for s in (0, 1)}
    weights = [load_checkpoint(seed_dir(tmp_path, s))["learner"]["modules"]["network"]["head.weight"] for s in (0, 1)]
    assert not bool((weights[0] == weights[1]).all())  # different seeds, different agents
    messages: list[str] = []
    train_pool({s: config for s in (0, 1, 2)}, tmp_path, use_ray=False, log=messages.append)
    assert messages[0] == "2 of 3 seeds already finished; training 1"
    assert {s: (seed_dir(tmp_path, s) / "checkpoint.pt").stat().st_mtime_ns for s in (0, 1)} == stamps
    assert (tmp_path / "pool.json").exists()


def test_pool_refuses_configs_that_are_not_a_config_per_seed(tmp_path: Path, tiny_config) -> None:
    with pytest.raises(TypeError, match="configs must map each seed"):
        train_pool(tiny_config(), tmp_path, use_ray=False)
    with pytest.raises(TypeError, match=r"configs must map seeds \(ints >= 0\) to TrainConfig"):
        train_pool({-1: tiny_config()}, tmp_path, use_ray=False)


def test_ray_pool_survives_a_killed_worker(tmp_path: Path, tiny_config) -> None:
    ray = pytest.importorskip("ray")
    config = tiny_config(run={"total_moves": 40_960, "eval_every_moves": 40_960, "eval_games": 16, "checkpoint_minutes": 0.002})
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        result: dict = {}
        worker = threading.Thread(target=lambda: result.update(train_pool({s: config for s in (0, 1)}, tmp_path, log=lambda _: None)))
        worker.start()
        run = seed_dir(tmp_path, 0)
        deadline = time.monotonic() + 300  # Ray's start-up is slow on a loaded 2-core machine
        while not ((run / "checkpoint.pt").exists() and (run / "worker.pid").exists()):
            assert time.monotonic() < deadline, "seed 0 wrote no checkpoint within 300 s"
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


# ---------------------------------------------------------------- GPUs under Ray, without a GPU
@pytest.mark.parametrize(
    ("device", "gpu_ids", "visible", "expected"),
    [
        ("cpu", [], None, "cpu"),
        ("cuda:1", [1], "1", "cuda:0"),  # Ray shows the task its GPU only: the head's index means nothing there
        ("cuda", [3], "2,3", "cuda:1"),
        ("cuda:0", ["2"], None, "cuda:2"),  # Ray left CUDA_VISIBLE_DEVICES alone: every GPU visible
    ],
)
def test_ray_task_device(device: str, gpu_ids: list, visible: str | None, expected: str) -> None:
    assert pool.ray_task_device(device, gpu_ids, visible) == expected


def test_ray_task_device_errors() -> None:
    with pytest.raises(ValueError, match="no GPU"):
        pool.ray_task_device("cuda:1", [], "")
    with pytest.raises(ValueError, match="not among"):
        pool.ray_task_device("cuda", [4], "0,1")


class FakeRay:
    """The part of Ray a pool uses, with ``gpus`` fake GPUs: records each task's options and runs it in this process
    as a task on GPU ``k % gpus`` (Ray's ``CUDA_VISIBLE_DEVICES`` set to that GPU only)."""

    def __init__(self, gpus: int, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gpus, self.options, self.monkeypatch, self.current, self.submitted = gpus, [], monkeypatch, [0], 0

    def is_initialized(self) -> bool:
        return True

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0, "GPU": float(self.gpus)}

    def get_gpu_ids(self) -> list[int]:
        return self.current

    def remote(self, function):
        ray = self

        class Task:
            def options(self, **options):
                ray.options.append(options)
                return self

            def remote(self, *args):
                gpu = ray.submitted % ray.gpus
                ray.submitted += 1
                ray.current = [gpu]
                ray.monkeypatch.setenv("CUDA_VISIBLE_DEVICES", str(gpu))
                return Ref(function(*args))

        return Task()

    def wait(self, pending: list, num_returns: int) -> tuple[list, list]:
        return pending[:num_returns], pending[num_returns:]

    def get(self, ref: Ref) -> dict:
        return ref.value


class Ref:
    """A finished task's result."""

    def __init__(self, value: dict) -> None:
        self.value = value


def test_cuda_seeds_share_gpus_and_train_on_the_task_gpu(tmp_path: Path, tiny_config, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--device cuda:1`` with 4 seeds on a cluster of 2 (fake) GPUs, a quarter of a GPU per seed: every task asks
    for 0.25 GPU and trains on ``cuda:0``, its GPU as Ray numbers it in the task."""
    fake = FakeRay(2, monkeypatch)
    monkeypatch.setitem(sys.modules, "ray", fake)
    devices: list[str] = []
    monkeypatch.setattr(pool, "_train_seed", lambda config, seed, run, device, minutes: devices.append(device) or {
        "moves": 0, "eval_score": 0.0})
    train_pool({s: tiny_config() for s in (0, 1, 2, 3)}, tmp_path, device="cuda:1", use_ray=True, gpus_per_seed=0.25, log=lambda _: None)
    assert [(o["num_gpus"], o["retry_exceptions"]) for o in fake.options] == [(0.25, False)]
    assert fake.submitted == 4 and devices == ["cuda:0"] * 4


def test_cuda_seeds_on_a_cluster_without_gpus_are_refused(tmp_path: Path, tiny_config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", FakeRay(0, monkeypatch))
    with pytest.raises(ValueError, match="the Ray cluster has no GPU"):
        train_pool({s: tiny_config() for s in (0,)}, tmp_path, device="cuda", use_ray=True, log=lambda _: None)


@pytest.mark.parametrize("share", [0.0, 1.5, -0.25])
def test_gpus_per_seed_is_a_share_of_one_gpu(tmp_path: Path, tiny_config, share: float) -> None:
    with pytest.raises(ValueError, match="gpus_per_seed"):
        train_pool({s: tiny_config() for s in (0,)}, tmp_path, use_ray=False, gpus_per_seed=share, log=lambda _: None)


def test_a_head_without_a_gpu_sends_cuda_seeds_to_a_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``eqc hanabi pool --device cuda --ray ADDRESS`` is not refused on a head without CUDA (the workers check the
    device); without ``--ray ADDRESS`` the seeds train here, so the device is checked here."""
    from eqc.cli import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(pool, "check_ray_address", lambda address: None)  # no cluster is reached
    calls: list[dict] = []
    monkeypatch.setattr(pool, "train_pool", lambda *args, **kwargs: calls.append(kwargs) or {"status": {}})
    args = ["hanabi", "pool", "--config", "vdn_cpu", "--seeds", "0-3", "--out", str(tmp_path / "p"), "--device", "cuda:1"]
    assert main([*args, "--ray", "10.0.0.1:6379", "--gpus-per-seed", "0.5"]) == 0
    assert calls[0]["device"] == "cuda:1" and calls[0]["gpus_per_seed"] == 0.5
    with pytest.raises(SystemExit):
        main([*args, "--no-ray"])
    assert len(calls) == 1
