"""Exact resume: a run stopped between two iterations and resumed equals the uninterrupted run, row for row of
``metrics.csv`` (all but the timings) and weight for weight, for every learner that saves its games in progress.

Ways a run stops, all through ``train``: at ``[run] total_moves`` (a resumable key, raised on resume), on an
evaluation or between two (the stop then adds its own row, and only that), and interrupted after a checkpoint
written between two evaluations (``checkpoint_minutes`` tiny: one after every
iteration; the next iteration raises, as a kill would end it), so the episode counts of an unfinished metrics row
are resumed too. Negative control: the same checkpoint without its games (as eqc wrote them before) parts from the
uninterrupted run."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from eqc.domains.hanabi.agent.files import load_checkpoint, save_checkpoint
from eqc.domains.hanabi.training import driver
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.learner import LearnerSetup
from eqc.domains.hanabi.training.resume import games_state, restore_games
from eqc.domains.hanabi.training.run import train

QUIET = {"progress": False, "log": lambda _: None}
TIMINGS = ("wall_s", "moves_per_s", "updates_per_s")
SMALL = {"network": {"hidden_size": 32, "mlp_layers": 1}, "run": {"num_envs": 32, "eval_games": 32}}
RECURRENT = {"network": {"hidden_size": 32, "mlp_layers": 1, "lstm_layers": 1}, "run": {"num_envs": 16, "eval_games": 16}}
PPO = {"ppo": {"rollout_steps": 8, "epochs": 1, "minibatches": 2}}

#: name -> section changes of the tiny config: feed-forward PQN (self-play, Other-Play, G-OP D10 with SAD and the
#: bootstrap's shaping), recurrent PQN under Other-Play, IPPO and recurrent IPPO.
LEARNERS: dict[str, dict[str, dict[str, Any]]] = {
    "pqn_sp": SMALL,
    "pqn_op": {**SMALL, "rule": {"objective": "op"}},
    "pqn_gop_sad_bootstrap": {**SMALL, "rule": {"objective": "gop", "group": "D10"}, "game": {"sad": "greedy_last_action"},
                              "bootstrap": {"convention": "colour_to_slot", "slots": [4, 3, 2, 1, 0], "bonus": 1.0, "moves": 100_000}},
    "pqn_rnn_op": {**RECURRENT, "rule": {"objective": "op"}},
    "ippo": {**SMALL, **PPO, "run": {**SMALL["run"], "algorithm": "ippo"}},
    "ippo_rnn": {**RECURRENT, **PPO, "run": {**RECURRENT["run"], "algorithm": "ippo"}},
}


def _config(tiny_config: Callable[..., TrainConfig], name: str, **run: Any) -> TrainConfig:
    changes = {section: dict(values) for section, values in LEARNERS[name].items()}
    changes["game"] = {"knowledge": "v0_belief", **changes.get("game", {})}
    changes["run"] = {**changes.get("run", {}), "total_moves": 4096, "eval_every_moves": 1024, **run}
    return tiny_config(**changes)


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "metrics.csv") as f:
        return [{k: v for k, v in row.items() if k not in TIMINGS} for row in csv.DictReader(f)]


def _weights(out: Path) -> dict[str, dict[str, torch.Tensor]]:
    return load_checkpoint(out)["learner"]["modules"]


def _assert_same_run(a: Path, b: Path) -> None:
    rows_a, rows_b = _rows(a), _rows(b)
    assert [r["moves"] for r in rows_a] == ["0", "1024", "2048", "3072", "4096"]
    assert rows_a == rows_b
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys()
    for module in wa:
        assert all(torch.equal(wa[module][k], wb[module][k]) for k in wa[module]), module


class Interrupted(Exception):
    """Ends a run the way a kill would: between two iterations, after the checkpoint of the last one."""


def _interrupt_after(monkeypatch: pytest.MonkeyPatch, iterations: int) -> None:
    """The next run's learner raises :class:`Interrupted` on iteration ``iterations + 1``."""
    make = driver.make_learner

    def counting(config: TrainConfig, seed: int, device: torch.device):
        learner = make(config, seed, device)
        original, done = learner.iteration, [0]

        def iteration():
            if done[0] == iterations:
                raise Interrupted
            done[0] += 1
            return original()

        learner.iteration = iteration  # type: ignore[method-assign]
        return learner

    monkeypatch.setattr(driver, "make_learner", counting)


