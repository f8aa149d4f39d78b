"""Argument checks shared across eqc: one clear error message per kind of mistake."""

from __future__ import annotations


def check_int(value: object, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` if it is a Python int (not a bool) within ``[low, high]``; else raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        hint = " (convert with int())" if hasattr(value, "__index__") and not isinstance(value, bool) else ""
        raise TypeError(f"{name} must be a Python int, got {type(value).__name__} {value!r}{hint}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
        raise ValueError(f"{name} must be in {bounds}, got {value}")
    return value
