"""The code lottery of a rendered registered table (``eqc hanabi reproduce codes``): how often its agents share a
convention code, and what sharing one is worth.

Each agent of each cell, in the cell's form (plain, symmetrized or averaged, as the table played it), gets its codes
from greedy self-play (:func:`~eqc.domains.hanabi.xp.codes.agent_codes`): the **slot code** (the slot played most
often right after a colour hint, pooled over colours) and the **rank-hint code** (per rank, the slot played most
often right after that rank's hint). Per cell:

- the **same-code rate** of each code: the share of its ordered pairs of distinct agents whose codes are equal (the
  mean of :func:`~eqc.domains.hanabi.xp.codes.same_code_matrix` off the diagonal);
- the cell's cross-play split by slot code (:func:`~.post_hoc.xp_by_code`: same-code and different-code pairs, read
  from the table's own per-pair matrix).

Per test of the table whose cells were played, the same test (its kind: matched, paired or unpaired; the same Monte
Carlo seed) runs on the slot-code same-code matrix over both cells' agents, two-sided, unadjusted: did one design
make the slot code less of a lottery than the other? These tests are exploratory; a registered code test whose cell
was not trained is listed as not run with the table's reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from eqc.domains.hanabi.reproduce.comparisons import ALPHA, MONTE_CARLO_SEED
from eqc.domains.hanabi.reproduce.loaded import LoadedPolicies
from eqc.domains.hanabi.reproduce.post_hoc import xp_by_code
from eqc.domains.hanabi.reproduce.record import TableRecord, read_table
from eqc.domains.hanabi.reproduce.render import format_number
from eqc.domains.hanabi.reproduce.reports import CellCodes, CodeReport, CodeTest, XPByCode
from eqc.domains.hanabi.reproduce.schema import RecordError
from eqc.domains.hanabi.reproduce.specs import SCALES, ReproduceError, table_spec
from eqc.domains.hanabi.xp import PoolError
from eqc.domains.hanabi.xp.codes import agent_codes, same_code_matrix
from eqc.evaluation import compare_pools, verdict

__all__ = ["CODE_GAMES", "CODE_SCALES", "code_report", "code_sources", "render_codes", "reproduce_codes"]

#: Greedy self-play games per agent-form from which its codes are read (the registered 400).
CODE_GAMES = 400

#: The scales whose table1 is registered: the code report reads it.
CODE_SCALES = tuple(name for name, scale in SCALES.items() if "table1" in scale.tables and scale.tables["table1"].registered)


def _rate(codes: list[Any]) -> float:
    """The share of ordered pairs of distinct agents with equal codes (NaN with fewer than 2 agents)."""
    n = len(codes)
    if n < 2:
        return float("nan")
    same = same_code_matrix(codes)
    return float(same[~torch.eye(n, dtype=torch.bool)].mean())


def code_report(table: TableRecord, runs: dict[str, list[Path]], loaded: LoadedPolicies, *, games: int = CODE_GAMES,
                log: Callable[[str], None] = print) -> CodeReport:
    """The report of the module docstring for the rendered ``table`` whose pools are ``runs`` (pool -> agent directories,
    in the table's order), each loaded through ``loaded``."""
    spec = table_spec(table.table, table.scale)
    by_label = {c.label: c for c in spec.cells}
    cells: dict[str, CellCodes] = {}
    slot_codes: dict[str, list[int]] = {}
    for label, cell in table.cells.items():
        form = by_label[label]
        log(f"codes: {label} ({cell.agents} agents)")
        measured = tuple(agent_codes(policy, games=games) for policy in loaded.of(form, runs[form.pool]))
        slots, ranks = [c.slot_code for c in measured], [c.rank_hint_code for c in measured]
        slot_codes[label] = slots
        cells[label] = CellCodes(
            tuple(cell.matching or (str(k) for k in range(cell.agents))), measured,
            {str(code): n for code, n in Counter(slots).most_common()}, _rate(slots), _rate(ranks),
            _rate(list(zip(slots, ranks, strict=True))), XPByCode.from_json(xp_by_code(cell.matrix, slots)), cell.xp_mean)
    tests = {}
    for test in table.tests.values():
        first, second = test.cells
        saved = table.test_matrices[f"{first} vs {second}"]
        same = same_code_matrix(slot_codes[first] + slot_codes[second])
        result = compare_pools(same, list(saved.a), list(saved.b), paired=test.kind != "unpaired", alternative="two-sided",
                               generator=MONTE_CARLO_SEED)
        tests[f"{first} vs {second}"] = CodeTest((first, second), test.kind, result,
                                                 verdict(result.difference, result.p_value, "two-sided", ALPHA, interval=result.interval))
    return CodeReport(table.table, table.scale, games, cells, tests, dict(table.not_run_tests), None)


def render_codes(report: CodeReport) -> str:
    """The report as Markdown."""
    lines = [f"# The code lottery: {report.table} at scale `{report.scale}`", "",
             f"Codes from {report.games} greedy self-play games per agent, in its cell's form. Slot code: the slot played "
             "most often right after a colour hint (-1: never). Rank-hint code: per rank, the slot played most often right "
             "after that rank's hint. A same-code rate is the share of a cell's ordered pairs of distinct agents whose codes "
             "are equal. Cross-play by slot code reads the table's own per-pair matrix.", "",
             "## Per cell", "",
             "| cell | agents | slot codes (agents) | same slot code | same rank-hint code | same both | XP same slot code "
             "(pairs) | XP different slot code (pairs) | cell XP |",
             "|---|---|---|---|---|---|---|---|---|"]
    for label, c in report.cells.items():
        counts = ", ".join(f"{code} x{n}" for code, n in c.slot_code_counts.items())
        same, different = c.xp_by_slot_code.same, c.xp_by_slot_code.different
        lines.append(f"| {label} | {len(c.codes)} | {counts} | {format_number(c.same_slot_code_rate)} | "
                     f"{format_number(c.same_rank_hint_code_rate)} | {format_number(c.same_both_codes_rate)} | "
                     f"{format_number(same.xp)} ({same.pairs}) | {format_number(different.xp)} ({different.pairs}) | "
                     f"{c.xp:.2f} |")
    lines += ["", "## Same slot code rate between cells (exploratory: two-sided, unadjusted)", "",
              "Each of the table's tests, run again on the same-code matrix over both cells' agents (1 where two agents' "
              "slot codes are equal), the same kind of test as the table's (matched sets swapped, or forms of one agent).", "",
              "| test | kind | difference | 95% interval | p | verdict |", "|---|---|---|---|---|---|"]
    for name, test in report.tests.items():
        t = test.comparison
        low, high = t.interval
        lines.append(f"| {name} | {test.kind} | {t.difference:+.3f} | [{format_number(low)}, {format_number(high)}] | "
                     f"{t.p_value:.4f} | *{test.verdict}* |")
    if report.not_run_tests:
        lines += ["", "Not run (a cell's pool was not trained): " + "; ".join(
            f"{name} ({t.reason})" for name, t in report.not_run_tests.items()) + "."]
    if report.command:
        lines += ["", f"Produced by `{report.command}`."]
    return "\n".join(lines) + "\n"


def code_sources(scale: str, out: str | Path, agents: str | Path | None = None) -> tuple[TableRecord, dict[str, list[Path]]]:
    """The rendered table the code report reads (``out/table1.json``, a registered table1 at ``scale``) and its pools'
    agents (``agents``, default the shipped ones; the registered design checked); :class:`~.specs.ReproduceError` naming
    the argument at fault otherwise."""
    from eqc.domains.hanabi.reproduce.run import shipped_pools

    if scale not in CODE_SCALES:
        raise ReproduceError("scale", f"the code report reads a registered table1 ({sorted(CODE_SCALES)}), not {scale!r}")
    path = Path(out) / "table1.json"
    if not path.is_file():
        raise ReproduceError("out", f"{str(path)!r} does not exist: render the table into it first (eqc hanabi reproduce table1 "
                             f"--scale {scale} --out {out}), the code report reads its cells and tests")
    try:
        table = read_table(path)
    except RecordError as exc:
        raise ReproduceError("out", str(exc)) from exc
    if table.table != "table1" or table.scale != scale:
        raise ReproduceError("out", f"{path} is {table.table} at scale {table.scale!r}, not table1 at {scale!r}")
    try:
        return table, shipped_pools("table1", scale, agents)
    except PoolError as exc:
        raise ReproduceError("agents", str(exc)) from exc


def reproduce_codes(scale: str, out: str | Path, *, agents: str | Path | None = None, device: str = "cpu", precision: str = "auto",
                    games: int = CODE_GAMES, command: list[str] | None = None, log: Callable[[str], None] = print) -> CodeReport:
    """The report for ``out/table1.json`` (``eqc hanabi reproduce table1`` at ``scale`` into the same ``out``, first), read
    from the same agents (``agents``, default the shipped ones; a registered table's design is checked), written to
    ``out/codes.json`` and ``.md``. The arguments are checked first (:func:`code_sources`)."""
    from eqc.io import write_json_atomic, write_text_atomic

    table, runs = code_sources(scale, out, agents)
    report = code_report(table, runs, LoadedPolicies(device, precision), games=games, log=log)
    report = replace(report, command=None if command is None else " ".join(command))
    write_json_atomic(Path(out) / "codes.json", report.to_json())
    write_text_atomic(Path(out) / "codes.md", render_codes(report))
    return report
