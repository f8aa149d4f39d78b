"""Files that must never be left half-written: write to a temporary file, fsync, rename over the target.

A kill at any moment leaves either the old file or the new one; a failed write (a full disk)
leaves the old one and no temporary file. The directory is fsync'ed after the rename so the
rename itself survives a crash. Files get mode 0644 (readable by others, as results should be;
a bare temporary file would be 0600).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, overload

__all__ = ["JsonRecord", "atomic_write", "json_safe", "recorded_path", "write_json_atomic", "write_text_atomic"]


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], Any], *, mode: int = 0o644) -> Path:
    """Call ``write(file)`` on a binary temporary file beside ``path``, fsync it, rename it over ``path``."""
    path = Path(path)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as f:
            os.fchmod(f.fileno(), mode)
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return path


def write_text_atomic(path: str | Path, text: str, *, mode: int = 0o644) -> Path:
    """Write UTF-8 ``text`` atomically (see the module docstring)."""
    return atomic_write(path, lambda f: f.write(text.encode("utf-8")), mode=mode)


def read_json(path: str | Path, what: str) -> object:
    """The JSON value in the file at ``path``, a ``what`` (e.g. "candidate-set record"): ``FileNotFoundError`` when there
    is none, ``ValueError`` naming the file when it cannot be read or is not JSON."""
    p = Path(path)
    try:
        return json.loads(p.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"no {what} at {p}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{p} is not a readable JSON {what}: {e}") from None


def write_json_atomic(path: str | Path, data: object, *, mode: int = 0o644) -> Path:
    """Write ``data`` as indented JSON atomically. Strict JSON: NaN and infinities are refused
    (``ValueError``) rather than written as non-standard tokens; pass :func:`json_safe` data to
    write them as null. Returns ``path``."""
    text = json.dumps(data, indent=2, allow_nan=False) + "\n"
    return write_text_atomic(path, text, mode=mode)


@overload
def json_safe(value: dict[str, Any]) -> dict[str, Any]: ...


@overload
def json_safe(value: object) -> object: ...


def json_safe(value: object) -> object:
    """``value`` with every NaN or infinite float (in nested dicts, lists, tuples) replaced by None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


class JsonRecord:
    """A mixin for the frozen dataclasses of results: :meth:`as_dict` gives every field by name, in order."""

    def as_dict(self) -> dict[str, object]:
        """The fields as a JSON-ready dict (tuples as lists)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(self).items()}


def recorded_path(path: str | Path) -> str:
    """``path`` as a result file records it: relative to the working directory when it lies inside it (a
    file written in a clone names the clone's agents the same way on every machine), else absolute."""
    absolute = Path(path).resolve()
    try:
        return str(absolute.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(absolute)
