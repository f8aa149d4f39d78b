"""eqc.io: atomic writes that leave the old file on failure, paths as result files record them, records as dicts."""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from eqc.io import JsonRecord, recorded_path, write_json_atomic


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


def test_a_record_lists_its_fields_in_order_with_tuples_as_lists() -> None:
    @dataclass(frozen=True)
    class Result(JsonRecord):
        mean: float
        per_element: tuple[float, ...]
        group: str

    record = Result(1.5, (0.1, 0.2), "D10").as_dict()
    assert record == {"mean": 1.5, "per_element": [0.1, 0.2], "group": "D10"} and list(record) == ["mean", "per_element", "group"]
