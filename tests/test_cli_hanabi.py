"""``eqc hanabi``: train, resume, evaluate (also symmetrized), and every bad flag exits 2 naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from eqc.cli import main
from eqc.domains.hanabi.training.config import TrainConfig

TINY = TrainConfig().replace(  # fp32 on every processor: xp --verify-hle replays batched games move for move
    run={"num_envs": 32, "total_moves": 1024, "eval_every_moves": 1024, "eval_games": 16},
    network={"hidden_size": 32, "mlp_layers": 1, "precision": "fp32"},
    pqn={"epochs": 1, "minibatches": 1},
)


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.to_toml())
    return path


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], *fragments: str) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: eqc hanabi" in err
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_train_resume_and_eval(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["hanabi", "train", "--config", str(config_file), "--seed", "1", "--out", str(out), "--no-progress"]) == 0
    assert "1,024 moves" in capsys.readouterr().out
    assert main(["hanabi", "train", "--config", str(config_file), "--seed", "1", "--out", str(out), "--no-progress"]) == 0
    assert "resuming" in capsys.readouterr().out
    assert main(["hanabi", "eval", "--checkpoint", str(out), "--games", "20", "--json"]) == 0
    text = capsys.readouterr().out
    assert "greedy self-play on HanabiBatch" in text and '"games": 20' in text
    assert main(["hanabi", "eval", "--checkpoint", str(out / "checkpoint.pt"), "--games", "20", "--symmetrize", "C5"]) == 0
    assert "symmetrized over C5" in capsys.readouterr().out
    assert main(["hanabi", "eval", "--checkpoint", str(out), "--games", "20", "--deck-seed", "7"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["hanabi", "eval", "--checkpoint", str(out), "--games", "20", "--seed", "7"])  # one spelling: --deck-seed


def test_eval_plays_the_decks_of_the_recorded_deck_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """By default ``eval`` plays the decks of the agent's ``[run] deck_seed`` (those of metrics.csv); a checkpoint
    recorded before the name is refused rather than scored on other decks."""
    from eqc.domains.hanabi.agent.files import load_checkpoint, save_checkpoint

    config, out = tmp_path / "seeded.toml", tmp_path / "run"
    config.write_text(TINY.replace(run={"deck_seed": 7}).to_toml())
    assert main(["hanabi", "train", "--config", str(config), "--seed", "1", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    records = []
    for seed in ([], ["--deck-seed", "7"]):
        assert main(["hanabi", "eval", "--checkpoint", str(out), "--games", "20", "--json", *seed]) == 0
        records.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    assert records[0]["deck_seed"] == 7 and records[0] == records[1]
    data = load_checkpoint(out)
    data["config"]["run"]["eval_seed"] = data["config"]["run"].pop("deck_seed")
    save_checkpoint(out / "checkpoint.pt", {k: data[k] for k in ("config", "seed", "learner", "metrics")})
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(out), "--games", "20"], "--deck-seed", "predates the name")


def test_config_lists_every_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hanabi", "config"]) == 0
    out = capsys.readouterr().out
    assert "[pqn]" in out and "td_lambda = 0.7" in out


def test_bad_flags(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run")
    train = ["hanabi", "train", "--out", out]
    _usage_error(capsys, [*train, "--config", str(tmp_path / "missing.toml")], "--config", "neither a file nor a shipped config")
    bad = tmp_path / "bad.toml"
    bad.write_text("[run]\nnum_envs = -4\n")
    _usage_error(capsys, [*train, "--config", str(bad)], "--config", "[run] num_envs must be >= 1")
    _usage_error(capsys, [*train, "--config", str(config_file), "--max-minutes", "0"], "--max-minutes")
    _usage_error(capsys, [*train, "--config", str(config_file), "--seed", str(2**70)], "--seed")
    _usage_error(capsys, [*train, "--config", str(config_file), "--device", "gpu"], "--device", "cuda")
    if not torch.cuda.is_available():
        _usage_error(capsys, [*train, "--config", str(config_file), "--device", "cuda"], "--device", "CUDA is not available")
    file = tmp_path / "file"
    file.write_text("x")
    _usage_error(capsys, ["hanabi", "train", "--config", str(config_file), "--out", str(file)], "--out", "not a directory")
    assert not (tmp_path / "run").exists()  # nothing was created by a refused command


def test_compile_without_a_compiler_is_a_flag_error(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``[run] compile = true`` on a CPU without a C++ compiler: a usage line naming the key, not a traceback, and nothing
    written, for a single run and for ``--seeds``."""
    import torch._inductor.cpp_builder as builder

    def missing() -> str:
        raise RuntimeError("no compiler")

    monkeypatch.setattr(builder, "get_cpp_compiler", missing)
    out = tmp_path / "run"
    for seeds in ([], ["--seeds", "0-1"]):
        _usage_error(capsys, ["hanabi", "train", "--config", str(config_file), "--set", "run.compile=true", "--out", str(out), *seeds],
                     "--device", "[run] compile = true", "C++ compiler")
    assert not out.exists()


