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
    assert set(record.cells) == set(PAPER["table1"])
    assert set(record.tests) == {"D10-equivariant > OP", "C5-equivariant > OP", "D10-equivariant > C5-equivariant"}
    for test in record.tests.values():  # different pools of seeds 0 and 1: matched by seed, 2^2 swaps of each seed's two agents
        assert test.kind == "matched" and test.comparison.paired and test.comparison.agents == (2, 2) and test.comparison.exact
        assert test.comparison.min_p == pytest.approx(1 / 4)
    roles = {name: (t.role, t.adjusted_p is not None) for name, t in record.tests.items()}
    assert roles == {"D10-equivariant > OP": ("primary", True), "C5-equivariant > OP": ("primary", True),
                     "D10-equivariant > C5-equivariant": ("exploratory", False)}
    union = record.test_matrices["C5-equivariant vs OP"]
    assert [row[:2] for row in union.matrix[:2]] == list(record.cells["C5-equivariant"].matrix) and len(union.matrix) == 4
    assert (tmp_path / "xp" / "between" / "gop_c5_c5_average--op.json").is_file()  # the pairs between the two cells
    assert set(record.bomb_out_tests) == {"D10-equivariant < OP", "C5-equivariant < OP", "D10-equivariant < C5-equivariant"}
    test, cells = record.bomb_out_tests["C5-equivariant < OP"], record.cells
    pool_rate = {label: (cells[label].bomb_out_matrix[0][1] + cells[label].bomb_out_matrix[1][0]) / 2 for label in cells}
    assert test.comparison.alternative == "less"
    assert test.comparison.difference == pytest.approx(pool_rate["C5-equivariant"] - pool_rate["OP"])
    assert test.role == "exploratory" and test.adjusted_p is None
    for cell in record.cells.values():
        assert cell.agents == 2 and 0 <= cell.xp_mean <= 25 and cell.ordered_pairs == 2 and cell.xp_sem != cell.xp_sem
    assert set(record.relabelled) == {"op", "gop_c5", "gop_d10"} and len(record.relabelled["op"].agents) == 2
    saved = json.loads((tmp_path / "table1.json").read_text())
    assert saved["games_per_pair"] == 64 and saved["paper"]["OP"]["xp_mean"] == 15.32
    text = (tmp_path / "table1.md").read_text()
    assert "| D10-equivariant |" in text and "16.08 ± 0.42" in text
    assert "smallest attainable p" in text and "relabelled-partner loss" in text
    assert "| D10-equivariant < OP | exploratory | matched | 2 matched sets |" in text  # the bomb-out tests
    assert (tmp_path / "xp" / "table1" / "op" / "xp.json").exists()

    messages.clear()
    record = reproduce("table2", "smoke", tmp_path, use_ray=False, log=messages.append)
    assert "2 of 2 seeds already finished; training 0" in messages  # the OP pool of table1 is reused
    assert record.pools_not_at_this_scale == ("iql",)
    assert {"SAD", "SAD D10-symmetrized", "OP C5-symmetrized"} <= set(record.cells)
    assert record.cells["SAD D10-symmetrized"].symmetrize == "D10"
    paired = record.tests["SAD D10-symmetrized > SAD"]  # the same agents, plain and symmetrized: 2^2 swaps of forms
    assert paired.comparison.paired and paired.comparison.arrangements == 4 and paired.role == "primary"
    assert record.tests["OP > SAD"].kind == "matched"  # Other-Play against self-play: two pools of the same seeds
    assert record.bomb_out_tests["SAD D10-symmetrized < SAD"].comparison.paired


