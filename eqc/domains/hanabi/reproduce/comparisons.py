"""A table's tests between its cells, with the agent as the unit (:func:`eqc.evaluation.compare_pools`).

A test of cells (first, second) runs on the matrix over every agent of both cells, each in its cell's form: the
cells' own matrices on the diagonal blocks, the cross-play between them (:mod:`.between`) off it; agents of the
first cell are rows ``0..n-1``. Its kind follows the design:

- *paired*: the cells hold the same agents in two forms (plain and symmetrized); agent ``k``'s forms are rows ``k``
  and ``n + k``, and the test swaps them.
- *matched*: the cells hold different agents matched one to one (the same matching keys, ``<folder>/<seed or pi>``:
  the same stream seed and pi, or the same seed); the test swaps the two members of each matched set.
- *unpaired*: anything else; the test splits the agents of both cells.

Each test runs on XP (``"first > second"``, H1: the first is higher; ``"first vs second"`` for a two-sided test) and
on bomb-out rates (``"first < second"``, H1: the first's pairs bomb out less).

The table's primary tests on XP are one family: their p-values are adjusted together by Holm's method
(``adjusted_p``) and their intervals are simultaneous (Bonferroni: confidence ``1 - ALPHA / m`` for ``m`` primary
tests). Every other test, and every bomb-out test, is exploratory: unadjusted p, 95% interval. The verdict
(:func:`eqc.evaluation.verdict`) reads both the p-value and the interval the test reports, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from scipy import stats

from eqc.domains.hanabi.reproduce.between import union_matrix
from eqc.domains.hanabi.reproduce.record import CellResult, NotRunTest, TableTest, UnionMatrices
from eqc.domains.hanabi.reproduce.schema import matrix_rows
from eqc.domains.hanabi.reproduce.specs import Table
from eqc.evaluation import PoolComparison, compare_pools, holm, verdict
from eqc.evaluation.stats import Alternative

__all__ = ["ALPHA", "MONTE_CARLO_SEED", "TableTests", "comparison_kind", "conclude", "table_test", "table_tests"]

#: Seed of the Monte Carlo draws of every test (pools too large to enumerate), so a table is reproducible.
MONTE_CARLO_SEED = 0

#: The level of every table's tests (one-sided, or two-sided for a table's ``two_sided`` tests).
ALPHA = 0.05


@dataclass(frozen=True)
class TableTests:
    """A table's tests on XP and on bomb-out rates by name, the matrix each pair of cells was tested on, and the tests
    not run (a cell's pool was not trained), by name, with the reason."""

    xp: dict[str, TableTest]
    bomb_out: dict[str, TableTest]
    matrices: dict[str, UnionMatrices]
    not_run: dict[str, NotRunTest]


def comparison_kind(first: CellResult, second: CellResult) -> str:
    """"paired" (one pool in two forms), "matched" (two pools of equal matching keys) or "unpaired" (module docstring)."""
    if first.pool == second.pool:
        return "paired"
    keys_a, keys_b = first.matching, second.matching
    return "matched" if keys_a and keys_a == keys_b and len(keys_a) == first.agents == second.agents else "unpaired"


def table_test(cells: tuple[str, str], role: str, kind: str, comparison: PoolComparison) -> TableTest:
    """A test as run, before its family is concluded (:func:`conclude`): no adjusted p, its own interval and verdict."""
    return TableTest(cells, role, kind, None, comparison, None, comparison.verdict(ALPHA))


def table_tests(spec: Table, results: dict[str, CellResult], between: dict[tuple[str, str], dict[str, torch.Tensor]],
                not_trained: dict[str, str] | None = None) -> TableTests:
    """The tests of ``spec`` whose two cells were played (``results`` by label, with ``between`` blocks by test).

    ``not_trained``: pools of the design that were not trained (pool -> reason). A test of one of their cells is
    listed as not run; a primary one still counts in the Holm family and the simultaneous intervals, with p = 1, so
    that a registered family of m tests is adjusted for m whatever was run."""
    xp_tests: dict[str, TableTest] = {}
    bomb_out_tests: dict[str, TableTest] = {}
    matrices: dict[str, UnionMatrices] = {}
    not_run: dict[str, NotRunTest] = {}
    pools = {c.label: c.pool for c in spec.cells}
    for better, worse in spec.tests:
        absent = [pools[c] for c in (better, worse) if pools[c] in (not_trained or {})]
        if absent:
            sign = "vs" if (better, worse) in spec.two_sided else ">"
            not_run[f"{better} {sign} {worse}"] = NotRunTest((better, worse), "primary" if (better, worse) in spec.primary
                                                             else "exploratory", (not_trained or {})[absent[0]])
            continue
        if (better, worse) not in between:
            continue
        blocks, first, second = between[(better, worse)], results[better], results[worse]
        kind = comparison_kind(first, second)
        a, b = list(range(first.agents)), list(range(first.agents, first.agents + second.agents))
        union = {}
        for within, ab, ba in (("matrix", "matrix_ab", "matrix_ba"), ("bomb_out_matrix", "bomb_out_ab", "bomb_out_ba")):
            own_a, own_b = (torch.tensor(getattr(cell, within), dtype=torch.float64) for cell in (first, second))
            union[within] = union_matrix(own_a, own_b, blocks[ab], blocks[ba])
        primary = (better, worse) in spec.primary
        two_sided = (better, worse) in spec.two_sided
        sides: tuple[tuple[dict[str, TableTest], str, str, Alternative, str], ...] = (
            (xp_tests, "vs" if two_sided else ">", "matrix", "two-sided" if two_sided else "greater",
             "primary" if primary else "exploratory"),
            (bomb_out_tests, "<", "bomb_out_matrix", "less", "exploratory"))
        for tests, sign, within, alternative, role in sides:
            result = compare_pools(union[within], a, b, paired=kind != "unpaired", alternative=alternative, generator=MONTE_CARLO_SEED)
            tests[f"{better} {sign} {worse}"] = table_test((better, worse), role, kind, result)
        matrices[f"{better} vs {worse}"] = UnionMatrices((better, worse), tuple(a), tuple(b), matrix_rows(union["matrix"]),
                                                        matrix_rows(union["bomb_out_matrix"]))
    primary_not_run = [name for name, t in not_run.items() if t.role == "primary"]
    return TableTests(conclude(xp_tests, primary_not_run), conclude(bomb_out_tests), matrices, not_run)


def conclude(tests: dict[str, TableTest], not_run: list[str] | None = None) -> dict[str, TableTest]:
    """``tests`` (by name, as :func:`table_test` ran them) concluded: the ``"primary"`` ones are one family, their
    p-values Holm-adjusted together and their intervals made simultaneous (Bonferroni, confidence ``1 - ALPHA / m``, t on
    their own SE and df), their verdicts read from the adjusted p and that interval; the others keep their own.
    ``not_run``: primary tests of the family that were not run; they count in it with p = 1 (never rejected), so a
    registered family of m tests is adjusted for m."""
    family = {name: t.comparison.p_value for name, t in tests.items() if t.role == "primary"}
    family |= dict.fromkeys(not_run or [], 1.0)
    concluded = dict(tests)
    for name, adjusted in holm(family).items():
        if name not in tests:
            continue
        test = tests[name].comparison
        confidence = 1 - ALPHA / len(family)
        half = float(stats.t.ppf(0.5 + confidence / 2, test.df)) * test.se
        comparison = replace(test, interval=(test.difference - half, test.difference + half), confidence=confidence)
        concluded[name] = replace(tests[name], adjusted_p=adjusted, comparison=comparison, interval_kind="simultaneous (Bonferroni)",
                                  verdict=verdict(test.difference, adjusted, test.alternative, ALPHA, interval=comparison.interval))
    return concluded