@pytest.mark.parametrize("name", list(LEARNERS))
def test_a_run_stopped_at_total_moves_and_resumed_equals_the_uninterrupted_one(tmp_path: Path, tiny_config, name: str) -> None:
    whole = _config(tiny_config, name)
    train(whole, tmp_path / "whole", seed=3, **QUIET)
    train(_config(tiny_config, name, total_moves=2048), tmp_path / "resumed", seed=3, **QUIET)
    lines: list[str] = []
    summary = train(whole, tmp_path / "resumed", seed=3, progress=False, log=lines.append)
    assert summary.resumed and summary.moves == 4096
    assert not any("new games" in line or "re-seeded" in line for line in lines), lines
    _assert_same_run(tmp_path / "whole", tmp_path / "resumed")


@pytest.mark.parametrize("name", ["pqn_op", "ippo_rnn"])
def test_a_stop_between_evaluations_adds_its_row_and_the_next_rows_are_the_uninterrupted_ones(
    tmp_path: Path, tiny_config, name: str
) -> None:
    """A stop (``total_moves`` or ``--max-minutes``) between two evaluations evaluates there; its checkpoint keeps the
    episode counts of the row in progress, so the next row equals the uninterrupted run's."""
    whole = _config(tiny_config, name)
    train(whole, tmp_path / "whole", seed=4, **QUIET)
    stop = 1536  # between the rows at 1024 and 2048 moves, on an iteration boundary (8 moves of every game)
    assert stop % (8 * whole.run.num_envs) == 0
    train(_config(tiny_config, name, total_moves=stop), tmp_path / "resumed", seed=4, **QUIET)
    train(whole, tmp_path / "resumed", seed=4, **QUIET)
    rows = _rows(tmp_path / "resumed")
    assert [r["moves"] for r in rows] == ["0", "1024", str(stop), "2048", "3072", "4096"]
    assert int(rows[2]["train_episodes"]) > 0
    assert [r for r in rows if r["moves"] != str(stop)] == _rows(tmp_path / "whole")
    wa, wb = _weights(tmp_path / "whole"), _weights(tmp_path / "resumed")
    assert all(torch.equal(wa["network"][k], wb["network"][k]) for k in wa["network"])


