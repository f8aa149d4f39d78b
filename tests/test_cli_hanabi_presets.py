"""``eqc hanabi`` on a game other than the full one: every command carries the game of the agents (here
jax-aht's Mini-Hanabi, 3 colours x 3 ranks) and refuses agents of different games or colour groups of
another number of colours, naming the flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eqc.cli import main
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.config import TrainConfig

TINY = TrainConfig().replace(
    run={"num_envs": 32, "total_moves": 2048, "eval_every_moves": 1024, "eval_games": 16},
    network={"hidden_size": 32, "mlp_layers": 1},
    pqn={"epochs": 1, "minibatches": 1},
)
MINI = ["--set", "game.preset=mini"]
MINI_RULES = HanabiRules.preset("mini")


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], flag: str, fragment: str) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and f"argument {flag}" in err and fragment in err, err


@pytest.fixture(scope="module")
def pools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mini/seed_{0,1}``: tiny Mini-Hanabi agents trained by ``eqc hanabi train`` (seed 1 with Other-Play over S3);
    ``full/seed_0``: a tiny agent of the full game."""
    root = tmp_path_factory.mktemp("presets")
    config = root / "tiny.toml"
    config.write_text(TINY.to_toml())
    train = ["hanabi", "train", "--config", str(config), "--no-progress"]
    assert main([*train, *MINI, "--seed", "0", "--out", str(root / "mini" / "seed_0")]) == 0
    assert main([*train, *MINI, "--set", "rule.objective=op", "--seed", "1", "--out", str(root / "mini" / "seed_1")]) == 0
    assert main([*train, "--seed", "0", "--out", str(root / "full" / "seed_0")]) == 0
    return root


def test_train_and_eval_play_the_preset_in_both_envs(pools: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eqc.domains.hanabi.agent.policy import load_policy

    policy = load_policy(pools / "mini" / "seed_0")
    assert policy.rules == MINI_RULES and policy.trained_moves == 2048
    assert policy.agent.network.obs_dim == MINI_RULES.obs_dim and policy.num_moves == MINI_RULES.num_moves == 12
    results = {}
    for where in ("batched", "hle"):
        argv = ["hanabi", "eval", "--checkpoint", str(pools / "mini" / "seed_0"), "--games", "40", "--json"]
        assert main([*argv, "--hle"] if where == "hle" else argv) == 0
        results[where] = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert results["hle"]["where"] == "HLE" and results["batched"]["where"] == "HanabiBatch"
    same = ("mean", "sem", "bomb_out_rate", "perfect_rate")
    assert [results["hle"][k] for k in same] == [results["batched"][k] for k in same]  # the same games in both envs
    assert 0 <= results["hle"]["mean"] <= MINI_RULES.max_score
    assert main(["hanabi", "eval", "--checkpoint", str(pools / "mini" / "seed_0"), "--games", "8", "--symmetrize", "D6"]) == 0
    assert "symmetrized over D6" in capsys.readouterr().out
    argv = ["hanabi", "eval", "--checkpoint", str(pools / "mini" / "seed_0"), "--games", "8", "--symmetrize", "D10"]
    _usage_error(capsys, argv, "--symmetrize", "colour groups of this game: ['C3', 'D6', 'S3', 'A3', 'C2', 'S2']")


def test_train_refuses_a_group_of_another_number_of_colours(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["hanabi", "train", "--config", "vdn_cpu", *MINI, "--set", "rule.objective=gop", "--out", str(tmp_path / "run")]
    _usage_error(capsys, [*argv, "--set", "rule.group=C5"], "--set", "[rule] group must be a colour group of the game's 3 colours")
    _usage_error(capsys, [*argv, "--set", "game.num_colours=6"], "--set", "[game] num_colours must be in 1..5 (leave it out")


def test_export_records_the_rules_and_loading_rebuilds_them(tmp_path: Path, pools: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eqc.domains.hanabi.agent.policy import load_policy

    shipped = tmp_path / "mini" / "seed_0"
    assert main(["hanabi", "export", "--checkpoint", str(pools / "mini" / "seed_0"), "--out", str(shipped)]) == 0
    capsys.readouterr()
    record = json.loads((shipped / "policy.json").read_text())
    assert record["rules"] == MINI_RULES.to_dict() and record["config"]["game"]["preset"] == "mini"
    assert load_policy(shipped).rules == MINI_RULES


def test_xp_plays_the_preset_and_refuses_mixed_games(tmp_path: Path, pools: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("hanabi_learning_environment")
    out = tmp_path / "xp"
    argv = ["hanabi", "xp", "--pool", str(pools / "mini"), "--games", "12", "--out", str(out)]
    assert main([*argv, "--verify-hle", "2", "--symmetrize", "C3"]) == 0
    assert "12 games per pair" in capsys.readouterr().out  # and every replayed game identical in HLE (else an error)
    record = json.loads((out / "xp.json").read_text())
    assert record["hle_verified_games_per_pair"] == 2 and record["agents"][0]["group"] == {"name": "C3", "order": 3}
    mixed = ["hanabi", "xp", "--pool", str(pools / "mini"), "--pool", str(pools / "full"), "--games", "4", "--out", str(tmp_path / "x")]
    _usage_error(capsys, mixed, "--pool", "plays another game (5 colours x 5 ranks, hand 5) than")


def test_actions_use_the_groups_and_moves_of_the_preset(tmp_path: Path, pools: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "actions"
    assert main(["hanabi", "actions", "--checkpoint", str(pools / "mini" / "seed_0"), "--games", "10", "--out", str(out)]) == 0
    capsys.readouterr()
    record = json.loads((out / "actions.json").read_text())
    assert list(record["matrices"]) == ["none", "C3", "D6"]
    assert record["labels"] == ["C1", "C2", "C3", "R1", "R2", "R3", "P1", "P2", "P3", "D1", "D2", "D3"]
    assert len(record["matrices"]["none"]) == 12


def test_relabelled_draws_from_the_colours_of_the_game(tmp_path: Path, pools: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "relabelled.json"
    argv = ["hanabi", "relabelled", "--pool", str(pools / "mini"), "--elements", "5", "--games", "8"]
    assert main([*argv, "--out", str(out)]) == 0
    assert "relabelled partner" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert record["group"] == "S3" and [len(a["relabelled"]) for a in record["agents"]] == [5, 5]  # S3's 5 non-identity elements
    _usage_error(capsys, [*argv, "--group", "S5"], "--group", "S5 moves 5 colours but the game has 3")
