"""The `eqc` command and the flag helpers every subcommand shares (eqc.cli.common)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import eqc
import eqc.cli
from eqc.cli import build_parser, main
from eqc.cli import common as common


def parser_with(flag_type: object, *, threads: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--x", type=flag_type)
    if threads:
        common.add_threads_flag(parser)
    return parser


def refused(parser: argparse.ArgumentParser, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: tool")
    return err


def test_int_types(capsys: pytest.CaptureFixture[str]) -> None:
    assert parser_with(common.positive_int).parse_args(["--x", "3"]).x == 3
    assert parser_with(common.non_negative_int).parse_args(["--x", "0"]).x == 0
    assert parser_with(common.int_in(2, 5)).parse_args(["--x", "5"]).x == 5
    assert "argument --x: must be an integer >= 1, got 0" in refused(parser_with(common.positive_int), ["--x", "0"], capsys)
    assert ">= 0, got -1" in refused(parser_with(common.non_negative_int), ["--x", "-1"], capsys)
    assert "in [2, 5], got 6" in refused(parser_with(common.int_in(2, 5)), ["--x", "6"], capsys)
    assert "must be an integer, got '1.5'" in refused(parser_with(common.positive_int), ["--x", "1.5"], capsys)


def test_seed(capsys: pytest.CaptureFixture[str]) -> None:
    parser = parser_with(common.seed)
    assert parser.parse_args(["--x", str(common.MAX_SEED)]).x == 2**63 - 1
    torch.Generator().manual_seed(common.MAX_SEED)  # the largest seed is one torch accepts
    for bad in (str(2**63), str(2**70), "-1"):
        assert "argument --x: must be an integer in [0, 2**63 - 1]" in refused(parser, ["--x", bad], capsys)


@pytest.mark.parametrize(
    ("text", "seeds"), [("0-3", [0, 1, 2, 3]), ("5", [5]), ("0,2,5-6", [0, 2, 5, 6]), (" 1 - 2 ", [1, 2]), ("3,3", [3])]
)
def test_seed_list(text: str, seeds: list[int]) -> None:
    assert parser_with(common.seed_list()).parse_args(["--x", text]).x == seeds


@pytest.mark.parametrize(
    ("text", "minimum", "message"),
    [("", 1, "must look like"), ("a-b", 1, "must look like"), ("5-2", 1, "is empty"), ("0-99999", 1, "10,000"),
     (f"0,{2**63}", 1, "at most 2**63 - 1"), ("4", 2, "at least 2 seeds"), ("4,4", 2, "at least 2 seeds")],
)
def test_seed_list_refuses(text: str, minimum: int, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert message in refused(parser_with(common.seed_list(minimum)), ["--x", text], capsys)


def test_seed_list_distinct(capsys: pytest.CaptureFixture[str]) -> None:
    """With ``distinct`` (``train --seeds``) a seed named twice is refused, not folded into one."""
    parser = parser_with(common.seed_list(distinct=True))
    assert parser.parse_args(["--x", "0-7"]).x == list(range(8))
    assert parser.parse_args(["--x", "5,0,2"]).x == [0, 2, 5]
    for text, seed in (("3,3", 3), ("0-4,2-6", 2), ("4,0-9", 4)):
        assert f"argument --x: seed {seed} is named twice" in refused(parser, ["--x", text], capsys)


def test_float_in(capsys: pytest.CaptureFixture[str]) -> None:
    parser = parser_with(common.float_in(0.0, 1.0, low_open=True))
    assert parser.parse_args(["--x", "1"]).x == 1.0
    assert "must be in (0.0, 1.0], got 0.0" in refused(parser, ["--x", "0"], capsys)
    for bad in ("inf", "-inf", "nan"):
        assert "argument --x: must be a finite number" in refused(parser, [f"--x={bad}"], capsys)
    assert "must be a number, got 'x'" in refused(parser, ["--x", "x"], capsys)


def test_device(capsys: pytest.CaptureFixture[str]) -> None:
    parser = parser_with(common.device)
    assert parser.parse_args(["--x", "cpu"]).x == "cpu"
    assert "did you mean 'cuda'" in refused(parser, ["--x", "gpu"], capsys)
    assert "argument --x: must be 'cpu' or 'cuda[:i]'" in refused(parser, ["--x", "xla"], capsys)
    if not torch.cuda.is_available():
        assert "'cuda' but CUDA is not available" in refused(parser, ["--x", "cuda"], capsys)


def test_output_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = parser_with(common.output_dir)
    assert parser.parse_args(["--x", str(tmp_path / "a" / "b")]).x == tmp_path / "a" / "b"
    assert not (tmp_path / "a").exists()  # parsing creates nothing
    assert "empty string" in refused(parser, ["--x", " "], capsys)
    (tmp_path / "f").write_text("")
    assert "exists and is not a directory" in refused(parser, ["--x", str(tmp_path / "f")], capsys)
    assert "is a file, not a directory" in refused(parser, ["--x", str(tmp_path / "f" / "g")], capsys)
    made = common.prepare_output_dir(tmp_path / "a" / "b")
    assert made.is_dir() and list(made.iterdir()) == []  # the write probe is gone
    with pytest.raises(common.FlagError, match="argument --out: cannot write to") as info:
        common.prepare_output_dir(tmp_path / "f" / "g")
    assert info.value.flag == "--out"


def test_output_dir_refuses_an_unwritable_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As root every directory is writable, so simulate the permission check failing (os.access is what output_dir asks).
    monkeypatch.setattr(common.os, "access", lambda path, mode: False)
    parser = parser_with(common.output_dir)
    assert f"directory {str(tmp_path)!r} is not writable" in refused(parser, ["--x", str(tmp_path)], capsys)
    assert "cannot create" in refused(parser, ["--x", str(tmp_path / "new")], capsys)


def test_threads_flag_applies_before_the_command_runs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    parser = parser_with(int, threads=True)
    assert parser.parse_args([]).threads == 1
    assert ">= 1, got 0" in refused(parser, ["--threads", "0"], capsys)
    before = torch.get_num_threads()
    try:
        assert common.apply_threads(parser.parse_args(["--threads", "2"])) == 2
        assert torch.get_num_threads() == 2
        assert common.apply_threads(argparse.Namespace()) is None  # a command without the flag
        seen: list[int] = []
        monkeypatch.setattr(eqc.cli, "_check", lambda args: seen.append(torch.get_num_threads()) or 0)
        assert main(["check"]) == 0 and seen == [1]  # the default, set before the command ran
        assert main(["check", "--threads", "2"]) == 0 and seen == [1, 2]
    finally:
        torch.set_num_threads(before)


def test_every_subcommand_has_threads() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"check", "lever"} <= set(subparsers.choices)
    for name in ("check", "lever"):
        flags = {option for action in subparsers.choices[name]._actions for option in action.option_strings}
        assert "--threads" in flags, name


def test_a_flag_error_raised_by_a_command_exits_2_with_its_usage(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(args: argparse.Namespace) -> int:
        raise common.FlagError("--out", "cannot write there")

    monkeypatch.setattr(eqc.cli, "_check", broken)
    with pytest.raises(SystemExit) as exit_info:
        main(["check"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: eqc check") and "eqc check: error: argument --out: cannot write there" in err
    outer = argparse.ArgumentParser(prog="eqc")
    inner = outer.add_subparsers(dest="command").add_parser("game")
    leaf = inner.add_subparsers(dest="game_command").add_parser("train")
    assert eqc.cli._command_parser(outer, outer.parse_args(["game", "train"])) is leaf


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"eqc {eqc.__version__}"


def test_help_describes_check(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "eqc check" in text and "rho(g*h) = rho(g) rho(h)" in text and "eqc lever" in text
    assert "--version" in text


def test_check_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "S5" in out or "symmetric" in out
    assert len(out.strip().splitlines()) == 4


def test_the_installed_command() -> None:
    done = subprocess.run([sys.executable, "-m", "eqc.cli", "lever", "--lr", "inf"], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "argument --lr" in done.stderr and "Traceback" not in done.stderr


def test_an_interrupt_exits_130_with_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    parser = build_parser()
    args = parser.parse_args(["check"])
    monkeypatch.setattr(eqc.cli, "build_parser", lambda: parser)
    monkeypatch.setattr(args, "run", interrupted, raising=False)
    monkeypatch.setattr(parser, "parse_args", lambda argv: args)
    assert main(["check"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "eqc check: interrupted (a training run resumes from its last checkpoint)" and "Traceback" not in err
