"""Resuming a training run's random streams from its checkpoint (the file format: :mod:`eqc.domains.hanabi.agent.files`).

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
"""

from __future__ import annotations

import hashlib

import torch

__all__ = ["restore_generators", "seed_from_state"]


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
