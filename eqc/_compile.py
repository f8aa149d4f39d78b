"""How eqc compiles its hot tensor functions (the acting step): :func:`compiled`, after :func:`check_compilable`.

On CUDA ``torch.compile`` runs in mode "reduce-overhead": the compiled kernels are recorded once as a CUDA graph and
replayed, one launch instead of hundreds per call. On a CPU it is inductor's default mode: fused C++ kernels (a C++
compiler is needed). Shapes are static: the first call of each shape compiles (seconds to a minute).
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import torch

__all__ = ["check_compilable", "compiled", "mark_static"]

F = TypeVar("F", bound=Callable[..., Any])


def check_compilable(device: torch.device) -> None:
    """Refuse, before anything is built, a ``device`` the acting step cannot be compiled for: ValueError for a device
    type other than "cpu" and "cuda"; RuntimeError where the CPU has no C++ compiler or CUDA no Triton."""
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"compile needs a 'cpu' or 'cuda' device, got {device.type!r}; run without compile there")
    if device.type == "cuda":
        from torch.utils._triton import has_triton

        if not has_triton():
            raise RuntimeError("compile on cuda needs Triton (pip install triton); run without compile")
        return
    from torch._inductor.cpp_builder import get_cpp_compiler

    try:
        compiler = get_cpp_compiler()
    except Exception as exc:  # inductor's own error type differs between torch versions
        named = f" (CXX is {os.environ['CXX']!r})" if os.environ.get("CXX") else ""
        raise RuntimeError(f"compile on the cpu needs a C++ compiler{named}: g++ or clang++ (torch inductor's search failed: "
                           f"{type(exc).__name__}); install one, set CXX to it, or run without compile") from None
    problem = _compiler_problem(str(compiler))
    if problem is not None:
        named = f" (from CXX={os.environ['CXX']!r})" if os.environ.get("CXX") else ""
        raise RuntimeError(f"compile on the cpu needs a working C++ compiler; {compiler!r}{named} {problem}: set CXX to one "
                           "that works (g++ or clang++), or run without compile")


@functools.cache
def _compiler_problem(compiler: str) -> str | None:
    """Why ``compiler`` cannot build a C++ program (it is missing, fails or hangs on ``int main() {}``), else None. Checked
    once per compiler and process."""
    with tempfile.TemporaryDirectory() as where:
        try:
            done = subprocess.run([compiler, "-x", "c++", "-", "-o", str(Path(where) / "check")], input="int main() { return 0; }\n",
                                  capture_output=True, text=True, timeout=120, check=False)
        except FileNotFoundError:
            return "is not found"
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"could not compile a one-line program ({type(exc).__name__})"
    if done.returncode != 0:
        first = (done.stderr or done.stdout).strip().splitlines()[:1]
        return f"failed to compile a one-line program (exit {done.returncode}{': ' + first[0][:200] if first else ''})"
    return None


def compiled(fn: F, device: torch.device) -> F:
    """``fn`` under ``torch.compile`` for tensors on ``device`` (see the module docstring): whole (a graph break is an
    error, not a silent split), static shapes, mode "reduce-overhead" on CUDA."""
    mode = "reduce-overhead" if device.type == "cuda" else None
    return torch.compile(fn, fullgraph=True, dynamic=False, mode=mode)  # type: ignore[return-value]


def mark_static(tensors: list[torch.Tensor]) -> None:
    """On CUDA, tell ``torch.compile`` that ``tensors`` (state updated in place) keep their storage, so that a CUDA graph
    that mutates them is recorded and replayed instead of skipped; nothing on other devices."""
    for tensor in tensors:
        if tensor.device.type == "cuda":
            torch._dynamo.mark_static_address(tensor)
