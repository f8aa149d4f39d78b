"""Cross-play of trained agents on ``HanabiBatch``: equal to HLE game for game, to greedy self-play, and to
``eqc.evaluation.cross_play``; pools, files, action matrices and bad arguments."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi import load_policy
from eqc.domains.hanabi.play.hle import common_decks
from eqc.domains.hanabi.play.self_play import greedy_games
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.run import train
from eqc.domains.hanabi.xp import (
    HLEMismatchError,
    PoolError,
    action_matrices,
    cross_play_games,
    describe_policy,
    load_pools,
    plot_action_matrices,
    pool_runs,
    verify_hle,
    write_xp,
)
from eqc.evaluation import GameResults, cross_play

CPU = torch.device("cpu")

# Trained a little (plain, untrained nets bomb out at once), in fp32 on every processor: HLE replays batched games move for
# move, which bf16's batch-dependent rounding need not.
PQN = TrainConfig().replace(
    run={"num_envs": 128, "total_moves": 40_960, "eval_every_moves": 40_960, "eval_games": 16, "checkpoint_minutes": 10.0},
    network={"hidden_size": 64, "mlp_layers": 1, "precision": "fp32"},
    optim={"lr": 3e-3},
    pqn={"rollout_steps": 8, "epochs": 1, "minibatches": 2, "eps_start": 0.3, "eps_decay_moves": 10_000},
)
R2D2 = TrainConfig().replace(
    run={"algorithm": "r2d2", "num_envs": 32, "total_moves": 3_000, "eval_every_moves": 3_000, "eval_games": 16},
    network={"hidden_size": 32, "mlp_layers": 1, "lstm_layers": 1, "layer_norm": False, "precision": "fp32"},
    optim={"optimizer": "adam", "lr": 3e-3, "adam_eps": 1.5e-5, "grad_clip": 5.0},
    r2d2={"batch_size": 8, "buffer_episodes": 256, "warmup_episodes": 32, "updates_per_step": 1.0},
)


@pytest.fixture(scope="module")
def pools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``pqn``: a pool of two feed-forward agents; ``r2d2``: one LSTM agent; ``sad``: an LSTM agent reading SAD observations."""
    root = tmp_path_factory.mktemp("pools")
    quiet = {"progress": False, "log": lambda _: None}
    for seed in (0, 1):
        train(PQN, root / "pqn" / f"seed_{seed}", seed=seed, **quiet)
    train(R2D2, root / "r2d2" / "seed_0", seed=0, **quiet)
    train(R2D2.replace(game={"sad": "greedy_last_action"}), root / "sad" / "seed_0", seed=0, **quiet)
    return {"pqn": root / "pqn", "r2d2": root / "r2d2" / "seed_0", "sad": root / "sad" / "seed_0"}


@pytest.fixture(scope="module")
def mixed(pools: dict[str, Path]) -> list:
    """Plain and symmetrized, feed-forward and recurrent agents of one observation variant."""
    return [
        load_policy(pools["pqn"] / "seed_0"),
        load_policy(pools["pqn"] / "seed_1"),
        load_policy(pools["pqn"] / "seed_0", symmetrize="C5"),
        load_policy(pools["r2d2"]),
        load_policy(pools["r2d2"], symmetrize="D10"),
    ]


@pytest.fixture(scope="module")
def played(mixed: list):
    return cross_play_games(mixed, 40, deck_seed=3, record_moves=8, num_envs=64)


def test_cross_play_replays_in_hle_game_for_game(mixed: list, played) -> None:
    """Every pair (self-play too) on the same decks, seats alternating: HLE makes the same moves and scores."""
    pytest.importorskip("hanabi_learning_environment")
    assert verify_hle(played, mixed, 5) == 5 * 25
    assert int((played.moves[:, :, :5] >= 0).sum()) > 5 * 5 * 25  # games of several moves (how well they score is not the point)


