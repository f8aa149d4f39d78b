"""``eqc hanabi``: train, resume, evaluate (also symmetrized), and every bad flag exits 2 naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from eqc.cli import main
from eqc.domains.hanabi.training.config import TrainConfig

TINY = TrainConfig().replace(
    run={"num_envs": 32, "total_env_steps": 1024, "eval_every_steps": 1024, "eval_games": 16},
    network={"hidden_size": 32, "mlp_layers": 1},
    pqn={"epochs": 1, "minibatches": 1},
)


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.to_toml())
    return path


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], *fragments: str) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: eqc hanabi" in err
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_train_resume_and_eval(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["hanabi", "train", "--config", str(config_file), "--seed", "1", "--out", str(out), "--quiet"]) == 0
    assert "1,024 env steps" in capsys.readouterr().out
    assert main(["hanabi", "train", "--config", str(config_file), "--seed", "1", "--out", str(out), "--quiet"]) == 0
    assert "resuming" in capsys.readouterr().out
    assert main(["hanabi", "eval", "--checkpoint", str(out), "--games", "20", "--json"]) == 0
    text = capsys.readouterr().out
    assert "greedy self-play on HanabiBatch" in text and '"games": 20' in text
    assert main(["hanabi", "eval", "--checkpoint", str(out / "checkpoint.pt"), "--games", "20", "--symmetrize", "C5"]) == 0
    assert "symmetrized over C5" in capsys.readouterr().out


def test_config_lists_every_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hanabi", "config"]) == 0
    out = capsys.readouterr().out
    assert "[pqn]" in out and "td_lambda = 0.7" in out


def test_bad_flags(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run")
    train = ["hanabi", "train", "--out", out]
    _usage_error(capsys, [*train, "--config", str(tmp_path / "missing.toml")], "--config", "does not exist")
    bad = tmp_path / "bad.toml"
    bad.write_text("[run]\nnum_envs = -4\n")
    _usage_error(capsys, [*train, "--config", str(bad)], "--config", "[run] num_envs must be >= 1")
    _usage_error(capsys, [*train, "--config", str(config_file), "--max-minutes", "0"], "--max-minutes")
    _usage_error(capsys, [*train, "--config", str(config_file), "--seed", str(2**70)], "--seed")
    _usage_error(capsys, [*train, "--config", str(config_file), "--device", "gpu"], "--device", "cuda")
    if not torch.cuda.is_available():
        _usage_error(capsys, [*train, "--config", str(config_file), "--device", "cuda"], "--device", "CUDA is not available")
    file = tmp_path / "file"
    file.write_text("x")
    _usage_error(capsys, ["hanabi", "train", "--config", str(config_file), "--out", str(file)], "--out", "not a directory")
    assert not (tmp_path / "run").exists()  # nothing was created by a refused command


def test_out_of_another_config_is_refused(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run")
    assert main(["hanabi", "train", "--config", str(config_file), "--out", out, "--quiet"]) == 0
    other = tmp_path / "other.toml"
    other.write_text(TINY.replace(optim={"lr": 0.1}).to_toml())
    _usage_error(capsys, ["hanabi", "train", "--config", str(other), "--out", out], "--out", "[optim] lr")


def test_eval_refuses_foreign_checkpoints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    foreign = tmp_path / "model0.pthw"
    torch.save({"net.0.weight": torch.ones(2)}, foreign)
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(foreign)], "--checkpoint", "not an eqc Hanabi checkpoint")
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(tmp_path / "none")], "--checkpoint", "no checkpoint")
