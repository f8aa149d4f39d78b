"""Recorded configs of earlier file versions read as today's: version 1's sentinels become left-out keys and
``max_moves`` moves to ``[r2d2]``; version 2's agent keys move to ``[network]``; the agent an old file describes is
the agent it loads as."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi import load_policy
from eqc.domains.hanabi.agent.files import POLICY_JSON, POLICY_WEIGHTS, export_policy, load_checkpoint, read_policy, seal_record
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.config.train import TrainConfig, load_config
from eqc.domains.hanabi.config.upgrade import CONFIG_VERSIONS, MOVED_KEYS, upgrade_config
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
    assert upgraded["network"] == {"hidden_scheme": "average", "precision": "fp32"} and upgraded["run"] == {"algorithm": "pqn"}
    assert upgraded["r2d2"] == {"batch_size": 128, "max_moves": 80}
    config = TrainConfig.from_dict(upgraded)
    assert config.game.rules().num_colours == 3 and config.rule.group is None and config.agent.network.symmetrize is None


def test_a_version_1_gop_config_keeps_its_group_and_its_symmetrizer() -> None:
    old = {"rule": {"objective": "gop", "group": "C3", "symmetrize": "S3"}, "game": {"preset": "mini"}}
    upgraded = upgrade_config(old, 1, "old")
    assert upgraded["rule"] == {"objective": "gop", "group": "C3"} and upgraded["network"] == {"symmetrize": "S3", "precision": "fp32"}
    assert upgrade_config(upgraded, CONFIG_VERSIONS[-1], "new") == upgraded  # today's version is read as it is


def test_version_2_agent_keys_move_to_the_network_section() -> None:
    old = {"run": {"algorithm": "pqn", "precision": "bf16", "num_envs": 64}, "rule": {"objective": "sp", "symmetrize": "S3",
           "hidden_scheme": "identity"}, "network": {"hidden_size": 32}, "game": {"preset": "mini"}}
    upgraded = upgrade_config(old, 2, "old")
    assert upgraded["run"] == {"algorithm": "pqn", "num_envs": 64} and upgraded["rule"] == {"objective": "sp"}
    assert upgraded["network"] == {"hidden_size": 32, "symmetrize": "S3", "hidden_scheme": "identity", "precision": "bf16"}
    # a record from before eqc recorded precisions trained in fp32 (today a training config without the key means "auto")
    assert upgrade_config({"run": {}}, 2, "old")["network"] == {"precision": "fp32"}


@pytest.mark.parametrize(("section", "key"), sorted(MOVED_KEYS))
def test_a_moved_key_in_a_config_a_user_writes_says_where_it_went(section: str, key: str) -> None:
    """A config file or ``--set`` carries no version: a key in its old place is refused with its new place."""
    message = rf"\[{section}\] {key} is now \[network\] {key}.*move it there"
    with pytest.raises(ConfigError, match=message):
        TrainConfig.from_dict({section: {key: "fp32" if key == "precision" else "average"}})
    with pytest.raises(ConfigError, match=message):
        load_config("vdn_cpu", [f"{section}.{key}=1"])


@pytest.mark.parametrize(("config", "version", "message"), [
    ({}, 4, r"old: config version 4 is not one this eqc reads \(\[1, 2, 3\]\)"),
    ([], 1, "old: config must be a table of sections, got list"),
    ({"game": 1}, 1, "old: config must be a table of sections"),
])
def test_what_cannot_be_upgraded_is_refused(config: object, version: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        upgrade_config(config, version, "old")


def _as_version_2(config: dict) -> dict:
    """``config`` (today's) written as version 2 wrote it: the agent's keys in their old sections."""
    old = copy.deepcopy(config)
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


@pytest.mark.parametrize("version", [1, 2])
def test_an_old_checkpoint_and_policy_load_as_the_same_agent(tmp_path: Path, tiny_config, version: int) -> None:
    as_old = {1: _as_version_1, 2: _as_version_2}[version]
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