def test_self_play_pairs_equal_greedy_games(mixed: list, played) -> None:
    for a, policy in enumerate(mixed):
        alone = greedy_games(policy.agent, policy.rules, CPU, decks=played.decks)
        p = a * len(mixed) + a
        assert played.pairs[p] == (a, a)
        assert torch.equal(alone.scores, played.scores[p]), a
        assert torch.equal(alone.bombed_out, played.bombed_out[p]), a
        steps = alone.moves.shape[0]
        assert torch.equal(alone.moves[:, :8], played.moves[p, :steps]) and bool((played.moves[p, steps:] == -1).all())


def test_batching_does_not_change_a_game(mixed: list, played) -> None:
    again = cross_play_games(mixed, 40, deck_seed=3, record_moves=8, num_envs=170)  # chunks cut through pairs
    assert torch.equal(again.scores, played.scores) and torch.equal(again.moves[:, : played.moves.shape[1]], played.moves)
    other = cross_play_games(mixed[:2], 40, deck_seed=4)
    assert not torch.equal(other.decks, played.decks)


def test_summary_is_cross_play_of_the_pair_scores(played) -> None:
    summary = played.summary()
    a = played.num_agents

    def pair(i: int, j: int) -> GameResults:
        scores = played.scores[i * a + j]
        return GameResults(scores.double(), played.bombed_out[i * a + j], scores == 25)

    expected = cross_play(list(range(a)), pair)
    assert summary.as_dict() == expected.as_dict()
    means = played.scores.double().mean(1).view(a, a)
    off = ~torch.eye(a, dtype=torch.bool)
    assert summary.xp.mean == pytest.approx(float(means[off].mean()))
    assert summary.xp.sem == pytest.approx(float(means[off].std() / math.sqrt(a * (a - 1))))
    assert summary.xp_bomb_out_rate == pytest.approx(float(played.bombed_out.view(a, a, -1)[off].double().mean()))
    xp_scores = played.scores.view(a, a, -1)[off].flatten()
    assert played.mean_nonzero() == pytest.approx(float(xp_scores[xp_scores > 0].double().mean()))


def test_agents_of_different_observation_variants(pools: dict[str, Path], mixed: list) -> None:
    """A SAD agent and a plain one each read their own HanabiBatch, stepped in lockstep."""
    sad = load_policy(pools["sad"])
    games = cross_play_games([mixed[0], sad], 30, record_moves=2)
    alone = greedy_games(sad.agent, sad.rules, CPU, decks=games.decks)
    assert torch.equal(alone.scores, games.scores[3])
    with pytest.raises(ValueError, match="different observations"):
        verify_hle(games, [mixed[0], sad], 2)


def test_verify_hle_fails_loudly_on_a_difference(mixed: list, played) -> None:
    pytest.importorskip("hanabi_learning_environment")
    scores = played.scores.clone()
    scores[6, 3] += 1  # pair (1, 1), game 3
    with pytest.raises(HLEMismatchError, match=r"pair \(agent 1, agent 1\), game 3 .*HanabiBatch scored"):
        verify_hle(dataclasses.replace(played, scores=scores), mixed, 8)
    moves = played.moves.clone()
    moves[1, 2, 5] = (moves[1, 2, 5] + 1) % 20  # pair (0, 1), game 5, third move
    with pytest.raises(HLEMismatchError, match=r"pair \(a, b\), game 5 .*moves differ from move 2"):
        verify_hle(dataclasses.replace(played, moves=moves), mixed, 8, names=["a", "b", "c", "d", "e"])


def test_verify_hle_replays_through_play_games(monkeypatch: pytest.MonkeyPatch, mixed: list, played) -> None:
    """A replay that HLE scored differently (here: play_games patched to add a point) is caught."""
    pytest.importorskip("hanabi_learning_environment")
    from eqc.domains.hanabi.xp import verify

    real = verify.play_games

    def off_by_one(*args, **kwargs):
        games = real(*args, **kwargs)
        return dataclasses.replace(games, scores=games.scores + 1)

    monkeypatch.setattr(verify, "play_games", off_by_one)
    with pytest.raises(HLEMismatchError, match=r"pair \(agent 0, agent 0\), game 0"):
        verify_hle(played, mixed, 1)


