"""Results a ``reproduce`` run may reuse: each saved beside a key naming exactly what produced it, and sealed.

A key holds what a result depends on (games, decks, group, hidden scheme, ...) and a SHA-256 of
every agent's files (a policy directory's ``policy.json`` and weights, a run's ``checkpoint.pt``).
A result is reused only when its saved key equals the new one, so a changed, added or retrained
agent is played again. The file seals key and result together (``sha256``: :func:`seal`), and a result
whose seal is missing or no longer matches (edited after it was saved), or whose numbers are impossible
(:func:`range_problem`: a score outside [0, the game's maximum], a rate outside [0, 1]), is refused with a
:class:`ReuseError` naming the file and the result. The code that computed it is not in the key: reuse
only results of the same eqc (``reproduce(reuse=False)``, the default, plays everything).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from eqc.domains.hanabi.agent.files import POLICY_JSON, POLICY_WEIGHTS, is_policy_dir, resolve
from eqc.io import json_safe, write_json_atomic

__all__ = ["ResultFileError", "ReuseError", "agent_digests", "check_result_path", "load_result", "range_problem", "save_result", "seal"]


class ResultFileError(ValueError):
    """A path where a result is to be saved that holds something else (a directory)."""


class ReuseError(ValueError):
    """A saved result that ``reuse`` cannot trust: unreadable, unsealed, edited after it was saved, or impossible numbers.

    Args:
        path: the result's file.
        what: the result, e.g. ``"cell 'OP'"``.
        problem: what is wrong with it.
    """

    def __init__(self, path: Path, what: str, problem: str) -> None:
        super().__init__(f"{path} ({what}): {problem}; run again without --reuse (reuse=False), which plays it again and "
                         "overwrites the file")
        self.path, self.what, self.problem = path, what, problem


def check_result_path(path: Path) -> None:
    """Raise :class:`ResultFileError` if ``path`` exists and is not a file (a result could not be saved there)."""
    if path.exists() and not path.is_file():
        raise ResultFileError(f"{path} is a directory, not a result file: remove it (reproduce writes that result there)")


def agent_digests(runs: list[Path]) -> list[str]:
    """SHA-256 of each agent's files, in order."""
    digests = []
    for run in runs:
        files = [run / POLICY_JSON, run / POLICY_WEIGHTS] if is_policy_dir(run) else [resolve(run)]
        digest = hashlib.sha256()
        for file in files:
            digest.update(file.read_bytes())
        digests.append(digest.hexdigest())
    return digests


def seal(key: dict[str, Any], result: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces, NaN as null) of ``key`` and ``result`` together."""
    body = json_safe({"key": key, "result": result})
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")).hexdigest()


def load_result(path: Path, key: dict[str, Any], what: str) -> dict[str, Any] | None:
    """The result saved at ``path`` under an equal ``key``, its seal checked; None when there is none or it was saved
    under another key (it is computed again). :class:`ReuseError` (naming ``what``, e.g. ``"cell 'OP'"``) for a file that
    is not a saved result, or a result of this key whose seal is missing or does not match."""
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReuseError(path, what, f"it is not readable JSON ({exc})") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("result"), dict):
        raise ReuseError(path, what, "it is not a saved result (a JSON object with 'key', 'result' and 'sha256')")
    if saved.get("key") != json_safe(key):
        return None
    if not isinstance(saved.get("sha256"), str):
        raise ReuseError(path, what, "it has no seal ('sha256'): it was saved before results were sealed, or edited since")
    if saved["sha256"] != seal(saved["key"], saved["result"]):
        raise ReuseError(path, what, "it was edited after it was saved: its key and numbers no longer match its seal ('sha256')")
    return saved["result"]


def save_result(path: Path, key: dict[str, Any], result: dict[str, Any]) -> None:
    """Save ``result`` with the ``key`` that produced it and their seal (atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {"sha256": seal(key, result), **json_safe({"key": key, "result": result})})


def range_problem(name: str, values: Iterable[object], low: float, high: float) -> str | None:
    """What is impossible in the saved field ``name``: a value that is not a finite number in [``low``, ``high``] (None
    when every value is one)."""
    for value in values:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            return f"its {name!r} holds {value!r}, not a finite number"
        if not low <= value <= high:
            return f"its {name!r} holds {value:g}, outside the possible range [{low:g}, {high:g}]"
    return None