def test_reuse_takes_only_results_of_the_same_agents(tmp_path: Path) -> None:
    from eqc.domains.hanabi.agent.files import export_policy

    reproduce("table1", "smoke", tmp_path / "smoke", use_ray=False, log=lambda _: None)
    agents = tmp_path / "agents"
    for pool in ("op", "gop_c5", "gop_d10"):
        for seed in (0, 1):
            export_policy(tmp_path / "smoke" / "pools" / pool / f"seed_{seed}", agents / pool / f"seed_{seed}")
    first = reproduce("table1", "cpu", tmp_path / "cpu", agents=agents, log=lambda _: None)
    messages: list[str] = []
    again = reproduce("table1", "cpu", tmp_path / "cpu", agents=agents, reuse=True, log=messages.append)
    assert all(cell.reused for cell in again.cells.values())
    fresh, reused = first.to_json(), again.to_json()  # NaN is saved as null
    assert {label: {**cell, "reused": True} for label, cell in fresh["cells"].items()} == reused["cells"]
    assert fresh["tests"] == reused["tests"]  # 2 agents per pool: NaN jackknife SE
    assert sum("reused" in m for m in messages) == 3 + 3 + 6  # 3 cells, the pairs between the cells of 3 tests, 6 agents
    assert "taken from an earlier run of this eqc on the same agent files (`--reuse`): OP, C5-equivariant" in (
        tmp_path / "cpu" / "table1.md").read_text()
    (agents / "op" / "seed_1").rename(tmp_path / "moved")  # another agent in the pool: its cell is played again
    export_policy(tmp_path / "smoke" / "pools" / "gop_c5" / "seed_1", agents / "op" / "seed_1")
    messages.clear()
    changed = reproduce("table1", "cpu", tmp_path / "cpu", agents=agents, reuse=True, log=messages.append)
    assert not changed.cells["OP"].reused and changed.cells["C5-equivariant"].reused
    assert sum("relabelled self-play reused" in m for m in messages) == 5  # all but the new agent
    assert any(m.startswith(f"{agents / 'op' / 'seed_1'}: self-play") for m in messages)  # the new agent played again
    from eqc.domains.hanabi.reproduce.reuse import agent_digests

    op = json.loads((tmp_path / "cpu" / "xp" / "table1" / "op" / "cell.json").read_text())
    assert op["key"]["agents"] == agent_digests([agents / "op" / "seed_0", agents / "op" / "seed_1"]) != agent_digests(
        [agents / "op" / "seed_0", tmp_path / "moved"])  # the OP cell was played again with the new agent's files


def test_table3_compares_hidden_schemes_of_recurrent_agents(tmp_path: Path) -> None:
    record = reproduce("table3", "smoke", tmp_path, use_ray=False, log=lambda _: None)
    assert [c.hidden_scheme for c in record.cells.values()] == ["average", "identity", "average"]
    assert record.pool_configs["recurrent"]["network"]["lstm_layers"] == 1