def test_files_are_written_and_describe_themselves(tmp_path: Path, pools: dict[str, Path]) -> None:
    agents = load_pools([pools["pqn"], pools["r2d2"]], symmetrize=[None, "D10"])
    games = cross_play_games([a.policy for a in agents], 12, deck_seed=5)
    described = [{"name": a.name, **describe_policy(a.policy, a.path, a.symmetrize)} for a in agents]
    paths = write_xp(tmp_path / "xp", games, described, extra={"command": ["eqc", "hanabi", "xp"]})
    record = json.loads(paths["json"].read_text())
    assert record["format"] == "eqc-hanabi-xp" and record["games_per_pair"] == 12 and record["deck_seed"] == 5
    assert set(record["versions"]) == {"eqc", "torch"} and record["command"] == ["eqc", "hanabi", "xp"]
    assert [a["path"] for a in record["agents"]] == [str(pools["pqn"] / "seed_0"), str(pools["pqn"] / "seed_1"), str(pools["r2d2"])]
    assert [a["symmetrize"] for a in record["agents"]] == [None, None, "D10"]
    assert record["agents"][2]["group"] == {"name": "D10", "order": 10} and record["agents"][2]["hidden_scheme"] == "average"
    summary = games.summary()
    assert record["summary"]["xp_mean"] == pytest.approx(summary.xp.mean) and record["summary"]["xp_pairs"] == 6
    assert record["matrix"]["mean"] == summary.mean.tolist()
    with paths["csv"].open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 9 and [r["kind"] for r in rows].count("xp") == 6
    assert rows[5]["first_name"] == "pqn/seed_1" and rows[5]["second_name"] == "r2d2/seed_0[D10]"
    assert float(rows[5]["mean"]) == pytest.approx(float(games.scores[5].double().mean())) and rows[5]["games"] == "12"
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in (tmp_path / "xp").iterdir()) == ["xp.csv", "xp.json", "xp.png"]  # no temporary files


