"""Checkpoints: written atomically, loaded without executing code, describing themselves.

A checkpoint is one file ``checkpoint.pt`` in a run directory: a dict of tensors and plain
Python values saved with ``torch.save`` and read back with ``torch.load(weights_only=True)``,
which refuses anything but tensors and primitive containers (no pickled code runs).
It holds ``format``/``format_version``, the training ``config`` (nested dict), ``seed``, the
learner's state (networks, optimizer, generators, counters), ``metrics`` rows so far and the
versions of eqc and torch that wrote it.

Resuming on another kind of device. The learner's state records the device it ran on
(``device``, e.g. ``"cpu"`` or ``"cuda:0"``; a checkpoint without it was written on the CPU, the
only device eqc had run on before it was recorded). Networks and optimizer states load on any
device, but a generator's state does not: a CPU generator's state is 5056 bytes (Mersenne
Twister), a CUDA one's 16 (Philox seed and offset), and neither can be set into the other. So
:func:`restore_generators` restores each generator exactly when the device *type* is the one the
checkpoint was written on (``cuda:1`` after ``cuda:0`` included), and otherwise re-seeds it from a
seed derived from the saved state (:func:`seed_from_state`: the first 8 bytes of its SHA-256). The
resumed run is then deterministic (the same checkpoint resumed on the same device type plays the
same moves) but does not continue the saved random streams; the run log says so.

Writing goes through :func:`eqc.io.atomic_write` (temporary file, fsync, rename, fsync of the
directory): a kill at any moment leaves either the old or the new checkpoint, and a failed write
(full disk) leaves the old one intact.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import torch

from eqc.io import atomic_write

__all__ = [
    "CHECKPOINT_NAME", "CheckpointError", "load_checkpoint", "restore_generators", "save_checkpoint", "seed_from_state",
    "versions",
]

CHECKPOINT_NAME = "checkpoint.pt"
FORMAT = "eqc-hanabi-agent"
FORMAT_VERSION = 1
_REQUIRED = ("format", "format_version", "config", "seed", "learner", "versions")


class CheckpointError(ValueError):
    """A file that is not a usable eqc Hanabi checkpoint (missing, truncated, foreign or mismatched)."""


def versions() -> dict[str, str]:
    """The versions of eqc and torch (recorded in checkpoints and results)."""
    import eqc

    return {"eqc": eqc.__version__, "torch": str(torch.__version__)}


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
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise CheckpointError(f"{path} is not an eqc Hanabi checkpoint (format {found!r}, expected {FORMAT!r})")
    if data.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path} has checkpoint format version {data.get('format_version')}, this eqc reads version {FORMAT_VERSION}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise CheckpointError(f"{path} lacks {missing}")
    return data


def seed_from_state(state: torch.Tensor) -> int:
    """A seed in ``0 .. 2**63 - 1`` derived from a saved generator state (a byte tensor): the first 8 bytes of its SHA-256."""
    digest = hashlib.sha256(state.detach().cpu().contiguous().numpy().tobytes()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def restore_generators(generators: dict[str, torch.Generator], states: dict[str, torch.Tensor], written_on: str) -> str | None:
    """Restore ``generators`` from the ``states`` a checkpoint saved on device ``written_on`` (see the module docstring).

    Returns None when every state was restored exactly, else one sentence for the run log naming the
    generators re-seeded because the device type changed.
    """
    saved_type = torch.device(written_on).type
    reseeded = []
    for name, generator in generators.items():
        state = states[name].cpu()  # set_state takes a CPU byte tensor on every device
        if generator.device.type == saved_type:
            generator.set_state(state)
        else:
            generator.manual_seed(seed_from_state(state))
            reseeded.append(name)
    if not reseeded:
        return None
    device = next(iter(generators.values())).device
    return (f"the checkpoint was written on {written_on}, this run is on {device}: generator states do not carry across "
            f"device types, so the generators {', '.join(reseeded)} were re-seeded from hashes of their saved states "
            f"(deterministic, but not the saved random streams)")
