"""The entropy report: IPPO pools played greedily and as sampled, their equivariance, agent-level tests of sampled XP."""

from __future__ import annotations

from pathlib import Path

import pytest

from eqc.cli import main
from eqc.domains.hanabi.agent.files import export_policy
from eqc.domains.hanabi.reproduce.entropy import ippo_pools, render_entropy, reproduce_entropy
from eqc.domains.hanabi.reproduce.reports import read_entropy
from eqc.domains.hanabi.reproduce.specs import ReproduceError
from eqc.domains.hanabi.training.run import train

QUIET = {"progress": False, "log": lambda _: None}


@pytest.fixture(name="pools", scope="module")
def pools_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.domains.hanabi.conftest import tiny_config

    root = tmp_path_factory.mktemp("entropy")
    for pool, coef in (("ippo_c001", 0.01), ("ippo_c005", 0.05)):
        config = tiny_config(run={"algorithm": "ippo", "total_moves": 1024, "eval_every_moves": 1024},
                             ppo={"rollout_steps": 8, "epochs": 1, "minibatches": 2, "entropy_coef": coef})
        for seed in range(2):
            train(config, root / "runs" / pool / f"seed_{seed}", seed=seed, **QUIET)
            export_policy(root / "runs" / pool / f"seed_{seed}", root / "agents" / pool / f"seed_{seed}")
    return root


def test_the_report_plays_every_agent_both_ways_and_tests_pools_by_agents(pools: Path, tmp_path: Path) -> None:
    report = reproduce_entropy("entropy", tmp_path / "out", agents=pools / "agents", games=8, log=lambda _: None)
    assert [a.pool for a in report.agents] == ["ippo_c001"] * 2 + ["ippo_c005"] * 2
    assert [a.entropy_coef for a in report.agents] == [0.01, 0.01, 0.05, 0.05]
    assert len(report.greedy_matrix) == len(report.sampled_matrix) == 4  # cross-pool pairs are played too
    for agent in report.agents:
        assert 0 <= agent.greedy_disagreement <= 1 and 0 <= agent.policy_distance <= 1 and agent.policy_entropy > 0
    assert report.pools["ippo_c001"].sampled_xp.agents == 2 and report.group == "S5"
    test = report.sampled_tests["ippo_c005 > ippo_c001"]
    assert test.comparison.exact and test.comparison.min_p == pytest.approx(1 / 6) and test.role == "exploratory"  # C(4, 2) splits
    assert set(report.sampled_tests) == {"ippo_c005 > ippo_c001"}  # the pool of 0.2 is absent: its tests are not run
    assert read_entropy(tmp_path / "out" / "entropy.json").order[0] == "ippo_c001/seed_0"
    text = (tmp_path / "out" / "entropy.md").read_text()
    assert text == render_entropy(report) and "| ippo_c005 | 0.05 | 2 |" in text and "smallest attainable p" in text
    assert "(scale `entropy`)" in text


def test_the_colour_scale_reads_its_ippo_pools_and_no_other(pools: Path, tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "ippo_c005").symlink_to(pools / "agents" / "ippo_c005")
    (tmp_path / "agents" / "sp").symlink_to(pools / "agents" / "ippo_c001")  # a PQN pool's name: not an IPPO pool of the testbed
    assert set(ippo_pools("colour", tmp_path / "agents")) == {"ippo_c005"}
    with pytest.raises(ReproduceError, match="none of the IPPO pools of scale 'entropy'"):
        ippo_pools("entropy", tmp_path / "agents" / "sp")
    with pytest.raises(ReproduceError, match="reads the IPPO pools of scale entropy or colour, not 'induced'"):
        ippo_pools("induced")


def test_the_cli_refuses_what_does_not_apply(pools: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["hanabi", "reproduce", "entropy", "--out", str(tmp_path / "out")]
    for extra, flag in ((["--scale", "induced"], "--scale"), (["--scale", "cpu"], "--scale"),
                        (["--scale", "entropy", "--retrain"], "--retrain"),
                        (["--scale", "entropy", "--agents", str(tmp_path / "missing")], "--agents"),
                        (["--scale", "entropy", "--agents", str(pools / "runs" / "ippo_c001")], "--agents")):
        with pytest.raises(SystemExit) as info:
            main([*argv, *extra])
        assert info.value.code == 2 and flag in capsys.readouterr().err
    (tmp_path / "q" / "ippo_c001").mkdir(parents=True)  # a pool of the right name holding a Q-learner
    (tmp_path / "q" / "ippo_c001" / "seed_0").symlink_to(Path(__file__).resolve().parents[4] / "results/induced/agents/sp/seed_0")
    with pytest.raises(SystemExit):
        main([*argv, "--scale", "entropy", "--agents", str(tmp_path / "q")])
    assert "has [network] head 'q', not 'policy'" in capsys.readouterr().err and not (tmp_path / "out").exists()  # refused before --out


def test_recurrent_agents_are_refused_before_any_game(tmp_path: Path) -> None:
    from eqc.domains.hanabi.reproduce.entropy import check_entropy_pools
    from tests.domains.hanabi.conftest import tiny_config

    config = tiny_config(run={"algorithm": "ippo", "total_moves": 512, "eval_every_moves": 512}, network={"lstm_layers": 1},
                         ppo={"rollout_steps": 8, "epochs": 1, "minibatches": 2})
    train(config, tmp_path / "run", seed=0, **QUIET)
    export_policy(tmp_path / "run", tmp_path / "agents" / "ippo_c005" / "seed_0")
    with pytest.raises(ValueError, match="is recurrent: the entropy report measures how equivariant feed-forward agents are"):
        check_entropy_pools(ippo_pools("entropy", tmp_path / "agents"))
