"""Seed pools: one training run per seed, on this machine or spread over a Ray cluster.

A pool directory ``DIR`` holds ``DIR/seed_<n>/``, each an ordinary run directory of
:func:`~eqc.domains.hanabi.training.run.train` (so each seed resumes from its own checkpoint),
and ``DIR/pool.json`` with every seed's status and last evaluation.

Scheduling: with Ray installed (``pip install eqc[ray]``) every unfinished seed is a Ray task
asking for ``[run] threads`` CPUs, or one GPU when ``device`` is CUDA; ``ray_address="auto"``
joins a running cluster (``ray start --head`` on one machine, ``ray start --address=...`` on
the others), ``None`` starts a local Ray instance. :func:`check_ray_address` refuses an address with
no cluster behind it (a stale ``ray_current_cluster`` file included) before anything starts, since
``ray.init`` would retry it for minutes. A task whose worker dies (killed, node lost)
is retried by Ray up to ``max_retries`` times and resumes from that seed's last checkpoint. The
pool directory must be a path every worker can reach (a shared filesystem on a cluster): the
tasks write their checkpoints there directly. Without Ray the seeds run one after another here.
Seeds whose checkpoint already reached ``[run] total_moves`` are not trained again.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eqc.domains.hanabi.training.checkpoint import CHECKPOINT_NAME, CheckpointError, load_checkpoint, upgrade_fields, versions
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.io import json_safe, write_json_atomic

__all__ = ["check_ray_address", "parse_seeds", "pool_status", "seed_dir", "train_pool"]

_SEEDS = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


def parse_seeds(text: str) -> list[int]:
    """Seeds from ``"0-9"``, ``"3"`` or ``"0,2,5-7"`` (sorted, without repeats)."""
    if not isinstance(text, str):
        raise TypeError(f"seeds must be a string such as '0-9' or '0,2,5', got {type(text).__name__}")
    seeds: set[int] = set()
    for part in text.split(","):
        match = _SEEDS.match(part)
        if not match:
            raise ValueError(f"seeds must look like '0-9', '3' or '0,2,5-7', got {text!r}")
        low, high = int(match[1]), int(match[2] or match[1])
        if high < low:
            raise ValueError(f"seed range {part.strip()!r} is empty (write low-high)")
        if high - low >= 10_000:
            raise ValueError(f"seed range {part.strip()!r} has more than 10,000 seeds")
        seeds.update(range(low, high + 1))
    return sorted(seeds)


def seed_dir(out: Path, seed: int) -> Path:
    return Path(out) / f"seed_{seed}"


def _finished(run: Path, config: TrainConfig) -> dict[str, Any] | None:
    """The last metrics row of a run that reached ``total_moves``, else None."""
    if not (run / CHECKPOINT_NAME).exists():
        return None
    try:
        data = load_checkpoint(run)
    except CheckpointError:
        return None  # a run that cannot be read is retrained (train() refuses it with a clear message)
    if int(upgrade_fields(data["learner"]["counters"])["moves"]) < config.run.total_moves:
        return None
    rows = data.get("metrics", [])
    return upgrade_fields(rows[-1]) if rows else {}


def pool_status(out: Path, config: TrainConfig, seeds: Sequence[int]) -> dict[str, Any]:
    """Each seed's state (``finished``, ``partial`` or ``new``) and last evaluation."""
    status = {}
    for seed in seeds:
        run = seed_dir(out, seed)
        row = _finished(run, config)
        if row is not None:
            status[str(seed)] = {"state": "finished", **row}
        elif (run / CHECKPOINT_NAME).exists():
            status[str(seed)] = {"state": "partial"}
        else:
            status[str(seed)] = {"state": "new"}
    return status


def _train_seed(config_dict: dict[str, Any], seed: int, run: str, device: str, max_minutes: float | None) -> dict[str, Any]:
    """One seed's run (in this process or as a Ray task); writes its worker's pid for the tests."""
    import torch

    from eqc.domains.hanabi.training.run import train

    Path(run).mkdir(parents=True, exist_ok=True)
    (Path(run) / "worker.pid").write_text(str(os.getpid()))
    config = TrainConfig.from_dict(config_dict)
    torch.set_num_threads(config.run.threads)
    return train(config, run, seed=seed, device=device, max_minutes=max_minutes, progress=False, log=lambda _: None).as_dict()


