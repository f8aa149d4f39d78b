"""The typed table record: every committed table reads back and writes byte for byte as it was, a malformed or foreign
file is refused naming the key, and the CLI's choices are the scales' data."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from eqc.cli import build_parser
from eqc.domains.hanabi.reproduce.record import TableRecord, read_table
from eqc.domains.hanabi.reproduce.schema import RecordError
from eqc.domains.hanabi.reproduce.specs import SCALES

ROOT = Path(__file__).resolve().parents[4]
TABLES = sorted(ROOT.glob("results/*/table*.json"))


def _written(data: dict) -> str:
    """The text ``write_json_atomic`` writes for ``data``."""
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def test_the_committed_tables_are_found() -> None:
    assert len(TABLES) >= 10 and {p.parent.name for p in TABLES} >= {"cpu", "induced", "colour", "touched", "ers", "entropy"}


@pytest.mark.parametrize("path", TABLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_table_round_trips_byte_for_byte(path: Path) -> None:
    text = path.read_text()
    record = read_table(path)
    assert record.to_json() == json.loads(text) and _written(record.to_json()) == text
    assert TableRecord.from_json(record.to_json()) == record or _has_nan(record)  # NaN != NaN in dataclass equality


def _has_nan(record: TableRecord) -> bool:
    return any(isinstance(v, float) and math.isnan(v) for cell in record.cells.values() for v in vars(cell).values())


def test_a_record_reads_as_typed_values() -> None:
    record = read_table(ROOT / "results" / "ers" / "table1.json")
    cell, test = record.cells["OP"], record.tests["ER-OP 0.35 vs OP"]
    assert record.registered == "results/ers/PREREGISTRATION.md" and cell.agents == 24 and cell.reused
    assert len(cell.matrix) == 24 and cell.matching is not None and cell.matching[0] == "0/slots_012"
    assert test.kind == "matched" and test.comparison.agents == (24, 24) and test.interval_kind is None and test.adjusted_p is None
    assert record.not_run_tests["ER-OP > OP"].role == "primary" and record.paper == {}
    assert all(a.max_score == 9 for pool in record.relabelled.values() for a in pool.agents)
    table3 = read_table(ROOT / "results" / "cpu" / "table3.json")
    assert math.isnan(table3.paper["identity"].bomb_out_rate)  # the paper gives none: null in the file, NaN in the record


def _malformed(edit) -> str:
    data = json.loads((ROOT / "results" / "cpu" / "table1.json").read_text())
    edit(data)
    with pytest.raises(RecordError) as info:
        TableRecord.from_json(data)
    return str(info.value)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.pop("cells"), "['cells']: missing"),
    (lambda d: d["cells"]["OP"].update(xp_mean="high"), "['cells']['OP']['xp_mean']: expected a number (null for NaN), got str 'high'"),
    (lambda d: d["cells"]["OP"].update(agents=5.0), "['cells']['OP']['agents']: expected an integer, got float 5.0"),
    (lambda d: d["cells"]["OP"]["matrix"][1].__setitem__(0, "x"), "['cells']['OP']['matrix'][1][0]: expected a number"),
    (lambda d: next(iter(d["tests"].values())).pop("verdict"), "['tests']['D10-equivariant > OP']['verdict']: missing"),
    (lambda d: next(iter(d["tests"].values())).update(cells=["a"]), "['tests']['D10-equivariant > OP']['cells']: expected a list of 2"),
    (lambda d: d["relabelled"]["op"]["agents"][0].update(extra=1), "['relabelled']['op']['agents'][0]['extra']: unexpected key"),
    (lambda d: d.update(tests=[]), "['tests']: expected a JSON object, got list []"),
    (lambda d: d.update(versions={"eqc": 1}), "['versions']['eqc']: expected a string, got int 1"),
])
def test_a_malformed_record_is_refused_naming_the_key(edit, message: str) -> None:
    assert message in _malformed(edit)


def test_a_foreign_file_is_refused_naming_the_file_and_the_key(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"conventions.json is not a table record: \['table'\]: missing"):
        read_table(ROOT / "results" / "colour" / "conventions.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(RecordError, match="is not a table record: the record: expected a JSON object, got list"):
        read_table(tmp_path / "list.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match=r"broken\.json is not a readable JSON table record"):
        read_table(tmp_path / "broken.json")


def test_optional_keys_are_written_only_when_set() -> None:
    """A cell writes ``reused`` only when reused and ``matching`` only when known; a test ``interval_kind`` only when its
    interval is not its own (a fresh cell's saved result has neither)."""
    record = read_table(ROOT / "results" / "cpu" / "table1.json")
    cell = replace(record.cells["OP"], reused=False, matching=None)
    assert "reused" not in cell.to_json() and "matching" not in cell.to_json() and type(cell).from_json(cell.to_json()) == cell
    primary, exploratory = record.tests["D10-equivariant > OP"], record.tests["D10-equivariant > C5-equivariant"]
    assert primary.to_json()["interval_kind"] == "simultaneous (Bonferroni)" and "interval_kind" not in exploratory.to_json()


def test_the_cli_choices_are_the_scales_and_their_tables() -> None:
    parser = build_parser()
    for name in ("hanabi", "reproduce"):
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    actions = {a.dest: a for a in parser._actions}
    assert list(actions["scale"].choices) == list(SCALES)
    tables = list(dict.fromkeys(t for scale in SCALES.values() for t in scale.tables))
    assert list(actions["table"].choices) == [*tables, "conventions", "entropy", "codes"]
    assert all(f"{name}: {scale.summary}" in actions["scale"].help for name, scale in SCALES.items())
