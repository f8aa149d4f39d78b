"""Results a ``reproduce`` run may reuse: each saved beside a key naming exactly what produced it.

A key holds what a result depends on (games, decks, group, hidden scheme, ...) and a SHA-256 of
every agent's files (a policy directory's ``policy.json`` and weights, a run's ``checkpoint.pt``).
A result is reused only when its saved key equals the new one, so a changed, added or retrained
agent is played again. The code that computed it is not in the key: reuse only results of the same
eqc (``reproduce(reuse=False)``, the default, plays everything).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from eqc.domains.hanabi.agent.files import POLICY_JSON, POLICY_WEIGHTS, is_policy_dir, resolve
from eqc.io import json_safe, write_json_atomic

__all__ = ["ResultFileError", "agent_digests", "check_result_path", "load_result", "save_result"]


class ResultFileError(ValueError):
    """A path where a result is to be saved that holds something else (a directory)."""


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


def load_result(path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    """The result saved at ``path`` under an equal ``key``, else None (missing, unreadable or another key)."""
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("key") != json_safe(key):
        return None
    return saved.get("result")


def save_result(path: Path, key: dict[str, Any], result: dict[str, Any]) -> None:
    """Save ``result`` with the ``key`` that produced it (atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, json_safe({"key": key, "result": result}))
