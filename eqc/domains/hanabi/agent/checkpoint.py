"""Checkpoints: written atomically, loaded without executing code, describing themselves.

A checkpoint is one file ``checkpoint.pt`` in a run directory: a dict of tensors and plain
Python values saved with ``torch.save`` and read back with ``torch.load(weights_only=True)``,
which refuses anything but tensors and primitive containers (no pickled code runs).
It holds ``format``/``format_version``, the training ``config`` (nested dict), ``seed``, the
learner's state (networks, optimizer, generators, counters), ``metrics`` rows so far and the
versions of eqc and torch that wrote it.

Resuming a run from its checkpoint, generators included, is training's
(:mod:`eqc.domains.hanabi.training.resume`); a policy loads the network alone
(:mod:`.policy_file`, :mod:`.policy`).

Writing goes through :func:`eqc.io.atomic_write` (temporary file, fsync, rename, fsync of the
directory): a kill at any moment leaves either the old or the new checkpoint, and a failed write
(full disk) leaves the old one intact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from eqc import __version__
from eqc.io import atomic_write

__all__ = ["CHECKPOINT_NAME", "CheckpointError", "check_format", "load_checkpoint", "resolve", "save_checkpoint", "versions"]

CHECKPOINT_NAME = "checkpoint.pt"
FORMAT = "eqc-hanabi-agent"
FORMAT_VERSION = 1
_REQUIRED = ("format", "format_version", "config", "seed", "learner", "versions")


class CheckpointError(ValueError):
    """A file that is not a usable eqc Hanabi checkpoint (missing, truncated, foreign or mismatched)."""


def versions() -> dict[str, str]:
    """The versions of eqc and torch (recorded in checkpoints and results)."""
    return {"eqc": __version__, "torch": str(torch.__version__)}


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` (see the module docstring) atomically to ``path``."""
    missing = [k for k in ("config", "seed", "learner") if k not in payload]
    if missing:
        raise ValueError(f"checkpoint payload lacks {missing}")
    full = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "versions": versions(),
        **payload,
    }
    atomic_write(path, lambda f: torch.save(full, f))


def resolve(path: str | Path) -> Path:
    """A checkpoint file, or the checkpoint inside a run directory."""
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT_NAME
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {str(path)!r} (expected a run directory holding {CHECKPOINT_NAME}, or the file itself)")
    return path


def check_format(record: object, path: str | Path, expected: str, version: int, kind: str) -> None:
    """Raise :class:`CheckpointError` unless ``record`` is a dict of format ``expected`` and ``version`` (a ``kind`` of eqc file)."""
    if not isinstance(record, dict) or record.get("format") != expected:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise CheckpointError(f"{path} is not an eqc Hanabi {kind} (format {found!r}, expected {expected!r})")
    if record.get("format_version") != version:
        raise CheckpointError(f"{path} has {kind} format version {record.get('format_version')!r}, this eqc reads version {version}")


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read and check a checkpoint (file or run directory); raise ``CheckpointError`` naming the problem."""
    path = resolve(path)
    try:
        data = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # truncated zip, foreign pickle with code, wrong format...
        if "Unsupported global" in str(exc):  # a pickle that would build objects: possibly code
            unsupported = next((line.strip() for line in str(exc).splitlines() if "Unsupported global" in line), "")
            raise CheckpointError(f"{path} holds pickled objects that are not tensors; refused without running them (loading such "
                                  f"a file could execute arbitrary code). {unsupported}".strip()) from None
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        raise CheckpointError(f"{path} is not a readable eqc checkpoint (truncated, corrupt or foreign): {reason}") from None
    check_format(data, path, FORMAT, FORMAT_VERSION, "checkpoint")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise CheckpointError(f"{path} lacks {missing}")
    return data
