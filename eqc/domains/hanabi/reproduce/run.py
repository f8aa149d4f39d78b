"""``reproduce``: a table's pools (shipped, or trained), their cross-play, pair-level tests, beside the paper's.

Pools. At ``cpu`` scale the agents are read from the shipped directory ``agents`` (default
``results/cpu/agents``: ``<pool>/seed_<n>/`` policy directories) and nothing is trained; a pool
with fewer than two agents there leaves its cells empty (the table says so). With
``retrain=True`` (and at the ``smoke`` and ``paper`` scales) the pools are trained, or reused
when finished, under ``DIR/pools/<pool>/``.

Outputs. ``DIR/xp/<table>/<cell>/`` each cell's cross-play (``xp.json`` keeps the per-pair
matrix; ``cell.json`` the cell's numbers, which ``reuse=True`` takes instead of playing again when
the agents' files, games and decks are the same: :mod:`.reuse`); ``DIR/relabelled/<pool>/`` each
agent's relabelled self-play; ``DIR/<table>.md`` and ``.json`` the table: XP mean with its SEM over ordered pairs (the
paper's convention) and over unordered pairs (the unit of evidence), bomb-out rate, the paper's
numbers, each pool's relabelled-partner loss (:mod:`eqc.domains.hanabi.xp.relabelled`), and the
table's tests by :func:`eqc.evaluation.compare_pools`: paired sign flips when both cells hold the
same agents (plain against symmetrized), else a permutation test of unordered-pair means, each
with the smallest p its sample sizes allow. Each test is run twice: on XP (``tests``, H1: the first
cell is higher) and on per-pair bomb-out rates (``bomb_out_tests``, H1: the first cell bombs out less).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from eqc.domains.hanabi.reproduce.render import format_number, render_markdown
from eqc.domains.hanabi.reproduce.reuse import agent_digests, load_result, save_result
from eqc.domains.hanabi.reproduce.specs import PAPER, SCALES, TABLES, Cell, describe_pool, pool_config
from eqc.domains.hanabi.training.checkpoint import versions
from eqc.domains.hanabi.training.config_files import with_overrides
from eqc.domains.hanabi.training.policy import load_policy
from eqc.domains.hanabi.training.pool import seed_dir, train_pool
from eqc.domains.hanabi.xp import PoolError, cross_play_games, describe_policy, pool_runs, relabelled_self_play, write_xp
from eqc.evaluation import compare_pools, mean_sem, pair_summary
from eqc.io import json_safe, write_json_atomic, write_text_atomic

__all__ = ["SHIPPED_AGENTS", "reproduce"]

#: Where the repository ships its trained agents, by scale (``<pool>/seed_<n>/`` policy directories).
SHIPPED_AGENTS = Path(__file__).resolve().parents[4] / "results" / "cpu" / "agents"


def _slug(label: str) -> str:
    return label.lower().replace(" ", "_").replace("/", "")


def reproduce(
    table: str,
    scale: str,
    out: str | Path,
    *,
    agents: str | Path | None = None,
    retrain: bool = False,
    device: str = "cpu",
    ray_address: str | None = None,
    use_ray: bool | None = None,
    obl: list[Path] | None = None,
    overrides: tuple[str, ...] | list[str] = (),
    reuse: bool = False,
    command: list[str] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Reproduce ``table`` ("table1", "table2", "table3") at ``scale`` ("smoke", "cpu", "paper") in ``out``.

    ``agents``: the shipped pools to read at ``cpu`` scale (default :data:`SHIPPED_AGENTS`);
    ``retrain``: train the pools instead, their configs changed by ``overrides`` (``section.key=value``).
    ``obl``: public OBL agent files (``model0.pthw``), added to Table 2 as a column of their own (read
    before anything is trained). ``reuse``: take cells and relabelled self-play already computed in
``out`` for the same agent files, games and decks (see :mod:`.reuse`). ``command``: the command line
to record (the CLI passes its own).
    """
    _check_names(table, scale, obl)
    spec, sc, out = TABLES[table], SCALES[scale], Path(out)
    obl_policies = [load_policy(p, device=device) for p in obl] if obl else []  # a bad file fails before any work
    cells = [c for c in spec.cells if scale == "paper" or c.pool not in spec.paper_only_pools]
    skipped = sorted({c.pool for c in spec.cells} - {c.pool for c in cells})
    pools = list(dict.fromkeys(c.pool for c in cells))
    trained = retrain or scale != "cpu"
    if overrides and not trained:
        raise ValueError("overrides change the configs of trained pools; at scale 'cpu' they need retrain=True")
    if not trained and not _agents_dir(agents).is_dir():
        raise ValueError(f"no shipped agents at {_agents_dir(agents)} (they come with a clone of the repository): "
                         "pass agents=DIR (--agents) or retrain=True (--retrain)")
    configs = {p: with_overrides(pool_config(p, sc), overrides) for p in pools} if trained else {}
    runs = {p: _trained_pool(p, configs[p], sc, out, device, ray_address, use_ray, log) if trained else _shipped_pool(p, agents)
            for p in pools}
    results, matrices = _play_cells(cells, runs, sc.games, device, out / "xp" / table, log, reuse)
    if obl_policies:
        for cell in (Cell("OBL", "obl"), Cell("OBL C5-symmetrized", "obl", "C5"), Cell("OBL D10-symmetrized", "obl", "D10")):
            policies = [load_policy(p, device=device, symmetrize=cell.symmetrize) for p in obl]
            where = out / "xp" / table / _slug(cell.label)
            results[cell.label], matrices[cell.label] = _cross_play(cell, obl, sc.games, device, where, policies)
    relabelled = {p: _relabelled(runs[p], sc, device, out / "relabelled" / p, log, reuse) for p in pools if runs[p]}
    record = {
        "table": table, "title": spec.title, "scale": scale, "games_per_pair": sc.games,
        "agents_per_pool": {p: len(r) for p, r in runs.items()},
        "agents_source": "trained" if trained else (str(agents) if agents else "results/cpu/agents, shipped"),
        "cells": results, "paper": {k: dict(zip(("xp_mean", "xp_sem", "bomb_out_rate"), v, strict=True)) for k, v in PAPER[table].items()},
        "tests": _tests(spec.tests, results, matrices),
        "bomb_out_tests": _tests(spec.tests, results, matrices, "bomb_out"), "relabelled": relabelled, "paper_only_pools_skipped": skipped,
        "pools": {p: describe_pool(p, sc) for p in pools},
        "pool_configs": {p: (configs[p] if trained else load_policy(r[0]).config).to_dict() for p, r in runs.items() if r},
        "command": None if command is None else " ".join(command),
        "versions": versions(),
    }
    write_json_atomic(out / f"{table}.json", json_safe(record))
    write_text_atomic(out / f"{table}.md", render_markdown(record))
    return record


