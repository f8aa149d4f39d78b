"""`eqc lever`: files written, every bad flag refused before training with exit code 2 and a usage line."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import torch

import eqc
import eqc.cli.lever
from eqc.cli import build_parser, main
from eqc.cli.lever import MAX_LEVERS
from eqc.domains.lever import RULES, lever_experiment, plot_cross_play
from eqc.domains.lever.experiment import format_table
from eqc.domains.lever.train import member_seeds
from eqc.evaluation import cross_play

QUICK = ["--steps", "40", "--restarts", "6", "--no-progress"]


@pytest.fixture
def no_training(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if training starts: bad flags must be found before any work."""

    def refuse(**kwargs: object) -> None:
        raise AssertionError("training started despite a bad flag")

    monkeypatch.setattr(eqc.cli.lever, "lever_experiment", refuse)


def run_bad(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``eqc`` expecting a usage error; return its stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: eqc lever"), err
    return err


def test_run_lever_writes_self_describing_json_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "new" / "dir"
    assert main(["lever", *QUICK, "--out", str(out), "--seeds", "7-9"]) == 0
    path = out / "lever_xp.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # readable by others, not a 0600 temporary file
    data = json.loads(path.read_text())
    assert list(data) == list(RULES)
    for rule, record in data.items():
        assert {"sp_mean", "xp_mean", "xp_sem"} <= set(record)  # the contract's three numbers
        assert all(isinstance(record[k], float) for k in ("sp_mean", "xp_mean", "xp_sem", "sp_sem"))
        matrix = torch.tensor(record["matrix"])
        assert matrix.shape == (3, 3)
        assert record["sp_mean"] == pytest.approx(float(matrix.diagonal().mean()))
        assert len(record["agent_seeds"]) == 3 and all(isinstance(s, int) for s in record["agent_seeds"])
        run = record["run"]
        assert run["eqc_version"] == eqc.__version__
        assert (run["seeds"], len(run["payoffs"])) == ([7, 8, 9], 10)
        assert run["config"]["steps"] == 40 and run["config"]["restarts"] == 6 and run["config"]["device"] == "cpu", rule
    assert data["op"]["xp_mean"] == pytest.approx(0.9, abs=0.05)
    assert data["sp+sym"]["agent_seeds"] == data["sp"]["agent_seeds"]  # the same networks, symmetrized
    assert (out / "lever_xp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in out.iterdir()) == ["lever_xp.json", "lever_xp.png"]  # no temporary files left
    printed = capsys.readouterr().out
    assert "sp+sym" in printed and "XP" in printed and str(path) in printed


def test_defaults_and_options() -> None:
    args = build_parser().parse_args(["lever"])
    assert (args.seeds, args.device, args.steps, args.threads) == (list(range(16)), "cpu", 100, 1)
    assert args.out == Path("runs/lever")
    args = build_parser().parse_args(["lever", "--payoffs", "1,1,0.5", "--seeds", f"0,{2**63 - 1}", "--lr", "1e-3"])
    assert (args.payoffs, args.seeds, args.lr) == ([1.0, 1.0, 0.5], [0, 2**63 - 1], 0.001)


def test_seeds_name_the_agents_of_each_pool(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[dict[str, object]] = []
    monkeypatch.setattr(eqc.cli.lever, "lever_experiment", lambda **kwargs: calls.append(kwargs) or {})
    monkeypatch.setattr(eqc.cli.lever, "format_table", lambda results: "table")
    assert main(["lever", "--seeds", "0-2,7", "--out", str(tmp_path)]) == 0
    assert calls[-1]["seeds"] == [0, 1, 2, 7]


@pytest.mark.parametrize("flag", ["--agents", "--seed"])
def test_a_pool_is_named_by_its_seeds_only(flag: str) -> None:
    """One spelling for a pool, as in ``eqc hanabi pool --seeds 0-9``: no agent count, no base seed."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["lever", flag, "5"])


def test_default_seeds_reproduce_the_agents_of_the_former_base_seed_0() -> None:
    """Seeds 0-15 initialise exactly the candidates the former ``--agents 16 --seed 0`` did."""
    former = [((0 * 1_000_003 + agent) * 10_007 + restart) % 2**63 for agent in range(16) for restart in range(4)]
    assert member_seeds(range(16), 4) == former


@pytest.mark.parametrize(
    ("argv", "flag", "says"),
    [
        (["--lr", "inf"], "--lr", "finite"),
        (["--lr", "nan"], "--lr", "finite"),
        (["--lr", "0"], "--lr", "(0.0, inf]"),
        (["--lr", "fast"], "--lr", "must be a number"),
        (["--seeds", f"0-1,{2**70}"], "--seeds", "at most 2**63 - 1"),
        (["--seeds", "-1"], "--seeds", "must look like"),
        (["--seeds", "3-1"], "--seeds", "is empty"),
        (["--device", "gpu"], "--device", "did you mean 'cuda'"),
        (["--seeds", "1"], "--seeds", "at least 2 seeds"),
        (["--seeds", "two"], "--seeds", "must look like"),
        (["--steps", "0"], "--steps", ">= 1"),
        (["--restarts", "2.5"], "--restarts", "must be an integer"),
        (["--threads", "0"], "--threads", ">= 1"),
        (["--payoffs", "a,b"], "--payoffs", "comma-separated numbers"),
        (["--payoffs", "1"], "--payoffs", "at least 2"),
        (["--payoffs", "1,nan"], "--payoffs", "finite"),
        (["--payoffs", ",".join(["1"] * (MAX_LEVERS + 1))], "--payoffs", f"more than the {MAX_LEVERS} supported"),
        (["--out", ""], "--out", "empty"),
    ],
)
def test_bad_flags_exit_2_with_usage_naming_the_flag(
    argv: list[str], flag: str, says: str, no_training: None, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    err = run_bad(["lever", *argv], capsys)
    assert f"eqc lever: error: argument {flag}: " in err
    assert says in err
    assert list(tmp_path.iterdir()) == []  # nothing written, in particular not into the current directory


@pytest.mark.skipif(torch.cuda.is_available(), reason="tests the refusal of CUDA on a machine without it")
@pytest.mark.parametrize("name", ["cuda", "cuda:0"])
def test_cuda_without_cuda(name: str, no_training: None, capsys: pytest.CaptureFixture[str]) -> None:
    err = run_bad(["lever", "--device", name], capsys)
    assert "argument --device: " in err and "CUDA is not available" in err


def test_out_that_is_a_file(tmp_path: Path, no_training: None, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "results.txt"
    file.write_text("keep me")
    assert "is not a directory" in run_bad(["lever", "--out", str(file)], capsys)
    assert "is a file, not a directory" in run_bad(["lever", "--out", str(file / "sub")], capsys)
    assert file.read_text() == "keep me"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only directory")
def test_out_in_an_unwritable_directory(tmp_path: Path, no_training: None, capsys: pytest.CaptureFixture[str]) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    try:
        assert "not writable" in run_bad(["lever", "--out", str(locked / "runs")], capsys)
        assert "not writable" in run_bad(["lever", "--out", str(locked)], capsys)
    finally:
        locked.chmod(0o755)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc, where nobody can create a directory")
def test_out_that_cannot_be_created_is_found_before_training(no_training: None, capsys: pytest.CaptureFixture[str]) -> None:
    err = run_bad(["lever", "--out", "/proc/eqc-cannot-create/runs"], capsys)
    assert "argument --out: " in err


def test_help_is_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["lever", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for markup in ("``", ":func:", ":class:", ":meth:", ":mod:"):
        assert markup not in text
    for flag in ("--seeds", "--out", "--device", "--lr", "--payoffs", "--threads"):
        assert flag in text
    assert "lever_xp.json" in text


def test_negative_payoffs_get_a_colour_scale_that_shows_them() -> None:
    matrix = torch.tensor([[-1.0, 0.5], [0.25, 1.0]], dtype=torch.float64)
    result = cross_play(range(2), lambda i, j: matrix[i, j : j + 1])
    figure = plot_cross_play({"sp": result})
    norm = figure.axes[0].images[0].norm
    assert norm.vmin == -1.0 and norm.vmax == 1.0
    ticks = figure.axes[0].get_xticks()
    assert all(float(t).is_integer() for t in ticks)
    positive = cross_play(range(2), lambda i, j: matrix.abs()[i, j : j + 1])
    assert plot_cross_play({"sp": positive}).axes[0].images[0].norm.vmin == 0.0


def test_library_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="seeds"):
        lever_experiment(seeds=[1], out=tmp_path)
    with pytest.raises(ValueError, match="empty string"):
        lever_experiment(seeds=[0, 1], out="")
    with pytest.raises(ValueError, match="each seed"):
        lever_experiment(seeds=[0, -1])
    with pytest.raises(ValueError, match="distinct"):
        lever_experiment(seeds=[3, 3])
    with pytest.raises(TypeError, match="sequence of integers"):
        lever_experiment(seeds=5)


def test_table_format() -> None:
    matrix = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    table = format_table({"sp": cross_play(range(2), lambda i, j: matrix[i, j : j + 1])})
    assert table.splitlines()[1].split() == ["sp", "1.000", "0.000", "0.000"]