def test_cpu_scale_reads_shipped_agents_and_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No training at cpu scale: the pools are the exported policy directories; a pool of one agent has no cells."""
    import dataclasses

    from eqc.domains.hanabi.agent.files import export_policy
    from eqc.domains.hanabi.reproduce import SCALES

    monkeypatch.setitem(SCALES, "cpu", dataclasses.replace(SCALES["cpu"], games=32, relabel_elements=2, relabel_games=16))
    reproduce("table1", "smoke", tmp_path / "smoke", use_ray=False, log=lambda _: None)
    agents = tmp_path / "agents"
    for pool, seeds in (("op", (0, 1)), ("gop_c5", (0, 1)), ("gop_d10", (0,))):
        for seed in seeds:
            export_policy(tmp_path / "smoke" / "pools" / pool / f"seed_{seed}", agents / pool / f"seed_{seed}")
    messages: list[str] = []
    record = reproduce("table1", "cpu", tmp_path / "cpu", agents=agents, log=messages.append)
    assert not (tmp_path / "cpu" / "pools").exists()  # nothing trained
    assert record.agents_per_pool == {"op": 2, "gop_c5": 2, "gop_d10": 1} and record.agents_source == str(agents)
    assert set(record.cells) == {"OP", "C5-equivariant"} and set(record.tests) == {"C5-equivariant > OP"}
    assert "D10-equivariant: pool 'gop_d10' has 1 agents; cross-play needs 2" in messages
    text = (tmp_path / "cpu" / "table1.md").read_text()
    assert "| D10-equivariant | not available | n/a |" in text and "`gop_d10` 1" in text


def test_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="table must be one of"):
        reproduce("table9", "smoke", tmp_path)
    with pytest.raises(ValueError, match="scale must be one of"):
        reproduce("table1", "huge", tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "reproduce", "table1", "--scale", "huge", "--out", str(tmp_path)])
    assert info.value.code == 2 and "--scale" in capsys.readouterr().err
    with pytest.raises(ValueError, match="obl agents are a column of table2 only"):
        reproduce("table1", "smoke", tmp_path, obl=[tmp_path / "model0.pthw"])
    for argv, flag in ((["--agents", str(tmp_path / "none")], "--agents"), (["--agents", str(tmp_path), "--retrain"], "--agents"),
                       (["--obl", str(tmp_path / "model0.pthw")], "--obl")):
        with pytest.raises(SystemExit) as info:
            main(["hanabi", "reproduce", "table1", "--scale", "cpu", "--out", str(tmp_path / "out"), *argv])
        assert info.value.code == 2 and flag in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "pool", "--config", "configs/hanabi/vdn_cpu.toml", "--seeds", "5-2", "--out", str(tmp_path)])
    assert info.value.code == 2 and "--seeds" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "flag", "message"), [
    (["--ray", "bogus:1234"], "--ray", "cannot reach a Ray cluster"),
    (["--ray", "nonsense"], "--ray", "must be 'auto' or host:port"),
    (["--ray", "127.0.0.1:1", "--no-ray"], "--no-ray", "contradicts --ray"),
])
def test_ray_flags_are_checked_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv, flag, message) -> None:
    pytest.importorskip("ray")
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "pool", "--config", "vdn_cpu", "--seeds", "0", "--out", str(tmp_path / "pool"), *argv])
    err = capsys.readouterr().err
    assert info.value.code == 2 and flag in err and message in err
    assert not (tmp_path / "pool").exists()


def test_pool_threads_flag_reaches_the_runs(tmp_path: Path) -> None:
    """--threads is written into every config trained, so the config cannot silently override it in a worker."""
    import json

    out = tmp_path / "pool"
    argv = ["hanabi", "pool", "--config", "vdn_cpu", "--seeds", "0", "--out", str(out), "--no-ray", "--threads", "2",
            "--set", "run.num_envs=16", "--set", "run.total_moves=256", "--set", "run.eval_every_moves=256",
            "--set", "run.eval_games=8", "--set", "network.hidden_size=16", "--set", "network.mlp_layers=1"]
    assert main(argv) == 0
    assert json.loads((out / "seed_0" / "config.json").read_text())["config"]["run"]["threads"] == 2


def test_cpu_scale_without_shipped_agents_says_where_to_get_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import eqc.domains.hanabi.reproduce.run as run

    monkeypatch.setattr(run, "REPOSITORY", tmp_path / "nowhere")  # as in a wheel installed outside the repository
    with pytest.raises(ValueError, match=r"no shipped agents at .*nowhere.*--agents.*--retrain"):
        reproduce("table2", "cpu", tmp_path / "out", log=lambda _: None)


def test_agents_that_make_no_cell_are_refused_before_out_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eqc.domains.hanabi.reproduce.run import shipped_pools
    from eqc.domains.hanabi.reproduce.specs import ReproduceError
    from eqc.domains.hanabi.xp import PoolError

    (tmp_path / "empty").mkdir()
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "reproduce", "table1", "--scale", "cpu", "--agents", str(tmp_path / "empty"), "--out", str(out)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "argument --agents: no cell of table1 can be computed" in err and "op: 0, gop_c5: 0, gop_d10: 0" in err
    assert not out.exists()
    one = tmp_path / "one" / "op" / "seed_0"
    one.mkdir(parents=True)
    (one / "policy.json").write_text("{}")
    with pytest.raises(PoolError, match=r"each needs a pool of at least 2 agents .*, the pools hold op: 1, gop_c5: 0"):
        shipped_pools("table1", "cpu", tmp_path / "one")
    with pytest.raises(ReproduceError, match="no cell of table1"):
        reproduce("table1", "cpu", out, agents=tmp_path / "one", log=lambda _: None)
    assert not out.exists()


@pytest.mark.parametrize(("scale_name", "at_least"), [("cpu", 25), ("induced", 40), ("colour", 48), ("entropy", 18), ("touched", 6)])
def test_pools_are_the_configs_their_shipped_agents_were_trained_by(scale_name: str, at_least: int) -> None:
    """``--retrain`` (or ``scripts/train_shipped.py``) trains exactly what was shipped (apart from the seed), whatever
    ``vdn_cpu.toml`` says now and whichever file version recorded it."""
    from eqc.domains.hanabi.agent.policy import load_policy
    from eqc.domains.hanabi.reproduce import SCALES
    from eqc.domains.hanabi.reproduce.run import pool_agents, shipped_agents
    from eqc.domains.hanabi.reproduce.specs import colour_agent_config, pool_config, touched_agent_config
    from eqc.domains.hanabi.training.config import TrainConfig

    scale = SCALES[scale_name]
    pools = [p for p in scale.pools if p != "sp_streams"]  # sp_streams: the sp and sp_stream1 agents again
    checked = 0
    for pool in pools:
        for _, run in pool_agents(shipped_agents(scale), scale, pool):
            slots = tuple(int(c) for c in run.name.removeprefix("slots_")) if run.name.startswith("slots_") else ()
            if scale_name == "colour":
                expected = colour_agent_config(pool, slots)
            elif scale_name == "touched":
                expected = touched_agent_config(pool, slots)
            else:
                expected = pool_config(pool, scale, int(run.name.removeprefix("seed_")))  # the induced seeds differ in their slots
            assert TrainConfig.from_dict(load_policy(run).trained_with).to_dict() == expected.to_dict(), run
            checked += 1
    assert checked >= at_least


def test_the_colour_testbeds_ippo_pools_differ_from_self_play_in_the_learner_alone() -> None:
    """IPPO on the colour testbed is taught what the PQN self-play pool is taught, on the same stream, for as long."""
    from eqc.domains.hanabi.reproduce.specs import COLOUR_POOLS, colour_agent_config

    sp = colour_agent_config("sp", (2, 0, 1))
    for pool, coef in (("ippo_c001", 0.01), ("ippo_c005", 0.05)):
        ippo = colour_agent_config(pool, (2, 0, 1))
        assert (ippo.run.algorithm, ippo.to_dict()["ppo"]["entropy_coef"]) == ("ippo", coef) and sp.run.algorithm == "pqn"
        assert (ippo.game, ippo.rule, ippo.bootstrap) == (sp.game, sp.rule, sp.bootstrap)
        assert (ippo.run.total_moves, ippo.network.precision) == (sp.run.total_moves, "fp32")
        assert COLOUR_POOLS[pool].stream == COLOUR_POOLS["sp"].stream
    with pytest.raises(ValueError, match="not a pool of scale 'colour'"):
        colour_agent_config("ippo_c02", (2, 0, 1))


def test_induced_scale_reads_its_own_agents_and_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scale induced: Mini-Hanabi's colour groups (C2, C3, S3), no paper numbers, the breaking rule of a game of maximum 9."""
    import dataclasses

    from eqc.domains.hanabi.reproduce import SCALES

    monkeypatch.setitem(SCALES, "induced", dataclasses.replace(SCALES["induced"], games=8, relabel_elements=1, relabel_games=8))
    record = reproduce("table2", "induced", tmp_path, log=lambda _: None)
    assert not (tmp_path / "pools").exists() and record.paper == {}
    assert record.agents_source == "results/induced/agents, shipped"
    assert {"SP", "SP C3-symmetrized", "SP S3-symmetrized", "OP", "OP S3-symmetrized"} <= set(record.cells)
    assert record.cells["SP S3-symmetrized"].symmetrize == "S3" and record.cells["SP"].agents == 8
    assert "SP S3-symmetrized > SP" in record.tests and record.tests["SP S3-symmetrized > SP"].comparison.paired
    assert all(a.max_score == 9 for r in record.relabelled.values() for a in r.agents)
    text = (tmp_path / "table2.md").read_text()
    assert "INDUCED colour conventions" in text and "| SP S3-symmetrized | sp | 8 |" in text