def test_out_of_another_config_is_refused(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run")
    assert main(["hanabi", "train", "--config", str(config_file), "--out", out, "--no-progress"]) == 0
    other = tmp_path / "other.toml"
    other.write_text(TINY.replace(optim={"lr": 0.1}).to_toml())
    _usage_error(capsys, ["hanabi", "train", "--config", str(other), "--out", out], "--out", "[optim] lr")


def test_eval_refuses_foreign_checkpoints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    foreign = tmp_path / "model0.pt"
    torch.save({"net.0.weight": torch.ones(2)}, foreign)
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(foreign)], "--checkpoint", "not an eqc Hanabi checkpoint")
    torch.save({"net.0.weight": torch.ones(2)}, tmp_path / "model0.pthw")  # read as what its name says: an OBL file
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(tmp_path / "model0.pthw")], "--checkpoint",
                 "expected the state dict of off-belief-learning")
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(tmp_path / "none")], "--checkpoint", "no checkpoint")


@pytest.fixture(scope="module")
def xp_pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pool ``seed_0/``, ``seed_1/`` of two tiny agents, and ``single/`` a run directory of a third."""
    from eqc.domains.hanabi.training.run import train

    root = tmp_path_factory.mktemp("xp_pool")
    for seed, run in ((0, "pool/seed_0"), (1, "pool/seed_1"), (2, "single")):
        train(TINY, root / run, seed=seed, progress=False, log=lambda _: None)
    return root


def test_xp_writes_results_and_checks_hle(tmp_path: Path, xp_pool: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    pytest.importorskip("hanabi_learning_environment")
    out = tmp_path / "xp"
    argv = ["hanabi", "xp", "--pool", str(xp_pool / "pool"), "--pool", str(xp_pool / "single"), "--games", "16", "--out", str(out)]
    assert main([*argv, "--verify-hle", "2", "--symmetrize", "trained", "--symmetrize", "C5"]) == 0
    text = capsys.readouterr().out
    assert "3 agents, 16 games per pair" in text and "XP " in text and "18 games replayed in HLE: identical" in text
    record = json.loads((out / "xp.json").read_text())
    assert [a["name"] for a in record["agents"]] == ["pool/seed_0", "pool/seed_1", f"{xp_pool.name}/single[C5]"]
    assert record["games_per_pair"] == 16 and record["hle_verified_games_per_pair"] == 2
    assert record["command"] == ["eqc", *argv, "--verify-hle", "2", "--symmetrize", "trained", "--symmetrize", "C5"]  # as typed
    assert len((out / "xp.csv").read_text().splitlines()) == 1 + 9 and (out / "xp.png").stat().st_size > 1000
    assert main([*argv[:-2], "--out", str(tmp_path / "xp2"), "--symmetrize", "D10"]) == 0  # one group for every pool
    assert json.loads((tmp_path / "xp2" / "xp.json").read_text())["agents"][0]["symmetrize"] == "D10"


def test_actions_writes_the_three_matrices(tmp_path: Path, xp_pool: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    out = tmp_path / "actions"
    assert main(["hanabi", "actions", "--checkpoint", str(xp_pool / "single"), "--games", "20", "--out", str(out)]) == 0
    assert "self-play scores: unsymmetrized" in capsys.readouterr().out
    record = json.loads((out / "actions.json").read_text())
    assert list(record["matrices"]) == ["none", "C5", "D10"] and record["labels"][:2] == ["C1", "C2"] and record["games"] == 20
    assert (out / "actions.png").read_bytes()[:4] == b"\x89PNG"
    pinned = tmp_path / "actions_fp32"
    argv = ["hanabi", "actions", "--checkpoint", str(xp_pool / "single"), "--games", "4", "--out", str(pinned), "--precision", "fp32"]
    assert main(argv) == 0
    assert json.loads((pinned / "actions.json").read_text())["precision"] == "fp32"  # the precision it ran in, as asked


def test_xp_and_actions_bad_flags(tmp_path: Path, xp_pool: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = ["--out", str(tmp_path / "out")]
    pool = ["--pool", str(xp_pool / "pool")]
    xp = ["hanabi", "xp", "--games", "4", *out]
    _usage_error(capsys, [*xp, "--pool", str(tmp_path)], "--pool", "no agent directories seed_<n>/")
    (tmp_path / "foreign" / "seed_0").mkdir(parents=True)
    (tmp_path / "foreign" / "seed_0" / "checkpoint.pt").write_text("hello")
    _usage_error(capsys, [*xp, "--pool", str(tmp_path / "foreign")], "--pool", "not a readable eqc checkpoint")
    _usage_error(capsys, [*xp, "--pool", str(xp_pool / "single")], "--pool", "at least 2 agents")
    _usage_error(capsys, [*xp, *pool, *pool], "--pool", "listed twice")
    _usage_error(capsys, [*xp, *pool, "--symmetrize", "C7"], "--symmetrize", "invalid choice")
    _usage_error(capsys, [*xp, *pool, "--symmetrize", "C5", "--symmetrize", "D10"], "--symmetrize", "one per --pool (1)")
    _usage_error(capsys, [*xp, *pool, "--verify-hle", "5"], "--verify-hle", "at most --games (4)")
    _usage_error(capsys, [*xp, *pool, "--verify-hle", "-1"], "--verify-hle")
    _usage_error(capsys, ["hanabi", "xp", "--games", "0", *pool, *out], "--games")
    _usage_error(capsys, ["hanabi", "xp", "--games", "4", *out], "--pool")
    _usage_error(capsys, [*xp, *pool, "--device", "gpu"], "--device")
    _usage_error(capsys, ["hanabi", "actions", "--checkpoint", str(tmp_path / "nothing"), *out], "--checkpoint", "no checkpoint")
    _usage_error(capsys, ["hanabi", "actions", "--checkpoint", str(xp_pool / "single"), "--games", "0", *out], "--games")
    assert not (tmp_path / "out").exists()  # nothing was written by a refused command


def test_export_and_relabelled_self_play(tmp_path: Path, xp_pool: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    shipped = tmp_path / "agents" / "sp" / "seed_0"
    assert main(["hanabi", "export", "--checkpoint", str(xp_pool / "pool" / "seed_0"), "--out", str(shipped)]) == 0
    assert "policy.safetensors" in capsys.readouterr().out and (shipped / "policy.json").is_file()
    out = tmp_path / "relabelled.json"
    argv = ["hanabi", "relabelled", "--pool", str(shipped.parent), "--pool", str(xp_pool / "single"), "--elements", "3", "--games", "12"]
    assert main([*argv, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "sp/seed_0" in text and "relabelled partner" in text and "colour hints" in text
    record = json.loads(out.read_text())
    assert [len(a["relabelled"]) for a in record["agents"]] == [3, 3] and record["games"] == 12
    assert record["command"] == ["eqc", *argv, "--out", str(out)] and record["deck_seed"] == 1
    _usage_error(capsys, [*argv[:-4], "--elements", "0"], "--elements")
    _usage_error(capsys, [*argv, "--out", str(tmp_path)], "--out", "JSON file path")
    _usage_error(capsys, ["hanabi", "relabelled", "--pool", str(tmp_path / "none")], "--pool")
    _usage_error(capsys, ["hanabi", "export", "--checkpoint", str(tmp_path / "none"), "--out", str(tmp_path / "e")], "--checkpoint")


def test_export_refuses_to_overwrite_and_a_refusal_leaves_nothing(
    tmp_path: Path, xp_pool: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, other = xp_pool / "pool" / "seed_0", tmp_path / "other"
    assert main(["hanabi", "export", "--checkpoint", str(xp_pool / "pool" / "seed_1"), "--out", str(other)]) == 0
    before = {p.name: p.read_bytes() for p in other.iterdir()}
    _usage_error(capsys, ["hanabi", "export", "--checkpoint", str(run), "--out", str(other)],
                 "argument --out: out", "is another agent's policy directory", "export never overwrites files")
    assert {p.name: p.read_bytes() for p in other.iterdir()} == before
    _usage_error(capsys, ["hanabi", "export", "--checkpoint", str(run), "--out", str(run)], "argument --out", "is the run directory itself")
    assert not (run / "policy.json").exists()
    _usage_error(capsys, ["hanabi", "export", "--checkpoint", str(tmp_path / "none"), "--out", str(tmp_path / "e")], "--checkpoint")
    assert not (tmp_path / "e").exists()  # no empty --out left behind
    config = tmp_path / "tiny.toml"
    config.write_text(TINY.to_toml())
    _usage_error(capsys, ["hanabi", "train", "--config", str(config), "--out", str(other), "--no-progress"],
                 "argument --out", "is a policy directory", "would overwrite its metrics.csv")
    assert {p.name: p.read_bytes() for p in other.iterdir()} == before
    (other / "policy.json").write_text((other / "policy.json").read_text().replace('"moves": ', '"moves": -'))
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(other)], "argument --checkpoint", "was edited after export")
    out = tmp_path / "relabelled.json"
    _usage_error(capsys, ["hanabi", "relabelled", "--pool", str(other), "--out", str(out)], "argument --pool", "was edited after export")
    assert not out.exists()


def test_relabelled_checks_every_flag_before_it_plays_or_writes(tmp_path: Path, xp_pool: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each refusal leaves --out's directory as it was; an agent listed twice gets relabelled's own reason."""
    results = tmp_path / "results"
    results.mkdir()
    argv = ["hanabi", "relabelled", "--pool", str(xp_pool / "pool"), "--elements", "1", "--games", "2", "--out", str(results / "r.json")]
    err = _usage_error(capsys, [*argv, "--pool", str(xp_pool / "pool" / "seed_1")], "argument --pool", "is listed twice",
                       "relabelled self-play already plays each agent with copies of itself; list it once")
    assert "cross-play" not in err
    _usage_error(capsys, [*argv[:-1], str(results)], "argument --out", "JSON file path")
    _usage_error(capsys, [*argv[:-1], str(results / "missing" / "r.json")], "argument --out", "JSON file path")
    _usage_error(capsys, [*argv, "--precision", "half"], "argument --precision")
    _usage_error(capsys, [*argv[:3], str(tmp_path / "none"), *argv[4:]], "argument --pool")
    assert list(results.iterdir()) == []  # nothing written, no lock or temporary file left