def _check_names(table: str, scale: str, obl: list[Path] | None) -> None:
    if table not in TABLES:
        raise ValueError(f"table must be one of {sorted(TABLES)}, got {table!r}")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {sorted(SCALES)}, got {scale!r}")
    if obl and table != "table2":
        raise ValueError(f"obl agents are a column of table2 only, not of {table}")


def _play_cells(cells: list[Cell], runs: dict[str, list[Path]], games: int, device: str, where: Path,
                log: Callable[[str], None], reuse: bool) -> tuple[dict[str, dict[str, Any]], dict[str, torch.Tensor]]:
    """Cross-play of every cell whose pool holds at least 2 agents: results and per-pair matrices by label."""
    results: dict[str, dict[str, Any]] = {}
    matrices: dict[str, torch.Tensor] = {}
    for cell in cells:
        if len(runs[cell.pool]) < 2:
            log(f"{cell.label}: pool {cell.pool!r} has {len(runs[cell.pool])} agents; cross-play needs 2")
            continue
        result, matrices[cell.label] = _cross_play(cell, runs[cell.pool], games, device, where / _slug(cell.label), reuse=reuse)
        results[cell.label] = result
        reused = " (reused)" if result.get("reused") else ""
        log(f"{cell.label}{reused}: XP {result['xp_mean']:.2f} ± {format_number(result['xp_sem_unordered'])} (unordered pairs)")
    return results, matrices


def _tests(pairs: tuple[tuple[str, str], ...], results: dict[str, dict[str, Any]], matrices: dict[str, torch.Tensor],
           measure: str = "xp") -> dict[str, dict]:
    """The table's one-sided tests between cells that were played: paired when both cells hold the same agents.
    ``measure``: "xp" (``"better > worse"``, H1: better cross-plays higher) or "bomb_out" (``"better < worse"``,
    H1: better's pairs bomb out less often, from the cells' per-pair bomb-out rates)."""
    tests = {}
    for better, worse in pairs:
        if better in matrices and worse in matrices:
            paired = results[better]["pool"] == results[worse]["pool"]
            if measure == "xp":
                a, b, alternative = matrices[better], matrices[worse], "greater"
            else:
                a, b = (torch.tensor(results[c]["bomb_out_matrix"], dtype=torch.float64) for c in (better, worse))
                alternative = "less"
            test = compare_pools(a, b, paired=paired, alternative=alternative, generator=torch.Generator().manual_seed(0))
            tests[f"{better} {'>' if measure == 'xp' else '<'} {worse}"] = test.as_dict()
    return tests


