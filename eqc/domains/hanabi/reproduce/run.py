"""``reproduce``: a table's pools (shipped, or trained), their cross-play, agent-level tests, beside the paper's.

Pools. At the scales with shipped agents (``cpu``: ``results/cpu/agents``; ``induced``:
``results/induced/agents``; ``<pool>/seed_<n>/`` policy directories) the agents are read from there, or
from ``agents``, and nothing is trained; a pool with fewer than two agents there leaves its cells empty
(the table says so). With ``retrain=True`` (and at the ``smoke`` and ``paper`` scales) the pools are
trained, or reused when finished, under ``DIR/pools/<pool>/``.

Outputs. ``DIR/xp/<table>/<cell>/`` each cell's cross-play (``xp.json`` keeps the per-pair
matrix; ``cell.json`` the cell's per-pair score, bomb-out and perfect-score matrices and the numbers
derived from them, which ``reuse=True`` derives again from the saved matrices, of the cell's shape,
instead of playing again when the agents' files, games and decks are the same, and refuses when a saved result was edited
or holds impossible numbers: :mod:`.reuse`); ``DIR/relabelled/<pool>/`` each
agent's relabelled self-play; ``DIR/xp/between/`` the cross-play between the agents of two cells a test
compares (:mod:`.between`, reused likewise); ``DIR/<table>.md`` and ``.json`` the table: XP mean over
ordered pairs with its jackknife SE over agents (``xp_sem``, the unit of evidence) and the SEM over ordered
pairs as if independent (``xp_sem_ordered_pairs``, the paper's convention, for comparison with its
numbers), bomb-out rate, the paper's numbers, each pool's relabelled-partner loss
(:mod:`eqc.domains.hanabi.xp.relabelled`), and the table's tests (:mod:`.comparisons`: agent-level, on
the matrix over both cells' agents, kept as ``test_matrices``), on XP (``tests``) and on bomb-out rates
(``bomb_out_tests``), primary ones Holm-adjusted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from eqc._checks import check_choice
from eqc.domains.hanabi.agent.files import CheckpointError, versions
from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.config.agent import REQUESTED_PRECISIONS
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.reproduce.between import form, play_between
from eqc.domains.hanabi.reproduce.comparisons import table_tests
from eqc.domains.hanabi.reproduce.design import check_design
from eqc.domains.hanabi.reproduce.loaded import LoadedPolicies
from eqc.domains.hanabi.reproduce.record import (
    CellResult,
    PaperNumbers,
    RelabelledAgent,
    RelabelledPool,
    TableRecord,
    TableTest,
)
from eqc.domains.hanabi.reproduce.render import format_number, render_markdown
from eqc.domains.hanabi.reproduce.reuse import ReuseError, agent_digests, check_result_path, load_result, range_problem, save_result
from eqc.domains.hanabi.reproduce.schema import RecordError, matrix_rows
from eqc.domains.hanabi.reproduce.specs import (
    SCALES,
    Cell,
    ReproduceError,
    Scale,
    Table,
    describe_pool,
    paper_numbers,
    pool_config,
    scale_spec,
    table_spec,
)
from eqc.domains.hanabi.training.config import TrainConfig, with_overrides
from eqc.domains.hanabi.training.pool import seed_dir, train_pool
from eqc.domains.hanabi.xp import PoolError, cross_play_games, describe_policy, pool_runs, relabelled_self_play, write_xp
from eqc.domains.hanabi.xp.equivariance import greedy_equivariance
from eqc.domains.hanabi.xp.report import redraw_xp
from eqc.evaluation import mean_sem, pool_summary
from eqc.io import json_safe, recorded_path, write_json_atomic, write_text_atomic

__all__ = ["REPOSITORY", "Request", "check_request", "pool_agents", "reproduce", "shipped_agents", "shipped_pools"]

#: The repository's root, which holds each scale's shipped agents (:attr:`Scale.shipped`).
REPOSITORY = Path(__file__).resolve().parents[4]


#: Greedy self-play games on whose states each agent's greedy disagreement is measured (beside its relabelled self-play).
EQUIVARIANCE_GAMES = 200

def shipped_agents(scale: Scale) -> Path | None:
    """Where the repository ships ``scale``'s agents (``<pool>/seed_<n>/`` policy directories); None: the scale ships none."""
    return None if scale.shipped is None else REPOSITORY / scale.shipped