def test_reproduce_refuses_agents_that_do_not_load_before_out_is_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before, a broken policy among --agents was found after --out had been created (left empty)."""
    import shutil

    shipped = Path(__file__).resolve().parents[1] / "results" / "cpu" / "agents" / "op"
    if not shipped.is_dir():
        pytest.skip("the shipped agents come with a clone of the repository")
    agents = tmp_path / "agents" / "op"
    for seed in (0, 1):
        shutil.copytree(shipped / f"seed_{seed}", agents / f"seed_{seed}")
    record = json.loads((agents / "seed_1" / "policy.json").read_text())
    (agents / "seed_1" / "policy.json").write_text(json.dumps({**record, "moves": 1}))  # edited after export
    out = tmp_path / "out"
    _usage_error(capsys, ["hanabi", "reproduce", "table1", "--scale", "cpu", "--agents", str(tmp_path / "agents"), "--out", str(out)],
                 "argument --agents", "was edited after export")
    assert not out.exists()


@pytest.mark.parametrize("override", ["=1", "run.", "game=3", "run.num_envs=16\n[game]\nnum_players = 3"])
def test_a_malformed_set_is_blamed_on_set(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str], override: str) -> None:
    for command in (["train"], ["pool", "--seeds", "0", "--no-ray"]):
        _usage_error(capsys, ["hanabi", *command, "--config", str(config_file), "--set", override, "--out", str(tmp_path / "x")],
                     "argument --set: override")
    assert not (tmp_path / "x").exists()


def test_train_by_shipped_name_with_set_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    out = tmp_path / "run"
    tiny = ["--set", "run.num_envs=32", "--set", "run.total_moves=1024", "--set", "run.eval_every_moves=1024",
            "--set", "run.eval_games=16", "--set", "network.hidden_size=32", "--set", "network.mlp_layers=1"]
    assert main(["hanabi", "train", "--config", "vdn_cpu", *tiny, "--out", str(out), "--no-progress"]) == 0
    saved = json.loads((out / "config.json").read_text())["config"]
    assert saved["run"]["num_envs"] == 32 and saved["network"]["hidden_size"] == 32 and saved["pqn"]["td_lambda"] == 0.8
    _usage_error(capsys, ["hanabi", "train", "--config", "vdn_cpu", "--set", "run.num_envz=3", "--out", str(tmp_path / "x")],
                 "--set", "unknown key 'num_envz'")
    _usage_error(capsys, ["hanabi", "train", "--config", "vdn_kpu", "--out", str(tmp_path / "x")], "--config", "shipped config")
    _usage_error(capsys, ["hanabi", "train", "--config", str(tmp_path), "--out", str(tmp_path / "x")], "--config", "is a directory")
    _usage_error(capsys, ["hanabi", "reproduce", "table1", "--scale", "cpu", "--out", str(tmp_path / "x"), "--set", "run.num_envs=8"],
                 "--set", "--retrain")
    assert not (tmp_path / "x").exists()


def _train_symmetrized(tmp_path: Path, group: str, capsys: pytest.CaptureFixture[str]) -> Path:
    """A tiny run trained symmetrized over ``group``, its output swallowed."""
    config = tmp_path / "sym.toml"
    config.write_text(TINY.replace(network={"symmetrize": group}).to_toml())
    out = tmp_path / "run"
    assert main(["hanabi", "train", "--config", str(config), "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    return out


def test_eval_refuses_another_group_for_an_agent_trained_symmetrized(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _train_symmetrized(tmp_path, "C5", capsys)
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(out), "--symmetrize", "D10"], "--symmetrize", "trained symmetrized over C5")
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(out), "--games", "1"], "--games")
    _usage_error(capsys, ["hanabi", "eval", "--checkpoint", str(out), "--device", "meta"], "--device", "'cpu' or 'cuda[:i]'")


def test_symmetrize_none_is_as_trained_and_another_group_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``symmetrize=None`` (``xp --symmetrize trained``, the default) plays an agent as trained: an agent trained
    symmetrized keeps its group; another group is refused, and the former sentinel "none" is no group name."""
    from eqc.domains.hanabi.agent.policy import load_policy

    run = _train_symmetrized(tmp_path, "C5", capsys)
    assert load_policy(run).agent.group == load_policy(run, symmetrize="C5").agent.group is not None
    with pytest.raises(ValueError, match=r"symmetrize='D10': .* was trained symmetrized over C5 and stays so"):
        load_policy(run, symmetrize="D10")
    with pytest.raises(ValueError, match="symmetrize"):
        load_policy(run, symmetrize="none")
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "seed_0").symlink_to(run)
    _usage_error(capsys, ["hanabi", "xp", "--pool", str(pool), "--games", "2", "--symmetrize", "D10", "--out", str(tmp_path / "xp")],
                 "--pool", "trained symmetrized over C5")