def test_colour_scale_reads_pools_of_colour_to_slot_maps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Scale colour: pools of slots_<pi>/ agents; cells whose pools are missing are left out; --retrain is refused (its
    agents are not a seed pool); the conventions report reads the same pools and the tables' cells."""
    import dataclasses
    import shutil

    from eqc.domains.hanabi.reproduce import SCALES
    from eqc.domains.hanabi.reproduce.conventions import reproduce_conventions

    agents = tmp_path / "agents"
    for seed, pi in ((0, "201"), (1, "120"), (4, "102")):  # shipped induced agents stand in, named by their pi
        shutil.copytree(f"results/induced/agents/sp/seed_{seed}", agents / "sp" / f"slots_{pi}")
    monkeypatch.setitem(SCALES, "colour", dataclasses.replace(SCALES["colour"], games=8, relabel_elements=1, relabel_games=8))
    record = reproduce("table2", "colour", tmp_path / "out", agents=agents, log=lambda _: None)
    # sp_streams is the sp and sp_stream1 folders together: here sp alone
    assert set(record.cells) == {"SP", "SP C3-symmetrized", "SP S3-symmetrized", "SP streams 0+1", "SP streams 0+1 S3-symmetrized"}
    assert record.paper == {} and record.cells["SP streams 0+1"].matrix == record.cells["SP"].matrix
    assert record.tests["SP S3-symmetrized > SP"].role == "primary"
    assert [a.agent.split("/")[-1] for a in record.relabelled["sp"].agents] == ["slots_102", "slots_120", "slots_201"]
    with pytest.raises(ValueError, match="not their seed"):
        reproduce("table2", "colour", tmp_path / "retrained", retrain=True)
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "reproduce", "table1", "--scale", "colour", "--retrain", "--out", str(tmp_path / "r")])
    assert info.value.code == 2 and "--retrain: the colour scale's agents differ" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
    report = reproduce_conventions("colour", tmp_path / "out", agents=agents, games=8, log=lambda _: None)
    assert report.gap_share is not None and set(report.gap_share.cells) == set(record.cells)
    assert (tmp_path / "out" / "conventions.md").is_file()