def _slug(label: str) -> str:
    return label.lower().replace(" ", "_").replace("/", "")


@dataclass(frozen=True)
class Request:
    """A checked request for a table (:func:`check_request`): what it compares at which scale, whether its pools are
    ``trained``, and for each pool of its cells played at that scale either its agents to read (``shipped``) or each
    seed's training config (``configs``)."""

    spec: Table
    scale: Scale
    trained: bool
    shipped: dict[str, list[Path]]
    configs: dict[str, dict[int, TrainConfig]]


def check_request(table: str, scale: str, *, agents: str | Path | None = None, retrain: bool = False, obl: list[Path] | None = None,
                  overrides: tuple[str, ...] | list[str] = (), device: str = "cpu") -> Request:
    """Every rule the arguments of :func:`reproduce` must follow, checked before any work (nothing is written): the table
    exists at the scale; ``retrain`` where the scale's pools are seed pools and the table is not registered; ``agents``
    only where shipped agents are read; ``overrides`` only where pools train, and valid; ``obl`` only for table2, each
    file an agent; the agents read make at least one cell, are the registered design where the table is registered, and
    load. Raises :class:`~.specs.ReproduceError` naming the argument at fault."""
    spec, sc = table_spec(table, scale), scale_spec(scale)
    if retrain and sc.trained_by:
        raise ReproduceError("retrain", f"the {scale} scale's agents differ in their colour-to-slot map, not their seed: train them "
                             f"with `python {sc.trained_by}` (one worker per core) and pass agents=DIR (--agents)")
    trained = retrain or sc.shipped is None
    if spec.registered and trained:
        raise ReproduceError("retrain", f"{table} at scale {scale!r} is registered ({spec.registered}): it reads the registered "
                             "agents (shipped, or agents=DIR) and trains none")
    if agents is not None and trained:
        shipping = " or ".join(name for name, s in SCALES.items() if s.shipped)
        raise ReproduceError("agents", f"reads shipped agents at scale {shipping}; it cannot be combined with retrain or another scale")
    if overrides and not trained:
        raise ReproduceError("overrides", f"overrides change the configs of trained pools: at scale {scale!r} they need retrain "
                             "(shipped agents are fixed)")
    if obl and table != "table2":
        raise ReproduceError("obl", f"obl agents are a column of table2 only, not of {table}")
    for file in obl or []:  # before any training: a bad file is found now, not after hours
        try:
            load_policy(file, device=device)
        except CheckpointError as exc:
            raise ReproduceError("obl", str(exc)) from exc
    pools = list(dict.fromkeys(c.pool for c in spec.cells if c.pool in sc.pools and c.pool not in sc.not_trained))
    if trained:
        try:
            configs = {p: {s: with_overrides(pool_config(p, sc, s), overrides) for s in sc.seeds} for p in pools}
        except ConfigError as exc:
            raise ReproduceError("overrides", str(exc)) from exc
        return Request(spec, sc, True, {}, configs)
    try:
        shipped = shipped_pools(table, scale, agents, obl=bool(obl))
        for run in (run for runs in shipped.values() for run in runs):
            load_policy(run, device=device, precision="fp32")  # fp32: checks the files and warns of nothing
    except (PoolError, CheckpointError) as exc:
        raise ReproduceError("agents", str(exc)) from exc
    return Request(spec, sc, False, shipped, {})


