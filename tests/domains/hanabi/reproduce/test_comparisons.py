"""A table's tests: the matrix over both cells' agents, paired cells of one pool, Holm over the primary claims,
and the cross-play between cells cached under the agents and forms it was played with."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from scipy import stats

import eqc.domains.hanabi.reproduce.between as between
from eqc.domains.hanabi.reproduce.comparisons import ALPHA, comparison_kind, table_tests
from eqc.domains.hanabi.reproduce.record import CellResult
from eqc.domains.hanabi.reproduce.reuse import ReuseError, save_result
from eqc.domains.hanabi.reproduce.schema import matrix_rows
from eqc.domains.hanabi.reproduce.specs import (
    COLOUR_TABLES,
    ENTROPY_TABLES,
    ERS_TABLES,
    INDUCED_TABLES,
    TABLES,
    TOUCHED_TABLES,
    Cell,
    Table,
)
from eqc.evaluation import compare_pools, holm

SPEC = Table("t", "a test table", (Cell("A", "p"), Cell("A sym", "p", "C3"), Cell("B", "q")),
             (("A sym", "A"), ("A", "B"), ("B", "A sym")), primary=(("A sym", "A"), ("A", "B")))


def _cell(pool: str, matrix: torch.Tensor, matching: tuple[str, ...] | None = None) -> CellResult:
    """A cell of ``pool`` whose per-pair scores are ``matrix`` (its other numbers are not read by the tests)."""
    n = matrix.shape[0]
    return CellResult(0.0, 0.0, 0.0, n * (n - 1), 0.0, 0.0, 0.0, n, None, "average", pool, matrix_rows(matrix), matrix_rows(matrix / 100),
                      matrix_rows(matrix * 0), matching=matching)


def _blocks(n_a: int, n_b: int, value: float) -> dict[str, torch.Tensor]:
    ab = value + torch.arange(n_a * n_b, dtype=torch.float64).view(n_a, n_b) / 10
    return {"matrix_ab": ab, "matrix_ba": ab.T + 1, "bomb_out_ab": ab / 100, "bomb_out_ba": (ab.T + 1) / 100}


SCALE_TABLES = {"cpu": TABLES, "induced": INDUCED_TABLES, "colour": COLOUR_TABLES, "touched": TOUCHED_TABLES, "ers": ERS_TABLES,
                "entropy": ENTROPY_TABLES}


def test_every_table_names_primary_and_two_sided_tests_among_its_tests_over_its_cells() -> None:
    for tables in SCALE_TABLES.values():
        for table in tables.values():
            labels = {c.label for c in table.cells}
            assert table.primary and set(table.primary) <= set(table.tests), table.name
            assert set(table.two_sided) <= set(table.tests) and not set(table.two_sided) & set(table.primary), table.name
            assert {label for test in table.tests for label in test} <= labels and len(labels) == len(table.cells), table.name


def test_a_comparison_is_primary_in_at_most_one_table_of_a_scale() -> None:
    """One rule for the Holm families: the same two forms (pool, group) are not primary in two tables of one scale."""
    for scale, tables in SCALE_TABLES.items():
        seen: dict[tuple, str] = {}
        for table in tables.values():
            forms = {c.label: (c.pool, c.symmetrize, c.hidden_scheme, c.acts_on) for c in table.cells}
            for first, second in table.primary:
                key = (forms[first], forms[second])
                assert key not in seen, f"{scale}: {first} > {second} is primary in {seen.get(key)} and {table.name}"
                seen[key] = table.name


def test_the_touched_table_is_the_registered_one() -> None:
    """The primary and secondary tests of results/touched/PREREGISTRATION.md, in its order, and nothing else."""
    table = TOUCHED_TABLES["table1"]
    assert table.registered == "results/touched/PREREGISTRATION.md" and Path(table.registered).is_file()
    assert table.primary == (("EQC", "OP"), ("G-OP C3", "OP"), ("SP S3-symmetrized", "SP"))
    assert table.tests[3:] == (("SP S3-symmetrized", "SP rank-averaged"), ("SP rank-averaged", "SP"), ("EQC", "SP S3-symmetrized"),
                               ("EQC", "G-OP C3"), ("OP S3-symmetrized", "OP"), ("OP", "SP"))
    assert table.two_sided == (("SP rank-averaged", "SP"), ("EQC", "G-OP C3"))
    control = next(c for c in table.cells if c.label == "SP rank-averaged")
    assert control.acts_on == "rank" and control.symmetrize == "S3" and control.pool == "sp"


def test_a_comparison_is_paired_matched_or_unpaired_by_design() -> None:
    keys = [f"{s}/slots_{p}" for s in (0, 1) for p in ("012", "021")]
    cell = _cell("op", torch.zeros(4, 4), tuple(keys))
    assert comparison_kind(cell, replace(cell, pool="op")) == "paired"
    assert comparison_kind(cell, replace(cell, pool="eqc")) == "matched"
    assert comparison_kind(cell, replace(cell, pool="eqc", matching=tuple(keys[::-1]))) == "unpaired"  # not the same sets in order
    assert comparison_kind(cell, _cell("eqc", torch.zeros(3, 3), tuple(keys[:3]))) == "unpaired"
    assert comparison_kind(_cell("a", torch.zeros(4, 4)), _cell("b", torch.zeros(4, 4))) == "unpaired"  # no keys recorded


def test_matched_pools_get_the_matched_test_and_primary_ones_simultaneous_intervals() -> None:
    g = torch.Generator().manual_seed(3)
    keys = ["0/seed_0", "0/seed_1", "0/seed_2", "0/seed_3"]
    own = {label: 10 + torch.rand(4, 4, generator=g, dtype=torch.float64) + shift for label, shift in (("A", 1.0), ("B", 0.0))}
    results = {label: _cell(pool, own[label], tuple(keys)) for label, pool in (("A", "p"), ("B", "q"))}
    spec = Table("t", "matched", (Cell("A", "p"), Cell("B", "q")), (("A", "B"),), primary=(("A", "B"),))
    tests = table_tests(spec, results, {("A", "B"): _blocks(4, 4, 10.2)})
    test, result = tests.xp["A > B"], tests.xp["A > B"].comparison
    union = torch.tensor(tests.matrices["A vs B"].matrix, dtype=torch.float64)
    expected = compare_pools(union, [0, 1, 2, 3], [4, 5, 6, 7], paired=True)
    assert test.kind == "matched" and result.paired and result.arrangements == 16 and result.p_value == expected.p_value
    half = stats.t.ppf(1 - ALPHA / 2, expected.df) * expected.se  # one primary test: Bonferroni at 1 - 0.05 / 1
    assert result.interval == pytest.approx((expected.difference - half, expected.difference + half)) and result.confidence == 0.95
    assert test.verdict in ("holds", "cannot tell", "does not hold", "reversed")


def test_two_sided_tests_say_whether_the_cells_differ() -> None:
    g = torch.Generator().manual_seed(4)
    own = {label: 10 + torch.rand(4, 4, generator=g, dtype=torch.float64) for label in ("A", "B")}
    results = {"A": _cell("p", own["A"]), "B": _cell("q", own["B"] + 3)}
    spec = Table("t", "two-sided", (Cell("A", "p"), Cell("B", "q")), (("A", "B"),), primary=(), two_sided=(("A", "B"),))
    test = table_tests(spec, results, {("A", "B"): _blocks(4, 4, 11.0)}).xp["A vs B"]
    assert test.comparison.alternative == "two-sided" and test.role == "exploratory" and test.kind == "unpaired"
    assert test.verdict in ("differs", "cannot tell") and test.comparison.difference < 0


def test_tests_run_on_the_union_of_both_cells_and_adjust_the_primary_ones() -> None:
    g = torch.Generator().manual_seed(0)
    sizes = (("A", 3, 0), ("A sym", 3, 1), ("B", 4, -1))
    own = {label: 10 + torch.rand(n, n, generator=g, dtype=torch.float64) + shift for label, n, shift in sizes}
    results = {"A": _cell("p", own["A"]), "A sym": _cell("p", own["A sym"]), "B": _cell("q", own["B"])}
    blocks = {("A sym", "A"): _blocks(3, 3, 10.5), ("A", "B"): _blocks(3, 4, 9.0)}  # ("B", "A sym") not played
    tests = table_tests(SPEC, results, blocks)
    assert list(tests.xp) == ["A sym > A", "A > B"] and list(tests.bomb_out) == ["A sym < A", "A < B"]
    union, played = torch.tensor(tests.matrices["A sym vs A"].matrix, dtype=torch.float64), blocks[("A sym", "A")]
    assert union.shape == (6, 6) and torch.equal(union[:3, :3], own["A sym"]) and torch.equal(union[3:, :3], played["matrix_ba"])
    assert torch.equal(union[:3, 3:], played["matrix_ab"]) and torch.equal(union[3:, 3:], own["A"])
    paired, unpaired = tests.xp["A sym > A"], tests.xp["A > B"]
    assert paired.comparison.paired and paired.comparison.arrangements == 8 and not unpaired.comparison.paired
    assert unpaired.comparison.agents == (3, 4)
    expected = compare_pools(union, [0, 1, 2], [3, 4, 5], paired=True)
    assert paired.comparison.p_value == expected.p_value and paired.comparison.difference == pytest.approx(expected.difference)
    assert paired.role == unpaired.role == "primary" and paired.cells == ("A sym", "A")
    adjusted = holm({"A sym > A": paired.comparison.p_value, "A > B": unpaired.comparison.p_value})
    assert paired.adjusted_p == adjusted["A sym > A"] and unpaired.adjusted_p == adjusted["A > B"]
    bomb = tests.bomb_out["A sym < A"]
    assert bomb.comparison.alternative == "less" and bomb.role == "exploratory" and bomb.adjusted_p is None


def _agents(root: Path, names: list[str]) -> list[Path]:
    runs = []
    for name in names:
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "policy.json").write_text(f'{{"name": "{name}"}}')
        (root / name / "policy.safetensors").write_bytes(name.encode())
        runs.append(root / name)
    return runs


def test_cross_play_between_cells_is_reused_only_for_the_same_agents_and_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    played: list[list[tuple[int, int]]] = []

    def fake_play_pairs(policies, pairs, games, *, deck_seed):
        played.append(list(pairs))
        scores = torch.tensor([[i * 10 + j] * games for i, j in pairs])
        return scores, scores % 2 == 0, None, None

    monkeypatch.setattr(between, "play_pairs", fake_play_pairs)
    runs_a, runs_b = _agents(tmp_path / "agents", ["a0", "a1"]), _agents(tmp_path / "agents", ["b0", "b1", "b2"])
    a, b, messages = Cell("A", "p", "C3"), Cell("B", "q"), []

    policy = SimpleNamespace(rules=SimpleNamespace(max_score=50))  # stands in for an agent of a game of maximum 50

    def play(cell_b: Cell = b, reuse: bool = True) -> dict[str, torch.Tensor]:
        return between.play_between(a, runs_a, [policy] * 2, cell_b, runs_b, [policy] * 3, 4, 1, tmp_path / "between", {}, reuse=reuse,
                                    log=messages.append)

    first = play()
    assert played[0] == [(i, 2 + j) for i in range(2) for j in range(3)] + [(2 + j, i) for j in range(3) for i in range(2)]
    assert first["matrix_ab"].tolist() == [[2, 3, 4], [12, 13, 14]] and first["matrix_ba"].tolist() == [[20, 21], [30, 31], [40, 41]]
    assert first["bomb_out_ab"].tolist() == [[1, 0, 1], [1, 0, 1]] and (tmp_path / "between" / "p_c3_average--q.json").is_file()
    again = play()
    assert len(played) == 1 and all(torch.equal(again[k], first[k]) for k in between.BLOCKS) and "reused" in messages[-1]
    play(Cell("B", "q", "C3"))  # another form of B: other games
    (runs_b[2] / "policy.safetensors").write_bytes(b"retrained")  # another agent: played again
    play()
    assert len(played) == 3
    saved = tmp_path / "between" / "p_c3_average--q.json"
    record = json.loads(saved.read_text())
    refusals = ((lambda r: r.update(matrix_ab=r["matrix_ab"][1:]), r"its 'matrix_ab' has shape \[1, 3\], the cells give \[2, 3\]"),
                (lambda r: r["matrix_ba"][0].__setitem__(0, 51.0), r"its 'matrix_ba' holds 51, outside the possible range \[0, 50\]"),
                (lambda r: r["bomb_out_ab"][1].__setitem__(2, -0.25), r"its 'bomb_out_ab' holds -0.25, outside .*\[0, 1\]"))
    for change, refusal in refusals:
        result = json.loads(json.dumps(record["result"]))
        change(result)
        save_result(saved, record["key"], result)  # sealed again: only its numbers are wrong
        with pytest.raises(ReuseError, match=rf"p_c3_average--q.json \(cross-play between the cells 'A' and 'B'\): {refusal}"):
            play()
    record["result"]["matrix_ab"][0][0] = 7.0
    saved.write_text(json.dumps(record))
    with pytest.raises(ReuseError, match="it was edited after it was saved"):
        play()
    assert len(played) == 3  # nothing played again silently


def test_the_ers_table_is_the_registered_one() -> None:
    """results/ers/PREREGISTRATION.md: P1-P3 one family, S1 and S2, the control averaged over a subset that is no group."""
    table = ERS_TABLES["table1"]
    assert table.registered == "results/ers/PREREGISTRATION.md" and Path(table.registered).is_file()
    assert table.primary == (("ER-OP", "OP"), ("ER-OP", "G-OP C3"), ("G-OP C3", "OP"))
    assert table.tests[3:5] == (("ER-OP S3-symmetrized", "ER-OP"), ("SP C3-symmetrized", "SP subset-averaged"))
    control = next(c for c in table.cells if c.label == "SP subset-averaged")
    assert control.symmetrize is None and len(control.average_over) == 3
    closed = {tuple(control.average_over[i][j] for j in control.average_over[k]) for i in range(3) for k in range(3)}
    assert not closed <= set(control.average_over)  # not a group: equivariant to nothing, as many passes as C3


def test_a_test_of_a_pool_not_trained_is_not_run_and_its_primary_stays_in_the_family() -> None:
    """Three registered primaries, two of them on a pool not trained: the third is adjusted as one of three."""
    g = torch.Generator().manual_seed(5)
    keys = [f"0/seed_{k}" for k in range(4)]
    own = {label: 10 + torch.rand(4, 4, generator=g, dtype=torch.float64) + shift for label, shift in (("A", 1.0), ("B", 0.0))}
    results = {label: _cell(pool, own[label], tuple(keys)) for label, pool in (("A", "p"), ("B", "q"))}
    spec = Table("t", "registered", (Cell("A", "p"), Cell("B", "q"), Cell("E", "e")), (("E", "B"), ("E", "A"), ("A", "B")),
                 primary=(("E", "B"), ("E", "A"), ("A", "B")))
    tests = table_tests(spec, results, {("A", "B"): _blocks(4, 4, 10.2)}, {"e": "pool e was not trained (the rule)"})
    assert list(tests.not_run) == ["E > B", "E > A"] and all(t.role == "primary" for t in tests.not_run.values())
    assert tests.not_run["E > B"].reason == "pool e was not trained (the rule)"
    test = tests.xp["A > B"]
    assert test.adjusted_p == pytest.approx(min(1.0, 3 * test.comparison.p_value))
    assert test.comparison.confidence == pytest.approx(1 - ALPHA / 3)


def test_the_ers_pools_read_touched_agents_where_the_design_shares_them() -> None:
    from eqc.domains.hanabi.reproduce.run import REPOSITORY, pool_agents
    from eqc.domains.hanabi.reproduce.specs import SCALES

    scale = SCALES["ers"]
    where = REPOSITORY / str(scale.shipped)
    sp, op01 = pool_agents(where, scale, "sp"), pool_agents(where, scale, "op_streams01")
    assert len(sp) == 12 and len(op01) == 12
    assert [key for key, _ in op01] == [f"{s}/slots_{pi}" for s in (0, 1) for pi in ("012", "021", "102", "120", "201", "210")]
    assert all("touched/agents/op/stream_" in str(path) for _, path in op01)
    assert set(scale.not_trained) == {"erop"} and "colour S3 alone" in scale.not_trained["erop"]
