"""One loop for one to K runs: a run opened (:func:`open_runs`: checked, its learner built and restored before anything
is written) and driven (:func:`drive`) over a :class:`Lockstep`, one learner (``train``:
:mod:`~eqc.domains.hanabi.training.run`) or K seeds batched (:func:`~eqc.domains.hanabi.training.seeds_run.train_seeds`,
:class:`~eqc.domains.hanabi.training.seeds.StackedSeeds`), so that every rule of a run holds for each seed.

Divergence: once a learner learns (:attr:`~.learner.Learner.learning`; not in its warm-up:
:mod:`~eqc.domains.hanabi.training.warmup`), a non-finite or absurd loss, or a non-finite weight, stops the run
(:class:`TrainingDiverged`, checked before every evaluation and every checkpoint, so that no checkpoint of a diverged run
replaces the last good one; its message says which checkpoint the directory holds, if any). A missing loss (no update
yet) is not a divergence, and the scalars a learner logs beyond the loop's own columns are forwarded to its
``metrics.csv`` by name (:func:`metrics_columns`).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch

from eqc.dec_pomdp.candidate_set import copy_candidate_set, is_candidate_set_file
from eqc.dec_pomdp.expected_return import read_group_file
from eqc.domains.hanabi.agent.files import (
    CHECKPOINT_NAME,
    SYMMETRIES_FILE,
    CheckpointError,
    checkpoint_precision,
    save_checkpoint,
)
from eqc.domains.hanabi.agent.precision import Precision, resolve_precision
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.play.self_play import evaluate_agent
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.learner import Learner
from eqc.domains.hanabi.training.learners import make_learner
from eqc.domains.hanabi.training.probe import training_step_ms
from eqc.domains.hanabi.training.run_log import METRICS, RunLog
from eqc.domains.hanabi.training.warmup import WarmupWatch, check_segment
from eqc.io import write_json_atomic

__all__ = ["DIVERGED_LOSS", "RESUMABLE_KEYS", "Lockstep", "OpenRun", "RunClock", "RunDirectoryError", "RunSummary",
           "TrainingDiverged", "divergence", "drive", "metrics_columns", "open_runs", "run_precision", "save_run",
           "tensorboard_writer_class"]

#: ``[run]`` keys that may differ when a run resumes: they do not change what is learned.
RESUMABLE_KEYS = ("total_moves", "checkpoint_minutes", "threads", "tensorboard", "compile")
#: A squared TD error above this (Hanabi's values are at most 25) means the learning diverged.
DIVERGED_LOSS = 1e6


class RunDirectoryError(ValueError):
    """A run directory that cannot hold this run (a file, another run's config or seed, locked by another process)."""


class TrainingDiverged(RuntimeError):
    """Once the learner learns, its loss became NaN, infinite or absurdly large, or a weight became non-finite: the run
    stops instead of training on garbage (its message says which checkpoint the run directory holds, if any)."""



@dataclass(frozen=True)
class RunSummary:
    """What ``train`` returns: the last evaluation, whether the run resumed, and why it stopped
    (``"total_moves"`` or ``"max_minutes"``); ``row`` is the last ``metrics.csv`` row."""

    moves: int
    updates: int
    wall_s: float
    eval_score: float
    eval_sem: float
    eval_bomb_out_rate: float
    resumed: bool
    stopped: str
    row: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {**self.row, "resumed": self.resumed, "stopped": self.stopped}


def _config_differences(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    diffs = []
    for section in sorted(set(saved) | set(current)):
        a, b = saved.get(section, {}), current.get(section, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key) and not (section == "run" and key in RESUMABLE_KEYS):
                diffs.append(f"[{section}] {key}: {a.get(key)!r} in the run, {b.get(key)!r} now")
    return diffs


def run_precision(config: TrainConfig, checkpoint: dict[str, Any] | None, device: torch.device) -> Precision:
    """The precision the run trains in: resolved on ``device`` when it starts (measuring ``config``'s network where the
    hardware's report does not tell); a resumed run keeps the one it started with for "auto" or that same precision
    (another one is left to ``_check_run_dir`` to refuse, as any change)."""
    requested = config.network.precision
    if checkpoint is None:
        return resolve_precision(requested, device, measure=lambda: training_step_ms(config, device))
    started = checkpoint_precision(checkpoint)
    return started if requested in ("auto", started.used) else Precision(requested, requested, "requested on resume")


def _check_run_dir(out: Path, config: TrainConfig, seed: int, checkpoint: dict[str, Any] | None) -> None:
    """Check that ``out`` is new or holds ``checkpoint`` of this run (its seed, and ``config`` up to the keys a resumed run
    may change); writes nothing. Keys added to the schema since the checkpoint was written take their defaults."""
    if checkpoint is None:
        return
    if checkpoint["seed"] != seed:
        raise RunDirectoryError(f"out {str(out)!r} holds a run with seed {checkpoint['seed']}, not {seed}: use another directory")
    saved = checkpoint["config"]  # upgraded on loading (config.upgrade)
    try:  # keys added to the schema since take their defaults
        saved = TrainConfig.from_dict(saved, f"{out / CHECKPOINT_NAME}").to_dict()
    except ConfigError:
        pass
    diffs = _config_differences(saved, config.to_dict())
    if diffs:
        raise RunDirectoryError(f"out {str(out)!r} holds a run of another config; differences: " + "; ".join(diffs))


def _write_run_config(out: Path, config: TrainConfig, seed: int, precision: Precision) -> None:
    """Write ``config.json`` (``config`` in the precision it uses, and the seed) and, for Other-Play over a file, the
    group (``symmetries.json``) or the candidate set (``symmetries.json`` and ``symmetries.safetensors``), once the run
    is checked (``_check_run_dir``) and its checkpoint restored."""
    write_json_atomic(out / "config.json", {"seed": seed, "config": config.to_dict(), "precision": precision.as_dict()})
    if config.rule.symmetries is None:
        return
    if is_candidate_set_file(config.rule.symmetries):  # its record and weights (symmetries.safetensors), loadable there
        copy_candidate_set(config.rule.symmetries, out / SYMMETRIES_FILE)
    else:  # what the agent is trained over, kept with it (export copies it)
        write_json_atomic(out / SYMMETRIES_FILE, read_group_file(config.rule.symmetries))


class Lockstep(Protocol):
    """One or more learners advanced together, what :func:`drive` drives: one :class:`~.learner.Learner`
    (``train``), or K seeds batched (:class:`~.seeds.StackedSeeds`)."""

    def iteration(self) -> list[dict[str, torch.Tensor | float]]:
        """One iteration of every learner; each one's scalars, in order."""
        ...

    def state_dict(self, k: int) -> dict[str, Any]:
        """Learner ``k``'s :meth:`~.learner.Learner.state_dict`, to save on its own."""
        ...


@dataclass
class OpenRun:
    """One run while it trains (:func:`open_runs`): its directory, config, learner and log, the clocks of its rows, the
    scalars of its last iteration and how its warm-up goes."""

    seed: int
    out: Path
    config: TrainConfig
    precision: Precision
    learner: Learner
    log: RunLog
    say: Callable[[str], None]
    window: _RateWindow
    clock: RunClock
    resumed: bool
    max_minutes: float | None
    stats: dict[str, Any] = field(default_factory=dict)
    #: How this call's warm-up goes, timed from where the loop starts (:func:`drive`).
    warmup: WarmupWatch | None = None

    def evaluate(self, device: torch.device) -> None:
        self.log.evaluated(_evaluate_run(self.learner, self.config, self.stats, self.window, self.clock, device))

    def save(self, state: dict[str, Any], file: str = CHECKPOINT_NAME) -> None:
        warmup = None if self.warmup is None else self.warmup.record(self.learner)
        save_run(self.out, self.config, self.seed, self.precision, state, self.log.rows, self.clock, warmup, file=file)

    def summary(self, stopped: str) -> RunSummary:
        last = self.log.rows[-1]
        return RunSummary(last["moves"], last["updates"], last["wall_s"], last["eval_score"], last["eval_sem"], last["eval_bomb_out_rate"],
                          self.resumed, stopped, dict(last))


def open_runs(configs: Mapping[int, TrainConfig], dirs: Mapping[int, Path], checkpoints: Mapping[int, dict[str, Any] | None],
              precisions: Mapping[int, Precision], device: torch.device, max_minutes: float | None, progress: bool,
              log: Callable[[str], None]) -> list[OpenRun]:
    """Each seed's run of ``configs`` in ``dirs`` as ``train`` opens it, from its checkpoint (or None), in its precision:
    every one checked (``_check_run_dir``, :func:`check_segment`), its learner built and restored
    (``_restore_run``) before anything is written; then its ``config.json`` written and its log opened. With several
    seeds, each one's log lines are prefixed by its seed and only the first shows a progress bar (the others are quiet
    beside it)."""
    opened = []
    for seed, config in configs.items():
        checkpoint, precision = checkpoints[seed], precisions[seed]
        config = config.replace(network={"precision": precision.used})
        _check_run_dir(dirs[seed], config, seed, checkpoint)
        segment = check_segment(checkpoint, config, max_minutes, device)  # a resumed run that cannot get past its warm-up
        learner = make_learner(config, seed, device)
        rows, wall_before = _restore_run(learner, checkpoint, dirs[seed], log)  # a checkpoint it cannot resume: refused
        opened.append((seed, config, precision, segment, learner, rows, wall_before))
    runs: list[OpenRun] = []
    for seed, config, precision, segment, learner, rows, wall_before in opened:
        out, first = dirs[seed], not runs
        _write_run_config(out, config, seed, precision)
        say = log if len(configs) == 1 else functools.partial(_prefixed, log, f"seed {seed}: ")
        if segment is not None:
            say(segment)
        quiet = not first and runs[0].log.bar is not None  # one progress bar, the first seed's: the others' lines would break it
        run_log = RunLog(out, f"{config.run.algorithm} {config.rule.objective} seed {seed}", rows, progress=progress and first,
                         log=_silent if quiet else say, total_moves=config.run.total_moves,
                         start_moves=learner.moves_played, max_minutes=max_minutes,
                         tensorboard=_tensorboard_logger(out) if config.run.tensorboard else None, columns=metrics_columns(learner))
        runs.append(OpenRun(seed, out, config, precision, learner, run_log, say, _RateWindow(learner),
                            RunClock(wall_before, max_minutes), checkpoints[seed] is not None, max_minutes))
    return runs


def _silent(line: str) -> None:
    pass


def _prefixed(log: Callable[[str], None], prefix: str, line: str) -> None:
    log(prefix + line)


def drive(runs: list[OpenRun], learners: Lockstep, save: Callable[[list[OpenRun], list[dict[str, Any]]], None],
          device: torch.device) -> dict[int, RunSummary]:
    """The run loop of ``runs`` (one, or K seeds in lockstep: ``learners``): the untrained agents evaluated, then
    iterate; evaluate every ``[run] eval_every_moves``; ``save`` every ``[run] checkpoint_minutes`` and at the end (every
    run's state, checked for divergence first: :func:`divergence`); stop at ``[run] total_moves`` or the first run's
    deadline. Each run's :class:`RunSummary`, by seed."""
    first, config = runs[0], runs[0].config
    kept = first.learner.moves_played if first.resumed else None  # the moves of the checkpoints on disk
    stopped = "total_moves"
    try:
        for run in runs:
            if not run.log.rows:
                run.evaluate(device)  # the untrained agent
        watches = [WarmupWatch(run.learner, device, run.max_minutes) for run in runs]  # timed from here: what a resumed call redoes
        for run, watch in zip(runs, watches, strict=True):
            run.warmup = watch
        every = config.run.eval_every_moves
        next_eval = (first.learner.moves_played // every + 1) * every
        last_save = time.monotonic()
        while first.learner.moves_played < config.run.total_moves:
            if first.clock.past_deadline():
                stopped = "max_minutes"
                break
            for run, watch, stats in zip(runs, watches, learners.iteration(), strict=True):
                run.stats = stats
                watch.poll(run.learner)
                run.log.advanced(run.learner.moves_played)
            if first.learner.moves_played >= next_eval:
                _check(runs, kept)
                for run in runs:
                    run.evaluate(device)
                next_eval = (first.learner.moves_played // every + 1) * every
            if time.monotonic() - last_save >= 60 * config.run.checkpoint_minutes:
                _check(runs, kept)
                save(runs, [learners.state_dict(k) for k in range(len(runs))])
                kept, last_save = first.learner.moves_played, time.monotonic()
        _check(runs, kept)
        states = [learners.state_dict(k) for k in range(len(runs))]  # before the stop's own rows take the episode counts
        for run in runs:
            if run.log.rows[-1]["moves"] != run.learner.moves_played:
                run.evaluate(device)
        save(runs, states)
        for run, watch in zip(runs, watches, strict=True):
            note = watch.stopped_in_warmup(run.learner)
            if note is not None:
                run.say(note)
    finally:
        for run in runs:
            run.log.close()
    return {run.seed: run.summary(stopped) for run in runs}


def _check(runs: list[OpenRun], kept: int | None) -> None:
    """Before every row and every checkpoint: none of a diverged run replaces the last good one (:func:`divergence`);
    ``kept``: the moves of the checkpoints on disk, or None."""
    for run in runs:
        problem = divergence(run.learner, run.stats)
        if problem is None:
            continue
        error = _diverged_error(problem, run.learner, run.config, _kept_checkpoint(run.out, kept))
        if len(runs) == 1:
            raise error
        others = "every seed's stands at the same moves" if kept is not None else "nor does any other seed's directory"
        raise TrainingDiverged(f"seed {run.seed}: {error} ({others})")


def divergence(learner: Learner, stats: dict[str, Any]) -> str | None:
    """What diverged, once ``learner`` learns (:attr:`~.learner.Learner.learning`): its ``loss`` in ``stats`` (the last
    iteration's scalars) NaN, infinite or above :data:`DIVERGED_LOSS`, or a non-finite weight; None otherwise. A learner
    that has not started learning (a warm-up) has not diverged, and a missing loss (no update yet) is not a divergence."""
    if not learner.learning:
        return None
    if "loss" in stats:
        loss = float(stats["loss"])
        if not (math.isfinite(loss) and loss < DIVERGED_LOSS):
            return f"the loss diverged ({loss:.3g})"
    if not learner.weights_finite():
        return "the weights diverged (one is not finite)"
    return None


def _kept_checkpoint(out: Path, moves: int | None) -> str:
    """What ``out`` holds of a run that diverged: its checkpoint at ``moves`` (the last one, written before the divergence
    was found: every checkpoint is checked first), or none (None)."""
    if moves is None:
        return f"no checkpoint is kept: the run diverged before its first one, so {str(out)!r} holds no {CHECKPOINT_NAME}"
    return f"{str(out / CHECKPOINT_NAME)!r} is kept, the run at {moves:,} moves (written before the divergence was found)"


def _diverged_error(problem: str, learner: Learner, config: TrainConfig, kept: str) -> TrainingDiverged:
    """The :class:`TrainingDiverged` of ``problem`` (:func:`divergence`) with what to change and what is ``kept`` on disk
    (``_kept_checkpoint``)."""
    clip = config.optim.grad_clip
    grad = f"lower [optim] grad_clip ({clip:g})" if clip > 0 else "set [optim] grad_clip"
    return TrainingDiverged(f"{problem} at {learner.moves_played:,} moves: lower [optim] lr ({config.optim.lr:g}) or {grad}; {kept}")


class RunClock:
    """Wall-clock seconds of the whole run (earlier calls included) and this call's deadline."""

    def __init__(self, before: float, max_minutes: float | None) -> None:
        self.before, self.start = before, time.monotonic()
        self.deadline = None if max_minutes is None else self.start + 60 * max_minutes

    def wall(self) -> float:
        return self.before + time.monotonic() - self.start

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


class _RateWindow:
    """Moves and updates since the last evaluation, for the rates of the next row."""

    def __init__(self, learner: Learner) -> None:
        self.reset(learner)

    def reset(self, learner: Learner) -> None:
        self.steps, self.updates, self.time = learner.moves_played, learner.updates, time.monotonic()

    def rates(self, learner: Learner) -> tuple[float, float]:
        dt = max(time.monotonic() - self.time, 1e-9)
        return round((learner.moves_played - self.steps) / dt, 1), round((learner.updates - self.updates) / dt, 2)


def _restore_run(learner: Learner, checkpoint: dict[str, Any] | None, out: Path, log: Callable[[str], None]) -> tuple[list[dict], float]:
    """Load a checkpoint into ``learner``; its metrics rows and wall-clock seconds so far. ``CheckpointError`` naming the
    file and what is wrong where the learner's state cannot be resumed: counters that are not non-negative integers
    or stand behind the run's own log, weights with NaN or infinite values (a run never saves a diverged state), or
    networks, optimizer, generators or games that do not fit this run's learner."""
    if checkpoint is None:
        return [], 0.0
    where = out / CHECKPOINT_NAME
    state = checkpoint["learner"]
    _check_counters(state, checkpoint.get("metrics", []), where, learner, int(checkpoint["config"]["run"]["eval_every_moves"]))
    try:
        note = learner.load_state_dict(state)
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as exc:
        reason = f"missing entry {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0][:300]
        raise CheckpointError(f"{where}: its learner state cannot be resumed by this run's learner ({reason}); nothing was "
                              "written: move the run aside, or resume it with the eqc and config that wrote it") from None
    bad = [name for name, module in learner.modules().items()
           if any(not bool(torch.isfinite(t).all()) for t in module.state_dict().values() if t.is_floating_point())]
    if bad:
        raise CheckpointError(f"{where}: the weights of {bad} hold NaN or infinite values; a run never saves a diverged state, "
                              "so the file was changed or damaged: nothing was written, resume from a copy")
    log(f"resuming {out} at {learner.moves_played:,} moves, {learner.updates:,} updates")
    if note is not None:
        log(note)
    rows = [r for r in checkpoint.get("metrics", []) if r["moves"] <= learner.moves_played]
    return rows, float(checkpoint["learner"]["counters"].get("wall_s", 0.0))


def _check_counters(state: dict[str, Any], rows: Sequence[dict[str, Any]], where: Path, learner: Learner, eval_every: int) -> None:
    """The counters of a checkpoint's learner state: non-negative integers; the moves a whole number of batched steps
    (a move in each of ``learner.num_envs`` games) and within one evaluation period and one iteration of its last metrics
    row (a run logs a row every ``eval_every`` moves, the period the checkpoint's config had)."""
    counters = state.get("counters") if isinstance(state, dict) else None
    if not isinstance(counters, dict):
        raise CheckpointError(f"{where}: its learner state has no counters")
    for name in ("moves", "updates"):
        value = counters.get(name)
        if isinstance(value, torch.Tensor) and value.numel() == 1:
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**62:
            raise CheckpointError(f"{where}: its counter {name!r} must be an integer in [0, 2**62), got {value!r}")
    moves, logged = int(counters["moves"]), max((int(r["moves"]) for r in rows), default=0)
    iteration = learner.num_envs * int(getattr(learner, "rollout_steps", 1))
    if moves % learner.num_envs or not logged <= moves < logged + eval_every + iteration:
        raise CheckpointError(f"{where}: its move counter {moves:,} is not where its run stood: a multiple of {learner.num_envs} "
                              f"(a move in each game) from its last metrics row ({logged:,} moves) up to one evaluation period "
                              f"({eval_every:,} moves) and one iteration ({iteration:,}) beyond it")


def metrics_columns(learner: Learner) -> tuple[str, ...]:
    """The columns of the run's ``metrics.csv``: :data:`METRICS`, then the learner's scalars not among them."""
    return METRICS + tuple(name for name in learner.scalars if name not in METRICS)


def _evaluate_run(learner: Learner, config: TrainConfig, stats: dict[str, Any], window: _RateWindow, clock: RunClock,
              device: torch.device) -> dict[str, Any]:
    """One metrics row: greedy evaluation on the fixed decks, training episodes and rates since the last row, and the
    learner's scalars from its last iteration's ``stats`` (NaN where it gave none, e.g. no loss before it learns); those
    outside :data:`METRICS` after its columns, by their names. Divergence is the caller's check (:func:`divergence`)."""
    result = evaluate_agent(learner.agent, learner.games.env.rules, config.run.eval_games, config.run.deck_seed, device)
    episodes, train_score = learner.games.take_episode_stats(learner.block)
    moves_per_s, updates_per_s = window.rates(learner)
    window.reset(learner)
    nan = float("nan")
    extra = dict.fromkeys(name for name in (*learner.scalars, *stats) if name not in METRICS)
    return {
        "moves": learner.moves_played, "updates": learner.updates, "wall_s": round(clock.wall(), 2),
        "eval_score": result.mean, "eval_sem": result.sem,
        "eval_bomb_out_rate": result.bomb_out_rate, "eval_perfect_rate": result.perfect_rate,
        "train_score": train_score, "train_episodes": episodes, "loss": float(stats.get("loss", nan)),
        "epsilon": float(stats.get("epsilon", nan)), "entropy": float(stats.get("entropy", nan)),
        "moves_per_s": moves_per_s, "updates_per_s": updates_per_s,
        **{name: float(stats.get(name, nan)) for name in extra},
    }


def save_run(out: Path, config: TrainConfig, seed: int, precision: Precision, state: dict[str, Any], rows: Sequence[dict[str, Any]],
          clock: RunClock, warmup: dict[str, Any] | None = None, *, file: str = CHECKPOINT_NAME) -> None:
    """Write the checkpoint of the learner's ``state`` (``Learner.state_dict()``), the metrics ``rows`` and, for a learner
    with a warm-up, how this call's went (:meth:`WarmupWatch.record`), to ``out/file``."""
    state["counters"]["wall_s"] = clock.wall()
    payload = {"config": config.to_dict(), "seed": seed, "precision": precision.as_dict(), "learner": state, "metrics": list(rows)}
    if warmup is not None:
        payload["warmup"] = warmup
    save_checkpoint(out / file, payload)


def tensorboard_writer_class() -> type:
    """TensorBoard's ``SummaryWriter`` class; ``ConfigError`` naming the key when the package is missing."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as exc:
        raise ConfigError(f"[run] tensorboard = true needs the tensorboard package ({exc}); pip install tensorboard") from None
    return SummaryWriter


def _tensorboard_logger(out: Path) -> Any:
    """A TensorBoard writer logging to ``out/tensorboard``."""
    return tensorboard_writer_class()(str(out / "tensorboard"))