def reproduce(
    table: str,
    scale: str,
    out: str | Path,
    *,
    agents: str | Path | None = None,
    retrain: bool = False,
    device: str = "cpu",
    precision: str = "auto",
    ray_address: str | None = None,
    use_ray: bool | None = None,
    obl: list[Path] | None = None,
    overrides: tuple[str, ...] | list[str] = (),
    reuse: bool = False,
    command: list[str] | None = None,
    log: Callable[[str], None] = print,
) -> TableRecord:
    """Reproduce ``table`` (a table of ``SCALES[scale].tables``) at ``scale`` (a key of :data:`~.specs.SCALES`) in ``out``.

    ``agents``: the pools to read at a scale with shipped agents (default :func:`shipped_agents`);
    ``retrain``: train the pools instead, their configs changed by ``overrides`` (``section.key=value``).
    ``obl``: public OBL agent files (``model0.pthw``), added to Table 2 as a column of their own (read
    before anything is trained). ``precision``: the requested precision of every agent's network in cross-play and
relabelled self-play (see :func:`load_policy`; "auto": its training precision where ``device`` runs it natively, else
fp32). ``reuse``: take cells and relabelled self-play already computed in
``out`` for the same agent files, games and decks (see :mod:`.reuse`; :class:`~.reuse.ReuseError` for a saved result that
was edited or holds impossible numbers). The arguments are checked first (:func:`check_request`: a
:class:`~.specs.ReproduceError` names the one at fault). ``command``: the command line
to record (the CLI passes its own).
    """
    request = check_request(table, scale, agents=agents, retrain=retrain, obl=obl, overrides=overrides, device=device)
    check_choice(precision, "precision", REQUESTED_PRECISIONS)
    spec, sc, out = request.spec, request.scale, Path(out)
    cells = [c for c in spec.cells if c.pool in sc.pools and c.pool not in sc.not_trained]
    skipped = sorted({c.pool for c in spec.cells if c.pool not in sc.pools})  # a pool not trained by design: its tests say so
    pools = list(dict.fromkeys(c.pool for c in cells))
    configs = request.configs
    runs = {p: _trained_pool(p, configs[p], sc, out, device, ray_address, use_ray, log) if request.trained else request.shipped[p]
            for p in pools}
    loaded = LoadedPolicies(device, precision)
    results = _play_cells(cells, runs, sc.games, device, precision, out / "xp" / table, log, reuse, loaded)
    matching = ({p: [f"0/seed_{s}" for s in configs[p]] for p in pools} if request.trained else
                {p: [key for key, _ in pool_agents(Path(agents) if agents else REPOSITORY / str(sc.shipped), sc, p)] for p in pools})
    results = {label: replace(result, matching=tuple(matching[result.pool])) for label, result in results.items()}
    if obl:
        for cell in (Cell("OBL", "obl"), Cell("OBL C5-symmetrized", "obl", "C5"), Cell("OBL D10-symmetrized", "obl", "D10")):
            policies = [load_policy(p, device=device, symmetrize=cell.symmetrize, precision=precision) for p in obl]
            where = out / "xp" / table / _slug(cell.label)
            results[cell.label], _ = _cross_play(cell, obl, sc.games, device, precision, where, policies)
    tests = table_tests(spec, results, _between_cells(spec.tests, cells, runs, results, sc.games, loaded, out / "xp" / "between", log,
                                                      reuse), sc.not_trained)
    relabelled = {p: _relabelled(loaded.of(Cell(p, p), runs[p]), runs[p], sc, out / "relabelled" / p, log, reuse)
                  for p in pools if runs[p]}
    record = TableRecord(
        table=table, title=spec.title, scale=scale, games_per_pair=sc.games, precision=precision,
        agents_per_pool={p: len(r) for p, r in runs.items()},
        agents_source="trained" if request.trained else (recorded_path(agents) if agents else f"{sc.shipped}, shipped"),
        cells=results, paper={k: PaperNumbers(*v) for k, v in paper_numbers(table, scale).items()},
        tests=tests.xp, bomb_out_tests=tests.bomb_out, test_matrices=tests.matrices, not_run_tests=tests.not_run,
        relabelled=relabelled, pools_not_at_this_scale=tuple(skipped), registered=spec.registered,
        matching_note=_matching_note(spec, tests.xp),
        pools={p: describe_pool(p, sc) for p in pools},
        pool_configs={p: (configs[p][sc.seeds[0]] if request.trained else TrainConfig.from_dict(load_policy(r[0]).trained_with)).to_dict()
                      for p, r in runs.items() if r},
        command=None if command is None else " ".join(command),
        versions=versions(),
    )
    write_json_atomic(out / f"{table}.json", record.to_json())
    write_text_atomic(out / f"{table}.md", render_markdown(record))
    return record


def _matching_note(spec: Table, tests: dict[str, TableTest]) -> str | None:
    """What a reader must know of matched tests in a table that was not pre-registered: they were adopted after its data
    were seen (None when the table has no matched test or was registered)."""
    if spec.registered is not None or not any(t.kind == "matched" for t in tests.values()):
        return None
    return ("Matched tests: this table's pools share their stream seeds and pi (or seeds), so its tests between pools are "
            "matched. They replaced unpaired tests on 2026-11-28, after the table had been published with those: their "
            "verdicts were not registered before the data were seen (the unpaired ones are in this file's history).")


