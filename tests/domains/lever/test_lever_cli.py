"""`eqc lever`: the subcommand writes the JSON atomically and the heatmap."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from eqc.cli_lever import add_lever_parser, run_lever
from eqc.domains.lever.experiment import format_table, lever_experiment
from eqc.io import write_json_atomic


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="eqc")
    add_lever_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_run_lever_writes_json_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = parse(["lever", "--seeds", "3", "--out", str(tmp_path), "--steps", "40", "--restarts", "6", "--no-progress"])
    assert args.run is run_lever
    assert run_lever(args) == 0
    data = json.loads((tmp_path / "lever_xp.json").read_text())
    assert list(data) == ["sp", "op", "gop", "eq", "sp+sym"]
    for record in data.values():
        assert set(record) == {"sp_mean", "xp_mean", "xp_sem"}
        assert all(isinstance(v, float) for v in record.values())
    assert data["op"]["xp_mean"] == pytest.approx(0.9, abs=0.05)
    assert (tmp_path / "lever_xp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lever_xp.json", "lever_xp.png"]  # no temp files left
    out = capsys.readouterr().out
    assert "sp+sym" in out and "XP" in out


def test_defaults_and_options() -> None:
    args = parse(["lever"])
    assert (args.seeds, args.device, args.steps, args.threads) == (16, "cpu", 100, 1)
    assert parse(["lever", "--payoffs", "1,1,0.5"]).payoffs == [1.0, 1.0, 0.5]
    with pytest.raises(SystemExit):
        parse(["lever", "--seeds", "0"])


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="seeds"):
        lever_experiment(seeds=1, out=tmp_path)
    with pytest.raises(SystemExit):
        parse(["lever", "--payoffs", "a,b"])


def test_atomic_json_write_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    write_json_atomic(path, {"a": 1.0})
    write_json_atomic(path, {"b": 2.0})
    assert json.loads(path.read_text()) == {"b": 2.0}
    with pytest.raises(TypeError):
        write_json_atomic(path, {"c": object()})
    assert json.loads(path.read_text()) == {"b": 2.0}  # a failed write leaves the old file
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_table_format() -> None:
    from eqc.domains.lever import summarize
    import torch

    table = format_table({"sp": summarize(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))})
    assert table.splitlines()[1].split() == ["sp", "1.000", "0.000", "0.000"]


def test_bad_payoffs_give_an_error_message_not_a_traceback(tmp_path, capsys):
    from eqc.cli import main

    assert main(["lever", "--seeds", "2", "--payoffs", "1", "--out", str(tmp_path), "--no-progress"]) == 2
    assert "eqc lever: error:" in capsys.readouterr().err
