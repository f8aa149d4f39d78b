"""Training configs: defaults, every shipped file, and clear errors naming the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi.agent.network import Agent, QNetwork
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.play.hle import common_decks
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.config import RunConfig, TrainConfig, describe_config, load_config, with_overrides
from eqc.domains.hanabi.xp import cross_play_games

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
        assert f"[{section}]" in text or section in ("pqn", "r2d2", "ppo"), f"{path.name} leaves out [{section}]"


def test_derived_configs_differ_from_paper_only_where_they_say() -> None:
    paper = load_config("paper").to_dict()
    expected = {"op": {("rule", "objective"): "op"}, "gop_c5": {("rule", "objective"): "gop", ("rule", "group"): "C5"},
                "gop_d10": {("rule", "objective"): "gop", ("rule", "group"): "D10"},
                "iql": {("game", "sad"): "off", ("r2d2", "vdn"): False}}
    for name, changes in expected.items():
        derived = load_config(name).to_dict()
        keys = {(s, k) for config in (paper, derived) for s in config for k in config[s]}
        differences = {(s, k): derived[s].get(k) for s, k in keys if derived[s].get(k) != paper[s].get(k)}
        assert differences == changes, name


@pytest.mark.parametrize(("section", "old"), [
    ("run", "total_env_steps"), ("run", "eval_every_steps"), ("run", "eval_seed"), ("pqn", "eps_decay_steps"), ("rule", "rule"),
    ("rule", "hidden"),
])
def test_former_key_names_are_unknown_keys(tmp_path: Path, section: str, old: str) -> None:
    """One spelling per key: a former name is refused like any unknown key (scripts/migrate_vocabulary.py migrates files)."""
    (tmp_path / "old.toml").write_text(f'base = "vdn_cpu"\n[{section}]\n{old} = 1\n')
    with pytest.raises(ConfigError, match=f"unknown key {old!r}"):
        load_config(tmp_path / "old.toml")
    with pytest.raises(ConfigError, match=f"unknown key {old!r}"):
        load_config("vdn_cpu", [f"{section}.{old}=1"])


def test_the_deck_seed_defaults_to_1_everywhere() -> None:
    """One seed of the decks, one default: the decks of training's evaluations, ``common_decks`` and cross-play."""
    assert RunConfig().deck_seed == 1
    assert common_decks(5, HanabiRules()) == common_decks(5, HanabiRules(), deck_seed=1) != common_decks(5, HanabiRules(), deck_seed=0)
    config = TrainConfig().replace(network={"hidden_size": 16, "mlp_layers": 1, "precision": "fp32"})
    policies = [TrainedPolicy(Agent(QNetwork(658, 21, config.network)), config.agent, 0, torch.device("cpu")) for _ in range(2)]
    default, explicit = cross_play_games(policies, 3), cross_play_games(policies, 3, deck_seed=1)
    assert default.deck_seed == explicit.deck_seed == 1
    assert torch.equal(default.decks, explicit.decks) and torch.equal(default.scores, explicit.scores)


def test_optional_keys_are_left_out_not_given_a_sentinel(tmp_path: Path) -> None:
    """A plain network, the preset's shape and a rule without a group are keys left out: the former sentinels
    ("none", 0) are refused with what to do, and what a config records holds no such key."""
    for text, message in (("[network]\nsymmetrize = 'none'\n", r"\[network\] symmetrize must be one of .*left out: a plain network"),
                          ("[game]\nnum_colours = 0\n", r"\[game\] num_colours must be in 1..5 \(leave it out for the preset's\)"),
                          ("[rule]\ngroup = 'D10'\n", r"\[rule\] group is read by objective 'gop' alone; leave it out for objective 'sp'"),
                          ("[rule]\nobjective = 'gop'\n", r"\[rule\] group must be a colour group of the game's 5 colours"),
                          ("[game]\nmax_moves = 80\n", r"\[game\]: unknown key 'max_moves'")):
        (tmp_path / "c.toml").write_text('base = "vdn_cpu"\n' + text)
        with pytest.raises(ConfigError, match=message):
            load_config(tmp_path / "c.toml")
    config = load_config("vdn_cpu")
    assert config.network.symmetrize is None and config.rule.group is None and config.game.num_colours is None
    recorded = config.to_dict()
    assert "symmetrize" not in recorded["rule"] and "group" not in recorded["rule"] and "num_colours" not in recorded["game"]
    assert TrainConfig.from_dict(recorded) == config and load_config("vdn_cpu", ['network.symmetrize="D10"']).network.symmetrize == "D10"
    assert "# num_colours =  # colours, 1-5 (left out: the preset's)" in describe_config()


