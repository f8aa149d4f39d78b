"""Analyses of a rendered table that were not registered: they describe, and decide nothing.

- :func:`leave_one_out`: how the table's matched and paired tests move when one matched set is left out. A table's
  JSON (``<table>.json``, written by ``reproduce``) keeps, for each test, the matrix it ran on (``test_matrices``: the
  cross-play over every agent of both cells, the pairs between the cells included) and the agents of each cell by
  matching key (``cells[<label>].matching``: ``<stream>/slots_<pi>``, or ``<folder>/seed_<n>``). Leaving out
  matched set ``k`` drops agent ``k`` of both cells from that matrix; the test is run again on the rest exactly as the
  table ran it (:func:`eqc.evaluation.compare_pools`, the same alternative and Monte Carlo seed), and the family is
  concluded again (:func:`.comparisons.conclude`: Holm over the primary tests, simultaneous intervals, verdicts). The
  row that leaves nothing out is the table's own tests, recomputed. Only tests whose two cells are matched or paired
  (``kind`` "matched" or "paired") can leave a set out; an unpaired test is refused by name.
- :func:`xp_by_code`: a cell's cross-play split by whether the two agents of a pair share a code (any label per agent,
  e.g. the slot each colour hint asks for in the conventions report's hint maps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch

from eqc.domains.hanabi.reproduce.comparisons import MONTE_CARLO_SEED, conclude, table_test
from eqc.domains.hanabi.reproduce.record import TableRecord, TableTest
from eqc.evaluation import compare_pools
from eqc.evaluation.stats import Alternative

__all__ = ["LeaveOneOut", "leave_one_out", "leave_one_out_markdown", "xp_by_code"]


@dataclass(frozen=True)
class LeaveOneOut:
    """:func:`leave_one_out`'s result: the tests run (names), the primary ones among them, and one row per left-out set
    (``rows[0]`` leaves nothing out: key None; ``rows[k + 1]`` leaves out matched set ``k``, named by its matching key),
    each the tests by name as the table's JSON holds them."""

    tests: tuple[str, ...]
    primary: tuple[str, ...]
    rows: tuple[tuple[str | None, dict[str, TableTest]], ...]

    def to_json(self) -> dict[str, Any]:
        """The result as JSON (``rows``: ``{"left_out": key, "tests": {...}}``)."""
        return {"tests": list(self.tests), "primary": list(self.primary),
                "rows": [{"left_out": key, "tests": {n: t.to_json() for n, t in tests.items()}} for key, tests in self.rows]}


def _tests(table: TableRecord, names: Sequence[str] | None) -> dict[str, TableTest]:
    tests = table.tests
    chosen = list(tests) if names is None else list(names)
    unknown = [n for n in chosen if n not in tests]
    if unknown:
        raise ValueError(f"tests {unknown} are not tests of table {table.table!r} (it has {list(tests)})")
    unpaired = [n for n in chosen if tests[n].kind not in ("matched", "paired")]
    if unpaired:
        raise ValueError(f"tests {unpaired} are unpaired: no matched set can be left out of them")
    return {n: tests[n] for n in chosen}


def _rerun(table: TableRecord, test: TableTest, left_out: int | None) -> TableTest:
    """``test`` run again on its matrix without matched set ``left_out`` (None: with every set)."""
    first, second = test.cells
    saved = table.test_matrices[f"{first} vs {second}"]
    a, b = list(saved.a), list(saved.b)
    keep = [i for i in range(len(a) + len(b)) if left_out is None or i not in (a[left_out], b[left_out])]
    where = {old: new for new, old in enumerate(keep)}
    matrix = torch.tensor(saved.matrix, dtype=torch.float64)[keep][:, keep]
    result = compare_pools(matrix, [where[i] for i in a if i in where], [where[i] for i in b if i in where], paired=True,
                           alternative=cast(Alternative, test.comparison.alternative), generator=MONTE_CARLO_SEED)
    return table_test(test.cells, test.role, test.kind, result)


def leave_one_out(table: TableRecord, tests: Sequence[str] | None = None) -> LeaveOneOut:
    """The XP tests ``tests`` (names of ``table.tests``; None: all, every one matched or paired) of a rendered table, run
    with every matched set and then with each set left out in turn (module docstring). Each row holds every named test
    as the table does (difference, interval, p, Holm-adjusted p for a primary test, verdict). The primary family is the
    named primary tests: name all of a table's primary tests to adjust them as the table did.
    """
    chosen = _tests(table, tests)
    first_cell = table.cells[next(iter(chosen.values())).cells[0]]
    keys = list(first_cell.matching or range(first_cell.agents))
    sizes = {n: len(table.test_matrices[f"{t.cells[0]} vs {t.cells[1]}"].a) for n, t in chosen.items()}
    if any(size != len(keys) for size in sizes.values()):
        raise ValueError(f"the tests' cells hold different numbers of matched sets ({sizes}); leave-one-out needs one matching")
    rows = []
    for left_out in [None, *range(len(keys))]:
        results = conclude({n: _rerun(table, t, left_out) for n, t in chosen.items()})
        rows.append((None if left_out is None else str(keys[left_out]), results))
    return LeaveOneOut(tuple(chosen), tuple(n for n, t in chosen.items() if t.role == "primary"), tuple(rows))


def leave_one_out_markdown(result: LeaveOneOut, labels: Mapping[str, str] | None = None) -> str:
    """A Markdown table of :func:`leave_one_out`'s result: a row per left-out set, a column per test holding the
    difference, its interval, the (Holm-adjusted) p and the verdict; ``labels`` names the columns (default: the tests'
    names)."""
    labels = dict(labels or {})
    names = list(result.tests)
    head = ["left out", *(labels.get(n, n) for n in names)]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---|" * len(names)]
    for left_out, tests in result.rows:
        cells = []
        for name in names:
            t = tests[name]
            p = t.comparison.p_value if t.adjusted_p is None else t.adjusted_p
            low, high = t.comparison.interval
            cells.append(f"{t.comparison.difference:+.2f} [{low:+.2f}, {high:+.2f}], p {p:.4f}, *{t.verdict}*")
        lines.append("| " + " | ".join([left_out or "nothing (the table)", *cells]) + " |")
    return "\n".join(lines) + "\n"


def xp_by_code(matrix: Sequence[Sequence[float]], codes: Sequence[object]) -> dict[str, dict[str, float | int]]:
    """A cell's XP (``matrix [n, n]``, row ``i``'s agent with partner ``j``, the diagonal ignored) over its ordered pairs
    of distinct agents whose ``codes`` are equal (``"same"``) and differ (``"different"``): each ``{"xp": mean,
    "pairs": count}`` (``xp`` NaN without such a pair)."""
    values = torch.tensor(matrix, dtype=torch.float64)
    n = values.shape[0]
    if values.shape != (n, n) or len(codes) != n:
        raise ValueError(f"matrix must be [n, n] with one code per agent, got shape {list(values.shape)} and {len(codes)} codes")
    groups: dict[str, list[float]] = {"same": [], "different": []}
    for i in range(n):
        for j in range(n):
            if i != j:
                groups["same" if codes[i] == codes[j] else "different"].append(float(values[i, j]))
    return {name: {"xp": sum(v) / len(v) if v else float("nan"), "pairs": len(v)} for name, v in groups.items()}
