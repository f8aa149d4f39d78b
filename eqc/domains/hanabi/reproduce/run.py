"""``reproduce``: train (or reuse) a table's pools, cross-play them, write the table beside the paper's.

``DIR/pools/<pool>/seed_<n>/`` holds the pools (kept and reused by every table and scale run in
``DIR``: a finished seed is never retrained); ``DIR/xp/<table>/<cell>/`` each cell's cross-play
(``xp.json``, ``xp.csv``, heatmap); ``DIR/<table>.md`` and ``DIR/<table>.json`` the table: eqc's XP
mean ± SEM over pairs and bomb-out rate beside the paper's, pool sizes, games per pair, the
one-tailed Monte Carlo permutation tests (on per-game XP scores, 10,000 resamples) with 99%
Clopper-Pearson intervals on their p-values, and the command and versions that produced it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from eqc.domains.hanabi.reproduce.specs import PAPER, SCALES, TABLES, Cell, describe_pool, pool_config
from eqc.domains.hanabi.training.checkpoint import versions
from eqc.domains.hanabi.training.policy import load_policy
from eqc.domains.hanabi.training.pool import seed_dir, train_pool
from eqc.domains.hanabi.xp import cross_play_games, describe_policy, write_xp
from eqc.evaluation import permutation_test
from eqc.io import json_safe, write_json_atomic, write_text_atomic

__all__ = ["render_markdown", "reproduce"]


def _slug(label: str) -> str:
    return label.lower().replace(" ", "_").replace("/", "")


def reproduce(
    table: str,
    scale: str,
    out: str | Path,
    *,
    device: str = "cpu",
    ray_address: str | None = None,
    use_ray: bool | None = None,
    obl: list[Path] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Reproduce ``table`` ("table1", "table2", "table3") at ``scale`` ("smoke", "cpu", "paper") in ``out``.

    ``obl``: public OBL agent files (``model0.pthw``), added to Table 2 as a column of their own.
    """
    if table not in TABLES:
        raise ValueError(f"table must be one of {sorted(TABLES)}, got {table!r}")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {sorted(SCALES)}, got {scale!r}")
    spec, sc, out = TABLES[table], SCALES[scale], Path(out)
    cells = [c for c in spec.cells if scale == "paper" or c.pool not in spec.paper_only_pools]
    skipped = sorted({c.pool for c in spec.cells} - {c.pool for c in cells})
    seeds = list(range(sc.seeds))
    for pool in dict.fromkeys(c.pool for c in cells):
        log(f"pool {pool!r}: {len(seeds)} seeds at scale {scale!r}")
        train_pool(pool_config(pool, sc), seeds, out / "pools" / pool, device=device, ray_address=ray_address, use_ray=use_ray, log=log)
    results: dict[str, dict[str, Any]] = {}
    scores: dict[str, torch.Tensor] = {}
    for cell in cells:
        runs = [seed_dir(out / "pools" / cell.pool, s) for s in seeds]
        results[cell.label], scores[cell.label] = _cross_play(cell, runs, sc.games, device, out / "xp" / table / _slug(cell.label))
        log(f"{cell.label}: XP {results[cell.label]['xp_mean']:.2f} ± {results[cell.label]['xp_sem']:.2f}")
    if table == "table2" and obl:
        cells_obl = [Cell("OBL", "obl"), Cell("OBL C5-symmetrized", "obl", "C5"), Cell("OBL D10-symmetrized", "obl", "D10")]
        for cell in cells_obl:
            results[cell.label], scores[cell.label] = _cross_play(cell, obl, sc.games, device, out / "xp" / table / _slug(cell.label))
    tests = {}
    for better, worse in spec.tests:
        if better in scores and worse in scores:
            test = permutation_test(scores[better], scores[worse], alternative="greater", resamples=10_000,
                                    generator=torch.Generator().manual_seed(0))
            tests[f"{better} > {worse}"] = {**test.as_dict(), "interval": test.interval()}
    record = {
        "table": table, "title": spec.title, "scale": scale, "seeds_per_pool": sc.seeds, "games_per_pair": sc.games,
        "cells": results, "paper": {k: dict(zip(("xp_mean", "xp_sem", "bomb_rate"), v, strict=True)) for k, v in PAPER[table].items()},
        "permutation_tests": tests, "paper_only_pools_skipped": skipped,
        "pools": {p: describe_pool(p, sc) for p in dict.fromkeys(c.pool for c in cells)},
        "pool_configs": {p: pool_config(p, sc).to_dict() for p in dict.fromkeys(c.pool for c in cells)},
        "command": " ".join(["eqc", *sys.argv[1:]]) if sys.argv and sys.argv[0].endswith("eqc") else None,
        "versions": versions(),
    }
    write_json_atomic(out / f"{table}.json", json_safe(record))
    write_text_atomic(out / f"{table}.md", render_markdown(record))
    return record


