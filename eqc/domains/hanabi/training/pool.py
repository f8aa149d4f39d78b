"""Seed pools: one training run per seed, on this machine or spread over a Ray cluster.

A pool directory ``DIR`` holds ``DIR/seed_<n>/``, each an ordinary run directory of
:func:`~eqc.domains.hanabi.training.run.train` (so each seed resumes from its own checkpoint),
and ``DIR/pool.json`` with every seed's status and last evaluation.

Scheduling: with Ray installed (``pip install eqc[ray]``) every unfinished seed is a Ray task
asking for ``[run] threads`` CPUs, or ``gpus_per_seed`` of a GPU when ``device`` is CUDA (1: a GPU
per seed; 0.25: four seeds share one); ``ray_address="auto"``
joins a running cluster (``ray start --head`` on one machine, ``ray start --address=...`` on
the others), ``None`` starts a local Ray instance. :func:`check_ray_address` refuses an address with
no cluster behind it (a stale ``ray_current_cluster`` file included) before anything starts, since
``ray.init`` would retry it for minutes. A task whose worker dies (killed, node lost)
is retried by Ray up to ``max_retries`` times and resumes from that seed's last checkpoint; a task
that raises (a bad config, no GPU on its node) is not retried, since it would fail the same way, and
its error reaches this process.

Devices under Ray: Ray shows each task only the GPUs it assigned to it (``CUDA_VISIBLE_DEVICES``),
so ``cuda:N`` on the head means "a GPU" in a task, which trains on its assigned GPU as numbered
there (:func:`ray_task_device`; ``cuda:0`` unless Ray leaves ``CUDA_VISIBLE_DEVICES`` alone). The
device is checked in the task, on the machine that uses it: a head without a GPU may send
``cuda`` seeds to a cluster with GPUs (refused only when the cluster has none). The
pool directory must be a path every worker can reach (a shared filesystem on a cluster): the
tasks write their checkpoints there directly. Without Ray the seeds run one after another here.
Seeds whose checkpoint already reached ``[run] total_moves`` are not trained again.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from eqc._checks import check_float
from eqc.domains.hanabi.agent.files import CHECKPOINT_NAME, CheckpointError, load_checkpoint, versions
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.io import json_safe, write_json_atomic

__all__ = ["check_ray_address", "pool_status", "ray_task_device", "seed_dir", "train_pool", "write_pool_record"]

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
    if int(data["learner"]["counters"]["moves"]) < config.run.total_moves:
        return None
    rows = data.get("metrics", [])
    return rows[-1] if rows else {}


def pool_status(out: Path, configs: Mapping[int, TrainConfig]) -> dict[str, Any]:
    """Each seed's state (``finished``, ``partial`` or ``new``) and last evaluation (``configs``: as :func:`train_pool`)."""
    status = {}
    for seed, config in sorted(configs.items()):
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


def ray_task_device(device: str, gpu_ids: Sequence[int | str], visible_devices: str | None) -> str:
    """The torch device a Ray task trains on when the pool's device is ``device``.

    ``gpu_ids``: ``ray.get_gpu_ids()`` in the task; ``visible_devices``: its ``CUDA_VISIBLE_DEVICES``
    (None when unset). A CUDA device (any index: the head's numbering means nothing on a worker)
    becomes the task's first assigned GPU as numbered in the task: its position among the visible
    devices (``cuda:0`` when Ray set them), or its id when every GPU is visible. Other devices pass through.
    """
    if not device.startswith("cuda"):
        return device
    if not gpu_ids:
        raise ValueError(f"device {device!r} but Ray assigned this task no GPU (ask for gpus_per_seed > 0)")
    assigned = str(gpu_ids[0])
    if visible_devices is None:
        return f"cuda:{assigned}"
    visible = [v.strip() for v in visible_devices.split(",") if v.strip()]
    if assigned not in visible:
        raise ValueError(f"Ray assigned GPU {assigned}, which is not among this task's CUDA_VISIBLE_DEVICES={visible_devices!r}")
    return f"cuda:{visible.index(assigned)}"


def _train_seed_on_ray(config_dict: dict[str, Any], seed: int, run: str, device: str, max_minutes: float | None) -> dict[str, Any]:
    """:func:`_train_seed` in a Ray task, on the task's own GPU (:func:`ray_task_device`)."""
    import ray

    task_device = ray_task_device(device, ray.get_gpu_ids(), os.environ.get("CUDA_VISIBLE_DEVICES"))
    return _train_seed(config_dict, seed, run, task_device, max_minutes)