def _play_cells(cells: list[Cell], runs: dict[str, list[Path]], games: int, device: str, precision: str, where: Path,
                log: Callable[[str], None], reuse: bool, loaded: LoadedPolicies) -> dict[str, CellResult]:
    """Cross-play of every cell whose pool holds at least 2 agents: results by label."""
    results: dict[str, CellResult] = {}
    for cell in cells:
        if len(runs[cell.pool]) < 2:
            log(f"{cell.label}: pool {cell.pool!r} has {len(runs[cell.pool])} agents; cross-play needs 2")
            continue
        result, _ = _cross_play(cell, runs[cell.pool], games, device, precision, where / _slug(cell.label),
                                loaded.of(cell, runs[cell.pool]), reuse=reuse, log=log)
        results[cell.label] = result
        reused = " (reused)" if result.reused else ""
        log(f"{cell.label}{reused}: XP {result.xp_mean:.2f} ± {format_number(result.xp_sem)} (jackknife over agents)")
    return results


def _between_cells(tests: tuple[tuple[str, str], ...], cells: list[Cell], runs: dict[str, list[Path]], results: dict[str, CellResult],
                   games: int, loaded: LoadedPolicies, where: Path, log: Callable[[str], None], reuse: bool
                   ) -> dict[tuple[str, str], dict[str, torch.Tensor]]:
    """The cross-play between the two cells of every test whose cells were both played (:mod:`.between`), by test."""
    by_label = {c.label: c for c in cells}
    between = {}
    for better, worse in tests:
        if better in results and worse in results:
            a, b = by_label[better], by_label[worse]
            policies_a, policies_b = loaded.of(a, runs[a.pool]), loaded.of(b, runs[b.pool])
            between[(better, worse)] = play_between(a, runs[a.pool], policies_a, b, runs[b.pool], policies_b, games, DECK_SEED, where,
                                                    _precision_key(policies_a + policies_b), reuse=reuse, log=log)
    return between


def shipped_pools(table: str, scale: str, agents: str | Path | None, *, obl: bool = False) -> dict[str, list[Path]]:
    """The shipped agents of each pool of ``table`` at ``scale`` (possibly none) under ``agents`` (default
    :func:`shipped_agents`). Raises :class:`PoolError` when no cell of the table can be computed (no pool
    holds 2 agents) and no OBL agents (``obl``) make a column of their own, and its :class:`~.design.DesignError`
    when the table is registered and its pools are not the registered design (:func:`~.design.check_design`)."""
    where = shipped_agents(SCALES[scale]) if agents is None else Path(agents)
    if where is None:
        raise PoolError(f"scale {scale!r} ships no agents: its pools are trained")
    if not where.is_dir():
        raise PoolError(f"no shipped agents at {where} (they come with a clone of the repository): "
                        "pass agents=DIR (--agents) or retrain=True (--retrain)")
    spec = table_spec(table, scale)
    if spec.registered:
        check_design(spec, SCALES[scale], where)
    pools = list(dict.fromkeys(c.pool for c in spec.cells if c.pool in SCALES[scale].pools))
    found = {pool: [run for _, run in pool_agents(where, SCALES[scale], pool)] for pool in pools}
    if not obl and all(len(runs) < 2 for runs in found.values()):
        held = ", ".join(f"{p}: {len(r)}" for p, r in found.items())
        raise PoolError(f"no cell of {table} can be computed from {str(where)!r}: each needs a pool of at least 2 agents "
                        f"(<pool>/seed_<n>/ policy directories), the pools hold {held}")
    return found


def pool_agents(where: Path, scale: Scale, pool: str) -> list[tuple[str, Path]]:
    """The agents of ``pool`` under ``where`` (``scale.pool_folders``, else the folder of its name), each with its matching
    key ``<folder index>/<agent name>``: agent k of two pools is matched when their keys are equal. A folder that is
    missing or holds no agent contributes none."""
    agents = []
    for index, folder in enumerate(scale.pool_folders.get(pool, (pool,))):
        try:
            runs = pool_runs(where / folder) if (where / folder).is_dir() else []
        except PoolError:
            runs = []
        agents += [(f"{index}/{Path(run).name}", Path(run)) for run in runs]
    return agents


