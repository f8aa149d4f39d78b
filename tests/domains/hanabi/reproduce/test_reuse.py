"""``reuse``: a saved result is taken again only when its seal matches its key and numbers and the numbers are possible;
anything else is refused with an error naming the file and the result (on scratch copies of the claim-1 experiment's
shipped agents, ``touched_pools``: Mini-Hanabi, maximum score 9)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from eqc.cli import main
from eqc.domains.hanabi.reproduce import reproduce
from eqc.domains.hanabi.reproduce.reuse import ResultFileError, ReuseError, load_result, save_result, seal


def test_a_saved_result_is_sealed_and_read_back_under_its_key(tmp_path: Path) -> None:
    path, key = tmp_path / "cell.json", {"cell": "OP", "games": 4}
    save_result(path, key, {"matrix": [[1.0, float("nan")]], "xp_sem": float("nan")})
    saved = json.loads(path.read_text())
    assert next(iter(saved)) == "sha256" and saved["sha256"] == seal(key, saved["result"])  # NaN is sealed as null
    assert load_result(path, key, "cell 'OP'") == {"matrix": [[1.0, None]], "xp_sem": None}
    assert load_result(path, {**key, "games": 8}, "cell 'OP'") is None  # another key: computed again
    assert load_result(tmp_path / "none.json", key, "cell 'OP'") is None
    path.write_text("{not json")
    with pytest.raises(ReuseError, match=r"cell.json \(cell 'OP'\): it is not readable JSON"):
        load_result(path, key, "cell 'OP'")


def _edit(change: Callable[[dict[str, Any]], object], *, reseal: bool) -> Callable[[Path], None]:
    """Change a saved result's numbers, and seal them again (as a writer of impossible numbers would) or not (an edit)."""
    def edit(path: Path) -> None:
        saved = json.loads(path.read_text())
        change(saved["result"])
        if reseal:
            save_result(path, saved["key"], saved["result"])
        else:
            path.write_text(json.dumps(saved))
    return edit


def _unseal(path: Path) -> None:
    saved = json.loads(path.read_text())
    del saved["sha256"]
    path.write_text(json.dumps(saved))


def _set(name: str, *index: int, to: object) -> Callable[[dict[str, Any]], None]:
    def change(result: dict[str, Any]) -> None:
        target = result[name]
        for i in index[:-1]:
            target = target[i]
        if index:
            target[index[-1]] = to
        else:
            result[name] = to
    return change


OP_CELL, BETWEEN = "xp/table1/op/cell.json", "xp/between/eqc--op.json"
#: file under --out (``relabelled`` = the first op agent's relabelled self-play) -> its edit -> the refusal
REFUSALS: list[tuple[str, Callable[[Path], None], str]] = [
    (OP_CELL, _edit(_set("matrix", 0, 1, to=99.0), reseal=True),
     r"\(cell 'OP'\): its 'matrix' holds 99, outside the possible range \[0, 9\]"),
    (OP_CELL, _edit(_set("matrix", 1, 0, to=-0.5), reseal=True), r"its 'matrix' holds -0.5, outside the possible range \[0, 9\]"),
    (OP_CELL, _edit(_set("bomb_out_matrix", 0, 1, to=1.5), reseal=True),
     r"its 'bomb_out_matrix' holds 1.5, outside the possible range \[0, 1\]"),
    (OP_CELL, _edit(_set("matrix", to=[[1.0, 2.0, 3.0]] * 3), reseal=True), r"its 'matrix' has shape \[3, 3\], the cell has 4 agents"),
    (OP_CELL, _edit(lambda result: result.pop("perfect_matrix"), reseal=True), r"\(cell 'OP'\): it lacks 'perfect_matrix'"),
    (OP_CELL, _edit(_set("xp_mean", to=8.0), reseal=False), r"\(cell 'OP'\): it was edited after it was saved"),
    (OP_CELL, _edit(_set("matrix", 0, 1, to=5.0), reseal=False), r"\(cell 'OP'\): it was edited after it was saved"),
    (OP_CELL, _unseal, r"\(cell 'OP'\): it has no seal \('sha256'\)"),
    (BETWEEN, _edit(_set("matrix_ab", 0, 0, to=99.0), reseal=True),
     r"\(cross-play between the cells 'EQC' and 'OP'\): its 'matrix_ab' holds 99, outside the possible range \[0, 9\]"),
    (BETWEEN, _edit(_set("bomb_out_ba", 0, 0, to=0.5), reseal=False), r"\(cross-play between the cells 'EQC' and 'OP'\): it was edited"),
    ("relabelled", _edit(_set("loss", to=50.0), reseal=True),
     r"\(relabelled self-play of .*op/stream_0/slots_012\): its 'loss' holds 50, outside the possible range \[-9, 9\]"),
    ("relabelled", _edit(_set("self_play", to=-2.0), reseal=True), r"its 'self_play' holds -2, outside the possible range \[0, 9\]"),
    ("relabelled", _edit(lambda result: result.pop("loss_sem"), reseal=True), r"its 'loss_sem' holds None, not a finite number"),
    ("relabelled", _edit(_set("loss", to=0.5), reseal=False), r"\(relabelled self-play of .*\): it was edited after it was saved"),
]


def test_reuse_refuses_impossible_numbers_and_edited_results(touched_pools: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = touched_pools.parents[1] / "out"
    first = reproduce("table1", "touched", out, agents=touched_pools, log=lambda _: None)
    agent = first.relabelled["op"].agents[0].agent
    relabelled = next(p for p in (out / "relabelled" / "op").glob("*.json") if json.loads(p.read_text())["result"]["agent"] == agent)
    for name, edit, refusal in REFUSALS:
        path = relabelled if name == "relabelled" else out / name
        original = path.read_text()
        edit(path)
        with pytest.raises(ReuseError, match=refusal) as info:
            reproduce("table1", "touched", out, agents=touched_pools, reuse=True, log=lambda _: None)
        assert str(info.value).startswith(f"{path} (") and str(info.value).endswith("run again without --reuse (reuse=False), "
                                                                                 "which plays it again and overwrites the file")
        path.write_text(original)
    _edit(_set("matrix", 0, 1, to=99.0), reseal=True)(out / OP_CELL)
    with pytest.raises(SystemExit) as exit_info:
        main(["hanabi", "reproduce", "table1", "--scale", "touched", "--agents", str(touched_pools), "--out", str(out), "--reuse"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and f"argument --reuse: {out / OP_CELL} (cell 'OP'): its 'matrix' holds 99" in err

    _edit(_set("matrix", 0, 1, to=first.cells["OP"].matrix[0][1]), reseal=True)(out / OP_CELL)
    _edit(_set("xp_mean", to=8.5), reseal=True)(out / OP_CELL)  # a summary that is not its matrix's: derived again
    again = reproduce("table1", "touched", out, agents=touched_pools, reuse=True, log=lambda _: None)
    assert all(cell.reused for cell in again.cells.values())
    fresh, reused = first.to_json(), again.to_json()  # NaN is saved as null
    assert reused["cells"] == {label: {**cell, "reused": True} for label, cell in fresh["cells"].items()}
    assert reused["tests"] == fresh["tests"]
    (out / OP_CELL).unlink()
    (out / OP_CELL).mkdir()
    with pytest.raises(ResultFileError, match=r"op/cell.json is a directory, not a result file"):
        reproduce("table1", "touched", out, agents=touched_pools, reuse=True, log=lambda _: None)