def _cross_play(cell: Cell, runs: list[Path], games: int, device: str, where: Path) -> tuple[dict[str, Any], torch.Tensor]:
    policies = [load_policy(r, device=device, symmetrize=cell.symmetrize, hidden=cell.hidden) for r in runs]
    played = cross_play_games(policies, games, seed=1)
    agents = [describe_policy(p, r, cell.symmetrize) for p, r in zip(policies, runs, strict=True)]
    write_xp(where, played, agents, extra={"cell": cell.label, "hidden": cell.hidden})
    summary = played.summary()
    return (
        {"xp_mean": summary.xp.mean, "xp_sem": summary.xp.sem, "bomb_rate": summary.xp_bomb_rate, "perfect_rate": summary.xp_perfect_rate,
         "sp_mean": summary.sp.mean, "nonzero_mean": played.mean_nonzero(), "agents": len(policies), "symmetrize": cell.symmetrize,
         "hidden": cell.hidden, "pool": cell.pool},
        summary.xp_scores(),
    )


def _fmt(mean: float, sem: float) -> str:
    return "n/a" if mean != mean else f"{mean:.2f} ± {sem:.2f}"


def _rate(rate: float | None) -> str:
    return "n/a" if rate is None or rate != rate else f"{100 * rate:.1f}%"


def render_markdown(record: dict[str, Any]) -> str:
    lines = [
        f"# {record['table']}: {record['title']}",
        "",
        f"Scale `{record['scale']}`: {record['seeds_per_pool']} agents per pool (one per seed), {record['games_per_pair']} games per "
        "ordered pair of distinct agents on common decks, seats alternating; XP is the mean ± standard error over pairs.",
        "",
        "| cell | eqc XP | eqc bomb-out | paper XP | paper bomb-out |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, r in record["cells"].items():
        paper = record["paper"].get(label, {})
        lines.append(
            f"| {label} | {_fmt(r['xp_mean'], r['xp_sem'])} | {_rate(r['bomb_rate'])} | "
            f"{_fmt(paper.get('xp_mean', float('nan')), paper.get('xp_sem', float('nan')))} | {_rate(paper.get('bomb_rate'))} |"
        )
    lines += ["", "Pools:", ""] + [f"- `{name}`: {text}" for name, text in record.get("pools", {}).items()]
    if record["paper_only_pools_skipped"]:
        lines += ["", f"Pools run at paper scale only (not at this scale): {', '.join(record['paper_only_pools_skipped'])}."]
    lines += ["", "One-tailed Monte Carlo permutation tests (H1: the first is higher), 10,000 resamples, 99% interval on p:", ""]
    for name, t in record["permutation_tests"].items():
        lines.append(f"- {name}: difference {t['difference']:+.2f}, p = {t['p_value']:.4f}, interval {t['interval']}")
    lines += ["", f"Produced by `{record['command'] or 'eqc.domains.hanabi.reproduce.reproduce(...)'}` with eqc "
              f"{record['versions']['eqc']}, torch {record['versions']['torch']}.", ""]
    return "\n".join(lines)