def test_actions_of_an_agent_trained_symmetrized_show_the_agent_as_trained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before, the bare network was labelled "unsymmetrized" and the network over C5 "C5": neither is the trained agent."""
    import json

    from eqc.domains.hanabi.agent.policy import load_policy
    from eqc.domains.hanabi.play.hle import common_decks
    from eqc.domains.hanabi.play.self_play import greedy_games
    from eqc.domains.hanabi.xp import action_matrices

    run = _train_symmetrized(tmp_path, "D10", capsys)
    assert main(["hanabi", "actions", "--checkpoint", str(run), "--games", "12", "--out", str(tmp_path / "actions")]) == 0
    assert "self-play scores: D10-symmetrized (as trained)" in capsys.readouterr().out
    record = json.loads((tmp_path / "actions" / "actions.json").read_text())
    assert list(record["matrices"]) == ["D10"] and record["trained"] == "D10"
    policy = load_policy(run)
    decks = torch.tensor(common_decks(12, policy.rules, 1), dtype=torch.long)
    as_trained = greedy_games(policy.agent, policy.rules, policy.device, decks=decks)
    assert record["scores"]["D10"] == float(as_trained.scores.double().mean())
    with pytest.raises(ValueError, match="trained symmetrized over D10 and stays so; symmetrizing over C5 would replace its group"):
        action_matrices(policy, 4, groups=["C5"])
    with pytest.raises(ValueError, match="trained symmetrized over D10"):
        action_matrices(policy, 4, groups=["D10", "C5"])


@pytest.mark.parametrize("command", [["hanabi"], *(["hanabi", c] for c in ("train", "relabelled", "pool", "reproduce"))])
def test_help_is_plain_text(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*command, "--help"])
    text = capsys.readouterr().out
    assert info.value.code == 0 and text.startswith("usage: eqc")
    assert "``" not in text and ":mod:" not in text and ":func:" not in text


# ``eqc hanabi train --seeds``: the seeds trained in one process into ``OUT/seed_<n>/``; every bad use exits 2 naming the
# flag, before anything is written.
def test_train_seeds_writes_one_run_per_seed(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pool"
    argv = ["hanabi", "train", "--config", str(config_file), "--seeds", "0,2", "--device", "cpu", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "seed 0: 1,024 moves" in text and "seed 2: 1,024 moves" in text and "pool.json" in text
    assert sorted(p.name for p in out.iterdir()) == ["pool.json", "seed_0", "seed_2"]
    for seed in (0, 2):
        assert json.loads((out / f"seed_{seed}" / "config.json").read_text())["seed"] == seed
        assert (out / f"seed_{seed}" / "checkpoint.pt").is_file() and (out / f"seed_{seed}" / "metrics.csv").is_file()
    assert main(argv) == 0  # run again: every seed resumes
    assert "resuming" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("seeds", "message"),
    [("7-0", "seed range '7-0' is empty"), ("a", "must look like '0-9'"), ("", "must look like '0-9'"),
     ("0-3,2", "seed 2 is named twice"), ("1,1", "seed 1 is named twice"),
     ("0-9999", "seeds in one process must number 1 to 64, got 10000")],
)
def test_train_refuses_bad_seeds(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str], seeds: str, message: str) -> None:
    _usage_error(capsys, ["hanabi", "train", "--config", str(config_file), f"--seeds={seeds}", "--out", str(tmp_path / "x")],
                 "usage: eqc hanabi train", "argument --seeds:", message)
    assert not (tmp_path / "x").exists()


def test_train_refuses_seed_with_seeds_and_what_it_cannot_batch(tmp_path: Path, config_file: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "x")
    for seed in ("0", "3"):  # the default value too: --seed given at all is refused
        _usage_error(capsys, ["hanabi", "train", "--config", str(config_file), "--seed", seed, "--seeds", "0-1", "--out", out],
                     "argument --seeds: not allowed with argument --seed")
    seeds = ["hanabi", "train", "--config", str(config_file), "--seeds", "0-1", "--out", out]
    _usage_error(capsys, [*seeds, "--set", "run.algorithm=ippo"], "argument --seeds: [run] algorithm must be 'pqn'")
    _usage_error(capsys, [*seeds, "--set", "network.lstm_layers=1"], "argument --seeds: [network] lstm_layers must be 0")
    assert not (tmp_path / "x").exists()


def test_symmetries_learn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two shipped Mini-Hanabi agents, colour x slot permutations: every candidate measured, the group written once."""
    agents = [Path("results/touched/agents/sp/stream_1/slots_012"), Path("results/touched/agents/sp/stream_1/slots_021")]
    out = tmp_path / "group.json"
    argv = ["hanabi", "symmetries", "learn", *[x for a in agents for x in ("--pool", str(a))], "--labels", "colour", "slot",
            "--tolerance", "0.5", "--games", "8", "--out", str(out)]
    assert main(argv) == 0
    assert "candidate group on colour(3), slot(3): 36 elements" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert len(record["candidates"]) == 36 and record["context"]["games"] == 8 and len(record["context"]["pool"]) == 2
    assert len(record["members"]) == len(record["group"]) and record["group"][0] == list(range(6))
    _usage_error(capsys, argv, "--out", "exists")
    base = ["hanabi", "symmetries", "learn", "--pool", str(agents[0]), "--out", str(tmp_path / "new.json")]
    _usage_error(capsys, [*base, "--labels", "colour", "colour", "--tolerance", "0.5"], "--labels", "twice")
    _usage_error(capsys, [*base, "--labels", "suit", "--tolerance", "0.5"], "--labels")
    _usage_error(capsys, [*base, "--labels", "slot", "--tolerance", "-1"], "--tolerance")
    assert not (tmp_path / "new.json").exists()
