"""The table of algorithms: each algorithm is one module (section, rules, learner, declaration), the training config's
sections are the table's, ``make_learner`` builds every algorithm in each of its forms, and nothing outside
``training/`` names an algorithm."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import nn

import eqc
from eqc.domains.hanabi.config.schema import ConfigError, config_field, require
from eqc.domains.hanabi.training.algorithms import ALGORITHMS
from eqc.domains.hanabi.training.config import TrainConfig, config_sections, load_config
from eqc.domains.hanabi.training.ippo import IPPO
from eqc.domains.hanabi.training.learner import Algorithm, Learner, LearnerSetup
from eqc.domains.hanabi.training.learners import make_learner
from eqc.domains.hanabi.training.pqn import PQN, PQNConfig

CPU = torch.device("cpu")
TRAINING = Path(eqc.__file__).parent / "domains" / "hanabi" / "training"


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_an_algorithm_is_declared_in_one_module(name: str) -> None:
    """Its section's dataclass, that section's rules, its learner and its ``Algorithm`` live in one module of training/."""
    algorithm = ALGORITHMS[name]
    module = algorithm.learner.__module__
    assert module.startswith("eqc.domains.hanabi.training.") and algorithm.name == name
    assert {part.__module__ for part in (algorithm.settings, algorithm.check_keys, algorithm.check_use)} == {module}
    assert any(value is algorithm for value in vars(sys.modules[module]).values())  # declared there, at its top level


def test_the_configs_algorithm_sections_are_the_table() -> None:
    """The training config holds one section per algorithm, named and typed by the table, and nothing else of theirs."""
    own = {a.section: a.settings for a in ALGORITHMS.values()}
    assert len(own) == len(ALGORITHMS)  # one section per algorithm
    sections = config_sections()
    assert {name: sections[name] for name in own} == own
    assert set(sections) - set(own) == {"run", "game", "rule", "network", "optim", "bootstrap"}
    config = TrainConfig()
    assert all(isinstance(config.settings(a), a.settings) for a in ALGORITHMS.values())
    assert list(config.to_dict()) == [name for name in sections if name not in own or name == config.algorithm.section]


def test_a_config_holds_its_algorithms_section_alone(tiny_config) -> None:
    """Another algorithm's section (here tiny_config's ``[pqn]``, left from a change of algorithm) is checked, then not
    kept: the config and its record hold the chosen algorithm's alone, and read back equal."""
    config = tiny_config(run={"algorithm": "ippo"}, ppo={"clip": 0.3})
    assert tiny_config().settings(PQN).epochs == 1 and config.settings(PQN) == PQNConfig()
    assert config.settings(IPPO).clip == 0.3 and "pqn" not in config.to_dict() and "ppo" in config.to_dict()
    assert TrainConfig.from_dict(config.to_dict()) == config and "[pqn]" not in config.to_toml()
    with pytest.raises(ConfigError, match=r"\[pqn\]"):  # checked all the same
        tiny_config(run={"algorithm": "ippo"}, pqn={"epochs": 0})


@pytest.mark.parametrize(("name", "file", "key", "value"), [("pqn", "vdn_cpu", "td_lambda", 0.5), ("r2d2", "paper", "n_step", 5),
                                                        ("ippo", "ippo_cpu", "clip", 0.3)])
def test_the_sections_are_the_contracts(name: str, file: str, key: str, value: float) -> None:
    """The TOML contract: ``[pqn]``, ``[r2d2]``, ``[ppo]`` and ``--set section.key=value`` reach the algorithm's section."""
    algorithm = ALGORITHMS[name]
    assert algorithm.section == {"pqn": "pqn", "r2d2": "r2d2", "ippo": "ppo"}[name]
    config = load_config(file, [f"{algorithm.section}.{key}={value}"])
    assert getattr(config.settings(algorithm), key) == value == config.to_dict()[algorithm.section][key]


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
@pytest.mark.parametrize("recurrent", [False, True])
def test_make_learner_looks_up_the_algorithm_in_each_of_its_forms(tiny_config, name: str, recurrent: bool) -> None:
    algorithm = ALGORITHMS[name]
    changes = {"run": {"algorithm": name, "num_envs": 8}, "network": {"hidden_size": 16, "mlp_layers": 1, "lstm_layers": int(recurrent)},
               "r2d2": {"batch_size": 4, "warmup_episodes": 4, "buffer_episodes": 64}}
    if recurrent not in algorithm.forms:  # negative control: a form the algorithm lacks is refused by the config
        with pytest.raises(ConfigError, match=r"\[network\] lstm_layers"):
            tiny_config(**changes)
        return
    learner = make_learner(tiny_config(**changes), 0, CPU)
    assert isinstance(learner, algorithm.learner) and learner.network.recurrent == recurrent  # type: ignore[arg-type]
    assert torch.isfinite(torch.as_tensor(learner.iteration()["epsilon" if not algorithm.policy else "entropy"]))


# ---------------------------------------------------------------- a new algorithm: one module's worth and one table entry
@dataclass(frozen=True)
class ToyConfig:
    scale: float = config_field("a toy key", 1.0)


def _check_toy(t: ToyConfig, c: TrainConfig) -> None:
    require(t.scale > 0, "[toy] scale", f"must be > 0, got {t.scale}")


class ToyLearner(Learner):
    def __init__(self, setup: LearnerSetup, toy: ToyConfig) -> None:
        super().__init__(setup)
        self.toy = toy

    def iteration(self) -> dict[str, torch.Tensor | float]:
        return {"scale": self.toy.scale}

    def modules(self) -> dict[str, nn.Module]:
        return {"network": self.network}


TOY = Algorithm("toy", "a test's", "toy", ToyConfig, ToyLearner, forms=(False,), aux=False, policy=False, check_keys=_check_toy,
                check_use=lambda t, c: None)


def test_an_algorithm_added_to_the_table_is_configured_validated_and_built(tiny_config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ALGORITHMS, "toy", TOY)
    config = tiny_config(run={"algorithm": "toy"}, toy={"scale": 2.0})
    assert config.settings(TOY) == ToyConfig(2.0) and "[toy]\nscale = 2.0" in config.to_toml()
    assert TrainConfig.from_dict(config.to_dict()) == config
    learner = make_learner(config, 0, CPU)
    assert isinstance(learner, ToyLearner) and learner.iteration() == {"scale": 2.0}
    with pytest.raises(ConfigError, match=r"\[toy\] scale must be > 0"):
        tiny_config(toy={"scale": 0.0})


# ---------------------------------------------------------------- no branch on an algorithm's name outside training/
NAMES_AN_ALGORITHM = re.compile(r"algorithm\s*(==|!=)|(==|!=)\s*\S*algorithm\b")


def test_no_module_outside_training_compares_algorithm_names() -> None:
    assert NAMES_AN_ALGORITHM.search('if config.run.algorithm == "ippo":')  # negative control: the pattern catches one
    assert NAMES_AN_ALGORITHM.search('"ippo" != training.run.algorithm')
    root = Path(eqc.__file__).parent
    found = [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py")) if TRAINING not in path.parents
             for n, line in enumerate(path.read_text().splitlines(), 1) if NAMES_AN_ALGORITHM.search(line)]
    assert found == []