def train_pool(
    config: TrainConfig,
    seeds: Sequence[int],
    out: str | Path,
    *,
    device: str = "cpu",
    max_minutes: float | None = None,
    ray_address: str | None = None,
    use_ray: bool | None = None,
    max_retries: int = 3,
    log: Any = print,
) -> dict[str, Any]:
    """Train every unfinished seed of the pool in ``out``; return and write ``out/pool.json``.

    ``use_ray``: None = Ray when installed (or required when ``ray_address`` is given), False = one
    after another in this process. ``max_minutes`` bounds each seed's run (it resumes next time).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    todo = [s for s in seeds if _finished(seed_dir(out, s), config) is None]
    done = len(seeds) - len(todo)
    if done:
        log(f"{done} of {len(seeds)} seeds already finished; training {len(todo)}")
    if use_ray is None:
        use_ray = ray_address is not None or _ray_installed()
    if use_ray and todo:
        _run_with_ray(config, todo, out, device, max_minutes, ray_address, max_retries, log)
    else:
        for seed in todo:
            log(f"seed {seed}: training in this process")
            _train_seed(config.to_dict(), seed, str(seed_dir(out, seed)), device, max_minutes)
    status = pool_status(out, config, seeds)
    record = {"config": config.to_dict(), "seeds": list(seeds), "device": device, "status": status, "versions": versions()}
    write_json_atomic(out / "pool.json", json_safe(record))
    return record


def _ray_installed() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _run_with_ray(
    config: TrainConfig, seeds: list[int], out: Path, device: str, max_minutes: float | None,
    address: str | None, max_retries: int, log: Any,
) -> None:
    try:
        import ray
    except ImportError:
        raise ImportError("a Ray address was given but Ray is not installed: pip install 'eqc[ray]'") from None
    started = not ray.is_initialized()
    if started:
        if address is not None:
            check_ray_address(address)
        # "local", not None: ray.init(address=None) joins the cluster in ray_current_cluster (hanging when it is dead)
        ray.init(address=address or "local", include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        gpu = device.startswith("cuda")
        task = ray.remote(_train_seed).options(
            num_cpus=0 if gpu else config.run.threads, num_gpus=1 if gpu else 0, max_retries=max_retries, retry_exceptions=False
        )
        refs = {task.remote(config.to_dict(), seed, str(seed_dir(out, seed).resolve()), device, max_minutes): seed for seed in seeds}
        log(f"{len(refs)} seeds submitted to Ray ({ray.cluster_resources().get('CPU', 0):.0f} CPUs in the cluster)")
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                summary = ray.get(ref)
                log(f"seed {refs[ref]}: {summary['moves']:,} moves, greedy score {summary['eval_score']:.2f}")
    finally:
        if started:
            ray.shutdown()


_START_RAY = "start one with `ray start --head` or leave out --ray"


def _ray_address_file() -> Path:
    """Where ``ray start`` records its cluster's address, which ``ray.init("auto")`` reads (Ray's own lookup)."""
    temp = os.environ.get("RAY_TMPDIR") or (os.environ.get("TMPDIR") if sys.platform == "linux" else None)
    return Path(temp or ("/tmp" if os.name == "posix" else tempfile.gettempdir())) / "ray" / "ray_current_cluster"


def check_ray_address(address: str, timeout: float = 5.0) -> None:
    """Raise ``ValueError`` (one line) unless a Ray cluster answers at ``address``: 'auto' or [ray://]host:port.

    'auto' is resolved as Ray does: ``RAY_ADDRESS`` when set, else the address ``ray start`` recorded in
    ``/tmp/ray/ray_current_cluster``, a file that outlives its cluster. Only a TCP connection to the port is
    tried: ``ray.init`` would retry a dead address for minutes.
    """
    source = ""
    if address == "auto":
        recorded = _ray_address_file()
        if (os.environ.get("RAY_ADDRESS") or "auto") != "auto":
            address, source = os.environ["RAY_ADDRESS"], "RAY_ADDRESS"
        elif recorded.is_file() and recorded.read_text().strip():
            address, source = recorded.read_text().strip(), str(recorded)
        else:
            raise ValueError(f"'auto' found no running Ray cluster on this machine; {_START_RAY}")
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"must be 'auto' or host:port, got {address!r}" + (f" from {source}" if source else ""))
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        if not source:
            raise ValueError(f"cannot reach a Ray cluster at {address!r}: {exc}") from None
        found = "address from" if source == "RAY_ADDRESS" else "stale address in"
        raise ValueError(f"no Ray cluster is running at {address} ({found} {source}); {_START_RAY}") from None
