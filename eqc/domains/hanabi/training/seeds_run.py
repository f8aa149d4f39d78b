"""``train_seeds``: K seeds trained in one process as one batched learner (:class:`~.seeds.StackedSeeds`), each
into its own run directory.

Pool directory ``DIR`` (the layout of :func:`~eqc.domains.hanabi.training.pool.train_pool`, ``eqc hanabi pool``):
``DIR/seed_<n>/`` is an ordinary run directory of :func:`~eqc.domains.hanabi.training.run.train` (``config.json``,
``checkpoint.pt``, ``metrics.csv``, ``learning_curve.png``), which ``eqc hanabi export``, ``xp --pool DIR`` and
``train`` itself read as they read any run; ``DIR/pool.json`` records every seed's config and state.

A seed's rows and weights equal its own ``train`` run's up to float rounding (:mod:`~.seeds` says what is exact),
timings aside; its ``moves_per_s`` is its own moves over the pool's wall-clock time. Running ``train_seeds`` again
resumes every seed from its checkpoint: the seeds must all be new or all stand at the same move count (as a stop of
this function leaves them); a seed trained on its own to another point is refused. Each seed's directory is locked
as ``train`` locks it. A seed whose loss or weights diverge stops the pool (``TrainingDiverged`` naming it and what is on
disk: the seeds are checked before every checkpoint and written together, so each keeps its last checkpoint, at one move
count, or none was written yet). The seeds' checkpoints are written as one unit (:data:`COMMIT_FILE`): a kill while they
are written leaves every seed at one move count. Each seed's ``metrics.csv`` has ``train``'s columns (:func:`~.driver.metrics_columns`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import torch

from eqc._checks import check_device, check_float, check_int
from eqc._compile import check_compilable
from eqc.domains.hanabi.agent.files import CHECKPOINT_NAME, POLICY_JSON, load_checkpoint
from eqc.domains.hanabi.agent.precision import Precision
from eqc.domains.hanabi.training import driver  # train's own loop: each seed's directory is written as train writes it
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.driver import RunDirectoryError, RunSummary
from eqc.domains.hanabi.training.pool import seed_dir, write_pool_record
from eqc.domains.hanabi.training.run import locked_run_dir
from eqc.domains.hanabi.training.seeds import StackedSeeds, check_stackable
from eqc.io import write_json_atomic

__all__ = ["MAX_SEEDS", "check_seed_count", "train_seeds"]


#: The most seeds one process trains as one batched learner (each holds its games, weights and optimizer in memory and
#: a locked run directory open); a larger pool trains in several processes (``eqc hanabi pool``).
MAX_SEEDS = 64


def check_seed_count(count: int) -> None:
    """ValueError unless ``count`` seeds (1 to :data:`MAX_SEEDS`) can train in one process."""
    if not 1 <= count <= MAX_SEEDS:
        raise ValueError(f"seeds in one process must number 1 to {MAX_SEEDS}, got {count}: train a larger pool in several "
                         "processes (eqc hanabi pool, or several --out directories)")


def _shared_keys(config: TrainConfig) -> dict[str, Any]:
    """What the seeds trained in one process share: every key but ``[bootstrap] slots``."""
    sections = config.to_dict()
    return {**sections, "bootstrap": {k: v for k, v in sections["bootstrap"].items() if k != "slots"}}


def _check(configs: Mapping[int, TrainConfig], out: str | Path) -> tuple[list[int], Path]:
    """The seeds in order and the pool directory, refused (before anything is written) where they cannot be batched."""
    if not isinstance(configs, Mapping) or not configs:
        raise TypeError(f"configs must map each seed to its TrainConfig (at least one), got {configs!r}")
    check_seed_count(len(configs))
    for seed, config in configs.items():
        check_int(seed, "seed", low=0, high=2**63 - 1)
        if not isinstance(config, TrainConfig):
            raise TypeError(f"configs must map seeds to TrainConfig objects (load_config(path)), got {type(config).__name__} "
                            f"for seed {seed}")
    seeds = sorted(configs)
    first = configs[seeds[0]]
    check_stackable(first)
    shared = _shared_keys(first)
    for seed in seeds[1:]:
        if _shared_keys(configs[seed]) != shared:
            raise ValueError(f"configs of seeds {seeds[0]} and {seed} differ outside [bootstrap] slots: seeds trained in one "
                             "process share every other key (their games are one batch)")
    if first.run.tensorboard:
        driver.tensorboard_writer_class()  # a missing package is refused before anything is written
    if not isinstance(out, (str, Path)) or not str(out).strip():
        raise RunDirectoryError(f"out must name a pool directory, got {out!r}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RunDirectoryError(f"out {str(out)!r} is a file, not a directory")
    for name, what in ((CHECKPOINT_NAME, "a run directory"), ("config.json", "a run directory"), (POLICY_JSON, "a policy directory")):
        if (out / name).is_file():
            raise RunDirectoryError(f"out {str(out)!r} is {what} ({name}): seeds in one process write seed_<n>/ runs into a pool "
                                    "directory of their own")
    held = sorted(int(run.name.removeprefix("seed_")) for run in (out.glob("seed_*") if out.is_dir() else ())
                  if run.name.removeprefix("seed_").isdigit() and (run / CHECKPOINT_NAME).is_file())
    if set(held) - set(seeds):
        raise RunDirectoryError(f"{str(out)!r} is a pool of seeds {held} (their checkpoints): its seeds train on as one batch, so "
                                f"name them all ({held}), or choose another out for seeds {seeds}")
    for seed in seeds:
        run = seed_dir(out, seed)
        if run.exists() and not run.is_dir():
            raise RunDirectoryError(f"{str(run)!r} is a file, not a run directory")
        if (run / POLICY_JSON).is_file():
            raise RunDirectoryError(f"{str(run)!r} is a policy directory ({POLICY_JSON}): training there would overwrite it")
    return seeds, out


def train_seeds(
    configs: Mapping[int, TrainConfig],
    out: str | Path,
    *,
    device: torch.device | str = "cpu",
    max_minutes: float | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> dict[int, RunSummary]:
    """Train (or resume) every seed of ``configs`` (seed -> config, e.g. ``{s: config for s in range(8)}``; the configs
    may differ in ``[bootstrap] slots`` only) in one process into ``out/seed_<n>/``; see the module docstring. Returns each
    seed's :class:`~.driver.RunSummary`. ``max_minutes`` bounds this call (the pool resumes later where it stopped)."""
    seeds, out = _check(configs, out)
    device = check_device(device)
    if any(config.run.compile for config in configs.values()):
        check_compilable(device)
    if max_minutes is not None:
        check_float(max_minutes, "max_minutes", low=0, low_open=True)
    fresh = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        with ExitStack() as stack:
            for seed in seeds:
                stack.enter_context(locked_run_dir(seed_dir(out, seed)))
            summaries = _train_locked(configs, seeds, out, device, max_minutes, progress, log)
    except ValueError:
        if fresh and not any(out.iterdir()):
            out.rmdir()
        raise
    write_pool_record(out, {s: configs[s] for s in seeds}, str(device))
    return summaries