def _trained_pool(pool: str, configs, scale, out: Path, device: str, ray_address: str | None, use_ray: bool | None, log) -> list[Path]:
    log(f"pool {pool!r}: {len(configs)} seeds at scale {scale.name!r}")
    train_pool(configs, out / "pools" / pool, device=device, ray_address=ray_address, use_ray=use_ray, log=log)
    return [seed_dir(out / "pools" / pool, s) for s in configs]


def _precision_key(policies: list) -> dict[str, list[str]]:
    """The cache-key entry of the precisions the agents run in when one is not the agent's training precision (none:
    results computed as trained keep their keys); a result is never reused for agents run in other precisions."""
    used = [p.agent.precision for p in policies]
    return {} if used == [p.spec.network.precision for p in policies] else {"precision": used}


#: Seed of the common decks of every cell.
DECK_SEED = 1


def _cross_play(cell: Cell, runs: list[Path], games: int, device: str, precision: str, where: Path,
                policies: list | None = None, *, reuse: bool = False, log: Callable[[str], None] = print
                ) -> tuple[CellResult, torch.Tensor]:
    policies = policies or [load_policy(r, device=device, symmetrize=cell.symmetrize, hidden_scheme=cell.hidden_scheme, precision=precision,
                                        acts_on=cell.acts_on) for r in runs]
    key = {"cell": cell.label, **form(cell), "games": games, "deck_seed": DECK_SEED, "agents": agent_digests(runs),
           **_precision_key(policies)}
    path = where / "cell.json"
    check_result_path(path)
    saved = load_result(path, key, f"cell {cell.label!r}") if reuse else None
    if saved is not None:
        try:
            matrices = _saved_matrices(saved, len(runs), policies[0].rules.max_score)
        except ValueError as exc:
            raise ReuseError(path, f"cell {cell.label!r}", str(exc)) from None
        if (where / "xp.json").is_file():  # the heatmap drawn again by today's code (a colour scale to the game's maximum)
            try:
                redraw_xp(where, policies[0].rules.max_score)
            except ValueError as exc:
                log(f"{cell.label}: its heatmap was not drawn again ({exc})")
        return replace(_cell_result(cell, *matrices), reused=True), matrices[0]
    played = cross_play_games(policies, games, deck_seed=DECK_SEED)
    agents = [describe_policy(p, r, cell.symmetrize) for p, r in zip(policies, runs, strict=True)]
    write_xp(where, played, agents, extra={"cell": cell.label, "hidden_scheme": cell.hidden_scheme, "acts_on": cell.acts_on})
    summary = played.summary()
    result = _cell_result(cell, summary.mean, summary.bomb_out_rate, summary.perfect_rate)
    save_result(path, key, result.to_json())
    return result, summary.mean


#: The per-pair matrices a cell keeps; every number of the cell is derived from them.
CELL_MATRICES = ("matrix", "bomb_out_matrix", "perfect_matrix")


