"""Agent files: checkpoints (atomic writes, safe loading, clear errors for truncated or foreign files) and
policy directories (exported from a run, loaded without pickle, playing exactly as the checkpoint)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import pickle
import re
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi import load_policy
from eqc.domains.hanabi.agent import files
from eqc.domains.hanabi.agent.files import (
    POLICY_JSON,
    POLICY_WEIGHTS,
    CheckpointError,
    PolicyDirectoryError,
    export_policy,
    load_checkpoint,
    read_policy,
    save_checkpoint,
    seal_record,
)
from eqc.domains.hanabi.config.upgrade import MOVED_KEYS
from eqc.domains.hanabi.play.hle import common_decks
from eqc.domains.hanabi.play.self_play import greedy_games
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.driver import RunDirectoryError
from eqc.domains.hanabi.training.run import train

CPU = torch.device("cpu")
ROOT = Path(__file__).resolve().parents[4]


def reseal(folder: Path, record: dict) -> None:
    """Write ``record`` as ``folder``'s policy.json, sealed to its weights as ``export_policy`` would: the
    edits a test makes then reach the checks behind the seal."""
    (folder / POLICY_JSON).write_text(json.dumps(seal_record(record, (folder / POLICY_WEIGHTS).read_bytes())))


@pytest.fixture(name="run_dir")
def run_dir_fixture(tmp_path: Path, tiny_config) -> Path:
    out = tmp_path / "run"
    train(tiny_config(run={"total_moves": 8_192, "eval_every_moves": 4_096}), out, seed=3, progress=False, log=lambda _: None)
    return out


def test_exported_policy_plays_the_same_games_as_its_checkpoint(run_dir: Path, tmp_path: Path) -> None:
    shipped = export_policy(run_dir, tmp_path / "agents" / "sp" / "seed_3")
    assert {p.name for p in shipped.iterdir()} == {POLICY_JSON, POLICY_WEIGHTS, "metrics.csv", "learning_curve.png"}
    record = json.loads((shipped / POLICY_JSON).read_text())
    assert record["seed"] == 3 and record["moves"] >= 8_192 and record["config"]["run"]["algorithm"] == "pqn"
    from_checkpoint, from_file = load_policy(run_dir), load_policy(shipped)
    assert from_file.trained_moves == from_checkpoint.trained_moves
    decks = torch.tensor(common_decks(50, HanabiRules(), deck_seed=9))
    a = greedy_games(from_checkpoint.agent, from_checkpoint.rules, CPU, decks=decks)
    b = greedy_games(from_file.agent, from_file.rules, CPU, decks=decks)
    assert torch.equal(a.moves, b.moves) and torch.equal(a.scores, b.scores)
    assert load_policy(shipped / POLICY_WEIGHTS).trained_moves == from_file.trained_moves  # either file names the directory


def test_a_policy_records_what_the_run_that_trained_its_network_recorded(run_dir: Path, tmp_path: Path) -> None:
    """A policy is written only from its run's checkpoint (no public call pairs a network with another config: a
    v0_belief network sealed as canonical reads the same 658 floats and plays 0); a record contradicting itself is refused."""
    assert not hasattr(files, "save_policy") and "save_policy" not in files.__all__
    shipped = export_policy(run_dir, tmp_path / "p")
    record, data = json.loads((shipped / POLICY_JSON).read_text()), load_checkpoint(run_dir)
    assert record["config"] == json.loads(json.dumps(data["config"])) and record["config"]["game"]["knowledge"] == "v0_belief"
    assert record["precision"] == data["precision"] and record["precision"]["used"] == record["config"]["network"]["precision"] == "fp32"
    reseal(shipped, {**record, "precision": {**record["precision"], "used": "bf16"}})
    with pytest.raises(CheckpointError, match=r"its precision record says the network was trained in 'bf16', its config's "
                                              r"\[network\] precision says 'fp32'; export the policy again"):
        read_policy(shipped)


def _migration_script():
    spec = importlib.util.spec_from_file_location("migrate_vocabulary", ROOT / "scripts" / "migrate_vocabulary.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_files_in_the_old_vocabulary_are_refused_until_migrated(run_dir: Path, tmp_path: Path) -> None:
    """One spelling: a record with old names (``env_steps``, ``[rule] rule``, ...) is refused; the script migrates it."""
    shipped = export_policy(run_dir, tmp_path / "p")
    record = json.loads((shipped / POLICY_JSON).read_text())
    current = {k: v for k, v in record.items() if k not in ("weights_sha256", "record_sha256")}
    current["format_version"] = 2  # the old vocabulary predates version 3, which moved the agent's keys to [network]
    for (section, key), to in MOVED_KEYS.items():
        if key in current["config"][to]:  # a plain network's symmetrize is left out
            current["config"][section][key] = current["config"][to].pop(key)
    old = json.loads(json.dumps(current))
    old["env_steps"] = old.pop("moves")
    old["config"]["run"]["total_env_steps"] = old["config"]["run"].pop("total_moves")
    old["config"]["run"]["eval_seed"] = old["config"]["run"].pop("deck_seed")
    old["config"]["rule"]["rule"] = old["config"]["rule"].pop("objective")
    old["config"]["rule"]["hidden"] = old["config"]["rule"].pop("hidden_scheme")
    reseal(shipped, old)
    with pytest.raises(CheckpointError, match="lacks"):
        load_policy(shipped)
    migrate = _migration_script().migrate
    assert migrate(old) == current and migrate(current) == current  # idempotent
    reseal(shipped, migrate(old))
    assert load_policy(shipped).trained_moves == record["moves"]


def test_policy_weights_hold_no_pickle(run_dir: Path, tmp_path: Path) -> None:
    shipped = export_policy(run_dir, tmp_path / "p")
    blob = (shipped / POLICY_WEIGHTS).read_bytes()
    assert b"\x80\x04" not in blob[:64] and blob[8:9] == b"{"  # safetensors: 8-byte length, then a JSON header
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(blob)


def test_broken_policy_directories_give_clear_errors(run_dir: Path, tmp_path: Path) -> None:
    shipped = export_policy(run_dir, tmp_path / "p")
    weights = (shipped / POLICY_WEIGHTS).read_bytes()
    record = json.loads((shipped / POLICY_JSON).read_text())
    (shipped / POLICY_WEIGHTS).write_bytes(weights[: len(weights) // 2])
    with pytest.raises(CheckpointError, match=r"is not the weights file exported with policy.json .changed, truncated or replaced"):
        read_policy(shipped)
    reseal(shipped, record)
    with pytest.raises(CheckpointError, match="not a readable safetensors file"):
        read_policy(shipped)
    (shipped / POLICY_WEIGHTS).write_bytes(weights)
    (shipped / POLICY_JSON).write_text(json.dumps({**record, "format": "something-else"}))
    with pytest.raises(CheckpointError, match="not an eqc Hanabi policy file"):
        load_policy(shipped)
    wider = {**record, "config": {**record["config"], "network": {**record["config"]["network"], "hidden_size": 32}}}
    reseal(shipped, wider)
    with pytest.raises(CheckpointError, match="does not match its config"):
        load_policy(shipped)
    (shipped / POLICY_JSON).write_text("{not json")
    with pytest.raises(CheckpointError, match="not readable JSON"):
        load_policy(shipped)
    (shipped / POLICY_JSON).unlink()
    with pytest.raises(CheckpointError, match=r"an agent is a policy directory holding policy\.json"):
        load_policy(shipped)


def test_an_agent_trained_symmetrized_refuses_another_group(tmp_path: Path, tiny_config) -> None:
    out = tmp_path / "sym"
    config = tiny_config(network={"symmetrize": "C5"}, run={"total_moves": 1_024, "eval_every_moves": 1_024})
    train(config, out, seed=0, progress=False, log=lambda _: None)
    assert load_policy(out).agent.group.order == 5
    assert load_policy(out, symmetrize="C5").agent.group.order == 5
    with pytest.raises(ValueError, match="trained symmetrized over C5"):
        load_policy(out, symmetrize="D10")


def test_an_edited_policy_json_or_weights_file_is_refused(run_dir: Path, tmp_path: Path) -> None:
    """Same-sized edits the weights cannot reveal (another observation variant, a symmetrizer it was not
    trained with) and swapped weights are caught by the two digests in policy.json."""
    shipped = export_policy(run_dir, tmp_path / "p")
    record = json.loads((shipped / POLICY_JSON).read_text())
    assert record["weights_sha256"] == hashlib.sha256((shipped / POLICY_WEIGHTS).read_bytes()).hexdigest()
    for section, key, value in (("game", "knowledge", "canonical"), ("rule", "symmetrize", "D10")):
        edited = {**record, "config": {**record["config"], section: {**record["config"][section], key: value}}}
        (shipped / POLICY_JSON).write_text(json.dumps(edited))
        with pytest.raises(CheckpointError, match="was edited after export"):
            load_policy(shipped)
    (shipped / POLICY_JSON).write_text(json.dumps({k: v for k, v in record.items() if not k.endswith("sha256")}))
    with pytest.raises(CheckpointError, match=r"lacks \['weights_sha256', 'record_sha256'\]"):
        load_policy(shipped)
    (shipped / POLICY_JSON).write_text(json.dumps(record))
    other = export_policy(train_tiny(tmp_path / "other_run"), tmp_path / "other")
    (shipped / POLICY_WEIGHTS).write_bytes((other / POLICY_WEIGHTS).read_bytes())
    with pytest.raises(CheckpointError, match=r"is not the weights file exported with policy.json"):
        load_policy(shipped)
    (shipped / POLICY_JSON).write_text(json.dumps({**record, "moves": float("nan")}))
    with pytest.raises(CheckpointError, match="not readable JSON: NaN is not a JSON number"):
        load_policy(shipped)


def train_tiny(out: Path, **changes: dict) -> Path:
    from tests.domains.hanabi.conftest import tiny_config

    train(tiny_config(run={"total_moves": 1_024, "eval_every_moves": 1_024}, **changes), out, seed=1, progress=False, log=lambda _: None)
    return out


@pytest.mark.parametrize(("section", "key", "value", "message"), [
    ("game", "num_players", 3, "reads observations of 658 floats, but its config's game (num_players 3"),
    ("game", "sad", "greedy_onehot", "knowledge 'v0_belief', sad 'greedy_onehot') has observations of"),
    ("network", "dueling", False, "head has 22 outputs, but its config gives 21"),
])
def test_a_description_that_disagrees_with_the_weights_is_refused(
    run_dir: Path, tmp_path: Path, section: str, key: str, value: object, message: str
) -> None:
    shipped = export_policy(run_dir, tmp_path / "p")
    record = {k: v for k, v in json.loads((shipped / POLICY_JSON).read_text()).items() if k != "rules"}  # the weights' checks alone
    reseal(shipped, {**record, "config": {**record["config"], section: {**record["config"][section], key: value}}})
    with pytest.raises(CheckpointError, match=re.escape(message)):
        load_policy(shipped)


def test_malformed_weights_and_counters_are_refused(run_dir: Path, tmp_path: Path) -> None:
    from safetensors.torch import load, save

    shipped = export_policy(run_dir, tmp_path / "p")
    record = json.loads((shipped / POLICY_JSON).read_text())
    weights = load((shipped / POLICY_WEIGHTS).read_bytes())
    for changed, message in (({"head.bias": torch.full_like(weights["head.bias"], float("nan"))}, "'head.bias' holds 22 NaN or infinite"),
                             ({"mlp.0.weight": weights["mlp.0.weight"].flatten()}, "'mlp.0.weight' must be a matrix, got shape")):
        (shipped / POLICY_WEIGHTS).write_bytes(save({**weights, **changed}))
        reseal(shipped, record)
        with pytest.raises(CheckpointError, match=message):
            load_policy(shipped)
    (shipped / POLICY_WEIGHTS).write_bytes(save(weights))
    for changed, message in (({"moves": -5}, r"moves must be in \[0, inf\], got -5"),
                             ({"seed": "zero"}, "seed must be a Python int, got str"),
                             ({"updates": 1.5}, "updates must be a Python int")):
        reseal(shipped, {**record, **changed})
        with pytest.raises(CheckpointError, match=message):
            load_policy(shipped)
    with pytest.raises(TypeError, match=r"path must be a str or Path .* got int 123"):
        load_policy(123)


def test_a_checkpoint_with_malformed_counters_is_refused(run_dir: Path, tmp_path: Path) -> None:
    checkpoint = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    checkpoint["learner"]["counters"]["moves"] = "many"
    torch.save(checkpoint, run_dir / "checkpoint.pt")
    with pytest.raises(CheckpointError, match="moves must be a Python int, got str 'many'"):
        load_policy(run_dir)
    with pytest.raises(CheckpointError, match="moves must be a Python int"):
        export_policy(run_dir, tmp_path / "p")
    assert not (tmp_path / "p").exists()


def test_export_never_overwrites_a_policy_or_its_run(run_dir: Path, tmp_path: Path) -> None:
    other = export_policy(train_tiny(tmp_path / "other_run"), tmp_path / "other")
    before = {p.name: p.read_bytes() for p in other.iterdir()}
    with pytest.raises(PolicyDirectoryError, match=r"is another agent's policy directory .* export never overwrites"):
        export_policy(run_dir, other)
    assert {p.name: p.read_bytes() for p in other.iterdir()} == before
    with pytest.raises(PolicyDirectoryError, match="is the run directory itself"):
        export_policy(run_dir, run_dir)
    with pytest.raises(PolicyDirectoryError, match="is the run directory itself"):
        export_policy(run_dir / "checkpoint.pt", run_dir / ".." / run_dir.name)
    assert not (run_dir / POLICY_JSON).exists()
    (tmp_path / "empty").mkdir()
    assert export_policy(run_dir, tmp_path / "empty") == tmp_path / "empty"  # a new or empty directory is fine


def test_train_refuses_a_policy_directory(run_dir: Path, tmp_path: Path, tiny_config) -> None:
    shipped = export_policy(run_dir, tmp_path / "p")
    before = {p.name: p.read_bytes() for p in shipped.iterdir()}
    with pytest.raises(RunDirectoryError, match=r"is a policy directory .* would overwrite its metrics.csv"):
        train(tiny_config(), shipped, seed=3, progress=False, log=lambda _: None)
    assert {p.name: p.read_bytes() for p in shipped.iterdir()} == before


@pytest.mark.parametrize(("scale", "at_least", "preset"), [("cpu", 25, "full"), ("induced", 24, "mini")])
def test_the_shipped_agents_are_sealed_and_load(scale: str, at_least: int, preset: str) -> None:
    from eqc.domains.hanabi.reproduce import SCALES
    from eqc.domains.hanabi.reproduce.run import shipped_agents
    from eqc.domains.hanabi.rules import HanabiRules

    folders = sorted(p.parent for p in shipped_agents(SCALES[scale]).rglob(POLICY_JSON))
    assert len(folders) >= at_least
    obs_dim = HanabiRules.preset(preset, knowledge="v0_belief").obs_dim
    for folder in folders:
        network, _, record = read_policy(folder)
        assert record["moves"] > 0 and network.obs_dim == obs_dim


def _payload(value: float = 1.0) -> dict:
    return {"config": {"run": {}}, "seed": 0, "learner": {"w": torch.full((3,), value)}}


def test_round_trip_describes_itself(tmp_path: Path) -> None:
    save_checkpoint(tmp_path / "checkpoint.pt", _payload())
    data = load_checkpoint(tmp_path)  # a run directory works too
    assert data["format"] == "eqc-hanabi-agent" and data["versions"]["torch"] == torch.__version__
    assert torch.equal(data["learner"]["w"], torch.ones(3))
    assert (tmp_path / "checkpoint.pt").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]  # no temporary file left behind


def test_failed_write_keeps_the_previous_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, _payload(1.0))

    def full_disk(obj: object, f: object) -> None:
        f.write(b"partial")  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.torch, "save", full_disk)
    with pytest.raises(OSError, match="No space"):
        save_checkpoint(path, _payload(2.0))
    monkeypatch.undo()
    assert torch.equal(load_checkpoint(path)["learner"]["w"], torch.ones(3))
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]


def test_truncated_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, _payload())
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="not a readable eqc checkpoint"):
        load_checkpoint(path)


def test_foreign_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.pt"
    torch.save({"state_dict": torch.ones(2)}, other)
    with pytest.raises(CheckpointError, match="not an eqc Hanabi checkpoint"):
        load_checkpoint(other)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(CheckpointError, match="not a readable"):
        load_checkpoint(text)
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        load_checkpoint(tmp_path / "missing")


class _Payload:
    def __reduce__(self):
        return (exec, ("raise SystemExit('code ran')",))


def test_pickled_code_is_never_executed(tmp_path: Path) -> None:
    path = tmp_path / "evil.pt"
    torch.save({"format": "eqc-hanabi-agent", "x": _Payload()}, path)
    with pytest.raises(CheckpointError, match="holds pickled objects that are not tensors; refused without running them") as info:
        load_checkpoint(path)
    assert "arbitrary code" in str(info.value)


def test_newer_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, {**_payload(), "format_version": 99})
    with pytest.raises(CheckpointError, match="format version 99"):
        load_checkpoint(path)
