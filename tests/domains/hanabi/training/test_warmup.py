"""A learner's warm-up in the run loop (issue 48): R2D2 evaluated or stopped before its replay is warm keeps its rows and
checkpoint and resumes; only a non-finite loss or weight once it learns is a divergence, and its message says what is on
disk; a resumed run whose max_minutes cannot get past the warm-up is refused before any work; the learner's scalars reach
metrics.csv."""

from __future__ import annotations

import csv
import itertools
import math
from pathlib import Path

import pytest
import torch

from eqc.cli import main
from eqc.domains.hanabi.agent.files import load_checkpoint, save_checkpoint
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.driver import RunClock, TrainingDiverged
from eqc.domains.hanabi.training.r2d2 import R2D2Learner
from eqc.domains.hanabi.training.run import train
from eqc.domains.hanabi.training.run_log import METRICS, RunLog
from eqc.domains.hanabi.training.seeds_run import train_seeds
from eqc.domains.hanabi.training.warmup import SegmentTooShort


def r2d2_config(**run: object) -> TrainConfig:
    """16 games, a 32-wide LSTM, a 16-episode warm-up that every game's first episode fills (episodes capped at 40 moves,
    so the replay is warm by 640 moves); fp32."""
    return TrainConfig().replace(
        run={"algorithm": "r2d2", "num_envs": 16, "eval_games": 16, "total_moves": 1024, "eval_every_moves": 128,
             "checkpoint_minutes": 10.0, **run},
        network={"hidden_size": 32, "mlp_layers": 1, "lstm_layers": 1, "layer_norm": False, "precision": "fp32"},
        optim={"optimizer": "adam", "lr": 1e-3, "adam_eps": 1.5e-5, "grad_clip": 5.0},
        r2d2={"batch_size": 8, "buffer_episodes": 256, "warmup_episodes": 16, "updates_per_step": 1.0, "target_update": 50,
              "gamma": 0.99, "max_moves": 40},
    )


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "metrics.csv") as f:
        return list(csv.DictReader(f))


def _stop_after(monkeypatch: pytest.MonkeyPatch, iterations: int) -> None:
    """``max_minutes`` binds after ``iterations`` iterations of this call (the loop asks the clock once per iteration)."""
    calls = itertools.count()
    monkeypatch.setattr(RunClock, "past_deadline", lambda self: next(calls) >= iterations)


def test_evaluations_in_the_warm_up_are_not_divergence(tmp_path: Path) -> None:
    """Rows before the replay is warm log no loss (the run used to raise TrainingDiverged on the first one and write no
    checkpoint); once it learns the loss is there; R2D2's replay_episodes gets a column after train's own."""
    summary = train(r2d2_config(), tmp_path, seed=0, progress=False, log=lambda _: None)
    assert summary.stopped == "total_moves" and summary.moves == 1024 and summary.updates > 0
    rows = _rows(tmp_path)
    assert list(rows[0]) == [*METRICS, "replay_episodes"]
    warming = [r for r in rows[1:] if int(r["updates"]) == 0]
    learning = [r for r in rows if int(r["updates"]) > 0]
    assert warming and learning  # evaluations on both sides of the warm-up
    assert all(r["loss"] == "nan" and float(r["replay_episodes"]) < 16 for r in warming)
    assert all(math.isfinite(float(r["loss"])) and float(r["replay_episodes"]) >= 16 for r in learning)
    record = load_checkpoint(tmp_path)["warmup"]
    assert record["finished"] and record["needed"] == 16 and record["episodes"] >= 16 and record["device"] == "cpu"


