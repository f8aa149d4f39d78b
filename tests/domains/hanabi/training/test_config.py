"""Training configs: defaults, every shipped file, and clear errors naming the key."""

from __future__ import annotations

import dataclasses
import warnings
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
    assert load_config(path.stem) == config  # by name: package data, as an installed wheel reads them
    text = path.read_text()
    if "base = " in text:
        return  # a derived config holds only what differs from its base
    for section in config.to_dict():
        assert f"[{section}]" in text or section in ("pqn", "r2d2"), f"{path.name} leaves out [{section}]"


def test_derived_configs_differ_from_paper_only_where_they_say() -> None:
    paper = load_config("paper").to_dict()
    expected = {"op": {("rule", "objective"): "op"}, "gop_c5": {("rule", "objective"): "gop", ("rule", "group"): "C5"},
                "gop_d10": {("rule", "objective"): "gop"}, "iql": {("game", "sad"): "off", ("r2d2", "vdn"): False}}
    for name, changes in expected.items():
        derived = load_config(name).to_dict()
        differences = {(s, k): derived[s][k] for s in paper for k in paper[s] if derived[s][k] != paper[s][k]}
        assert differences == changes, name


@pytest.mark.parametrize(("section", "old", "new", "value"), [
    ("run", "total_env_steps", "total_moves", 1_000), ("run", "eval_every_steps", "eval_every_moves", 500),
    ("pqn", "eps_decay_steps", "eps_decay_moves", 700), ("rule", "rule", "objective", "op"),
    ("rule", "hidden", "hidden_scheme", "identity"),
])
def test_renamed_keys_still_read_with_a_warning(tmp_path: Path, section: str, old: str, new: str, value: object) -> None:
    literal = f'"{value}"' if isinstance(value, str) else str(value)
    (tmp_path / "old.toml").write_text(f'base = "vdn_cpu"\n[{section}]\n{old} = {literal}\n')
    with pytest.warns(FutureWarning, match=f"{old} is deprecated; it is now called {new}"):
        from_file = load_config(tmp_path / "old.toml")
    with pytest.warns(FutureWarning, match=f"--set {section}.{old} is deprecated"):
        from_flag = load_config("vdn_cpu", [f"{section}.{old}={literal}"])
    assert getattr(getattr(from_file, section), new) == value and from_flag == from_file
    (tmp_path / "both.toml").write_text(f'[{section}]\n{old} = {literal}\n{new} = {literal}\n')
    with pytest.raises(ConfigError, match=f"gives both {old!r} and its new name {new!r}"):
        load_config(tmp_path / "both.toml")


def test_the_plain_network_is_spelt_none(tmp_path: Path) -> None:
    (tmp_path / "old.toml").write_text('base = "vdn_cpu"\n[rule]\nsymmetrize = ""\n')
    with pytest.warns(FutureWarning, match="symmetrize = '' is deprecated; write 'none'"):
        old = load_config(tmp_path / "old.toml")
    assert old == load_config("vdn_cpu") and old.rule.symmetrize == "none" and old.rule.symmetrize_group is None
    assert load_config("vdn_cpu", ['rule.symmetrize="D10"']).rule.symmetrize_group == "D10"


def test_configs_written_by_older_eqc_load_silently() -> None:
    data = load_config("vdn_cpu").to_dict()
    data["run"]["total_env_steps"] = data["run"].pop("total_moves")
    data["rule"]["symmetrize"] = ""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert TrainConfig.from_dict(data, "checkpoint", warn_renamed=False) == load_config("vdn_cpu")


def test_base_and_overrides(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('base = "vdn_cpu"\n[run]\nnum_envs = 64\n')
    (tmp_path / "child.toml").write_text('base = "mine.toml"\n[optim]\nlr = 1e-3\n')
    config = load_config(tmp_path / "child.toml", ["rule.objective=op", "network.hidden_size=128", 'rule.symmetrize="C5"'])
    vdn = load_config("vdn_cpu")
    assert (config.run.num_envs, config.optim.lr, config.rule.objective, config.network.hidden_size) == (64, 1e-3, "op", 128)
    assert config.rule.symmetrize == "C5" and config.pqn == vdn.pqn
    (tmp_path / "loop.toml").write_text('base = "loop.toml"\n')
    with pytest.raises(ConfigError, match="cycle"):
        load_config(tmp_path / "loop.toml")
    with pytest.raises(ConfigError, match="neither a file nor a shipped config"):
        load_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)
    with pytest.raises(ConfigError, match=r"must look like section.key=value"):
        load_config("vdn_cpu", ["num_envs=64"])
    with pytest.raises(ConfigError, match=r"--set run.num_envz=3: \[run\]: unknown key 'num_envz'"):
        load_config("vdn_cpu", ["run.num_envz=3"])
    with pytest.raises(ConfigError, match=r"\[optim\] lr must be > 0"):
        load_config("vdn_cpu", ["optim.lr=-1"])


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
        ("[rule]\nobjective = 'xp'\n", "[rule] objective must be one of"),
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
    with pytest.raises(ConfigError, match="neither a file nor a shipped config"):
        load_config(tmp_path / "nope.toml")


def test_float_keys_accept_ints() -> None:
    config = TrainConfig.from_dict({"optim": {"lr": 1}})
    assert config.optim.lr == 1.0 and isinstance(config.optim.lr, float)


@pytest.mark.parametrize(("section", "values", "message"), [
    ("run", {"num_envs": 8.5}, "[run] num_envs must be int, got float 8.5"),
    ("run", {"threads": True}, "[run] threads must be int, got bool True"),
    ("run", {"tensorboard": "no"}, "[run] tensorboard must be bool, got str 'no'"),
    ("network", {"hidden_size": 2.5}, "[network] hidden_size must be int"),
    ("game", {"num_players": 2.0}, "[game] num_players must be int"),
])
def test_sections_built_directly_are_checked_too(section: str, values: dict, message: str) -> None:
    import eqc.domains.hanabi.training.config as config_module

    cls = {f.name: f.default_factory for f in dataclasses.fields(TrainConfig)}[section]
    with pytest.raises(ConfigError) as info:
        TrainConfig(**{section: cls(**values)})
    assert message in str(info.value), str(info.value)
    assert config_module.OptimConfig(lr=1).lr == 1  # an int where a float is wanted is a number all the same