def _saved_matrices(saved: dict[str, Any], agents: int, max_score: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The per-pair score, bomb-out and perfect-score matrices of a saved cell, each ``[agents, agents]``, scores in
    [0, ``max_score``] and rates in [0, 1]; ``ValueError`` saying what is wrong otherwise."""
    matrices = []
    for name in CELL_MATRICES:
        if name not in saved:
            raise ValueError(f"it lacks {name!r}")
        try:
            matrix = torch.tensor(saved[name], dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"its {name!r} is not a matrix of numbers") from None
        if tuple(matrix.shape) != (agents, agents):
            raise ValueError(f"its {name!r} has shape {list(matrix.shape)}, the cell has {agents} agents")
        problem = range_problem(name, matrix.flatten().tolist(), 0, max_score if name == "matrix" else 1)
        if problem is not None:
            raise ValueError(problem)
        matrices.append(matrix)
    return matrices[0], matrices[1], matrices[2]


def _cell_result(cell: Cell, mean: torch.Tensor, bomb_out: torch.Tensor, perfect: torch.Tensor) -> CellResult:
    """A cell's numbers, all derived from its per-pair matrices (mean score, bomb-out and perfect-score rates;
    every ordered pair plays the same number of games, so a pooled rate is the mean of the pair rates)."""
    off = ~torch.eye(mean.shape[0], dtype=torch.bool)
    summary = pool_summary(mean)
    return CellResult(
        xp_mean=summary.mean, xp_sem=summary.sem, xp_sem_ordered_pairs=mean_sem(mean[off], "pair means").sem,
        ordered_pairs=summary.ordered_pairs, bomb_out_rate=float(bomb_out[off].mean()), perfect_rate=float(perfect[off].mean()),
        sp_mean=float(mean.diagonal().mean()), agents=summary.agents, symmetrize=cell.symmetrize, hidden_scheme=cell.hidden_scheme,
        pool=cell.pool, matrix=matrix_rows(mean), bomb_out_matrix=matrix_rows(bomb_out), perfect_matrix=matrix_rows(perfect),
    )



def _relabelled(policies: list, runs: list[Path], scale: Scale, where: Path, log: Callable[[str], None], reuse: bool) -> RelabelledPool:
    """Relabelled self-play of every plain agent of a pool, with its greedy disagreement over every colour permutation
    (:func:`~eqc.domains.hanabi.xp.equivariance.greedy_equivariance`, :data:`EQUIVARIANCE_GAMES` self-play games): per-agent
    results and the pool's mean loss ± SEM over agents. ``policies``: the agents of ``runs`` as trained, from the
    reproduction's one cache (:class:`~.loaded.LoadedPolicies`), so that no agent is loaded twice."""
    rows = []
    for policy, run, digest in zip(policies, runs, agent_digests(runs), strict=True):
        key = {"elements": scale.relabel_elements, "games": scale.relabel_games, "agent": digest, **_precision_key([policy])}
        path, what = where / f"{digest[:16]}.json", f"relabelled self-play of {recorded_path(run)}"
        check_result_path(path)
        saved = load_result(path, key, what) if reuse else None
        if saved is not None:
            if (problem := _relabelled_problem(saved, scale.relabel_elements, policy.rules.max_score)) is not None:
                raise ReuseError(path, what, problem)
            row = {**saved, "agent": recorded_path(run)}
            log(f"{run}: relabelled self-play reused from {path}")
        else:
            result = relabelled_self_play(policy, elements=scale.relabel_elements, games=scale.relabel_games)
            row = {"agent": recorded_path(run), **result.as_dict(), "max_score": policy.rules.max_score}
            log(f"{run}: {result}")
        if row.get("greedy_disagreement") is None:  # absent from files saved before it was measured (for recurrent agents too)
            row["greedy_disagreement"] = greedy_equivariance(policy, games=EQUIVARIANCE_GAMES).disagreement
            save_result(path, key, row)
        try:
            rows.append(RelabelledAgent.from_json(json_safe(row)))
        except RecordError as exc:  # a saved row of another form
            raise ReuseError(path, what, str(exc)) from None
    losses = [r.loss for r in rows]
    summary = mean_sem(losses, "losses") if len(losses) >= 2 else None
    disagreements = [r.greedy_disagreement for r in rows if r.greedy_disagreement is not None]
    return RelabelledPool(scale.relabel_elements, scale.relabel_games, tuple(rows),
                          summary.mean if summary else (losses[0] if losses else float("nan")),
                          summary.sem if summary else float("nan"),
                          sum(disagreements) / len(disagreements) if disagreements else None, EQUIVARIANCE_GAMES)


def _relabelled_problem(saved: dict[str, Any], elements: int, max_score: int) -> str | None:
    """What makes a saved relabelled self-play unusable (a field missing, not a number, or outside its possible range in a
    game of maximum ``max_score``: scores in [0, max], the loss, a difference of two scores, in [-max, max], shares in
    [0, 1]; the colour-hint share is null without hints, the greedy disagreement absent before it was measured), else None."""
    if saved.get("max_score") != max_score:
        return f"its 'max_score' is {saved.get('max_score')!r}, the agent's game has {max_score}"
    relabelled = saved.get("relabelled")
    if not isinstance(relabelled, list) or len(relabelled) != elements:
        return f"its 'relabelled' is not a list of {elements} scores"
    if "colour_hint_share" not in saved:
        return "it lacks 'colour_hint_share'"
    ranges = {"self_play": (0, max_score), "loss": (-max_score, max_score), "loss_sem": (0, max_score)}
    problems = [range_problem(name, [saved.get(name)], low, high) for name, (low, high) in ranges.items()]
    problems.append(range_problem("relabelled", relabelled, 0, max_score))
    problems += [range_problem(name, [saved[name]], 0, 1) for name in ("colour_hint_share", "greedy_disagreement")
                 if saved.get(name) is not None]
    return next((problem for problem in problems if problem is not None), None)
