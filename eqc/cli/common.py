"""Helpers shared by the ``eqc`` subcommands: the ``--threads`` flag and flag types that validate up front.

Every flag is checked while argparse parses it, before any work starts: a bad value exits with
code 2, the subcommand's usage line and ``argument --flag: <what is wrong>``. Each ``type=``
callable below takes the flag's text and returns the parsed value or raises
``argparse.ArgumentTypeError``; the value checks themselves are :mod:`eqc._checks`'.

A problem only found when a command runs (an output directory that cannot be created) is
raised as :class:`FlagError`; ``eqc.cli.main`` turns it into the same usage error.

Threads: torch defaults to one CPU thread per core. eqc's networks and batched environments are
small, and on a busy machine ``HanabiBatch`` at 1024 games ran 48k steps/s with one thread and
5.6k with two (OpenMP threads spinning while they wait; ``benchmarks/RESULTS.md``). So every command
that computes takes ``--threads`` (:func:`add_threads_flag`: default 1, or the config's ``[run] threads``
for commands that train) and ``eqc.cli.main`` calls ``torch.set_num_threads`` with it before the
command does any work.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from pathlib import Path

import torch

from eqc._checks import check_device, check_float
from eqc.domains.hanabi.config.agent import REQUESTED_PRECISIONS

__all__ = [
    "MAX_SEED",
    "FlagError",
    "add_threads_flag",
    "apply_threads",
    "check_compile",
    "device",
    "float_in",
    "int_in",
    "non_negative_int",
    "output_dir",
    "positive_int",
    "prepare_output_dir",
    "seed",
    "seed_list",
]

#: Largest seed accepted by ``--seed`` (``torch.Generator.manual_seed`` takes 64-bit values).
MAX_SEED = 2**63 - 1


class FlagError(Exception):
    """A flag's value found unusable while the command runs (before any work); ``eqc`` exits 2 with usage.

    Args:
        flag: the flag as typed, e.g. ``"--out"``.
        message: what is wrong with its value.
    """

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"argument {flag}: {message}")
        self.flag = flag
        self.message = message


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def int_in(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """A ``type=`` for an integer within ``[low, high]`` (either bound may be None).

    Example: ``parser.add_argument("--seeds", type=int_in(2))`` accepts 2, 3, ...
    """

    def parse(text: str) -> int:
        value = _int(text)
        if (low is not None and value < low) or (high is not None and value > high):
            if high is None:
                raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text}")
            raise argparse.ArgumentTypeError(f"must be an integer in [{'-inf' if low is None else low}, {high}], got {text}")
        return value

    parse.__name__ = "int"
    return parse


def positive_int(text: str) -> int:
    """``type=`` for an integer >= 1."""
    return int_in(1)(text)


def non_negative_int(text: str) -> int:
    """``type=`` for an integer >= 0."""
    return int_in(0)(text)


def seed(text: str) -> int:
    """``type=`` for a seed: an integer in ``[0, 2**63 - 1]`` (what ``torch.Generator.manual_seed`` accepts)."""
    value = _int(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**63 - 1], got {text}")
    return value


_SEEDS = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


def seed_list(minimum: int = 1, *, distinct: bool = False) -> Callable[[str], list[int]]:
    """``type=`` for a pool's seeds, one agent each: ``"0-9"``, ``"3"`` or ``"0,2,5-7"`` (sorted, without
    repeats), at least ``minimum`` of them, each in ``[0, 2**63 - 1]``; with ``distinct`` a seed named twice is
    refused (else it is kept once)."""

    def parse(text: str) -> list[int]:
        values: set[int] = set()
        for part in text.split(","):
            match = _SEEDS.match(part)
            if not match:
                raise argparse.ArgumentTypeError(f"must look like '0-9', '3' or '0,2,5-7', got {text!r}")
            low, high = int(match[1]), int(match[2] or match[1])
            if high < low:
                raise argparse.ArgumentTypeError(f"seed range {part.strip()!r} is empty (write low-high)")
            if high - low >= 10_000:
                raise argparse.ArgumentTypeError(f"seed range {part.strip()!r} has more than 10,000 seeds")
            if high > MAX_SEED:
                raise argparse.ArgumentTypeError(f"seeds must be at most 2**63 - 1, got {high}")
            repeated = values.intersection(range(low, high + 1)) if distinct else set()
            if repeated:
                raise argparse.ArgumentTypeError(f"seed {min(repeated)} is named twice in {text!r} (each seed trains one agent)")
            values.update(range(low, high + 1))
        if len(values) < minimum:
            raise argparse.ArgumentTypeError(f"must name at least {minimum} seeds (one agent each), got {text!r}")
        return sorted(values)

    return parse


def float_in(
    low: float | None = None, high: float | None = None, *, low_open: bool = False, high_open: bool = False
) -> Callable[[str], float]:
    """A ``type=`` for a finite float within the bounds (open where asked); NaN and infinities are refused.

    Example: ``parser.add_argument("--lr", type=float_in(0, low_open=True))`` accepts ``lr > 0``.
    """

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        try:
            return check_float(value, "value", low=low, high=high, low_open=low_open, high_open=high_open)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err).replace("value must", "must", 1)) from None

    parse.__name__ = "float"
    return parse


def device(text: str) -> str:
    """``type=`` for a torch device name, checked by :func:`eqc._checks.check_device` (``"gpu"``, absent CUDA refused).

    Returns the canonical name (``"cpu"``, ``"cuda:0"``).
    """
    try:
        device = check_device(text, "device")
    except ValueError as err:
        message = str(err).replace("device is ", "", 1).replace("device must", "must", 1)
        raise argparse.ArgumentTypeError(message) from None
    if device.type not in ("cpu", "cuda"):  # meta/mps: no real data, or untested here
        raise argparse.ArgumentTypeError(f"must be 'cpu' or 'cuda[:i]' (eqc's commands run on those), got {text!r}")
    return str(device)


def device_name(text: str) -> str:
    """``type=`` for the name of a device used on other machines (Ray workers): ``cpu`` or ``cuda[:i]``, checked
    for its form only; :func:`device` checks one used here. Returns the canonical name (``"cuda:1"``, ``"cuda"``)."""
    try:
        device = torch.device(text)
    except RuntimeError:
        raise argparse.ArgumentTypeError(f"must be a torch device such as 'cpu', 'cuda' or 'cuda:1', got {text!r}") from None
    if device.type not in ("cpu", "cuda"):
        raise argparse.ArgumentTypeError(f"must be 'cpu' or 'cuda[:i]' (eqc's commands run on those), got {text!r}")
    return str(device)


def output_dir(text: str) -> Path:
    """``type=`` for an output directory: not empty, not a file, and creatable and writable by this user.

    Nothing is created while parsing; the nearest existing ancestor must be a writable directory.
    The command then calls :func:`prepare_output_dir` before its work, which creates it and
    proves it writable.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a directory path, got an empty string")
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r} exists and is not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise argparse.ArgumentTypeError(f"directory {text!r} is not writable")
        return path
    ancestor = path.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise argparse.ArgumentTypeError(f"cannot create {text!r}: {str(ancestor)!r} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot create {text!r}: directory {str(ancestor)!r} is not writable")
    return path


