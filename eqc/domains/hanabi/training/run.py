"""``train``: one training run in a directory, resumable, with metrics, curve and checkpoints.

Run directory ``DIR``:

- ``config.json``: the resolved config and seed (every key, defaults included);
- ``checkpoint.pt``: the latest checkpoint (see ``checkpoint``), written every
  ``[run] checkpoint_minutes`` and at the end;
- ``metrics.csv``: one row per evaluation (``env_steps, updates, wall_s, eval_score, ...``);
- ``learning_curve.png``: greedy evaluation score against wall-clock minutes and env steps;
- ``tensorboard/`` with ``[run] tensorboard = true``.

Running ``train`` again on the same directory resumes from the checkpoint (networks, optimizer,
generators, counters; games in progress restart). A directory holding a run of another config
or seed is refused, naming the keys that differ; keys that do not change what is learned
(``[run] total_env_steps, checkpoint_minutes, threads, tensorboard``) may change on resume.
"""

from __future__ import annotations

import csv
import fcntl
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from eqc._checks import check_device, check_float, check_int
from eqc.domains.hanabi.training.checkpoint import CHECKPOINT_NAME, load_checkpoint, save_checkpoint
from eqc.domains.hanabi.training.config import ConfigError, TrainConfig
from eqc.domains.hanabi.training.greedy_eval import evaluate_agent
from eqc.domains.hanabi.training.learner import Learner
from eqc.io import atomic_write, write_json_atomic, write_text_atomic

__all__ = ["METRICS", "RunSummary", "make_learner", "train"]

METRICS = (
    "env_steps", "updates", "wall_s", "eval_score", "eval_sem", "eval_bombout", "eval_perfect",
    "train_score", "train_episodes", "loss", "epsilon", "env_steps_per_s", "updates_per_s",
)
#: ``[run]`` keys that may differ when a run resumes: they do not change what is learned.
RESUMABLE_KEYS = ("total_env_steps", "checkpoint_minutes", "threads", "tensorboard")


def make_learner(config: TrainConfig, seed: int, device: torch.device) -> Learner:
    """The learner of ``config``'s ``[run] algorithm``: PQN (recurrent when ``[network] lstm_layers >= 1``) or R2D2."""
    if config.run.algorithm == "pqn" and config.network.lstm_layers > 0:
        from eqc.domains.hanabi.training.pqn_rnn import RecurrentPQNLearner

        return RecurrentPQNLearner(config, seed, device)
    if config.run.algorithm == "pqn":
        from eqc.domains.hanabi.training.pqn import PQNLearner

        return PQNLearner(config, seed, device)
    from eqc.domains.hanabi.training.r2d2 import R2D2Learner

    return R2D2Learner(config, seed, device)


class RunSummary(dict):
    """What ``train`` returns: the last metrics row plus ``resumed`` and ``stopped`` (why it stopped)."""


def _config_differences(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    diffs = []
    for section in sorted(set(saved) | set(current)):
        a, b = saved.get(section, {}), current.get(section, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key) and not (section == "run" and key in RESUMABLE_KEYS):
                diffs.append(f"[{section}] {key}: {a.get(key)!r} in the run, {b.get(key)!r} now")
    return diffs


def _prepare_dir(out: Path, config: TrainConfig, seed: int) -> dict[str, Any] | None:
    """Check that ``out`` is new or holds a compatible run; return its checkpoint (or None)."""
    saved_path = out / "config.json"
    record = {"seed": seed, "config": config.to_dict()}
    if saved_path.exists():
        saved = json.loads(saved_path.read_text())
        if saved.get("seed") != seed:
            raise ConfigError(f"--out {str(out)!r} holds a run with seed {saved.get('seed')}, not {seed}: use another --out")
        try:  # resolved, so that keys added to the schema since (with their defaults) are no difference
            saved_config = TrainConfig.from_dict(saved.get("config", {}), f"{saved_path}").to_dict()
        except ConfigError:
            saved_config = saved.get("config", {})
        diffs = _config_differences(saved_config, record["config"])
        if diffs:
            raise ConfigError(f"--out {str(out)!r} holds a run of another config; differences: " + "; ".join(diffs))
    write_json_atomic(saved_path, record)
    if (out / CHECKPOINT_NAME).exists():
        return load_checkpoint(out)
    return None


def _write_metrics(out: Path, rows: list[dict[str, Any]]) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=METRICS)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k, "") for k in METRICS})
    write_text_atomic(out / "metrics.csv", text.getvalue())