def test_pools(tmp_path: Path, pools: dict[str, Path]) -> None:
    assert pool_runs(pools["pqn"]) == [pools["pqn"] / "seed_0", pools["pqn"] / "seed_1"]
    assert pool_runs(pools["r2d2"]) == [pools["r2d2"]] and pool_runs(pools["r2d2"] / "checkpoint.pt") == [pools["r2d2"] / "checkpoint.pt"]
    agents = load_pools([pools["pqn"], pools["r2d2"]], symmetrize="C5")
    assert [a.name for a in agents] == ["pqn/seed_0[C5]", "pqn/seed_1[C5]", "r2d2/seed_0[C5]"]
    assert all(a.policy.agent.group.order == 5 for a in agents)
    with pytest.raises(PoolError, match="no agent directories"):
        load_pools([tmp_path])
    (tmp_path / "seed_0").mkdir()
    with pytest.raises(PoolError, match=r"seed_0 hold neither checkpoint\.pt nor policy\.json"):
        load_pools([tmp_path])
    (tmp_path / "seed_0" / "checkpoint.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(PoolError, match="not a readable eqc checkpoint"):
        load_pools([tmp_path])
    with pytest.raises(PoolError, match="listed twice"):
        load_pools([pools["pqn"], pools["pqn"] / "seed_1"])
    with pytest.raises(ValueError, match="one per pool"):
        load_pools([pools["pqn"]], symmetrize=["C5", "D10"])
    with pytest.raises(ValueError, match="symmetrize must be one of"):
        load_pools([pools["pqn"]], symmetrize="Z5")


def test_bad_arguments(mixed: list, played) -> None:
    with pytest.raises(ValueError, match="at least 2 agents"):
        cross_play_games(mixed[:1], 10)
    with pytest.raises(TypeError, match=r"policies\[1\] must be a TrainedPolicy"):
        cross_play_games([mixed[0], mixed[1].agent], 10)
    with pytest.raises(TypeError, match="policies must be a list"):
        cross_play_games(mixed[0], 10)
    with pytest.raises(ValueError, match="games must be in"):
        cross_play_games(mixed, 0)
    with pytest.raises(TypeError, match="games must be a Python int"):
        cross_play_games(mixed, 10.0)
    with pytest.raises(ValueError, match="record_moves must be in"):
        cross_play_games(mixed, 10, record_moves=11)
    with pytest.raises(ValueError, match="k must be in"):
        verify_hle(played, mixed, 41)
    with pytest.raises(ValueError, match="record_moves >= 9"):
        verify_hle(played, mixed, 9)
    with pytest.raises(ValueError, match="the 5 TrainedPolicy"):
        verify_hle(played, mixed[:2], 1)
    with pytest.raises(TypeError, match="games must be XPGames"):
        write_xp("/nonexistent", played.scores, [])
    with pytest.raises(ValueError, match="one description"):
        write_xp("/nonexistent", played, [{}])


def test_action_matrices(tmp_path: Path, mixed: list) -> None:
    result = action_matrices(mixed[0], 60, deck_seed=2)
    assert result.labels[:6] == ("C1", "C2", "C3", "C4", "C5", "R1") and result.labels[10] == "P1" and result.labels[-1] == "D5"
    assert list(result.matrices) == ["none", "C5", "D10"]
    alone = greedy_games(mixed[0].agent, mixed[0].rules, CPU, decks=torch.tensor(common_decks(60, mixed[0].rules, 2)))
    moves = alone.moves
    counts = torch.zeros(20, 20, dtype=torch.long)
    for t in range(1, moves.shape[0]):
        ok = (moves[t - 1] >= 0) & (moves[t] >= 0)
        counts.index_put_((moves[t - 1][ok], moves[t][ok]), torch.ones(int(ok.sum()), dtype=torch.long), accumulate=True)
    order = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4]
    assert torch.equal(result.counts["none"], counts[order][:, order])
    assert result.scores["none"] == pytest.approx(float(alone.scores.double().mean()))
    seen = result.counts["C5"].sum(1) > 0
    assert torch.allclose(result.matrices["C5"][seen].sum(1), torch.ones(int(seen.sum()), dtype=torch.float64))
    assert not torch.equal(result.counts["none"], result.counts["D10"])  # the symmetrized agent plays differently
    plot_action_matrices(result, tmp_path / "a.png")
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads(json.dumps(result.as_dict()))["labels"][0] == "C1"
    with pytest.raises(ValueError, match=r"groups\[...\] must be one of"):
        action_matrices(mixed[0], 10, groups=["C7"])
    with pytest.raises(TypeError, match="policy must be a TrainedPolicy"):
        action_matrices(mixed[0].agent, 10)


def test_a_wrapped_agent_is_described_by_the_agent_it_wraps(pools: dict[str, Path]) -> None:
    """An averaged (or any wrapped) agent is described as the agent it acts through, with its wrappers named."""
    from eqc.domains.hanabi.agent.policy import TrainedPolicy
    from eqc.domains.hanabi.symmetry import colour_symmetry
    from eqc.domains.hanabi.xp.relabelled import AveragedAgent
    from eqc.groups import symmetric

    plain = load_policy(pools["pqn"] / "seed_0")
    symmetry = colour_symmetry(symmetric(plain.rules.num_colours), plain.rules)
    averaged = TrainedPolicy(AveragedAgent(plain.agent, symmetry, (0, 1)), plain.spec, plain.trained_moves, plain.device,
                             plain.trained_with)
    described = describe_policy(averaged, pools["pqn"] / "seed_0")
    assert described == {**describe_policy(plain, pools["pqn"] / "seed_0"), "wrapped_by": ["AveragedAgent"]}
