"""Precision: what a user requests, what a network runs in, and how "auto" chooses from what the hardware reports.

A *requested* precision is one of :data:`REQUESTED_PRECISIONS` ("auto", "fp32", "bf16"): ``[run] precision``,
``--precision`` and the ``precision`` argument of ``load_policy``, ``load_pools`` and ``reproduce``. What a
network *runs in* is one of :data:`PRECISIONS`: "fp32", or "bf16" (its matrix products in bfloat16
autocast; heads and Q-values stay float32). :func:`resolve_precision` turns the one into the other.

The rule of "auto", stated here once: bf16 only where the device computes bf16 natively (a CPU reporting
bf16 matrix instructions: x86 ``avx512_bf16`` or AMX, aarch64 ``bf16``; a CUDA device of compute capability
8.0 or more), else fp32, since emulated bf16 is slower than fp32 (6.5x fewer training moves per second
on an AVX2-only CPU, benchmarks/RESULTS.md). Training with "auto" trains in bf16 where it is native, else in fp32. A trained agent
played with "auto" runs in the precision it was trained in where this device runs that natively, else in
fp32: "auto" never moves an fp32-trained agent to bf16 and never runs emulated bf16. The decision reads
what the hardware reports (torch's cpuinfo probes, ``/proc/cpuinfo``, the CUDA capability), never timings.

An explicit "bf16" runs in bf16 anywhere, with a :class:`Bf16EmulatedWarning` where the device emulates it;
an explicit "fp32" runs in fp32. The probes (:func:`cpu_features`, :func:`cuda_capability`) are module
functions, so tests replace them to simulate other hardware.
"""

from __future__ import annotations

import dataclasses
import platform
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from eqc._checks import check_choice
from eqc.domains.hanabi.config.agent import PRECISIONS
from eqc.domains.hanabi.config.train import REQUESTED_PRECISIONS

__all__ = [
    "Bf16EmulatedWarning", "Bf16Support", "Precision", "bf16_support", "cpu_features",
    "cuda_capability", "resolve_precision",
]

#: CPU features that mean native bf16 matrix products: x86 AVX-512 BF16 and AMX (every CPU with AMX tiles has
#: AMX-BF16), aarch64 BF16 (the ``Features`` word).
NATIVE_BF16_FEATURES = ("avx512_bf16", "amx_bf16", "amx_tile", "bf16")
#: The first CUDA compute capability with bf16 tensor cores (Ampere).
CUDA_NATIVE_BF16 = (8, 0)
_TORCH_PROBES = {"avx512_bf16": "_is_avx512_bf16_supported", "amx_tile": "_is_amx_tile_supported",
                 "avx512f": "_is_avx512_supported", "avx2": "_is_avx2_supported"}


class Bf16EmulatedWarning(UserWarning):
    """bf16 was requested explicitly on a device that emulates it: it runs, slower than fp32."""


@dataclass(frozen=True)
class Precision:
    """A resolved precision: the ``requested`` one (:data:`REQUESTED_PRECISIONS`), the one ``used``
    (:data:`PRECISIONS`) and why, in one line (e.g. "auto: fp32, this CPU has no native bf16 (AVX2)")."""

    requested: str
    used: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Bf16Support:
    """Whether a device computes bf16 natively, and what it reported, as a phrase for messages."""

    native: bool
    hardware: str


def cpu_features() -> frozenset[str]:
    """This CPU's features that bear on bf16: torch's cpuinfo probes (those this torch has) and the words of the
    ``flags`` (x86) and ``Features`` (aarch64) lines of ``/proc/cpuinfo`` (where it exists)."""
    found = {name for name, probe in _TORCH_PROBES.items() if getattr(torch.cpu, probe, lambda: False)()}
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            found.update(value.split())
    return frozenset(found)


def cuda_capability(device: torch.device) -> tuple[int, int]:
    """The compute capability ``(major, minor)`` of CUDA ``device``."""
    major, minor = torch.cuda.get_device_capability(device)
    return int(major), int(minor)


def bf16_support(device: torch.device | str) -> Bf16Support:
    """Whether ``device`` computes bf16 natively, from what its hardware reports (see the module docstring)."""
    device = torch.device(device)
    if device.type == "cuda":
        major, minor = cuda_capability(device)
        native = (major, minor) >= CUDA_NATIVE_BF16
        lacks = "" if native else f", without native bf16 (from {CUDA_NATIVE_BF16[0]}.{CUDA_NATIVE_BF16[1]})"
        return Bf16Support(native, f"CUDA device with compute capability {major}.{minor}{lacks}")
    if device.type != "cpu":
        return Bf16Support(False, f"{device.type} device, whose bf16 support eqc does not probe")
    features = cpu_features()
    instructions = [name for name in NATIVE_BF16_FEATURES if name in features]
    if instructions:
        return Bf16Support(True, f"this CPU has native bf16 matrix instructions ({', '.join(instructions)})")
    isa = "AVX-512" if "avx512f" in features else "AVX2" if "avx2" in features else platform.machine() or "unknown architecture"
    return Bf16Support(False, f"this CPU has no native bf16 ({isa})")


def resolve_precision(requested: str, device: torch.device | str, *, trained: str | None = None) -> Precision:
    """The precision a network runs in on ``device`` for ``requested`` (:data:`REQUESTED_PRECISIONS`), by the rule
    of the module docstring: ``trained`` None resolves for training, else for an agent trained in ``trained``
    (:data:`PRECISIONS`). An explicit "bf16" where ``device`` emulates it warns (:class:`Bf16EmulatedWarning`)."""
    check_choice(requested, "precision", REQUESTED_PRECISIONS)
    if trained is not None:
        check_choice(trained, "trained", PRECISIONS)
    if requested == "fp32":
        return Precision("fp32", "fp32", "requested fp32")
    if requested == "auto" and trained == "fp32":
        return Precision("auto", "fp32", "auto: fp32, the precision the agent was trained in")
    support = bf16_support(device)
    if requested == "bf16":
        if support.native:
            return Precision("bf16", "bf16", f"requested bf16; {support.hardware}")
        warnings.warn(f"precision 'bf16' on {device}: {support.hardware}, so bf16 is emulated and runs slower than fp32 "
                      "('auto' or 'fp32' runs fp32 here)", Bf16EmulatedWarning, stacklevel=2)
        return Precision("bf16", "bf16", f"requested bf16; {support.hardware}: emulated, slower than fp32")
    as_trained = "" if trained is None else " (as trained)" if support.native else " (trained in bf16)"
    used = "bf16" if support.native else "fp32"
    return Precision("auto", used, f"auto: {used}{as_trained}, {support.hardware}")
