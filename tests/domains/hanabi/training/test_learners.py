"""The table of algorithms: the training config's algorithm sections are the table's, and ``make_learner`` builds
every algorithm in each of its forms."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.config.train import TrainConfig, config_sections
from eqc.domains.hanabi.training.algorithms import ALGORITHMS
from eqc.domains.hanabi.training.learners import make_learner

CPU = torch.device("cpu")


def test_the_configs_algorithm_sections_are_the_table() -> None:
    """The training config holds one section per algorithm, named and typed by the table, and nothing else of theirs."""
    own = {a.section: a.settings for a in ALGORITHMS.values()}
    assert len(own) == len(ALGORITHMS)  # one section per algorithm
    sections = config_sections()
    assert {name: sections[name] for name in own} == own
    assert set(sections) - set(own) == {"run", "game", "rule", "network", "optim", "bootstrap"}
    config = TrainConfig()
    assert all(isinstance(config.settings(a), a.settings) for a in ALGORITHMS.values())
    assert list(config.to_dict()) == list(sections)


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
