"""A registered table refuses any pool that is not its registered design, naming what differs, before any game is
played or file written: on scratch copies of the claim-1 experiment's shipped agents (``touched_pools``)."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from eqc.cli import main
from eqc.domains.hanabi.reproduce import SCALES, reproduce
from eqc.domains.hanabi.reproduce.design import DesignError, check_design
from eqc.domains.hanabi.reproduce.run import REPOSITORY, shipped_pools
from eqc.domains.hanabi.reproduce.specs import TOUCHED_DESIGN, ReproduceError, slots_name
from eqc.domains.hanabi.training.bootstrap import colour_slot_maps


def _replace(agents: Path, agent: str, source: Path) -> None:
    """Put a copy of the agent directory ``source`` where the agent ``agent`` (under ``agents``) was."""
    shutil.rmtree(agents / agent)
    shutil.copytree(source, agents / agent)


def _swap(agents: Path, first: str, second: str) -> None:
    (agents / first).rename(agents / "swapping")
    (agents / second).rename(agents / first)
    (agents / "swapping").rename(agents / second)


def _truncate(file: Path) -> None:
    file.write_bytes(file.read_bytes()[:100])


BREAKS: dict[str, tuple[Callable[[Path], object], str]] = {
    "missing": (lambda a: shutil.rmtree(a / "op" / "stream_1" / "slots_021"),
                r"- pool 'op': agent directory op/stream_1/slots_021 is missing"),
    "extra (a stray seed directory)": (lambda a: shutil.copytree(a / "op" / "stream_1" / "slots_012", a / "op" / "stream_1" / "seed_3"),
                                       r"- pool 'op': op/stream_1/seed_3 is extra: the design's agents there are slots_012, slots_021"),
    "duplicate (a copied twin)": (lambda a: _replace(a, "gop_c3/stream_0/slots_021", a / "op" / "stream_0" / "slots_021"),
                                  r"- pool 'gop_c3': agent directory gop_c3/stream_0/slots_021 is a duplicate: the same weights digest "
                                  r"\(sha256 [0-9a-f]{16}\.\.\.\) as op/stream_0/slots_021"),
    "unreadable record": (lambda a: (a / "sp" / "stream_1" / "slots_012" / "policy.json").write_text("{not json"),
                          r"- pool 'sp': agent directory sp/stream_1/slots_012 is unreadable: .*policy.json is not readable JSON"),
    "unreadable weights": (lambda a: _truncate(a / "eqc" / "stream_1" / "slots_021" / "policy.safetensors"),
                           r"- pool 'eqc': agent directory eqc/stream_1/slots_021 is unreadable: .*is not the weights file exported"),
    "another stream": (lambda a: _swap(a, "op/stream_0/slots_012", "op/stream_1/slots_012"),
                       r"- pool 'op': agent op/stream_0/slots_012 was trained on stream seed 1, the design's folder is stream 0"),
    "another scale's agent": (lambda a: _replace(a, "eqc/stream_0/slots_012", REPOSITORY / "results/colour/agents/sp/slots_012"),
                              r"- pool 'eqc': agent eqc/stream_0/slots_012 was not trained by the design's config: \[bootstrap\] "
                              r"convention = 'colour_to_slot', the design's 'colour_to_touched_slot'"),
}


def test_the_registered_design_is_read_and_the_shipped_pools_are_it(touched_pools: Path) -> None:
    pools = shipped_pools("table1", "touched", touched_pools)
    assert [run.resolve().relative_to(touched_pools.parents[1]).as_posix() for run in pools["sp"]] == [
        "colour/agents/touched/slots_012", "colour/agents/touched/slots_021", "touched/agents/sp/stream_1/slots_012",
        "touched/agents/sp/stream_1/slots_021"]
    assert [len(runs) for runs in pools.values()] == [4, 4, 4, 4]
    check_design(SCALES["touched"].tables["table1"], dataclasses.replace(SCALES["touched"], design=TOUCHED_DESIGN),
                 REPOSITORY / "results" / "touched" / "agents")  # the shipped 48 agents are the registered design


def test_the_shipped_ers_agents_are_its_design() -> None:
    """A pool of another pool's agents (``op_streams01``: ``op``'s streams 0 and 1) shares their directories: no duplicate."""
    check_design(SCALES["ers"].tables["table1"], SCALES["ers"], REPOSITORY / "results" / "ers" / "agents")


@pytest.mark.parametrize("name", list(BREAKS))
def test_a_pool_that_is_not_the_registered_design_is_refused(touched_pools: Path, name: str) -> None:
    breaks, message = BREAKS[name]
    breaks(touched_pools)
    with pytest.raises(DesignError, match=message) as info:
        shipped_pools("table1", "touched", touched_pools)
    assert "table1 at scale 'touched' is registered (results/touched/PREREGISTRATION.md)" in str(info.value)
    assert "holds the agents slots_012, slots_021 and nothing else" in str(info.value)


def test_every_difference_is_named_at_once(touched_pools: Path) -> None:
    shutil.rmtree(touched_pools / "eqc" / "stream_0" / "slots_012")
    (touched_pools / "eqc" / "stream_0" / "notes").mkdir()
    with pytest.raises(DesignError, match="differs in 2 places") as info:
        shipped_pools("table1", "touched", touched_pools)
    assert "eqc/stream_0/slots_012 is missing" in str(info.value) and "eqc/stream_0/notes is extra" in str(info.value)


def test_another_scales_agents_are_refused(touched_pools: Path) -> None:
    with pytest.raises(DesignError) as info:
        shipped_pools("table1", "touched", REPOSITORY / "results" / "colour" / "agents")
    for folder in ("op/stream_0 (stream 0)", "eqc/stream_1 (stream 1)", "sp/stream_1 (stream 1)"):
        assert f"folder {folder} is missing" in str(info.value)


def test_refused_before_any_game_or_file(touched_pools: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(touched_pools / "gop_c3" / "stream_1" / "slots_012")
    out = touched_pools.parents[1] / "out"
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "reproduce", "table1", "--scale", "touched", "--agents", str(touched_pools), "--out", str(out)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "argument --agents: table1 at scale 'touched' is registered" in err
    assert "pool 'gop_c3': agent directory gop_c3/stream_1/slots_012 is missing" in err
    with pytest.raises(ReproduceError, match="gop_c3/stream_1/slots_012 is missing") as raised:
        reproduce("table1", "touched", out, agents=touched_pools, log=lambda _: None)
    assert raised.value.argument == "agents" and isinstance(raised.value.__cause__, DesignError)
    assert not out.exists()


def test_a_registered_table_trains_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCALES, "touched", dataclasses.replace(SCALES["touched"], trained_by=None))
    with pytest.raises(ReproduceError, match=r"table1 at scale 'touched' is registered .*trains none") as raised:
        reproduce("table1", "touched", tmp_path / "out", retrain=True)
    assert raised.value.argument == "retrain"
    assert not (tmp_path / "out").exists()


def test_every_registered_table_has_a_design_its_pools_follow() -> None:
    registered = [(scale, table) for scale in SCALES.values() for table in scale.tables.values() if table.registered]
    assert registered and all(scale.design is not None for scale, _ in registered)
    for scale, table in registered:
        assert scale.design is not None
        for pool in {cell.pool for cell in table.cells}:
            assert len(scale.pool_folders.get(pool, (pool,))) == len(scale.design.streams[pool]), (scale.name, pool)
    assert TOUCHED_DESIGN.agents == tuple(slots_name(pi) for pi in colour_slot_maps(3, 3))


def test_a_registered_table_at_a_scale_without_a_design_is_an_error(touched_pools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCALES, "touched", dataclasses.replace(SCALES["touched"], design=None))
    with pytest.raises(ValueError, match="declares no design"):
        shipped_pools("table1", "touched", touched_pools)