def check_compile(compile: bool, device_text: str) -> None:
    """``[run] compile = true`` on ``device_text``: a missing or broken C++ compiler (or Triton) named as a ``--device``
    flag error before any work (:func:`eqc._compile.check_compilable`); nothing when ``compile`` is false."""
    if not compile:
        return
    from eqc._compile import check_compilable

    try:
        check_compilable(torch.device(device_text))
    except (ValueError, RuntimeError) as exc:
        raise FlagError("--device", f"[run] compile = true: {exc}") from None


def prepare_output_dir(path: Path, flag: str = "--out") -> Path:
    """Create ``path`` (with parents) and check a file can be written there; else raise :class:`FlagError` naming ``flag``."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".eqc-write-test-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as err:
        raise FlagError(flag, f"cannot write to {str(path)!r}: {err.strerror or err}") from None
    return path


def add_threads_flag(parser: argparse.ArgumentParser, *, trains: bool = False) -> None:
    """Add ``--threads N`` (torch CPU threads); ``eqc.cli.main`` applies it to this process before the command
    runs. For commands that train (``trains``) the default is None: the config's ``[run] threads``, and a
    given value is written into every config trained, so the flag wins in every process, Ray workers included."""
    default = "the config's [run] threads" if trains else "1"
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=None if trains else 1,
        help=f"torch CPU threads (default {default}: faster than one per core for eqc's small networks, "
        "much faster on a shared machine)",
    )


def add_precision_flag(parser: argparse.ArgumentParser, *, trains: bool = False) -> None:
    """Add ``--precision auto|fp32|bf16``, a requested precision (:mod:`eqc.domains.hanabi.agent.precision` states the
    rule of "auto"). For commands that train the default is the config's ``[network] precision`` (itself "auto" by
    default); otherwise "auto"."""
    if trains:
        rule = ("auto: bf16 where it is faster than fp32 on this device (an x86 CPU with AMX, amx_bf16 and amx_tile; "
                "aarch64 bf16; CUDA compute capability >= 8.0; with avx512_bf16 alone a timed training step decides), "
                "else fp32; a resumed run keeps the "
                "precision it started with (default: the config's [network] precision)")
    else:
        rule = ("auto (default): each agent in the precision it was trained in where bf16 is faster than fp32 on this device, "
                "else fp32 (auto never moves an fp32-trained agent to bf16)")
    parser.add_argument("--precision", choices=REQUESTED_PRECISIONS, default=None if trains else "auto",
                        help=f"network precision: fp32, bf16 (bfloat16 autocast; Q-values stay float32; slower than fp32 "
                        f"where this device emulates it or lacks AMX) or {rule}")


def apply_threads(args: argparse.Namespace) -> int | None:
    """``torch.set_num_threads(args.threads)`` when the command has ``--threads``; returns the count set (or None)."""
    if not hasattr(args, "threads"):
        return None
    threads = 1 if args.threads is None else args.threads  # None: a training command's default, 1 in this process
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"--threads must be a positive integer, got {threads!r}")
    torch.set_num_threads(threads)
    return threads
