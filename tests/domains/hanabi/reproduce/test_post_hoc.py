"""Post hoc analyses: leaving one matched set out of a rendered table's tests (nothing left out is the table itself, a
left-out set is the test on the rest of the matrix, unpaired tests are refused), cross-play split by a shared code,
and the committed touched report is what they compute."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi.reproduce.comparisons import table_test
from eqc.domains.hanabi.reproduce.post_hoc import leave_one_out, leave_one_out_markdown, xp_by_code
from eqc.domains.hanabi.reproduce.record import CellResult, TableRecord, UnionMatrices, read_table
from eqc.domains.hanabi.reproduce.reports import read_conventions
from eqc.domains.hanabi.reproduce.schema import matrix_rows
from eqc.evaluation import compare_pools

ROOT = Path(__file__).resolve().parents[4]
TOUCHED = ROOT / "results" / "touched"
PRIMARY = ["EQC > OP", "G-OP C3 > OP", "SP S3-symmetrized > SP"]


def _table(kind: str = "matched") -> TableRecord:
    """Two cells of 4 matched agents, their test run on an [8, 8] matrix (A: rows 0-3, B: rows 4-7)."""
    g = torch.Generator().manual_seed(0)
    matrix = 5 + torch.rand(8, 8, generator=g, dtype=torch.float64)
    keys = tuple(f"{s}/slots_{p}" for s in (0, 1) for p in ("012", "021"))
    test = table_test(("A", "B"), "primary", kind, compare_pools(matrix, range(4), range(4, 8), paired=True, generator=0))
    cells = {label: CellResult(0.0, 0.0, 0.0, 12, 0.0, 0.0, 0.0, 4, None, "average", label.lower(), (), (), (), matching=keys)
             for label in ("A", "B")}
    union = UnionMatrices(("A", "B"), (0, 1, 2, 3), (4, 5, 6, 7), matrix_rows(matrix), matrix_rows(matrix * 0))
    return TableRecord("t", "a table", "touched", 8, "auto", {"a": 4, "b": 4}, "trained", cells, {}, {"A > B": test}, {},
                       {"A vs B": union}, {}, {}, (), None, None, {}, {}, None, {})


def test_leaving_a_set_out_is_the_test_on_the_rest_of_the_matrix() -> None:
    table = _table()
    result = leave_one_out(table)
    assert [key for key, _ in result.rows] == [None, "0/slots_012", "0/slots_021", "1/slots_012", "1/slots_021"]
    matrix = torch.tensor(table.test_matrices["A vs B"].matrix, dtype=torch.float64)
    keep = [0, 1, 3, 4, 5, 7]  # set 2 (agent 2 of A, agent 2 of B: rows 2 and 6) left out
    direct = compare_pools(matrix[keep][:, keep], [0, 1, 2], [3, 4, 5], paired=True, generator=0)
    row = result.rows[3][1]["A > B"]
    assert row.comparison.difference == direct.difference and row.comparison.p_value == direct.p_value
    assert row.adjusted_p == direct.p_value  # a family of one: Holm changes nothing
    assert row.verdict in ("holds", "reversed", "does not hold", "cannot tell")


def test_an_unpaired_or_unknown_test_is_refused() -> None:
    with pytest.raises(ValueError, match=r"tests \['A > B'\] are unpaired"):
        leave_one_out(_table("unpaired"))
    with pytest.raises(ValueError, match=r"tests \['B > A'\] are not tests of table 't'"):
        leave_one_out(_table(), ["B > A"])


def test_nothing_left_out_is_the_touched_table_and_one_set_turns_p1() -> None:
    table = read_table(TOUCHED / "table1.json")
    result = leave_one_out(table, PRIMARY)
    for name in PRIMARY:
        assert result.rows[0][1][name] == table.tests[name]  # the table's own tests, recomputed
    verdicts = {key: tests["EQC > OP"].verdict for key, tests in result.rows[1:]}
    assert verdicts.pop("1/slots_021") == "does not hold" and set(verdicts.values()) == {"reversed"}
    committed = (TOUCHED / "post_hoc.md").read_text()
    labels = {name: f"P{k + 1}: {name}" for k, name in enumerate(PRIMARY)}
    assert leave_one_out_markdown(result, labels) in committed  # the committed report is what the code computes


def test_xp_by_code_splits_the_ordered_pairs_of_distinct_agents() -> None:
    matrix = [[9.0, 8.0, 1.0], [7.0, 9.0, 3.0], [2.0, 4.0, 9.0]]
    split = xp_by_code(matrix, ["x", "x", "y"])
    assert split == {"same": {"xp": 7.5, "pairs": 2}, "different": {"xp": 2.5, "pairs": 4}}
    assert xp_by_code(matrix, ["x", "y", "z"])["same"]["pairs"] == 0
    with pytest.raises(ValueError, match="one code per agent"):
        xp_by_code(matrix, ["x", "y"])


def test_the_touched_eqc_agents_coordinate_within_a_slot_code() -> None:
    """The EQC cell's pairs by the hint maps' colour-hint code: 8 agents answer every colour hint with slot 2, 4 with
    slot 1; same-code pairs cross-play at 7.54, different-code pairs at 4.89 (as post_hoc.md says)."""
    eqc = read_table(TOUCHED / "table1.json").cells["EQC"]
    maps = read_conventions(TOUCHED / "conventions.json").agents["eqc"]
    codes = [maps[key].colour_hint_slot for key in eqc.matching or ()]
    assert sorted(codes).count((2, 2, 2)) == 8 and sorted(codes).count((1, 1, 1)) == 4
    split = xp_by_code(eqc.matrix, codes)
    assert (round(split["same"]["xp"], 2), split["same"]["pairs"]) == (7.54, 68)
    assert (round(split["different"]["xp"], 2), split["different"]["pairs"]) == (4.89, 64)
    assert "| EQC | [2, 2, 2] x8, [1, 1, 1] x4 | 7.54 (68) | 4.89 (64) | 6.25 |" in (TOUCHED / "post_hoc.md").read_text()
