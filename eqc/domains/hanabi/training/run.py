"""``train``: one training run in a directory, resumable, with metrics, curve and checkpoints.

Run directory ``DIR``:

- ``config.json``: the resolved config and seed (every key, defaults included; ``[network] precision`` the
  precision used) and ``precision``: the one requested, the one used and why;
- ``checkpoint.pt``: the latest checkpoint (format: :mod:`eqc.domains.hanabi.agent.files`), written every
  ``[run] checkpoint_minutes`` and at the end;
- ``metrics.csv``: one row per evaluation (``moves, updates, wall_s, eval_score, ...``, then any scalar the learner
  logs beyond ``loss``, ``epsilon`` and ``entropy``, by its name: :attr:`~.learner.Learner.scalars`);
- ``learning_curve.png``: greedy evaluation score against wall-clock minutes and moves;
- ``tensorboard/`` with ``[run] tensorboard = true``.

Running ``train`` again on the same directory resumes from the checkpoint (networks, optimizer,
generators, counters, the games in progress and LSTM states: on the device type it was written on the
resumed run equals the uninterrupted one, row for row of ``metrics.csv`` but for the timings and the row
a stop between two evaluations adds (its checkpoint keeps the episode counts that row reports, so the next
row is the uninterrupted run's); R2D2 deals new games, its replay unsaved;
:mod:`~eqc.domains.hanabi.training.resume`). A directory holding a run of another config or seed is
refused, naming the keys that differ; keys that do not change what is learned (``[run] total_moves,
checkpoint_minutes, threads, tensorboard, compile``) may change on resume (``compile`` changes the acting forward's
rounding, as another device does: the resumed run then equals the uninterrupted one to float rounding).

Precision: ``[network] precision`` is resolved once, when the run starts, on its device
(:func:`~eqc.domains.hanabi.agent.precision.resolve_precision`: "auto" is bf16 where it is faster than fp32,
from the hardware's report or, where that does not tell, a timed training step of the run's network:
:mod:`~eqc.domains.hanabi.training.probe`); the run trains in it, says so in its first log line, and its config, checkpoint and
exported policy record it. A resumed run keeps the precision it started with: "auto" is not resolved again
(on another machine it would answer differently), and another explicit precision is a change of config,
refused like any other.

Warm-up (R2D2's replay): a run stopped or evaluated in its warm-up keeps its row and checkpoint, and a resumed run that
cannot get past the warm-up it must redo is refused before any work (:mod:`~eqc.domains.hanabi.training.warmup`). A
run is opened and driven by the loop of :mod:`~eqc.domains.hanabi.training.driver`, which ``train`` shares with
:func:`~eqc.domains.hanabi.training.seeds_run.train_seeds` (K seeds in one process).
"""
from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from eqc._checks import check_device, check_float, check_int
from eqc._compile import check_compilable
from eqc.domains.hanabi.agent.files import (
    CHECKPOINT_NAME,
    POLICY_JSON,
    load_checkpoint,
)
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.driver import (
    Lockstep,
    OpenRun,
    RunDirectoryError,
    RunSummary,
    drive,
    open_runs,
    run_precision,
    tensorboard_writer_class,
)
from eqc.domains.hanabi.training.learner import Learner

__all__ = ["locked_run_dir", "train"]


def train(
    config: TrainConfig,
    out: str | Path,
    *,
    seed: int = 0,
    device: torch.device | str = "cpu",
    max_minutes: float | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> RunSummary:
    """Train (or resume) the run of ``config`` and ``seed`` in ``out``; see the module docstring.

    ``max_minutes`` bounds this call's wall-clock time (the run resumes later where it stopped).
    A run directory is trained by one process at a time (an advisory lock on ``out/.lock``): a
    second ``train`` on it is refused instead of interleaving two runs' checkpoints.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig (load_config(path)), got {type(config).__name__}")
    check_int(seed, "seed", low=0, high=2**63 - 1)
    device = check_device(device)
    if config.run.compile:
        check_compilable(device)
    if max_minutes is not None:
        check_float(max_minutes, "max_minutes", low=0, low_open=True)
    if not isinstance(out, (str, Path)) or not str(out).strip():
        raise RunDirectoryError(f"out must name a run directory, got {out!r}")
    out = Path(out)
    if config.run.tensorboard:
        tensorboard_writer_class()  # a missing package is refused before anything is written
    if out.exists() and not out.is_dir():
        raise RunDirectoryError(f"out {str(out)!r} is a file, not a directory")
    if (out / "pool.json").is_file() or any(p.name.startswith("seed_") and p.is_dir() for p in (out.iterdir() if out.is_dir() else ())):
        raise RunDirectoryError(f"out {str(out)!r} is a pool directory (seed_<n>/ runs); train one run in a directory of its own")
    if (out / POLICY_JSON).is_file():
        raise RunDirectoryError(f"out {str(out)!r} is a policy directory ({POLICY_JSON}): training there would overwrite its "
                                "metrics.csv and learning curve; train in a directory of its own")
    with locked_run_dir(out):
        return _train_locked(config, out, seed, device, max_minutes, progress, log)


@contextmanager
def locked_run_dir(run: Path) -> Iterator[None]:
    """Hold the advisory lock ``run/.lock`` (``RunDirectoryError`` when another process holds it); on a refusal inside
    (a ``ValueError``: another run's checkpoint, a corrupt one, ...) leave ``run`` as it was found."""
    fresh = not run.exists()
    run.mkdir(parents=True, exist_ok=True)
    lock_path = run / ".lock"
    new_lock = not lock_path.exists()
    with open(lock_path, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunDirectoryError(f"{str(run)!r} is being trained by another process right now") from None
        try:
            yield
        except ValueError:
            if new_lock:
                lock_path.unlink(missing_ok=True)
            if fresh and not any(run.iterdir()):
                run.rmdir()
            raise


def _train_locked(
    config: TrainConfig, out: Path, seed: int, device: torch.device | str, max_minutes: float | None,
    progress: bool, log: Callable[[str], None],
) -> RunSummary:
    """``train`` once the run directory is locked: the run opened (:func:`open_runs`) and driven (:func:`drive`)."""
    device = torch.device(device)
    torch.set_num_threads(config.run.threads)
    checkpoint = load_checkpoint(out) if (out / CHECKPOINT_NAME).exists() else None
    precision = run_precision(config, checkpoint, device)
    log(f"precision {precision.used}{', as the run started' if checkpoint is not None else ''}: {precision.reason}")
    (run,) = open_runs({seed: config}, {seed: out}, {seed: checkpoint}, {seed: precision}, device, max_minutes, progress, log)
    return drive([run], _OneLearner(run.learner), _save_alone, device)[seed]


class _OneLearner(Lockstep):
    """One learner as a :class:`Lockstep`: a run of its own (``train``)."""

    def __init__(self, learner: Learner) -> None:
        self.learner = learner

    def iteration(self) -> list[dict[str, torch.Tensor | float]]:
        return [self.learner.iteration()]

    def state_dict(self, k: int) -> dict[str, Any]:
        return self.learner.state_dict()


def _save_alone(runs: list[OpenRun], states: list[dict[str, Any]]) -> None:
    runs[0].save(states[0])