def _agents_dir(agents: str | Path | None) -> Path:
    return SHIPPED_AGENTS if agents is None else Path(agents)


def _shipped_pool(pool: str, agents: str | Path | None) -> list[Path]:
    """The shipped agents of ``pool`` (possibly none)."""
    where = _agents_dir(agents) / pool
    if not where.is_dir():
        return []
    try:
        return pool_runs(where)
    except PoolError:
        return []


def _trained_pool(pool: str, config, scale, out: Path, device: str, ray_address: str | None, use_ray: bool | None, log) -> list[Path]:
    seeds = list(range(scale.seeds))
    log(f"pool {pool!r}: {len(seeds)} seeds at scale {scale.name!r}")
    train_pool(config, seeds, out / "pools" / pool, device=device, ray_address=ray_address, use_ray=use_ray, log=log)
    return [seed_dir(out / "pools" / pool, s) for s in seeds]


#: Seed of the common decks of every cell.
DECK_SEED = 1


def _cross_play(cell: Cell, runs: list[Path], games: int, device: str, where: Path, policies: list | None = None,
                *, reuse: bool = False) -> tuple[dict[str, Any], torch.Tensor]:
    key = {"cell": cell.label, "pool": cell.pool, "symmetrize": cell.symmetrize, "hidden": cell.hidden, "games": games,
           "deck_seed": DECK_SEED, "agents": agent_digests(runs)}
    saved = load_result(where / "cell.json", key) if reuse else None
    if saved is not None and "bomb_out_matrix" in saved:  # cells saved before bomb-out tests are played again
        return {**saved, "reused": True}, torch.tensor(saved["matrix"], dtype=torch.float64)
    policies = policies or [load_policy(r, device=device, symmetrize=cell.symmetrize, hidden=cell.hidden) for r in runs]
    played = cross_play_games(policies, games, seed=DECK_SEED)
    agents = [describe_policy(p, r, cell.symmetrize) for p, r in zip(policies, runs, strict=True)]
    write_xp(where, played, agents, extra={"cell": cell.label, "hidden": cell.hidden})
    summary = played.summary()
    pairs = pair_summary(summary.mean)
    result = {
        "xp_mean": pairs.ordered.mean, "xp_sem": pairs.ordered.sem, "xp_sem_unordered": pairs.unordered.sem,
        "ordered_pairs": pairs.ordered.n, "unordered_pairs": pairs.unordered.n, "bomb_out_rate": summary.xp_bomb_out_rate,
        "perfect_rate": summary.xp_perfect_rate, "sp_mean": summary.sp.mean, "agents": len(policies),
        "symmetrize": cell.symmetrize, "hidden": cell.hidden, "pool": cell.pool, "matrix": summary.mean.tolist(),
        "bomb_out_matrix": summary.bomb_out_rate.tolist(),
    }
    save_result(where / "cell.json", key, result)
    return result, summary.mean


def _relabelled(runs: list[Path], scale, device: str, where: Path, log: Callable[[str], None], reuse: bool) -> dict[str, Any]:
    """Relabelled self-play of every plain agent of a pool: per-agent results and the pool's mean loss ± SEM over agents."""
    rows = []
    for run, digest in zip(runs, agent_digests(runs), strict=True):
        key = {"elements": scale.relabel_elements, "games": scale.relabel_games, "agent": digest}
        path = where / f"{digest[:16]}.json"
        if reuse and (saved := load_result(path, key)) is not None:
            rows.append({**saved, "agent": str(run)})
            log(f"{run}: relabelled self-play reused from {path}")
            continue
        result = relabelled_self_play(load_policy(run, device=device), elements=scale.relabel_elements, games=scale.relabel_games)
        rows.append({"agent": str(run), **result.as_dict()})
        save_result(path, key, rows[-1])
        log(f"{run}: {result}")
    losses = [r["loss"] for r in rows]
    summary = mean_sem(losses, "losses") if len(losses) >= 2 else None
    return {"elements": scale.relabel_elements, "games": scale.relabel_games, "agents": rows,
            "loss_mean": summary.mean if summary else (losses[0] if losses else float("nan")),
            "loss_sem": summary.sem if summary else float("nan")}