def test_table3_is_refused_at_scale_induced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match=r"table must be one of \['table1', 'table2'\] at scale 'induced'.*recurrent"):
        reproduce("table3", "induced", tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "reproduce", "table3", "--scale", "induced", "--out", str(tmp_path / "out")])
    assert info.value.code == 2 and "hidden-state schemes of recurrent agents" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_touched_scale_matches_agents_by_stream_and_pi_and_plays_the_rank_control(touched_pools: Path) -> None:
    """Scale touched (the pre-registered claim-1 experiment): pools laid out by stream, agents matched by (stream, pi)
    across pools, every between-pool test matched, the secondary tests two-sided where registered, the rank control a
    cell of its own; a scratch copy of its design with two pi per stream keeps it to seconds."""
    from eqc.domains.hanabi.reproduce import SCALES
    from eqc.domains.hanabi.reproduce.run import pool_agents

    scale = SCALES["touched"]
    keys = [key for key, _ in pool_agents(touched_pools, scale, "sp")]
    assert keys == ["0/slots_012", "0/slots_021", "1/slots_012", "1/slots_021"]
    assert [key for key, _ in pool_agents(touched_pools, scale, "eqc")] == keys
    out = touched_pools.parents[1] / "out"
    record = reproduce("table1", "touched", out, agents=touched_pools, log=lambda _: None)
    tests = record.tests
    assert tests["EQC > OP"].kind == "matched" and tests["EQC > OP"].comparison.arrangements == 16 and tests["EQC > OP"].role == "primary"
    assert tests["SP S3-symmetrized > SP"].kind == "paired" and tests["SP rank-averaged vs SP"].comparison.alternative == "two-sided"
    assert tests["EQC vs G-OP C3"].kind == "matched" and tests["OP > SP"].kind == "matched"
    assert all(t.comparison.confidence == pytest.approx(1 - 0.05 / 3) for t in tests.values() if t.role == "primary")
    assert record.registered == "results/touched/PREREGISTRATION.md" and record.matching_note is None
    assert record.cells["SP rank-averaged"].matrix != record.cells["SP S3-symmetrized"].matrix
    text = (out / "table1.md").read_text()
    assert "registered in `results/touched/PREREGISTRATION.md`" in text and "| EQC > OP | primary | matched | 4 matched sets |" in text
    from eqc.domains.hanabi.reproduce.conventions import reproduce_conventions

    report = reproduce_conventions("touched", out, agents=touched_pools, games=4, log=lambda _: None)
    assert sorted(report.agents["sp"]) == keys and set(report.alignment) == {"sp", "op"}
    shared = report.shared_factor["op x eqc"]  # 4 matched pairs (both seatings) share stream and pi, 12 x 2 do not
    assert shared.factor == "stream and pi" and (shared.shared_pairs, shared.other_pairs) == (8, 24)
