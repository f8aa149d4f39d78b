"""Training configs: defaults, every shipped file, and clear errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from eqc.domains.hanabi.training.config import ConfigError, TrainConfig, describe_config, load_config

CONFIGS = sorted((Path(__file__).parents[4] / "configs" / "hanabi").glob("*.toml"))


def test_defaults_are_valid_and_round_trip() -> None:
    config = TrainConfig()
    assert TrainConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_shipped_configs_load(path: Path) -> None:
    config = load_config(path)
    text = path.read_text()
    for section in config.to_dict():
        assert f"[{section}]" in text or section in ("pqn", "r2d2"), f"{path.name} leaves out [{section}]"


def test_contract_configs_exist() -> None:
    names = {p.name for p in CONFIGS}
    assert {"paper.toml", "iql.toml", "op.toml", "gop_c5.toml", "gop_d10.toml", "vdn_cpu.toml"} <= names


def test_describe_lists_every_key() -> None:
    text = describe_config()
    for section, keys in TrainConfig().to_dict().items():
        assert f"[{section}]" in text
        for key in keys:
            assert f"\n{key} = " in text


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[run]\nnum_envz = 3\n", "unknown key 'num_envz'"),
        ("[runn]\nnum_envs = 3\n", "unknown section [runn]"),
        ("[run]\nnum_envs = 'many'\n", "key 'num_envs' must be int, got str"),
        ("[run]\nnum_envs = true\n", "key 'num_envs' must be int, got bool"),
        ("[run]\nnum_envs = 0\n", "[run] num_envs must be >= 1"),
        ("[optim]\nlr = -1.0\n", "[optim] lr must be > 0"),
        ("[optim]\nlr = inf\n", "must be finite"),
        ("[optim]\nlr = nan\n", "must be finite"),
        ("[rule]\nrule = 'xp'\n", "[rule] rule must be one of"),
        ("[rule]\ngroup = 'C7'\n", "[rule] group must be one of"),
        ("[run]\nalgorithm = 'r2d2'\n[network]\nlstm_layers = 0\n", "[network] lstm_layers must be >= 1 for algorithm 'r2d2'"),
        ("[run]\nalgorithm = 'r2d2'\n[network]\nlstm_layers = 1\n[game]\nmax_moves = 0\n", "[game] max_moves must be >= 1 for"),
        ("[run]\nnum_envs = 4\n[network]\nlstm_layers = 1\n[pqn]\nminibatches = 8\n", "[pqn] minibatches must not exceed num_envs (4)"),
        ("[pqn]\ntd_lambda = 1.5\n", "[pqn] td_lambda must be in [0, 1]"),
        ("run = 3\n", "[run] must be a table"),
        ("[run\n", "not valid TOML"),
    ],
)
def test_bad_configs_name_the_key(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")


def test_float_keys_accept_ints() -> None:
    config = TrainConfig.from_dict({"optim": {"lr": 1}})
    assert config.optim.lr == 1.0 and isinstance(config.optim.lr, float)
