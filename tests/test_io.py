"""eqc.io: atomic writes that leave the old file on failure, and paths as result files record them."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from eqc.io import recorded_path, write_json_atomic


def test_atomic_json_write_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    write_json_atomic(path, {"a": 1.0})
    write_json_atomic(path, {"b": 2.0})
    assert json.loads(path.read_text()) == {"b": 2.0}
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    with pytest.raises(TypeError):
        write_json_atomic(path, {"c": object()})
    with pytest.raises(ValueError):
        write_json_atomic(path, {"c": float("nan")})  # strict JSON: no NaN token
    assert json.loads(path.read_text()) == {"b": 2.0}  # a failed write leaves the old file
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_recorded_paths_are_relative_inside_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inside = tmp_path / "results" / "agents" / "op" / "seed_0"
    inside.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert recorded_path(inside) == "results/agents/op/seed_0"
    assert recorded_path("results/agents/../agents/op/seed_0") == "results/agents/op/seed_0"
    outside = tmp_path.parent / "elsewhere"
    assert recorded_path(outside) == str(outside.resolve())  # outside the working directory: absolute
