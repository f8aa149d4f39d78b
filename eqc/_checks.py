"""Argument checks shared across eqc: one clear error message per kind of mistake.

One rule for exception types everywhere in eqc: a value of the wrong *type* raises
``TypeError``; a value of the right type that is not allowed raises ``ValueError``; each
message names the argument, says what was wrong and what is allowed. Use these helpers instead
of hand-written checks (and never ``assert``, which ``python -O`` removes).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import torch

__all__ = [
    "check_bool",
    "check_choice",
    "check_device",
    "check_float",
    "check_int",
    "check_integers",
    "check_list",
    "check_tensor",
    "position",
]


def check_int(value: object, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` if it is a Python int (not a bool) within ``[low, high]``; else raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        hint = " (convert with int())" if hasattr(value, "__index__") and not isinstance(value, bool) else ""
        raise TypeError(f"{name} must be a Python int, got {type(value).__name__} {value!r}{hint}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
        raise ValueError(f"{name} must be in {bounds}, got {value}")
    return value


def check_integers(
    value: object, name: str, *, what: str, high: int | None = None, check_range: bool = True, context: str = ""
) -> torch.Tensor:
    """Return ``value`` (a tensor, or a possibly nested sequence of ints) as a ``torch.long`` tensor on its device.

    ``what`` names what the integers are (``"element indices"``, ``"a permutation"``) in the messages. A value
    that is not integers (None, a string, floats, bools) raises ``TypeError``. With ``high``, the values must
    lie in ``0..high-1`` (``ValueError``, followed by ``context``); that is checked only for CPU tensors and only
    with ``check_range``, since reading the values of a tensor on another device would wait for it.
    """
    if isinstance(value, torch.Tensor):
        tensor = value
    else:
        if value is None or isinstance(value, (str, bytes, bool, float, complex)):
            raise TypeError(f"{name} must be {what} given as a LongTensor or ints, got {type(value).__name__} {value!r:.80}")
        try:
            tensor = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError) as err:
            raise TypeError(f"{name} must be {what} given as a LongTensor or ints, got {type(value).__name__}: {err}") from None
        if tensor.numel() == 0:  # [] holds no integers to infer the dtype from
            tensor = tensor.long()
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
        raise TypeError(f"{name} must hold integers ({what}), got dtype {tensor.dtype}")
    if high is not None and check_range and tensor.device.type == "cpu" and tensor.numel():
        low_value, high_value = int(tensor.min()), int(tensor.max())
        if low_value < 0 or high_value >= high:
            bad = low_value if low_value < 0 else high_value
            raise ValueError(f"{name} holds {what} outside 0..{high - 1} (e.g. {bad}){context}")
    return tensor.long()


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` if it is a bool; else raise TypeError naming ``name``."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool (True or False), got {type(value).__name__} {value!r}")
    return value


def check_float(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float within the bounds (open where asked); ints are accepted.

    NaN and infinities are always refused: a tolerance or rate of NaN would make every comparison
    silently pass or fail.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        bounds = f"{left}{low if low is not None else '-inf'}, {high if high is not None else 'inf'}{right}"
        raise ValueError(f"{name} must be in {bounds}, got {value}")
    return value


def check_choice(value: object, name: str, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``; else raise ValueError listing them."""
    options = list(choices)
    if not any(value == c and type(value) is type(c) for c in options):
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def check_list(value: object, name: str, *, item: str = "items") -> list[Any]:
    """Return ``value`` as a list if it is a list, tuple or other non-string iterable; else raise TypeError.

    A single object where a list is expected (``Layout(Block(...))``, ``from_generators(None)``)
    is the usual mistake this catches, with a message that says what to wrap.
    """
    if value is None or isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a list of {item}, got {type(value).__name__} {value!r:.80}")
    return list(value)


def check_device(value: object, name: str = "device") -> torch.device:
    """Return the canonical ``torch.device`` for ``value``; refuse unknown names and absent CUDA clearly.

    ``"gpu"`` is not a torch device name (use ``"cuda"``); ``"cuda"`` without a usable CUDA build
    is refused here rather than deep inside the first tensor operation.
    """
    if isinstance(value, torch.device):
        device = value
    elif isinstance(value, str):
        try:
            device = torch.device(value)
        except RuntimeError:
            hint = " (did you mean 'cuda'?)" if value.lower().startswith("gpu") else ""
            raise ValueError(f"{name} must be a torch device such as 'cpu', 'cuda' or 'cuda:1', got {value!r}{hint}") from None
    else:
        raise TypeError(f"{name} must be a str or torch.device, got {type(value).__name__} {value!r}")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"{name} is {value!r} but CUDA is not available on this machine (torch {torch.__version__}); use 'cpu'")
        index = device.index if device.index is not None else torch.cuda.current_device()
        if index >= torch.cuda.device_count():
            raise ValueError(f"{name} is {value!r} but only {torch.cuda.device_count()} CUDA device(s) exist")
        device = torch.device("cuda", index)
    elif device.type not in ("cpu", "meta", "mps"):
        raise ValueError(f"{name} must be 'cpu' or 'cuda[:i]', got {value!r}")
    return device


def check_tensor(
    value: object,
    name: str,
    *,
    dtypes: Sequence[torch.dtype] | None = None,
    dim: int | None = None,
    last: int | None = None,
) -> torch.Tensor:
    """Return ``value`` if it is a torch.Tensor with an allowed dtype, number of dims and last size.

    A numpy array or list is refused with "must be a torch.Tensor" (convert with ``torch.as_tensor``)
    before any shape is looked at, so the message names the real mistake.
    """
    if not isinstance(value, torch.Tensor):
        hint = " (convert with torch.as_tensor)" if hasattr(value, "__array__") or isinstance(value, (list, tuple)) else ""
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}{hint}")
    if dtypes is not None and value.dtype not in dtypes:
        raise TypeError(f"{name} must have dtype in {[str(d) for d in dtypes]}, got {value.dtype}")
    if dim is not None and value.dim() != dim:
        raise ValueError(f"{name} must have {dim} dimension(s), got shape {list(value.shape)}")
    if last is not None and (value.dim() == 0 or value.shape[-1] != last):
        raise ValueError(f"{name} must have last dimension {last}, got shape {list(value.shape)}")
    return value


def position(flat_index: int, batch: Sequence[int]) -> str:
    """``"[i, j]"``: where entry ``flat_index`` of a flattened batch of shape ``batch`` sits (``""`` when ``batch`` is ``[]``)."""
    coords = []
    for size in reversed(batch):
        coords.append(flat_index % size)
        flat_index //= size
    return f"[{', '.join(str(c) for c in reversed(coords))}]" if coords else ""
