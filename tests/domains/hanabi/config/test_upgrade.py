"""Recorded configs of earlier file versions read as today's: version 1's sentinels become left-out keys and
``max_moves`` moves to ``[r2d2]``; version 2's agent keys move to ``[network]``; versions 1-3 gain ``[network] head``
from their algorithm and lose the other algorithms' sections; the agent an old file describes is the agent it loads
as."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi import load_policy
from eqc.domains.hanabi.agent.files import POLICY_JSON, POLICY_WEIGHTS, export_policy, load_checkpoint, read_policy, seal_record
from eqc.domains.hanabi.config.schema import ConfigError, section_dict
from eqc.domains.hanabi.config.upgrade import CONFIG_VERSIONS, MOVED_KEYS, RECORDED_HEADS, RECORDED_SECTIONS, upgrade_config
from eqc.domains.hanabi.training.algorithms import ALGORITHMS
from eqc.domains.hanabi.training.config import TrainConfig, load_config
from eqc.domains.hanabi.training.run import train

ROOT = Path(__file__).resolve().parents[4]

VERSION_1 = {
    "run": {"algorithm": "pqn", "precision": "fp32"},
    "game": {"preset": "mini", "num_colours": 0, "num_ranks": 0, "hand_size": 3, "max_info_tokens": 0, "max_lives": 0, "max_moves": 80},
    "rule": {"objective": "sp", "group": "D10", "symmetrize": "none", "hidden_scheme": "average"},
    "r2d2": {"batch_size": 128},
}


def test_version_1_sentinels_become_left_out_keys() -> None:
    before = copy.deepcopy(VERSION_1)
    upgraded = upgrade_config(VERSION_1, 1, "old")
    assert VERSION_1 == before  # the record itself is untouched
    assert upgraded["game"] == {"preset": "mini", "hand_size": 3}  # a shape key that was given stays
    assert upgraded["rule"] == {"objective": "sp"}
    assert upgraded["network"] == {"hidden_scheme": "average", "precision": "fp32", "head": "q"} and upgraded["run"] == {"algorithm": "pqn"}
    assert "r2d2" not in upgraded  # a PQN run's: another algorithm's section, which it never read
    assert upgrade_config({"run": {"algorithm": "r2d2"}, "game": {"max_moves": 80}}, 1, "old")["r2d2"] == {"max_moves": 80}
    config = TrainConfig.from_dict(upgraded)
    assert config.game.rules().num_colours == 3 and config.rule.group is None and config.agent.network.symmetrize is None


def test_a_version_1_gop_config_keeps_its_group_and_its_symmetrizer() -> None:
    old = {"rule": {"objective": "gop", "group": "C3", "symmetrize": "S3"}, "game": {"preset": "mini"}}
    upgraded = upgrade_config(old, 1, "old")
    assert upgraded["rule"] == {"objective": "gop", "group": "C3"}
    assert upgraded["network"] == {"symmetrize": "S3", "precision": "fp32", "head": "q"}
    assert upgrade_config(upgraded, CONFIG_VERSIONS[-1], "new") == upgraded  # today's version is read as it is


def test_version_2_agent_keys_move_to_the_network_section() -> None:
    old = {"run": {"algorithm": "pqn", "precision": "bf16", "num_envs": 64}, "rule": {"objective": "sp", "symmetrize": "S3",
           "hidden_scheme": "identity"}, "network": {"hidden_size": 32}, "game": {"preset": "mini"}}
    upgraded = upgrade_config(old, 2, "old")
    assert upgraded["run"] == {"algorithm": "pqn", "num_envs": 64} and upgraded["rule"] == {"objective": "sp"}
    assert upgraded["network"] == {"hidden_size": 32, "symmetrize": "S3", "hidden_scheme": "identity", "precision": "bf16", "head": "q"}
    # a record from before eqc recorded precisions trained in fp32 (today a training config without the key means "auto")
    assert upgrade_config({"run": {}}, 2, "old")["network"] == {"precision": "fp32", "head": "q"}


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize(("algorithm", "head"), [("pqn", "q"), ("r2d2", "q"), ("ippo", "policy"), (None, "q")])
def test_versions_before_4_gain_the_head_of_their_algorithm(version: int, algorithm: str | None, head: str) -> None:
    """A record without ``[run] algorithm`` trained with the default, PQN."""
    old = {"run": {} if algorithm is None else {"algorithm": algorithm}, "network": {"precision": "fp32"}}
    assert upgrade_config(old, version, "old")["network"]["head"] == head
    assert upgrade_config({"network": {"head": "policy"}}, 4, "new")["network"]["head"] == "policy"  # today's is kept


def test_the_recorded_heads_are_the_algorithms_own() -> None:
    """:data:`RECORDED_HEADS` (data, so that reading a record imports no training) says what each algorithm declares."""
    from eqc.domains.hanabi.training.config import algorithm_head

    assert set(RECORDED_HEADS) <= set(ALGORITHMS)
    for name, head in RECORDED_HEADS.items():
        assert head == algorithm_head(ALGORITHMS[name]) and (head == "policy") == ALGORITHMS[name].policy
    assert RECORDED_SECTIONS == {name: ALGORITHMS[name].section for name in RECORDED_HEADS}


@pytest.mark.parametrize("version", [1, 2, 3])
def test_versions_before_4_keep_their_algorithms_section_alone(version: int) -> None:
    old = {"run": {"algorithm": "ippo"}, "pqn": {"epochs": 2}, "r2d2": {"n_step": 3}, "ppo": {"clip": 0.3}, "optim": {"lr": 0.1}}
    upgraded = upgrade_config(old, version, "old")
    assert upgraded["ppo"] == {"clip": 0.3} and upgraded["optim"] == {"lr": 0.1} and not {"pqn", "r2d2"} & set(upgraded)
    assert upgrade_config({"pqn": {}, "ppo": {}}, 4, "new") == {"pqn": {}, "ppo": {}}  # today's is read as it is


@pytest.mark.parametrize("algorithm", ["toy", ["pqn"]])
def test_a_record_of_an_unknown_algorithm_has_no_head_and_is_refused(algorithm: object) -> None:
    with pytest.raises(ConfigError, match=r"old: \[run\] algorithm .* is not one a version-3 file records .*head is unknown"):
        upgrade_config({"run": {"algorithm": algorithm}}, 3, "old")


@pytest.mark.parametrize(("section", "key"), sorted(MOVED_KEYS))
def test_a_moved_key_in_a_config_a_user_writes_says_where_it_went(section: str, key: str) -> None:
    """A config file or ``--set`` carries no version: a key in its old place is refused with its new place."""
    message = rf"\[{section}\] {key} is now \[network\] {key}.*move it there"
    with pytest.raises(ConfigError, match=message):
        TrainConfig.from_dict({section: {key: "fp32" if key == "precision" else "average"}})
    with pytest.raises(ConfigError, match=message):
        load_config("vdn_cpu", [f"{section}.{key}=1"])


@pytest.mark.parametrize(("config", "version", "message"), [
    ({}, 5, r"old: config version 5 is not one this eqc reads \(\[1, 2, 3, 4\]\)"),
    ([], 1, "old: config must be a table of sections, got list"),
    ({"game": 1}, 1, "old: config must be a table of sections"),
])
def test_what_cannot_be_upgraded_is_refused(config: object, version: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        upgrade_config(config, version, "old")


def _as_version_3(config: dict) -> dict:
    """``config`` (today's) written as version 3 wrote it: no ``[network] head``, and every algorithm's section."""
    old = copy.deepcopy(config)
    del old["network"]["head"]
    for algorithm in ALGORITHMS.values():
        old.setdefault(algorithm.section, section_dict(algorithm.settings()))
    return old


def _as_version_2(config: dict) -> dict:
    """``config`` (today's) written as version 2 wrote it: the agent's keys in their old sections."""
    old = _as_version_3(config)
    for (section, key), to in MOVED_KEYS.items():
        if key in old[to]:
            old[section][key] = old[to].pop(key)
    return old


def _as_version_1(config: dict) -> dict:
    """``config`` (today's) written as version 1 wrote it: every sentinel spelt out."""
    old = _as_version_2(config)
    old["game"] = {**{k: 0 for k in ("num_colours", "num_ranks", "hand_size", "max_info_tokens", "max_lives")}, **old["game"],
                   "max_moves": old["r2d2"].pop("max_moves")}
    old["rule"] = {"group": "D10", "symmetrize": "none", **old["rule"]}
    return old


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_old_checkpoint_and_policy_load_as_the_same_agent(tmp_path: Path, tiny_config, version: int) -> None:
    as_old = {1: _as_version_1, 2: _as_version_2, 3: _as_version_3}[version]
    run = tmp_path / "run"
    train(tiny_config(run={"total_moves": 4_096, "eval_every_moves": 4_096}), run, seed=1, progress=False, log=lambda _: None)
    new = load_checkpoint(run)
    assert new["format_version"] == CONFIG_VERSIONS[-1]
    old = {**torch.load(run / "checkpoint.pt", weights_only=True)}
    old.update(format_version=version, config=as_old(old["config"]))
    torch.save(old, run / "checkpoint.pt")
    assert load_checkpoint(run)["config"] == new["config"]

    policy = export_policy(run, tmp_path / "policy")
    record = json.loads((policy / POLICY_JSON).read_text())
    assert record["format_version"] == CONFIG_VERSIONS[-1] and record["config"] == new["config"]  # exported as today's
    record.update(format_version=version, config=as_old(record["config"]))
    (policy / POLICY_JSON).write_text(json.dumps(seal_record(record, (policy / POLICY_WEIGHTS).read_bytes())))
    _, spec, read = read_policy(policy)
    assert read["config"] == new["config"] and spec == TrainConfig.from_dict(new["config"]).agent
    assert load_policy(policy).trained_with["game"] == new["config"]["game"]


def test_the_shipped_version_1_agents_load_with_todays_config() -> None:
    folder = ROOT / "results" / "induced" / "agents" / "gop_c3" / "seed_0"
    assert json.loads((folder / POLICY_JSON).read_text())["format_version"] == 1
    trained_with = load_policy(folder).trained_with
    assert trained_with["rule"]["group"] == "C3" and "max_moves" not in trained_with["game"]
    assert TrainConfig.from_dict(trained_with).rule.objective == "gop"


def test_the_shipped_version_2_agents_load_with_todays_config() -> None:
    folder = ROOT / "results" / "touched" / "agents" / "eqc" / "stream_0" / "slots_012"
    record = json.loads((folder / POLICY_JSON).read_text())
    assert record["format_version"] == 2 and record["config"]["rule"]["symmetrize"] == "S3"
    policy = load_policy(folder)
    assert policy.spec.network.symmetrize == "S3" and policy.spec.network.precision == "fp32"
    assert "symmetrize" not in policy.trained_with["rule"] and TrainConfig.from_dict(policy.trained_with).agent == policy.spec


def _shipped_sample() -> list[Path]:
    """The first agent (in sorted order) of each format version under each scale of ``results/``."""
    first: dict[tuple[str, int], Path] = {}
    for path in sorted((ROOT / "results").rglob(POLICY_JSON)):
        key = (path.relative_to(ROOT / "results").parts[0], json.loads(path.read_text())["format_version"])
        first.setdefault(key, path.parent)
    return list(first.values())


@pytest.mark.parametrize("folder", _shipped_sample(), ids=lambda p: str(p.relative_to(ROOT / "results")))
def test_the_shipped_agents_load_with_the_head_of_their_algorithm(folder: Path) -> None:
    record = json.loads((folder / POLICY_JSON).read_text())
    assert record["format_version"] in (1, 2, 3) and "head" not in record["config"]["network"]
    policy = load_policy(folder)
    algorithm = record["config"]["run"]["algorithm"]
    assert policy.spec.network.head == policy.trained_with["network"]["head"] == RECORDED_HEADS[algorithm]
    assert set(RECORDED_SECTIONS.values()) & set(policy.trained_with) == {RECORDED_SECTIONS[algorithm]}
    assert TrainConfig.from_dict(policy.trained_with).agent == policy.spec


def test_the_shipped_sample_holds_every_version_and_both_heads() -> None:
    """Negative control of the sample: it is not empty and spans what ``results/`` holds."""
    records = [json.loads((f / POLICY_JSON).read_text()) for f in _shipped_sample()]
    assert {r["format_version"] for r in records} == {1, 2, 3}
    assert {RECORDED_HEADS[r["config"]["run"]["algorithm"]] for r in records} == {"q", "policy"}
