"""AgentSpec: what a loaded policy carries instead of the training config, read from the same sections."""

from __future__ import annotations

from pathlib import Path

import pytest

from eqc.domains.hanabi.config.agent import AgentSpec, GameConfig, NetworkConfig
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.config import TrainConfig, algorithm_head, load_config, with_overrides


def test_a_training_config_gives_the_spec_of_its_agent() -> None:
    config = TrainConfig().replace(game={"preset": "mini"}, network={"symmetrize": "S3", "hidden_scheme": "identity",
                                                                             "precision": "bf16", "hidden_size": 32})
    spec = config.agent
    assert spec == AgentSpec(config.game, config.network) and (spec.network.symmetrize, spec.network.precision) == ("S3", "bf16")
    assert spec == AgentSpec.from_config(config.to_dict())  # the file format reads back to the same spec
    assert spec.rules() == HanabiRules.preset("mini")
    assert spec.group().order == 6 and AgentSpec().group() is None


def test_the_spec_ignores_what_only_training_reads() -> None:
    config = TrainConfig().replace(network={"precision": "fp32"})
    data = config.to_dict()
    data["optim"]["lr"] = -1.0  # training's to refuse, not the agent's
    data["future_section"] = {"anything": 1}
    assert AgentSpec.from_config(data) == config.agent


def test_an_auto_precision_is_resolved_before_a_spec_is_made() -> None:
    """A spec is what an agent runs in; "auto" is a request, resolved on the training device (``make_learner``, ``train``)."""
    assert TrainConfig().network.precision == "auto"
    with pytest.raises(ConfigError, match=r"\[network\] precision is 'auto', which is resolved on the device that trains"):
        _ = TrainConfig().agent
    with pytest.raises(ConfigError, match=r"\[network\] precision must be one of \('fp32', 'bf16'\), got 'auto'"):
        AgentSpec.from_config(TrainConfig().to_dict())


@pytest.mark.parametrize(("change", "message"), [
    ({"game": {"num_players": 7}}, r"\[game\] num_players must be in 2..5"),
    ({"game": {"colours": 3}}, r"\[game\]: unknown key 'colours'"),
    ({"network": {"hidden_size": "wide"}}, r"\[network\]: key 'hidden_size' must be int"),
    ({"network": {"symmetrize": "C5"}, "game": {"preset": "mini"}}, r"\[network\] symmetrize must be one of"),
    ({"network": {"hidden_scheme": "mean"}}, r"\[network\] hidden_scheme must be one of"),
    ({"network": {"precision": "fp16"}}, r"\[network\] precision must be one of"),
    ({"network": {"precision": "fp32", "head": "logits"}}, r"\[network\] head must be one of \('q', 'policy'\), got 'logits'"),
])
def test_bad_agent_sections_name_the_key(change: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        AgentSpec.from_config(change, "policy.json config")
    with pytest.raises(ConfigError, match=message):  # the same check, once, for the training config
        TrainConfig.from_dict(change)


def test_a_spec_built_directly_is_checked() -> None:
    with pytest.raises(ConfigError, match=r"\[network\] mlp_layers must be >= 1"):
        AgentSpec(network=NetworkConfig(mlp_layers=0))
    with pytest.raises(ConfigError, match=r"\[game\] sad must be one of"):
        AgentSpec(GameConfig(sad="on"))
    with pytest.raises(ConfigError, match=r"\[game\] must be a GameConfig"):
        AgentSpec({"num_players": 2})  # type: ignore[arg-type]


def test_the_default_game_is_hanabi_rules_default_game() -> None:
    """``GameConfig`` restates no default of ``HanabiRules``: the keys they share default alike."""
    assert GameConfig().rules() == HanabiRules()


def test_a_spec_says_what_its_outputs_are() -> None:
    """``[network] head``: a spec without one is refused (a record of today's version always has it)."""
    assert AgentSpec().network.head == "q"
    with pytest.raises(ConfigError, match=r"policy.json config: \[network\] head must be one of \('q', 'policy'\), got None"):
        AgentSpec.from_config({"network": {"precision": "fp32"}}, "policy.json config")


@pytest.mark.parametrize(("algorithm", "head"), [("pqn", "q"), ("r2d2", "q"), ("ippo", "policy")])
def test_a_training_config_derives_the_head_from_its_algorithm(algorithm: str, head: str) -> None:
    lstm = {"lstm_layers": 1} if algorithm == "r2d2" else {}
    config = TrainConfig.from_dict({"run": {"algorithm": algorithm}, "network": lstm})
    assert config.network.head == head and config.to_dict()["network"]["head"] == head
    assert TrainConfig.from_dict({"run": {"algorithm": algorithm}, "network": {**lstm, "head": head}}) == config  # given, it must agree
    assert TrainConfig.from_dict(config.to_dict()) == config  # what a run records reads back


def test_a_head_against_the_algorithm_is_refused_and_a_change_of_algorithm_derives_it_again() -> None:
    with pytest.raises(ConfigError, match=r"\[network\] head must be 'policy' for algorithm 'ippo' .*leave the key out.*got 'q'"):
        TrainConfig.from_dict({"run": {"algorithm": "ippo"}, "network": {"head": "q"}})
    with pytest.raises(ConfigError, match=r"\[network\] head must be 'q' for algorithm 'pqn'"):
        TrainConfig().replace(network={"head": "policy"})
    ippo = TrainConfig().replace(run={"algorithm": "ippo"})
    assert ippo.network.head == "policy" and ippo.replace(run={"algorithm": "pqn"}).network.head == "q"
    assert with_overrides(TrainConfig(), ["run.algorithm=ippo"]).network.head == "policy"


def test_a_config_file_eqc_writes_leaves_the_derived_head_out(tmp_path: Path) -> None:
    """``to_toml`` writes what a user edits: without the head, so ``--set run.algorithm=ippo`` on it takes IPPO's."""
    path = tmp_path / "config.toml"
    path.write_text(TrainConfig().to_toml())
    assert "head" not in path.read_text() and load_config(path) == TrainConfig()
    assert load_config(path, ["run.algorithm=ippo"]).network.head == "policy"


def test_every_shipped_config_loads_with_its_algorithms_head() -> None:
    from eqc.domains.hanabi.config.files import shipped_configs

    for name in shipped_configs():
        config = load_config(name)
        assert config.network.head == algorithm_head(config.algorithm), name
