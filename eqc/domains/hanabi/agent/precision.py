"""Precision: what a user requests, what a network runs in, and how "auto" chooses from what the hardware reports.

A *requested* precision is one of :data:`REQUESTED_PRECISIONS` ("auto", "fp32", "bf16"): ``[network] precision``,
``--precision`` and the ``precision`` argument of ``load_policy``, ``load_pools`` and ``reproduce``. What a
network *runs in* is one of :data:`PRECISIONS`: "fp32", or "bf16" (its matrix products in bfloat16
autocast; heads and Q-values stay float32). :func:`resolve_precision` turns the one into the other.

The rule of "auto", stated here once: bf16 only where bf16 autocast is faster than fp32. Where the hardware's
report settles it: an x86 CPU listing AMX (both ``amx_bf16`` and ``amx_tile``), an aarch64 CPU listing
``bf16`` and a CUDA device of compute capability 8.0 or more run bf16; a CPU listing no bf16 instruction runs
fp32 (bf16 is emulated there, 6.5x slower on an AVX2-only CPU, benchmarks/RESULTS.md). An x86 CPU listing
``avx512_bf16`` without AMX is not settled by its flags: an Intel Xeon whose VM hides AMX trained 0.72x the
moves of fp32 in bf16, an AMD EPYC with the same flags 1.39x (benchmarks/RESULTS.md). There a run that starts measures:
``measure`` times one training step of the run's own network in each precision
(:func:`eqc.domains.hanabi.training.probe.training_step_ms`) and bf16 is used only where it is at least
:data:`MEASURED_MARGIN` times faster; without a measurement (evaluation, a caller without one) fp32. The CPU
rule is a pure function of the flag words (:func:`cpu_bf16_support`; :func:`cpu_flags` reads them from the
text of ``/proc/cpuinfo``), and the reason names the flags and the timings that decided. Training with
"auto" trains in bf16 where it is faster, else in fp32; the run records the decision, and a resumed run keeps
it. A trained agent played with "auto" runs in the precision it was trained in where bf16 is faster on this
device by the flags, else in fp32: "auto" never moves an fp32-trained agent to bf16.

An explicit "bf16" runs in bf16 anywhere, with a :class:`Bf16SlowWarning` where the device runs it slower
than fp32; an explicit "fp32" runs in fp32. The probes (:func:`cpu_features`, :func:`cuda_capability`) are
module functions, so tests replace them to simulate other hardware.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from eqc._checks import check_choice
from eqc.domains.hanabi.config.agent import PRECISIONS, REQUESTED_PRECISIONS

__all__ = [
    "Bf16SlowWarning", "Bf16Support", "Precision", "bf16_support", "cpu_bf16_support", "cpu_features", "cpu_flags",
    "cuda_capability", "resolve_precision",
]

#: x86 flags that together mean AMX bf16 tiles, where bf16 autocast is faster than fp32.
AMX_FLAGS = ("amx_bf16", "amx_tile")
#: aarch64's ``Features`` word for bf16 matrix instructions (BFMMLA; no x86 CPU lists a bare ``bf16``).
AARCH64_BF16 = "bf16"
#: bf16 is chosen by a measurement only where its training step is at least this many times faster than fp32's.
MEASURED_MARGIN = 1.1
#: The first CUDA compute capability with bf16 tensor cores (Ampere).
CUDA_NATIVE_BF16 = (8, 0)
#: torch's cpuinfo probes, read only where ``/proc/cpuinfo`` is not (macOS, Windows): probe -> the flags it stands for.
_TORCH_PROBES = {"_is_avx512_bf16_supported": ("avx512_bf16",), "_is_amx_tile_supported": AMX_FLAGS,
                 "_is_avx512_supported": ("avx512f",), "_is_avx2_supported": ("avx2",)}


class Bf16SlowWarning(UserWarning):
    """bf16 was requested explicitly on a device where it runs slower than fp32 (emulated, or a CPU without AMX)."""


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
    """Whether bf16 autocast is ``fast`` (faster than fp32) on a device: True, False, or None where what the device
    reports does not tell (an x86 CPU with ``avx512_bf16`` but no AMX: measure); and what it reported, as a phrase for
    messages (the flags seen, for a CPU)."""

    fast: bool | None
    hardware: str


def cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The words of the ``flags`` (x86) and ``Features`` (aarch64) lines of ``cpuinfo``, the text of ``/proc/cpuinfo``."""
    found: set[str] = set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            found.update(value.split())
    return frozenset(found)


def cpu_features() -> frozenset[str]:
    """This CPU's flags: :func:`cpu_flags` of ``/proc/cpuinfo``; where that file is missing or lists none, the flags
    that torch's cpuinfo probes report (those this torch has)."""
    try:
        found = cpu_flags(Path("/proc/cpuinfo").read_text())
    except OSError:
        found = frozenset()
    if found:
        return found
    return frozenset(flag for probe, flags in _TORCH_PROBES.items() if getattr(torch.cpu, probe, lambda: False)() for flag in flags)