#: The seeds' checkpoints are written as one unit: each seed's new checkpoint goes beside its current one
#: (:data:`NEXT_CHECKPOINT`), then :data:`COMMIT_FILE` in the pool directory marks the set complete, then each replaces its
#: seed's checkpoint and the mark is removed. A stop at any moment leaves every old checkpoint (new ones without the
#: mark are discarded) or a complete marked set (finished): :func:`_finish_save` does either when the pool next starts.
NEXT_CHECKPOINT = "checkpoint.next.pt"
COMMIT_FILE = "checkpoints.commit.json"


def _save_together(out: Path, runs: list[driver.OpenRun], states: list[dict[str, Any]]) -> None:
    """Write every seed's checkpoint of ``states`` as one unit (:data:`NEXT_CHECKPOINT`)."""
    for run, state in zip(runs, states, strict=True):
        run.save(state, NEXT_CHECKPOINT)
    write_json_atomic(out / COMMIT_FILE, {"seeds": [run.seed for run in runs], "moves": runs[0].learner.moves_played})
    _replace_checkpoints(out, [run.seed for run in runs])


def _replace_checkpoints(out: Path, seeds: list[int]) -> list[int]:
    """Each seed's marked new checkpoint replaces its current one, then the mark is removed; the seeds replaced."""
    replaced = [s for s in seeds if (seed_dir(out, s) / NEXT_CHECKPOINT).is_file()]
    for seed in replaced:
        os.replace(seed_dir(out, seed) / NEXT_CHECKPOINT, seed_dir(out, seed) / CHECKPOINT_NAME)
    (out / COMMIT_FILE).unlink()
    return replaced


