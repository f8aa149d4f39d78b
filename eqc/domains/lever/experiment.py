"""The lever-game experiment: train the five pools, cross-play them, write the JSON and the heatmap.

``DIR/lever_xp.json`` maps each rule to its record: ``sp_mean``, ``xp_mean``, ``xp_sem`` (the
headline numbers), ``sp_sem``, ``matrix`` (expected payoff of every ordered pair, row: player 1's
agent), ``agent_seeds`` (the initialisation seed of each agent's kept candidate) and ``run``
(eqc version, payoffs, agents per pool, base seed and the full :class:`LeverConfig`), so each
record says how it was made. The file is written atomically with mode 0644.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import torch
from tqdm import tqdm

from eqc import __version__
from eqc._checks import check_int
from eqc.domains.lever.evaluate import lever_cross_play
from eqc.domains.lever.game import lever_game
from eqc.domains.lever.plots import plot_cross_play
from eqc.domains.lever.train import RULES, LeverConfig, LeverPool, check_seeds, member_seeds, train_pools, training_steps
from eqc.evaluation.cross_play import CrossPlayResult
from eqc.io import write_json_atomic

__all__ = ["JSON_NAME", "PLOT_NAME", "format_table", "lever_experiment"]

JSON_NAME = "lever_xp.json"
PLOT_NAME = "lever_xp.png"


def lever_experiment(
    *,
    seeds: Sequence[int] = tuple(range(16)),
    out: str | Path | None = None,
    payoffs: Sequence[float] | None = None,
    config: LeverConfig | None = None,
    progress: bool = True,
    threads: int | None = 1,
) -> dict[str, CrossPlayResult]:
    """Train the five pools, one agent per seed in ``seeds`` (at least 2); return ``{rule: CrossPlayResult}``.

    With ``out``, also write the files (``out`` is created before training starts). ``threads``: torch CPU threads during training
    (restored afterwards; default 1, the fastest for these tiny networks); ``None`` leaves the
    setting alone (the ``eqc`` command passes ``None``: it has already applied ``--threads``).
    """
    seeds = check_seeds(seeds, low=2)
    if isinstance(out, str) and not out.strip():
        raise ValueError("out must be a directory path, got an empty string (use '.' for the current directory)")
    game = lever_game(payoffs)
    config = config or LeverConfig()
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
    with _torch_threads(threads), tqdm(
        total=training_steps(RULES, config), desc="lever pools", unit="step", disable=not progress
    ) as bar:
        pools = train_pools(game, RULES, seeds=seeds, config=config, on_step=lambda: bar.update(1))
    results = {rule: lever_cross_play(game, pool.probabilities) for rule, pool in pools.items()}
    if out is not None:
        run: dict[str, object] = {
            "eqc_version": __version__,
            "payoffs": game.payoffs.tolist(),
            "seeds": seeds,
            "config": dataclasses.asdict(config),
        }
        records = {rule: _record(results[rule], pools[rule], seeds, run) for rule in results}
        write_json_atomic(out / JSON_NAME, records)
        plot_cross_play(results, out / PLOT_NAME)
    return results


def _record(result: CrossPlayResult, pool: LeverPool, seeds: list[int], run: dict[str, object]) -> dict[str, object]:
    agents, restarts = pool.candidate_returns.shape
    candidates = member_seeds(seeds, restarts)
    return {
        "sp_mean": result.sp.mean,
        "xp_mean": result.xp.mean,
        "xp_sem": result.xp.sem,
        "sp_sem": result.sp.sem,
        "matrix": result.mean.tolist(),
        "agent_seeds": [candidates[k * restarts + int(pool.selected[k])] for k in range(agents)],
        "run": run,
    }


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """Temporarily use ``threads`` torch CPU threads (``None``: leave the setting alone)."""
    if threads is None:
        yield
        return
    check_int(threads, "threads", low=1)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def format_table(results: dict[str, CrossPlayResult]) -> str:
    """The XP table as aligned text: SP mean, XP mean and its standard error per rule."""
    lines = [f"{'rule':<8} {'SP':>6} {'XP':>6} {'± sem':>7}"]
    for rule, r in results.items():
        lines.append(f"{rule:<8} {r.sp.mean:>6.3f} {r.xp.mean:>6.3f} {r.xp.sem:>7.3f}")
    return "\n".join(lines)
