"""The lever-game experiment: train the five pools, cross-play them, write the JSON and the heatmap."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import torch
from tqdm import tqdm

from eqc.domains.lever.evaluate import CrossPlay, cross_play
from eqc.domains.lever.game import lever_game
from eqc.domains.lever.plots import plot_cross_play
from eqc.domains.lever.train import RULES, LeverConfig, train_pools, training_steps
from eqc.io import write_json_atomic

JSON_NAME = "lever_xp.json"
PLOT_NAME = "lever_xp.png"


def lever_experiment(
    *,
    seeds: int = 16,
    out: str | Path | None = None,
    payoffs: Sequence[float] | None = None,
    config: LeverConfig | None = None,
    seed: int = 0,
    progress: bool = True,
    threads: int | None = 1,
) -> dict[str, CrossPlay]:
    """Train the five pools, return ``{rule: CrossPlay}``; with ``out``, also write the JSON and the heatmap there.

    ``threads``: torch CPU threads during training (restored afterwards; ``None`` leaves the
    setting alone). One thread is fastest for these tiny batched networks, especially on
    shared machines where a thread pool spends its time waiting.
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 2:
        raise ValueError(f"seeds (agents per pool) must be an int >= 2 for cross-play, got {seeds!r}")
    game = lever_game(payoffs)
    config = config or LeverConfig()
    with _torch_threads(threads), tqdm(
        total=training_steps(RULES, config), desc="lever pools", unit="step", disable=not progress
    ) as bar:
        pools = train_pools(game, RULES, num_agents=seeds, seed=seed, config=config, on_step=lambda: bar.update(1))
    results = {rule: cross_play(game, pool.probabilities) for rule, pool in pools.items()}
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / JSON_NAME, {rule: r.as_dict() for rule, r in results.items()})
        plot_cross_play(results, out / PLOT_NAME)
    return results


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """Temporarily use ``threads`` torch CPU threads."""
    if threads is None:
        yield
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int or None, got {threads!r}")
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def format_table(results: dict[str, CrossPlay]) -> str:
    """The XP table as aligned text."""
    lines = [f"{'rule':<8} {'SP':>6} {'XP':>6} {'± sem':>7}"]
    for rule, r in results.items():
        lines.append(f"{rule:<8} {r.sp_mean:>6.3f} {r.xp_mean:>6.3f} {r.xp_sem:>7.3f}")
    return "\n".join(lines)
