"""Files that must never be left half-written: write to a temporary file, then rename over the target."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

__all__ = ["write_json_atomic"]


def write_json_atomic(path: str | Path, data: object, *, mode: int = 0o644) -> Path:
    """Write ``data`` as JSON to a temporary file next to ``path``, then ``os.replace`` it into place.

    The file gets permissions ``mode`` (default 0644: readable by others, as a results file
    should be; a bare temporary file would be 0600). Strict JSON: NaN and infinities are refused
    (``ValueError``) rather than written as non-standard tokens. On any error the old file, if
    any, is left untouched and no temporary file remains. Returns ``path``.
    """
    path = Path(path)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as f:
            os.fchmod(f.fileno(), mode)
            json.dump(data, f, indent=2, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
