"""Entropy-regularised self-play in the lever game."""

from __future__ import annotations

import pytest

from eqc.cli import main
from eqc.domains.lever.entropy import entropy_sweep, render_entropy_sweep
from eqc.domains.lever.game import lever_game
from eqc.domains.lever.train import LeverConfig


def test_strong_entropy_makes_every_agent_equivariant_and_the_table_says_how_it_was_tested() -> None:
    record = entropy_sweep(lever_game(), [5.0], seeds=[0, 1, 2], config=LeverConfig(steps=60, restarts=2))
    baseline, strong = record["rows"]
    assert (baseline["entropy"], strong["entropy"]) == (0.0, 5.0) and "greedy_xp_test" not in baseline
    assert baseline["greedy_sp"] == 1.0 and baseline["equivariance_gap"] > 0.5  # self-play picks one lever: not equivariant
    assert strong["equivariance_gap"] < 0.05 and abs(strong["lone_mass"] - 0.1) < 0.05  # near uniform over the ten levers
    assert strong["greedy_xp_test"]["min_p"] == pytest.approx(1 / 20)  # 3 + 3 agents: C(6, 3) splits
    assert "| 5 |" in render_entropy_sweep(record)


def test_the_cli_writes_the_sweep_and_refuses_bad_coefficients(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lever", "--entropy-sweep", "0.5", "--seeds", "0-1", "--steps", "5", "--restarts", "1", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "lever_entropy.json").is_file() and "Produced by `eqc lever --entropy-sweep 0.5" in (
        tmp_path / "lever_entropy.md").read_text()
    with pytest.raises(SystemExit) as info:
        main(["lever", "--entropy-sweep", "0.1,-1", "--out", str(tmp_path / "x")])
    assert info.value.code == 2 and "--entropy-sweep: must be one or more finite coefficients >= 0" in capsys.readouterr().err
