"""A table's tests: the matrix over both cells' agents, paired cells of one pool, Holm over the primary claims,
and the cross-play between cells cached under the agents and forms it was played with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import eqc.domains.hanabi.reproduce.between as between
from eqc.domains.hanabi.reproduce.comparisons import table_tests
from eqc.domains.hanabi.reproduce.specs import INDUCED_TABLES, TABLES, Cell, Table
from eqc.evaluation import compare_pools, holm

SPEC = Table("t", "a test table", (Cell("A", "p"), Cell("A sym", "p", "C3"), Cell("B", "q")),
             (("A sym", "A"), ("A", "B"), ("B", "A sym")), primary=(("A sym", "A"), ("A", "B")))


def _cell(pool: str, matrix: torch.Tensor) -> dict:
    return {"pool": pool, "agents": matrix.shape[0], "matrix": matrix.tolist(), "bomb_out_matrix": (matrix / 100).tolist()}


def _blocks(n_a: int, n_b: int, value: float) -> dict[str, torch.Tensor]:
    ab = value + torch.arange(n_a * n_b, dtype=torch.float64).view(n_a, n_b) / 10
    return {"matrix_ab": ab, "matrix_ba": ab.T + 1, "bomb_out_ab": ab / 100, "bomb_out_ba": (ab.T + 1) / 100}


def test_every_table_names_primary_tests_among_its_tests() -> None:
    for table in (*TABLES.values(), *INDUCED_TABLES.values()):
        assert table.primary and set(table.primary) <= set(table.tests), table.name


def test_tests_run_on_the_union_of_both_cells_and_adjust_the_primary_ones() -> None:
    g = torch.Generator().manual_seed(0)
    sizes = (("A", 3, 0), ("A sym", 3, 1), ("B", 4, -1))
    own = {label: 10 + torch.rand(n, n, generator=g, dtype=torch.float64) + shift for label, n, shift in sizes}
    results = {"A": _cell("p", own["A"]), "A sym": _cell("p", own["A sym"]), "B": _cell("q", own["B"])}
    blocks = {("A sym", "A"): _blocks(3, 3, 10.5), ("A", "B"): _blocks(3, 4, 9.0)}  # ("B", "A sym") not played
    tests = table_tests(SPEC, results, blocks)
    assert list(tests.xp) == ["A sym > A", "A > B"] and list(tests.bomb_out) == ["A sym < A", "A < B"]
    union, played = torch.tensor(tests.matrices["A sym vs A"]["matrix"], dtype=torch.float64), blocks[("A sym", "A")]
    assert union.shape == (6, 6) and torch.equal(union[:3, :3], own["A sym"]) and torch.equal(union[3:, :3], played["matrix_ba"])
    assert torch.equal(union[:3, 3:], played["matrix_ab"]) and torch.equal(union[3:, 3:], own["A"])
    paired, unpaired = tests.xp["A sym > A"], tests.xp["A > B"]
    assert paired["paired"] and paired["arrangements"] == 8 and not unpaired["paired"] and unpaired["agents"] == [3, 4]
    expected = compare_pools(union, [0, 1, 2], [3, 4, 5], paired=True)
    assert paired["p_value"] == expected.p_value and paired["difference"] == pytest.approx(expected.difference)
    assert paired["role"] == unpaired["role"] == "primary" and paired["cells"] == ["A sym", "A"]
    adjusted = holm({"A sym > A": paired["p_value"], "A > B": unpaired["p_value"]})
    assert paired["adjusted_p"] == adjusted["A sym > A"] and unpaired["adjusted_p"] == adjusted["A > B"]
    bomb = tests.bomb_out["A sym < A"]
    assert bomb["alternative"] == "less" and bomb["role"] == "exploratory" and bomb["adjusted_p"] is None


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

    def play(cell_b: Cell = b, reuse: bool = True) -> dict[str, torch.Tensor]:
        return between.play_between(a, runs_a, [None] * 2, cell_b, runs_b, [None] * 3, 4, 1, tmp_path / "between", {}, reuse=reuse,
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
    record["result"]["matrix_ab"] = record["result"]["matrix_ab"][1:]
    saved.write_text(json.dumps(record))
    play()
    assert len(played) == 4 and "cannot be reused (its 'matrix_ab' has shape [1, 3], the cells give [2, 3])" in messages[-2]