@pytest.mark.parametrize("name", ["pqn_op", "pqn_rnn_op", "ippo"])
def test_a_run_interrupted_between_evaluations_and_resumed_equals_the_uninterrupted_one(
    tmp_path: Path, tiny_config, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checkpoints after every iteration; the run ends in the middle of a metrics row (episode counts pending)."""
    whole = _config(tiny_config, name, checkpoint_minutes=1e-9)
    train(whole, tmp_path / "whole", seed=5, **QUIET)
    per_iteration = 8 * whole.run.num_envs
    stop = 1536 // per_iteration  # between the rows at 1024 and 2048 moves
    with monkeypatch.context() as patch:
        _interrupt_after(patch, stop)
        with pytest.raises(Interrupted):
            train(whole, tmp_path / "resumed", seed=5, **QUIET)
    checkpoint = load_checkpoint(tmp_path / "resumed")
    assert checkpoint["learner"]["counters"]["moves"] == stop * per_iteration
    assert int(checkpoint["learner"]["games"]["episodes"]) > 0  # finished since the last row, not yet reported
    summary = train(whole, tmp_path / "resumed", seed=5, **QUIET)
    assert summary.resumed
    _assert_same_run(tmp_path / "whole", tmp_path / "resumed")


def test_a_checkpoint_without_games_restarts_them_and_parts_from_the_run(tmp_path: Path, tiny_config) -> None:
    """Negative control: what eqc did before (and does with an older checkpoint): new games, a note, another run."""
    whole = _config(tiny_config, "pqn_op")
    train(whole, tmp_path / "whole", seed=3, **QUIET)
    train(_config(tiny_config, "pqn_op", total_moves=2048), tmp_path / "old", seed=3, **QUIET)
    data = load_checkpoint(tmp_path / "old")
    del data["learner"]["games"]
    save_checkpoint(tmp_path / "old" / "checkpoint.pt", {k: data[k] for k in ("config", "seed", "precision", "learner", "metrics")})
    lines: list[str] = []
    train(whole, tmp_path / "old", seed=3, progress=False, log=lines.append)
    assert any("holds no games in progress" in line and "new games are dealt" in line for line in lines), lines
    assert _rows(tmp_path / "whole")[:3] == _rows(tmp_path / "old")[:3]
    assert _rows(tmp_path / "whole")[3:] != _rows(tmp_path / "old")[3:]
    assert not torch.equal(_weights(tmp_path / "whole")["network"]["head.weight"], _weights(tmp_path / "old")["network"]["head.weight"])


def test_the_games_in_progress_round_trip_and_misfits_are_refused(tiny_config) -> None:
    from eqc.domains.hanabi.training.pqn import PQN, PQNLearner

    cpu = torch.device("cpu")
    config = _config(tiny_config, "pqn_gop_sad_bootstrap")
    source = PQNLearner(LearnerSetup.of(config, 0, cpu), config.settings(PQN))
    for _ in range(3):
        source.iteration()
    saved = games_state(source.games, 0)
    target = PQNLearner(LearnerSetup.of(config, 1, cpu), config.settings(PQN))
    deck_storage = target.games.env.state.deck.data_ptr()
    restore_games(target.games, saved)
    again = games_state(target.games, 0)
    assert saved.keys() == again.keys() and saved["env"].keys() == again["env"].keys()
    assert all(torch.equal(saved["env"][k], again["env"][k]) for k in saved["env"])
    assert all(torch.equal(saved[k], again[k]) for k in saved if k != "env")
    assert target.games.env.state.deck.data_ptr() == deck_storage  # copied in place: the storage is kept
    sp_config = _config(tiny_config, "pqn_sp")
    sp = PQNLearner(LearnerSetup.of(sp_config, 0, cpu), sp_config.settings(PQN))
    with pytest.raises(ValueError, match=r"Other-Play element indices.*another \[rule\] objective"):
        restore_games(sp.games, saved)
    fewer_config = _config(tiny_config, "pqn_gop_sad_bootstrap", num_envs=16)
    fewer = PQNLearner(LearnerSetup.of(fewer_config, 0, cpu), fewer_config.settings(PQN))
    with pytest.raises(ValueError, match=r"games\['hinted'\] must be a torch.int64 tensor of shape \[16\], got torch.int64 \[32\]"):
        restore_games(fewer.games, saved)
    broken = {**saved, "env": {k: v for k, v in saved["env"].items() if k != "pool"}}
    before = games_state(target.games, 0)
    with pytest.raises(ValueError, match=r"state\['pool'\] must be a torch.uint8 tensor"):
        restore_games(target.games, broken)
    assert all(torch.equal(before["env"][k], target.games.env.state_dict()[k]) for k in before["env"])  # nothing changed


def test_the_cli_resumes_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``eqc hanabi train`` stopped at a move budget and run again with a larger one, as a user resumes."""
    from eqc.cli import main

    sets = ["run.num_envs=32", "run.eval_every_moves=1024", "run.eval_games=16", "network.hidden_size=32", "network.mlp_layers=1",
            "network.precision=fp32", "rule.objective=op"]

    def command(out: Path, moves: int) -> list[str]:
        return ["hanabi", "train", "--config", "vdn_cpu", *(f"--set={s}" for s in [*sets, f"run.total_moves={moves}"]), "--seed", "2",
                "--out", str(out), "--no-progress"]

    assert main(command(tmp_path / "whole", 4096)) == 0
    assert main(command(tmp_path / "resumed", 2048)) == 0
    assert main(command(tmp_path / "resumed", 4096)) == 0
    assert f"resuming {tmp_path / 'resumed'} at 2,048 moves" in capsys.readouterr().out
    _assert_same_run(tmp_path / "whole", tmp_path / "resumed")