def cpu_bf16_support(features: frozenset[str]) -> Bf16Support:
    """Whether bf16 autocast is faster than fp32 on a CPU listing ``features`` (:func:`cpu_flags`): yes with AMX (every one
    of :data:`AMX_FLAGS`) or aarch64 ``bf16``, no without any bf16 instruction, None (measure) with ``avx512_bf16`` alone
    (the module docstring). A pure function: its phrase names the flags that decided."""
    if all(flag in features for flag in AMX_FLAGS):
        return Bf16Support(True, f"this CPU has AMX ({', '.join(AMX_FLAGS)})")
    if AARCH64_BF16 in features:
        return Bf16Support(True, f"this CPU has bf16 matrix instructions ({AARCH64_BF16})")
    isa = "AVX-512" if "avx512f" in features else "AVX2" if "avx2" in features else "no AVX2" if features else "no flags read"
    amx = [flag for flag in AMX_FLAGS if flag in features]
    if "avx512_bf16" in features:
        partial = f"; {amx[0]} without {next(f for f in AMX_FLAGS if f not in amx)}" if amx else ""
        return Bf16Support(None, f"this CPU has avx512_bf16 but no AMX ({isa}{partial})")
    return Bf16Support(False, f"this CPU has no native bf16 ({isa})")


def cuda_capability(device: torch.device) -> tuple[int, int]:
    """The compute capability ``(major, minor)`` of CUDA ``device``."""
    major, minor = torch.cuda.get_device_capability(device)
    return int(major), int(minor)


def bf16_support(device: torch.device | str) -> Bf16Support:
    """Whether bf16 autocast is faster than fp32 on ``device``, from what its hardware reports (see the module docstring)."""
    device = torch.device(device)
    if device.type == "cuda":
        major, minor = cuda_capability(device)
        fast = (major, minor) >= CUDA_NATIVE_BF16
        lacks = "" if fast else f", without native bf16 (from {CUDA_NATIVE_BF16[0]}.{CUDA_NATIVE_BF16[1]})"
        return Bf16Support(fast, f"CUDA device with compute capability {major}.{minor}{lacks}")
    if device.type != "cpu":
        return Bf16Support(False, f"{device.type} device, whose bf16 support eqc does not probe")
    return cpu_bf16_support(cpu_features())


def resolve_precision(requested: str, device: torch.device | str, *, trained: str | None = None,
                      measure: Callable[[], tuple[float, float]] | None = None) -> Precision:
    """The precision a network runs in on ``device`` for ``requested`` (:data:`REQUESTED_PRECISIONS`), by the rule
    of the module docstring: ``trained`` None resolves for training, else for an agent trained in ``trained``
    (:data:`PRECISIONS`). ``measure``: milliseconds of one training step in fp32 and in bf16, called for "auto" only
    where the hardware's report does not settle it. An explicit "bf16" where ``device`` runs it slower than fp32
    warns (:class:`Bf16SlowWarning`)."""
    check_choice(requested, "precision", REQUESTED_PRECISIONS)
    if trained is not None:
        check_choice(trained, "trained", PRECISIONS)
    if requested == "fp32":
        return Precision("fp32", "fp32", "requested fp32")
    if requested == "auto" and trained == "fp32":
        return Precision("auto", "fp32", "auto: fp32, the precision the agent was trained in")
    support = bf16_support(device)
    if requested == "bf16":
        if support.fast is not False:
            return Precision("bf16", "bf16", f"requested bf16; {support.hardware}")
        warnings.warn(f"precision 'bf16' on {device}: {support.hardware}, so bf16 runs slower than fp32 "
                      "('auto' or 'fp32' runs fp32 here)", Bf16SlowWarning, stacklevel=2)
        return Precision("bf16", "bf16", f"requested bf16; {support.hardware}: slower than fp32")
    fast, found = support.fast, ""
    if fast is None and measure is not None and trained is None:
        fp32_ms, bf16_ms = measure()
        fast = bf16_ms * MEASURED_MARGIN <= fp32_ms
        found = (f": measured one training step of this run's network, fp32 {fp32_ms:.1f} ms, bf16 {bf16_ms:.1f} ms "
                 f"(bf16 needs {MEASURED_MARGIN}x)")
    elif fast is None:
        found = ": bf16 is faster than fp32 on some such CPUs and slower on others, and was not measured here"
    as_trained = "" if trained is None else " (as trained)" if fast else " (trained in bf16)"
    used = "bf16" if fast else "fp32"
    return Precision("auto", used, f"auto: {used}{as_trained}, {support.hardware}{found}")