def test_base_and_overrides(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('base = "vdn_cpu"\n[run]\nnum_envs = 64\n')
    (tmp_path / "child.toml").write_text('base = "mine.toml"\n[optim]\nlr = 1e-3\n')
    config = load_config(tmp_path / "child.toml", ["rule.objective=op", "network.hidden_size=128", 'network.symmetrize="C5"'])
    vdn = load_config("vdn_cpu")
    assert (config.run.num_envs, config.optim.lr, config.rule.objective, config.network.hidden_size) == (64, 1e-3, "op", 128)
    assert config.network.symmetrize == "C5" and config.to_dict()["pqn"] == vdn.to_dict()["pqn"]
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


@pytest.mark.parametrize("override", ["=1", "run.", "game=3", ".num_envs=3", "run.num_envs"])
def test_malformed_overrides_are_refused(override: str) -> None:
    with pytest.raises(ConfigError, match=r"must look like section.key=value"):
        load_config("vdn_cpu", [override])


def test_an_override_of_several_lines_is_refused_not_cut() -> None:
    """TOML would read the first line's value and drop the rest (here a whole [game] section) silently."""
    with pytest.raises(ConfigError, match=r"must be one line section.key=value; give each key its own override"):
        load_config("vdn_cpu", ["run.num_envs=16\n[game]\nnum_players = 3"])
    with pytest.raises(ConfigError, match="must be one line"):
        with_overrides(TrainConfig(), ["run.num_envs=16\r\nx=1"])


def test_overrides_given_as_one_string_are_refused_not_read_per_character() -> None:
    for call in (lambda: load_config("vdn_cpu", "run.num_envs=64"), lambda: with_overrides(TrainConfig(), "run.num_envs=64")):
        with pytest.raises(TypeError, match=r"overrides must be a list of 'section.key=value' strings .wrap a single override"):
            call()
    with pytest.raises(TypeError, match=r"an override must be a string 'section.key=value', got int 3"):
        load_config("vdn_cpu", [3])


def test_an_empty_base_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "empty_base.toml").write_text('base = ""\n[run]\nnum_envs = 64\n')
    with pytest.raises(ConfigError, match=r"base must name a shipped config .* or a TOML file, got an empty string"):
        load_config(tmp_path / "empty_base.toml")


def test_contract_configs_exist() -> None:
    names = {p.name for p in CONFIGS}
    assert {"paper.toml", "iql.toml", "op.toml", "gop_c5.toml", "gop_d10.toml", "vdn_cpu.toml"} <= names


def test_describe_lists_every_key() -> None:
    text = describe_config()
    for section, keys in TrainConfig().to_dict().items():
        assert f"[{section}]" in text
        for key in keys:
            assert f"\n{key} = " in text or f"\n# {key} =" in text  # a key without a default is shown commented out


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[run]\nnum_envz = 3\n", "unknown key 'num_envz'"),
        ("[runn]\nnum_envs = 3\n", "unknown section [runn]"),
        ("[run]\nnum_envs = 'many'\n", "key 'num_envs' must be int, got str"),
        ("[run]\nnum_envs = true\n", "key 'num_envs' must be int, got bool"),
        ("[run]\nnum_envs = 0\n", "[run] num_envs must be >= 1"),
        ("[run]\ndeck_seed = -1\n", "[run] deck_seed must be in [0, 2**63)"),
        ("[optim]\nlr = -1.0\n", "[optim] lr must be > 0"),
        ("[optim]\nlr = inf\n", "must be finite"),
        ("[optim]\nlr = nan\n", "must be finite"),
        ("[rule]\nobjective = 'xp'\n", "[rule] objective must be one of"),
        ("[rule]\nobjective = 'gop'\ngroup = 'C7'\n", "[rule] group must be a colour group"),
        ("[run]\nalgorithm = 'r2d2'\n[network]\nlstm_layers = 0\n", "[network] lstm_layers must be >= 1 for algorithm 'r2d2'"),
        ("[run]\nalgorithm = 'r2d2'\n[network]\nlstm_layers = 1\n[r2d2]\nmax_moves = 0\n", "[r2d2] max_moves must be >= 1"),
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


def test_game_preset_and_shape_keys_build_the_rules() -> None:
    """``[game] preset`` names the game; a shape key that is not 0 changes it; ``GameConfig.rules`` builds the rules."""
    from eqc.domains.hanabi.rules import HanabiRules

    assert TrainConfig().game.rules() == HanabiRules()
    mini = load_config("vdn_cpu", ["game.preset=mini"])
    assert mini.game.rules() == HanabiRules.preset("mini", knowledge="v0_belief")
    shaped = load_config("vdn_cpu", ["game.preset=small", "game.num_colours=3", "game.max_lives=2", "rule.objective=gop", "rule.group=D6"])
    assert shaped.game.rules() == HanabiRules.preset("small", knowledge="v0_belief", num_colours=3, max_lives=2)
    assert load_config("vdn_cpu", ["game.preset=mini", "network.symmetrize=C3"]).network.symmetrize == "C3"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["game.preset=tiny"], "[game] preset must be one of ['full', 'small', 'mini'], got 'tiny'"),
        (["game.num_ranks=6"], "[game] num_ranks must be in 1..5 (leave it out for the preset's), got 6"),
        (["game.hand_size=-1"], "[game] hand_size must be in 1..8 (leave it out for the preset's), got -1"),
        (["game.preset=small", "game.num_players=5", "game.hand_size=4"], "[game] (preset 'small' with num_players"),
        (["game.preset=mini", "rule.objective=gop"], "[rule] group must be a colour group of the game's 3 colours"),
        (["game.preset=mini", "network.symmetrize=C5"], "[network] symmetrize must be one of ('C3', 'D6', 'S3', 'A3', 'C2', 'S2')"),
        (["rule.objective=gop", "rule.group=D4"], "[rule] group must be a colour group of the game's 5 colours"),
    ],
)
def test_bad_game_shapes_name_the_key(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config("vdn_cpu", overrides)
    assert message in str(info.value), str(info.value)
