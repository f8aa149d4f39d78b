"""Shipped policy files: a trained network's weights without pickle, with what is needed to play it.

A *policy directory* (e.g. ``results/cpu/agents/<pool>/seed_<n>/``) holds:

- ``policy.safetensors``: the network's weights (safetensors: tensors only, nothing to execute);
- ``policy.json``: ``format``/``format_version``, the full training ``config`` (so the observation
  variant, network shape and any training-time symmetrizer are known), ``seed``, ``moves``,
  ``updates``, ``wall_s``, the eqc/torch ``versions`` and the ``source`` it was exported from;
- the run's training record beside them when exported from a run: ``metrics.csv`` and
  ``learning_curve.png``.

Unlike a checkpoint (``checkpoint.py``: optimizer, generators, a multi-MB file for resuming), a
policy directory is small (about 1 MB for the cpu-scale feed-forward agents) and is what is
committed and shared. :func:`eqc.domains.hanabi.training.policy.load_policy` reads both.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch

from eqc.domains.hanabi.training.checkpoint import CheckpointError, load_checkpoint, upgrade_fields, versions
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.network import QNetwork
from eqc.io import atomic_write, write_json_atomic

__all__ = ["POLICY_JSON", "POLICY_WEIGHTS", "export_policy", "is_policy_dir", "read_policy", "save_policy"]

POLICY_JSON = "policy.json"
POLICY_WEIGHTS = "policy.safetensors"
FORMAT = "eqc-hanabi-policy"
FORMAT_VERSION = 1
RECORD_FILES = ("metrics.csv", "learning_curve.png")


def is_policy_dir(path: str | Path) -> bool:
    """Whether ``path`` is a directory holding ``policy.json``."""
    return (Path(path) / POLICY_JSON).is_file()


def network_from_weights(weights: dict[str, torch.Tensor], config: TrainConfig, where: str) -> QNetwork:
    """The :class:`QNetwork` of ``config`` with ``weights`` loaded (sizes read from the weights)."""
    try:
        obs_dim = weights["mlp.0.weight"].shape[1]
        num_actions = weights["head.weight"].shape[0] - (1 if config.network.dueling else 0)
    except KeyError as exc:
        raise CheckpointError(f"{where}: the weights lack {exc.args[0]!r}; not an eqc Q-network") from None
    aux = weights["aux_head.weight"].shape[0] if "aux_head.weight" in weights else 0
    network = QNetwork(obs_dim, num_actions, config.network, aux_outputs=aux)
    try:
        network.load_state_dict({k: v.float() for k, v in weights.items()})
    except RuntimeError as exc:
        raise CheckpointError(f"{where}: the saved network does not match its config: {str(exc)[:300]}") from None
    return network


def save_policy(out: str | Path, network: QNetwork, config: TrainConfig, *, seed: int, moves: int, updates: int = 0,
                wall_s: float = 0.0, source: str | None = None) -> Path:
    """Write ``policy.safetensors`` and ``policy.json`` into ``out`` (created); returns ``out``."""
    from safetensors.torch import save

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise CheckpointError(f"out {str(out)!r} is a file, not a directory")
    out.mkdir(parents=True, exist_ok=True)
    weights = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in network.state_dict().items()}
    blob = save(weights, metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION)})
    atomic_write(out / POLICY_WEIGHTS, lambda f: f.write(blob))
    record = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "config": config.to_dict(), "seed": int(seed),
        "moves": int(moves), "updates": int(updates), "wall_s": float(wall_s), "versions": versions(), "source": source,
    }
    write_json_atomic(out / POLICY_JSON, record)
    return out


def export_policy(run: str | Path, out: str | Path) -> Path:
    """Export the network of a checkpoint (a run directory or ``checkpoint.pt``) as a policy directory ``out``,
    with the run's ``metrics.csv`` and ``learning_curve.png`` when present beside the checkpoint."""
    data = load_checkpoint(run)
    where = str(run)
    try:
        config = TrainConfig.from_dict(data["config"], f"{where} config", warn_renamed=False)
    except ValueError as exc:
        raise CheckpointError(f"{where}: its config is not valid for this eqc: {exc}") from None
    learner = data["learner"]
    network = network_from_weights(learner["modules"]["network"], config, where)
    counters = upgrade_fields(learner["counters"])
    out = save_policy(out, network, config, seed=int(data["seed"]), moves=int(counters["moves"]),
                      updates=int(counters.get("updates", 0)), wall_s=float(counters.get("wall_s", 0.0)), source=where)
    run_dir = Path(run) if Path(run).is_dir() else Path(run).parent
    for name in RECORD_FILES:
        if (run_dir / name).is_file() and (run_dir / name).resolve() != (out / name).resolve():
            shutil.copyfile(run_dir / name, out / name)
    return out


def read_policy(path: str | Path, device: torch.device | str = "cpu") -> tuple[QNetwork, TrainConfig, dict[str, Any]]:
    """Read a policy directory (or its ``policy.json``/``policy.safetensors``): the network on ``device``,
    its training config and the record of ``policy.json``. Raises ``CheckpointError`` naming the problem."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    path = Path(path)
    folder = path.parent if path.is_file() and path.name in (POLICY_JSON, POLICY_WEIGHTS) else path
    json_path, weights_path = folder / POLICY_JSON, folder / POLICY_WEIGHTS
    for needed in (json_path, weights_path):
        if not needed.is_file():
            raise CheckpointError(f"{str(folder)!r} is not a policy directory: it lacks {needed.name}")
    try:
        record = json.loads(json_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{json_path} is not readable JSON: {exc}") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise CheckpointError(f"{json_path} is not an eqc policy file (format {found!r}, expected {FORMAT!r})")
    if record.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{json_path} has policy format version {record.get('format_version')!r}, this eqc reads {FORMAT_VERSION}")
    record = upgrade_fields(record)
    missing = [k for k in ("config", "seed", "moves") if k not in record]
    if missing:
        raise CheckpointError(f"{json_path} lacks {missing}")
    try:
        config = TrainConfig.from_dict(record["config"], f"{json_path} config", warn_renamed=False)
    except ValueError as exc:
        raise CheckpointError(f"{json_path}: its config is not valid for this eqc: {exc}") from None
    try:
        weights = load(weights_path.read_bytes())
    except (OSError, SafetensorError) as exc:
        raise CheckpointError(f"{weights_path} is not a readable safetensors file (truncated or foreign): {exc}") from None
    network = network_from_weights(weights, config, str(weights_path)).to(device)
    return network, config, record
