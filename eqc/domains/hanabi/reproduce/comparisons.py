"""A table's tests between its cells, with the agent as the unit (:func:`eqc.evaluation.compare_pools`).

A test of cells (better, worse) runs on the matrix over every agent of both cells, each in its cell's form:
the cells' own matrices on the diagonal blocks, the cross-play between them (:mod:`.between`) off it; agents
of ``better`` are rows ``0..n-1``. Cells of one pool (the same agents, plain and symmetrized) are compared
paired: agent ``k``'s two forms are rows ``k`` and ``n + k``. Each test runs on XP (``"better > worse"``, H1:
better is higher) and on bomb-out rates (``"better < worse"``, H1: better's pairs bomb out less).

The table's primary tests (:attr:`~eqc.domains.hanabi.reproduce.specs.Table.primary`, the paper's claims) on
XP are one family: their p-values are adjusted together by Holm's method (``adjusted_p``), and their verdicts
read the adjusted p. Every other test, and every bomb-out test (a secondary measure), is exploratory: its
p-value is unadjusted (``adjusted_p`` None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from eqc.domains.hanabi.reproduce.between import union_matrix
from eqc.domains.hanabi.reproduce.specs import Table
from eqc.evaluation import compare_pools, holm
from eqc.evaluation.stats import Alternative

__all__ = ["MONTE_CARLO_SEED", "TableTests", "table_tests"]

#: Seed of the Monte Carlo draws of every test (pools too large to enumerate), so a table is reproducible.
MONTE_CARLO_SEED = 0


@dataclass(frozen=True)
class TableTests:
    """A table's tests on XP and on bomb-out rates by name, and the matrix each pair of cells was tested on."""

    xp: dict[str, dict[str, Any]]
    bomb_out: dict[str, dict[str, Any]]
    matrices: dict[str, dict[str, Any]]


def table_tests(spec: Table, results: dict[str, dict[str, Any]], between: dict[tuple[str, str], dict[str, torch.Tensor]]) -> TableTests:
    """The tests of ``spec`` whose two cells were played (``results`` by label, with ``between`` blocks by test)."""
    xp_tests: dict[str, dict[str, Any]] = {}
    bomb_out_tests: dict[str, dict[str, Any]] = {}
    matrices: dict[str, dict[str, Any]] = {}
    for better, worse in spec.tests:
        if (better, worse) not in between:
            continue
        blocks, first, second = between[(better, worse)], results[better], results[worse]
        paired = first["pool"] == second["pool"]
        a, b = list(range(first["agents"])), list(range(first["agents"], first["agents"] + second["agents"]))
        union = {}
        for within, ab, ba in (("matrix", "matrix_ab", "matrix_ba"), ("bomb_out_matrix", "bomb_out_ab", "bomb_out_ba")):
            own_a, own_b = (torch.tensor(cell[within], dtype=torch.float64) for cell in (first, second))
            union[within] = union_matrix(own_a, own_b, blocks[ab], blocks[ba])
        primary = (better, worse) in spec.primary
        sides: tuple[tuple[dict[str, dict[str, Any]], str, str, Alternative, str], ...] = (
            (xp_tests, ">", "matrix", "greater", "primary" if primary else "exploratory"),
            (bomb_out_tests, "<", "bomb_out_matrix", "less", "exploratory"))
        for tests, sign, within, alternative, role in sides:
            result = compare_pools(union[within], a, b, paired=paired, alternative=alternative, generator=MONTE_CARLO_SEED)
            tests[f"{better} {sign} {worse}"] = {"cells": [better, worse], "role": role, "adjusted_p": None, **result.as_dict()}
        matrices[f"{better} vs {worse}"] = {"cells": [better, worse], "a": a, "b": b, **{k: v.tolist() for k, v in union.items()}}
    family = {name: t["p_value"] for name, t in xp_tests.items() if t["role"] == "primary"}
    for name, adjusted in holm(family).items():
        xp_tests[name]["adjusted_p"] = adjusted
    return TableTests(xp_tests, bomb_out_tests, matrices)
