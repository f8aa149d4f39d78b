"""Fixtures for the Hanabi tests: seeded generators, HLE envs reused across tests, tiny training configs that run in seconds on a CPU."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from eqc.domains.hanabi.training.config import TrainConfig


@pytest.fixture
def generator() -> torch.Generator:
    """A fresh torch.Generator with a fixed seed."""
    return torch.Generator().manual_seed(1234)


@pytest.fixture(scope="session")
def hle_env() -> Iterator[Callable[..., Any]]:
    """``hle_env(num_players=2, observation_type="full", **fields)``: a cached ``HanabiEnv`` of
    ``HanabiRules(num_players, observation_type=..., **fields)`` (skips without HLE).

    Envs are shared within the session; every test must ``reset`` before use.
    """
    pytest.importorskip("hanabi_learning_environment")
    from eqc.domains.hanabi import HanabiRules
    from eqc.domains.hanabi.hle import HanabiEnv

    cache: dict[HanabiRules, HanabiEnv] = {}

    def make(num_players: int = 2, observation_type: str = "full", **fields: Any) -> HanabiEnv:
        rules = HanabiRules(num_players, observation_type=observation_type, **fields)
        if rules not in cache:
            cache[rules] = HanabiEnv(rules)
        return cache[rules]

    yield make
    cache.clear()



def tiny_config(**changes: dict) -> TrainConfig:
    """A PQN config small enough for unit tests: 64 games, a 64-wide MLP, short evaluations, the shipped
    configs' ``v0_belief`` observations, in fp32 (not "auto": the tests train the same on every processor)."""
    base = TrainConfig().replace(
        game={"knowledge": "v0_belief"},
        run={"num_envs": 64, "total_moves": 4096, "eval_every_moves": 2048, "eval_games": 64, "checkpoint_minutes": 10.0},
        network={"hidden_size": 64, "mlp_layers": 1, "precision": "fp32"},
        pqn={"rollout_steps": 8, "epochs": 1, "minibatches": 2, "eps_decay_moves": 100_000},
    )
    return base.replace(**changes) if changes else base


@pytest.fixture(name="tiny_config")
def tiny_config_fixture():
    """``tiny_config(**section_changes)`` -> a small PQN TrainConfig."""
    return tiny_config