def plot_curve(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """Greedy evaluation score (± SEM) against wall-clock minutes and against env steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows:
        return
    minutes = [r["wall_s"] / 60 for r in rows]
    steps = [r["env_steps"] / 1e6 for r in rows]
    score = [r["eval_score"] for r in rows]
    sem = [r["eval_sem"] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, x, label in ((axes[0], minutes, "wall-clock minutes"), (axes[1], steps, "environment steps (millions)")):
        ax.errorbar(x, score, yerr=sem, marker="o", markersize=3, capsize=2)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("greedy self-play score")
    axes[0].set_ylim(0, 25)
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write(path, lambda f: f.write(buf.getvalue()))


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
    if max_minutes is not None:
        check_float(max_minutes, "max_minutes", low=0, low_open=True)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {str(out)!r} is a file, not a directory")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(f"--out {str(out)!r} is being trained by another process right now") from None
        return _train_locked(config, out, seed, device, max_minutes, progress, log)


def _train_locked(
    config: TrainConfig, out: Path, seed: int, device: torch.device | str, max_minutes: float | None,
    progress: bool, log: Callable[[str], None],
) -> RunSummary:
    """``train`` once the run directory is locked."""
    out = Path(out)
    device = torch.device(device)
    torch.set_num_threads(config.run.threads)
    checkpoint = _prepare_dir(out, config, seed)
    learner = make_learner(config, seed, device)
    rows: list[dict[str, Any]] = []
    wall_before = 0.0
    if checkpoint is not None:
        learner.load_state_dict(checkpoint["learner"])
        rows = [r for r in checkpoint.get("metrics", []) if r["env_steps"] <= learner.env_steps]
        wall_before = float(checkpoint["learner"]["counters"].get("wall_s", 0.0))
        log(f"resuming {out} at {learner.env_steps:,} env steps, {learner.updates:,} updates")
    writer = _tensorboard(out) if config.run.tensorboard else None
    start = time.monotonic()
    last_checkpoint = start
    deadline = None if max_minutes is None else start + 60 * max_minutes
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=config.run.total_env_steps, initial=learner.env_steps, unit="step", unit_scale=True, dynamic_ncols=True)
    window = {"steps": learner.env_steps, "updates": learner.updates, "time": start}
    stats: dict[str, Any] = {}

    def wall() -> float:
        return wall_before + time.monotonic() - start

    def save() -> None:
        state = learner.state_dict()
        state["counters"]["wall_s"] = wall()
        save_checkpoint(out / CHECKPOINT_NAME, {"config": config.to_dict(), "seed": seed, "learner": state, "metrics": rows})

    def evaluate() -> None:
        now = time.monotonic()
        result = evaluate_agent(learner.agent, config, config.run.eval_games, config.run.eval_seed, device)
        episodes, train_score = learner.take_episode_stats()
        dt = max(now - window["time"], 1e-9)
        row = {
            "env_steps": learner.env_steps, "updates": learner.updates, "wall_s": round(wall(), 2),
            "eval_score": result.mean, "eval_sem": result.sem, "eval_bombout": result.bombout, "eval_perfect": result.perfect,
            "train_score": train_score, "train_episodes": episodes,
            "loss": float(stats.get("loss", float("nan"))), "epsilon": float(stats.get("epsilon", float("nan"))),
            "env_steps_per_s": round((learner.env_steps - window["steps"]) / dt, 1),
            "updates_per_s": round((learner.updates - window["updates"]) / dt, 2),
        }
        rows.append(row)
        window.update(steps=learner.env_steps, updates=learner.updates, time=time.monotonic())
        _write_metrics(out, rows)
        plot_curve(rows, out / "learning_curve.png", f"{config.run.algorithm} {config.rule.rule} seed {seed}")
        if writer is not None:
            for key, value in row.items():
                writer.add_scalar(key, value, learner.env_steps)
        if bar is not None:
            bar.set_postfix(score=f"{result.mean:.2f}", bomb=f"{result.bombout:.0%}")
        else:
            log(f"{learner.env_steps:>12,} steps  {wall() / 60:6.1f} min  eval {result}")

    if not rows:
        evaluate()  # the untrained agent: the curve's starting point
    next_eval = (learner.env_steps // config.run.eval_every_steps + 1) * config.run.eval_every_steps
    stopped = "total_env_steps"
    while learner.env_steps < config.run.total_env_steps:
        if deadline is not None and time.monotonic() >= deadline:
            stopped = "max_minutes"
            break
        before = learner.env_steps
        stats = learner.iteration()
        if bar is not None:
            bar.update(learner.env_steps - before)
        if learner.env_steps >= next_eval:
            evaluate()
            next_eval = (learner.env_steps // config.run.eval_every_steps + 1) * config.run.eval_every_steps
        if time.monotonic() - last_checkpoint >= 60 * config.run.checkpoint_minutes:
            save()
            last_checkpoint = time.monotonic()
    if not rows or rows[-1]["env_steps"] != learner.env_steps:
        evaluate()
    save()
    if bar is not None:
        bar.close()
    if writer is not None:
        writer.close()
    return RunSummary(rows[-1], resumed=checkpoint is not None, stopped=stopped)


def _tensorboard(out: Path) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as exc:
        raise ConfigError(f"[run] tensorboard = true needs the tensorboard package ({exc}); pip install tensorboard") from None
    return SummaryWriter(str(out / "tensorboard"))
