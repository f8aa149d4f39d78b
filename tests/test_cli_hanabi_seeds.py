"""``eqc hanabi train --seeds``: the seeds trained in one process into ``OUT/seed_<n>/``; every bad use exits 2 naming
the flag, before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eqc.cli import main
from eqc.domains.hanabi.config.train import TrainConfig

TINY = TrainConfig().replace(
    run={"num_envs": 16, "total_moves": 256, "eval_every_moves": 256, "eval_games": 8, "precision": "fp32"},
    network={"hidden_size": 16, "mlp_layers": 1},
    pqn={"epochs": 1, "minibatches": 1},
)


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.to_toml())
    return path


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], *fragments: str) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: eqc hanabi train" in err
    for fragment in fragments:
        assert fragment in err, err


def test_train_seeds_writes_one_run_per_seed(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pool"
    argv = ["hanabi", "train", "--config", str(config_file), "--seeds", "0,2", "--device", "cpu", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "seed 0: 256 moves" in text and "seed 2: 256 moves" in text and "pool.json" in text
    assert sorted(p.name for p in out.iterdir()) == ["pool.json", "seed_0", "seed_2"]
    for seed in (0, 2):
        assert json.loads((out / f"seed_{seed}" / "config.json").read_text())["seed"] == seed
        assert (out / f"seed_{seed}" / "checkpoint.pt").is_file() and (out / f"seed_{seed}" / "metrics.csv").is_file()
    assert main(argv) == 0  # run again: every seed resumes
    assert "resuming" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("seeds", "message"),
    [("7-0", "seed range '7-0' is empty"), ("a", "must look like '0-9'"), ("", "must look like '0-9'"),
     ("0-3,2", "seed 2 is named twice"), ("1,1", "seed 1 is named twice")],
)
def test_train_refuses_bad_seeds(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str], seeds: str, message: str) -> None:
    _usage_error(capsys, ["hanabi", "train", "--config", str(config_file), f"--seeds={seeds}", "--out", str(tmp_path / "x")],
                 "argument --seeds:", message)
    assert not (tmp_path / "x").exists()


def test_train_refuses_seed_with_seeds_and_what_it_cannot_batch(tmp_path: Path, config_file: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "x")
    for seed in ("0", "3"):  # the default value too: --seed given at all is refused
        _usage_error(capsys, ["hanabi", "train", "--config", str(config_file), "--seed", seed, "--seeds", "0-1", "--out", out],
                     "argument --seeds: not allowed with argument --seed")
    seeds = ["hanabi", "train", "--config", str(config_file), "--seeds", "0-1", "--out", out]
    _usage_error(capsys, [*seeds, "--set", "run.algorithm=ippo"], "argument --seeds: [run] algorithm must be 'pqn'")
    _usage_error(capsys, [*seeds, "--set", "network.lstm_layers=1"], "argument --seeds: [network] lstm_layers must be 0")
    assert not (tmp_path / "x").exists()