def _finish_save(out: Path, seeds: list[int]) -> str | None:
    """Finish a save of the seeds' checkpoints that a stop interrupted (:data:`NEXT_CHECKPOINT`): marked complete, the new
    checkpoints replace the old; unmarked, they are discarded. The sentence for the log, or None when none was pending."""
    if (out / COMMIT_FILE).is_file():
        done = _replace_checkpoints(out, seeds)
        return f"a save of the seeds' checkpoints was interrupted after it was complete: finished (seeds {done} replaced)"
    pending = [s for s in seeds if (seed_dir(out, s) / NEXT_CHECKPOINT).is_file()]
    for seed in pending:
        (seed_dir(out, seed) / NEXT_CHECKPOINT).unlink()
    if pending:
        return (f"a save of the seeds' checkpoints was interrupted before it was complete: the new checkpoints of seeds {pending} "
                "were discarded, every seed resumes from its previous one")
    return None

def _start(configs: Mapping[int, TrainConfig], seeds: list[int], out: Path, device: torch.device,
           log: Callable[[str], None]) -> tuple[dict[int, dict[str, Any] | None], dict[int, Precision]]:
    """Each seed's checkpoint (or None) and precision, refused unless all are new or all stand at one move count; a save
    a stop interrupted is finished first (:func:`_finish_save`)."""
    note = _finish_save(out, seeds)
    if note is not None:
        log(note)
    checkpoints = {s: load_checkpoint(seed_dir(out, s)) if (seed_dir(out, s) / CHECKPOINT_NAME).exists() else None for s in seeds}
    held = [s for s in seeds if checkpoints[s] is not None]
    if held and len(held) < len(seeds):
        raise RunDirectoryError(f"seeds {held} of {str(out)!r} hold checkpoints and {sorted(set(seeds) - set(held))} do not: seeds "
                                "trained in one process start and resume together (train the others on their own: eqc hanabi pool)")
    moves = {s: int(c["learner"]["counters"]["moves"]) for s, c in checkpoints.items() if c is not None}
    if len(set(moves.values())) > 1:
        raise RunDirectoryError(f"the seeds' checkpoints in {str(out)!r} stand at different moves ({moves}): seeds trained in one "
                                "process resume together from one move count")
    if not held:  # resolved once: a timed "auto" could otherwise pick different precisions for different seeds
        precision = driver.run_precision(configs[seeds[0]], None, device)
        return checkpoints, dict.fromkeys(seeds, precision)
    precisions = {s: driver.run_precision(configs[s], checkpoints[s], device) for s in seeds}
    if len({p.used for p in precisions.values()}) > 1:
        raise RunDirectoryError(f"the seeds in {str(out)!r} trained in different precisions "
                                f"({ {s: p.used for s, p in precisions.items()} }): they cannot be batched")
    return checkpoints, precisions


def _train_locked(configs: Mapping[int, TrainConfig], seeds: list[int], out: Path, device: torch.device, max_minutes: float | None,
                  progress: bool, log: Callable[[str], None]) -> dict[int, RunSummary]:
    """``train_seeds`` once every seed's directory is locked: the seeds' runs opened as ``train`` opens one
    (:func:`~.driver.open_runs`) and driven by ``train``'s loop (:func:`~.driver.drive`), one batched iteration for all."""
    torch.set_num_threads(configs[seeds[0]].run.threads)
    checkpoints, precisions = _start(configs, seeds, out, device, log)
    first = precisions[seeds[0]]
    log(f"{len(seeds)} seeds in one process on {device}, precision {first.used}: {first.reason}")
    runs = driver.open_runs({s: configs[s] for s in seeds}, {s: seed_dir(out, s) for s in seeds}, checkpoints, precisions, device,
                            max_minutes, progress, log)
    stacked = StackedSeeds([run.learner for run in runs])  # type: ignore[misc]  # check_stackable: PQNLearners
    return driver.drive(runs, stacked, functools.partial(_save_together, out), device)
