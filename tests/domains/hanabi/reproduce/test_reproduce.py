"""``reproduce`` at smoke scale: pools trained once and reused, tables written beside the paper's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eqc.cli import main
from eqc.domains.hanabi.reproduce import PAPER, reproduce


def test_table1_then_table2_reuse_pools(tmp_path: Path) -> None:
    messages: list[str] = []
    record = reproduce("table1", "smoke", tmp_path, use_ray=False, log=messages.append)
    assert set(record["cells"]) == set(PAPER["table1"])
    assert set(record["permutation_tests"]) == {"D10-equivariant > OP", "C5-equivariant > OP", "D10-equivariant > C5-equivariant"}
    for cell in record["cells"].values():
        assert cell["agents"] == 2 and 0 <= cell["xp_mean"] <= 25
    saved = json.loads((tmp_path / "table1.json").read_text())
    assert saved["games_per_pair"] == 64 and saved["paper"]["OP"]["xp_mean"] == 15.32
    text = (tmp_path / "table1.md").read_text()
    assert "| D10-equivariant |" in text and "16.08 ± 0.42" in text and "interval" in text
    assert (tmp_path / "xp" / "table1" / "op" / "xp.json").exists()

    messages.clear()
    record = reproduce("table2", "smoke", tmp_path, use_ray=False, log=messages.append)
    assert "2 of 2 seeds already finished; training 0" in messages  # the OP pool of table1 is reused
    assert record["paper_only_pools_skipped"] == ["iql"]
    assert {"SAD", "SAD D10-symmetrized", "OP C5-symmetrized"} <= set(record["cells"])
    assert record["cells"]["SAD D10-symmetrized"]["symmetrize"] == "D10"


def test_table3_compares_hidden_schemes_of_recurrent_agents(tmp_path: Path) -> None:
    record = reproduce("table3", "smoke", tmp_path, use_ray=False, log=lambda _: None)
    assert [c["hidden"] for c in record["cells"].values()] == ["average", "identity", "average"]
    assert record["pool_configs"]["recurrent"]["network"]["lstm_layers"] == 1


def test_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="table must be one of"):
        reproduce("table9", "smoke", tmp_path)
    with pytest.raises(ValueError, match="scale must be one of"):
        reproduce("table1", "huge", tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "reproduce", "table1", "--scale", "huge", "--out", str(tmp_path)])
    assert info.value.code == 2 and "--scale" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "pool", "--config", "configs/hanabi/vdn_cpu.toml", "--seeds", "5-2", "--out", str(tmp_path)])
    assert info.value.code == 2 and "--seeds" in capsys.readouterr().err