def test_a_stop_in_the_warm_up_keeps_its_checkpoint_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = r2d2_config(total_moves=1280)
    _stop_after(monkeypatch, 10)
    lines: list[str] = []
    summary = train(config, tmp_path, seed=1, max_minutes=5.0, progress=False, log=lines.append)
    assert summary.stopped == "max_minutes" and summary.moves == 160 and summary.updates == 0
    saved = load_checkpoint(tmp_path)
    assert saved["learner"]["counters"]["moves"] == 160 and [r["moves"] for r in saved["metrics"]] == [0, 128, 160]
    record = saved["warmup"]
    assert not record["finished"] and record["episodes"] < 16 and record["max_minutes"] == 5.0
    assert any(line.startswith("stopped in the warm-up (") and "not saved" in line
               and line.endswith("a next run on cpu with max_minutes no longer than 5 is refused") for line in lines)
    monkeypatch.undo()

    lines.clear()
    summary = train(config, tmp_path, seed=1, progress=False, log=lines.append)
    assert summary.resumed and summary.moves == 1280 and summary.updates > 0
    assert any("the replay buffer is not saved: warming up again for 16 episodes" in line for line in lines)
    assert any(line.startswith("warm-up: the last run (max_minutes 5) stopped in its warm-up") for line in lines)
    rows = _rows(tmp_path)
    assert [int(r["moves"]) for r in rows[:3]] == [0, 128, 160] and int(rows[-1]["moves"]) == 1280
    assert math.isfinite(float(rows[-1]["loss"]))
    assert load_checkpoint(tmp_path)["warmup"]["finished"]


def _poison_after(monkeypatch: pytest.MonkeyPatch, updates: int) -> None:
    """From its ``updates``-th update on, the learner's weights turn NaN (as an overflowing step leaves them)."""
    update = R2D2Learner.update

    def poisoned(self: R2D2Learner) -> torch.Tensor:
        loss = update(self)
        if self.updates >= updates:
            with torch.no_grad():
                next(self.network.parameters()).fill_(float("nan"))
        return loss

    monkeypatch.setattr(R2D2Learner, "update", poisoned)


def test_a_nan_once_learning_is_caught_and_the_message_says_what_is_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _poison_after(monkeypatch, 3)
    with pytest.raises(TrainingDiverged, match=r"diverged .* lower \[optim\] lr \(0\.001\) or lower \[optim\] grad_clip \(5\); "
                       r"no checkpoint is kept: the run diverged before its first one") as caught:
        train(r2d2_config(), tmp_path / "new", seed=0, progress=False, log=lambda _: None)
    assert "the last checkpoint is kept" not in str(caught.value)
    assert not (tmp_path / "new" / "checkpoint.pt").exists()

    monkeypatch.undo()  # a run stopped in its warm-up at 160 moves, resumed into the NaN
    _stop_after(monkeypatch, 10)
    train(r2d2_config(), tmp_path / "resumed", seed=0, max_minutes=5.0, progress=False, log=lambda _: None)
    monkeypatch.undo()
    _poison_after(monkeypatch, 3)
    with pytest.raises(TrainingDiverged, match=r"checkpoint.pt' is kept, the run at 160 moves"):
        train(r2d2_config(), tmp_path / "resumed", seed=0, progress=False, log=lambda _: None)
    kept = load_checkpoint(tmp_path / "resumed")
    assert kept["learner"]["counters"]["moves"] == 160
    assert all(torch.isfinite(w).all() for w in kept["learner"]["modules"]["network"].values())


def _with_record(out: Path, **record: object) -> bytes:
    """Give the checkpoint of ``out`` the warm-up ``record`` (the rest as a stop in the warm-up left it); its bytes."""
    data = load_checkpoint(out)
    data["warmup"] = {"episodes": 5, "needed": 16, "seconds": 90.0, "finished": False, "device": "cpu", "max_minutes": 1.5,
                      **record}
    save_checkpoint(out / "checkpoint.pt", {k: v for k, v in data.items() if k not in ("format", "format_version", "versions")})
    return (out / "checkpoint.pt").read_bytes()


