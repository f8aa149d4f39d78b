"""The code lottery of a rendered registered table: codes per agent in its cell's form, same-code rates, cross-play by
code from the table's own matrix, and the table's tests rerun on the same-code matrix (scratch ``touched`` design)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import eqc.domains.hanabi.reproduce.codes as codes
from eqc.cli import main
from eqc.domains.hanabi.reproduce import reproduce
from eqc.domains.hanabi.reproduce.codes import reproduce_codes
from eqc.domains.hanabi.reproduce.reports import read_codes
from eqc.domains.hanabi.xp.codes import AgentCodes, same_code_matrix


@pytest.fixture
def rendered(touched_pools: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    reproduce("table1", "touched", out, agents=touched_pools, log=lambda _: None)
    return out


def test_the_report_reads_every_cell_and_test_of_the_table(rendered: Path, touched_pools: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    report = reproduce_codes("touched", rendered, agents=touched_pools, games=8, log=lambda _: None)
    table = json.loads((rendered / "table1.json").read_text())
    assert list(report.cells) == list(table["cells"])
    assert list(report.tests) == [" vs ".join(t["cells"]) for t in table["tests"].values()]
    for label, cell in report.cells.items():
        n = table["cells"][label]["agents"]
        slots = [c.slot_code for c in cell.codes]
        assert len(slots) == n and all(-1 <= s < 3 for s in slots)
        off = ~torch.eye(n, dtype=torch.bool)
        assert cell.same_slot_code_rate == pytest.approx(float(same_code_matrix(slots)[off].mean()))
        split = cell.xp_by_slot_code
        assert split.same.pairs + split.different.pairs == n * (n - 1)
        assert sum(cell.slot_code_counts.values()) == n
    for name, test in report.tests.items():
        assert test.comparison.alternative == "two-sided" and test.verdict in ("differs", "cannot tell"), name
        assert test.kind == table["tests"][next(k for k, t in table["tests"].items() if " vs ".join(t["cells"]) == name)]["kind"]
    written = (rendered / "codes.md").read_text()
    assert written.startswith("# The code lottery: table1 at scale `touched`") and "| EQC vs OP | matched |" in written
    assert read_codes(rendered / "codes.json").to_json() == report.to_json() and report.games == 8

    # Every agent with the same codes: every rate is 1 and every test's difference is 0 (the statistic is read off the
    # same-code matrix, not the cross-play one).
    monkeypatch.setattr(codes, "agent_codes", lambda policy, games: AgentCodes(1, (0, 1, 2), 5.0, 3))
    report = reproduce_codes("touched", rendered, agents=touched_pools, games=8, log=lambda _: None)
    assert all(c.same_slot_code_rate == 1.0 == c.same_both_codes_rate for c in report.cells.values())
    assert all(t.comparison.difference == 0.0 for t in report.tests.values())


def test_the_cli_needs_the_rendered_table_and_a_registered_scale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "reproduce", "codes", "--scale", "touched", "--out", str(tmp_path / "empty")])
    assert info.value.code == 2 and "argument --out:" in capsys.readouterr().err
    assert not (tmp_path / "empty").exists()
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "reproduce", "codes", "--scale", "cpu", "--out", str(tmp_path / "empty")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "argument --scale: the code report reads a registered table1 (['ers', 'touched'])" in err
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "reproduce", "codes", "--scale", "ers", "--out", str(tmp_path / "empty"), "--reuse"])
    assert info.value.code == 2 and "argument --reuse: does not apply to the code report" in capsys.readouterr().err