def train_pool(
    configs: Mapping[int, TrainConfig],
    out: str | Path,
    *,
    device: str = "cpu",
    max_minutes: float | None = None,
    ray_address: str | None = None,
    use_ray: bool | None = None,
    max_retries: int = 3,
    gpus_per_seed: float = 1.0,
    log: Any = print,
) -> dict[str, Any]:
    """Train every unfinished seed of the pool in ``out``; return and write ``out/pool.json``.

    ``configs``: the training config of each seed (the keys), e.g. ``{s: config for s in range(8)}``; seeds of one
    pool may differ in what they are taught (``[bootstrap] slots``).

    ``use_ray``: None = Ray when installed (or required when ``ray_address`` is given), False = one
    after another in this process. ``max_minutes`` bounds each seed's run (it resumes next time).
    ``gpus_per_seed`` (in (0, 1]): the share of a GPU each Ray task asks for with a CUDA ``device``.
    """
    check_float(gpus_per_seed, "gpus_per_seed", low=0, high=1, low_open=True)
    if not isinstance(configs, Mapping) or not configs:
        raise TypeError(f"configs must map each seed to its TrainConfig (at least one), got {configs!r}")
    for seed, config in configs.items():
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0 or not isinstance(config, TrainConfig):
            what = f"{seed!r}: {type(config).__name__}"
            raise TypeError(f"configs must map seeds (ints >= 0) to TrainConfig objects, got {what}")
    seeds = sorted(configs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    todo = [s for s in seeds if _finished(seed_dir(out, s), configs[s]) is None]
    done = len(seeds) - len(todo)
    if done:
        log(f"{done} of {len(seeds)} seeds already finished; training {len(todo)}")
    if use_ray is None:
        use_ray = ray_address is not None or _ray_installed()
    if use_ray and todo:
        _run_with_ray({s: configs[s] for s in todo}, out, device, max_minutes, ray_address, max_retries, gpus_per_seed, log)
    else:
        for seed in todo:
            log(f"seed {seed}: training in this process")
            _train_seed(configs[seed].to_dict(), seed, str(seed_dir(out, seed)), device, max_minutes)
    return write_pool_record(out, configs, device)


def write_pool_record(out: Path, configs: Mapping[int, TrainConfig], device: str) -> dict[str, Any]:
    """Write and return ``out/pool.json``: every seed's config and state (:func:`pool_status`), the device and eqc's versions."""
    seeds = sorted(configs)
    record = {"configs": {str(s): configs[s].to_dict() for s in seeds}, "seeds": seeds, "device": device,
              "status": pool_status(out, configs), "versions": versions()}
    write_json_atomic(out / "pool.json", json_safe(record))
    return record


def _ray_installed() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _run_with_ray(
    configs: Mapping[int, TrainConfig], out: Path, device: str, max_minutes: float | None,
    address: str | None, max_retries: int, gpus_per_seed: float, log: Any,
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
        if gpu and not ray.cluster_resources().get("GPU", 0):
            raise ValueError(f"device {device!r} but the Ray cluster has no GPU; use --device cpu or add GPU nodes")
        task = ray.remote(_train_seed_on_ray).options(
            num_cpus=0 if gpu else max(c.run.threads for c in configs.values()), num_gpus=gpus_per_seed if gpu else 0,
            max_retries=max_retries,
            retry_exceptions=False,  # an exception would recur on a retry; a lost worker is retried (see the module docstring)
        )
        refs = {task.remote(config.to_dict(), seed, str(seed_dir(out, seed).resolve()), device, max_minutes): seed
                for seed, config in configs.items()}
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
    ``/tmp/ray/ray_current_cluster``, a file that outlives its cluster. A Ray head's GCS (and Ray Client) port
    speaks gRPC, so the check opens a TCP connection and sends the HTTP/2 client preface; the server must answer
    with an HTTP/2 SETTINGS frame within ``timeout`` seconds. ``ray.init`` would retry a dead address, or a port
    that accepts TCP but is not Ray, for minutes.
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
        answers_grpc = _answers_http2(host.strip("[]"), int(port), timeout)
    except OSError as exc:
        if not source:
            raise ValueError(f"cannot reach a Ray cluster at {address!r}: {exc}") from None
        found = "address from" if source == "RAY_ADDRESS" else "stale address in"
        raise ValueError(f"no Ray cluster is running at {address} ({found} {source}); {_START_RAY}") from None
    if not answers_grpc:
        where = f" (from {source})" if source else ""
        raise ValueError(f"{address!r}{where} accepts connections but is not a Ray cluster: it did not answer gRPC's HTTP/2 "
                         f"handshake within {timeout:g} s; give the address of a Ray head (ray start --head prints it)")


#: What an HTTP/2 (gRPC) client sends first: the connection preface and an empty SETTINGS frame.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _answers_http2(host: str, port: int, timeout: float) -> bool:
    """Whether ``host:port`` answers the HTTP/2 client preface with a SETTINGS frame (type 4 on stream 0) within
    ``timeout`` seconds, as a gRPC server such as Ray's GCS does; ``OSError`` if it cannot be connected to."""
    with socket.create_connection((host, port), timeout=timeout) as connection:
        try:
            connection.sendall(_HTTP2_PREFACE)
            header = b""
            while len(header) < 9:
                chunk = connection.recv(9 - len(header))
                if not chunk:
                    return False
                header += chunk
        except OSError:  # a timeout or a reset: no HTTP/2 server there
            return False
    return header[3] == 0x4 and header[5:9] == b"\x00\x00\x00\x00"