def test_a_segment_that_cannot_get_past_the_warm_up_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The replay is not saved (about 1.1 GiB for paper.toml's warm-up): a resumed run redoes the warm-up, so a max_minutes
    no longer than a call that did not get past it, or shorter than a warm-up that took longer, is refused, saying what
    to change; the checkpoint and metrics stay as they were."""
    config = r2d2_config(total_moves=320)
    _stop_after(monkeypatch, 10)
    train(config, tmp_path, seed=2, max_minutes=5.0, progress=False, log=lambda _: None)
    monkeypatch.undo()
    before = _with_record(tmp_path)
    metrics = (tmp_path / "metrics.csv").read_bytes()
    for minutes in (1.0, 1.5):
        with pytest.raises(SegmentTooShort, match=rf"max_minutes {minutes:g} cannot get past the warm-up .* \(max_minutes 1\.5\) "
                           r"stopped in its warm-up on cpu with 5 of 16 episodes after 1\.5 min; about 4\.8 min at its pace.* "
                           r"at least 6 \(or none\), or start a new run with a smaller \[r2d2\] warmup_episodes"):
            train(config, tmp_path, seed=2, max_minutes=minutes, progress=False, log=lambda _: None)
    assert (tmp_path / "checkpoint.pt").read_bytes() == before and (tmp_path / "metrics.csv").read_bytes() == metrics
    toml = tmp_path.parent / f"{tmp_path.name}.toml"
    toml.write_text(config.to_toml())
    with pytest.raises(SystemExit) as exit_:  # the command line: a --max-minutes flag error
        main(["hanabi", "train", "--config", str(toml), "--seed", "2", "--out", str(tmp_path), "--max-minutes", "1", "--no-progress"])
    assert exit_.value.code == 2
    assert "argument --max-minutes: max_minutes 1 cannot get past the warm-up" in capsys.readouterr().err
    _with_record(tmp_path, finished=True, episodes=16, seconds=150.0)
    with pytest.raises(SegmentTooShort, match=r"the last run's warm-up \(16 episodes\) took 2\.5 min on cpu.* at least 4 "):
        train(config, tmp_path, seed=2, max_minutes=2.0, progress=False, log=lambda _: None)

    lines: list[str] = []  # measured on another device type: a warning, not a refusal
    _with_record(tmp_path, device="cuda:0")
    summary = train(config, tmp_path, seed=2, max_minutes=1.0, progress=False, log=lines.append)
    assert summary.moves == 320 and any(line.startswith("warning: max_minutes 1 may not get past the warm-up") for line in lines)


def test_scalars_outside_metrics_get_columns_after_them(tmp_path: Path) -> None:
    """Declared scalars are columns from the first row; a key a row brings later gets one too (older rows leave it empty);
    train's columns keep their names and order."""
    log = RunLog(tmp_path, "t", [], progress=False, log=lambda _: None, total_moves=10, start_moves=0, max_minutes=None,
                 columns=(*METRICS, "replay_episodes"))
    row = dict.fromkeys(METRICS, 0.0)
    log.evaluated({**row, "replay_episodes": 3.0})
    assert list(_rows(tmp_path)[0]) == [*METRICS, "replay_episodes"]
    log.evaluated({**row, "moves": 1, "replay_episodes": 4.0, "td_max": 2.5})
    rows = _rows(tmp_path)
    assert list(rows[0]) == [*METRICS, "replay_episodes", "td_max"]
    assert [r["td_max"] for r in rows] == ["", "2.5"] and [r["replay_episodes"] for r in rows] == ["3.0", "4.0"]
    assert (tmp_path / "learning_curve.png").stat().st_size > 1000
    log.close()


def test_seeds_in_one_process_say_what_a_divergence_left_on_disk(tmp_path: Path, tiny_config) -> None:
    config = tiny_config(optim={"lr": 1e6, "grad_clip": 0.0}, run={"total_moves": 40_960, "eval_every_moves": 2048})
    with pytest.raises(TrainingDiverged, match=r"seed \d: the \w+ diverged .* lower \[optim\] lr \(1e\+06\) or set \[optim\] "
                       r"grad_clip; no checkpoint is kept.*\(nor does any other seed's directory\)"):
        train_seeds({0: config, 1: config}, tmp_path, progress=False, log=lambda _: None)
    assert not list(tmp_path.glob("seed_*/checkpoint.pt"))
