"""Tiny training configs that run in seconds on a CPU."""

from __future__ import annotations

import pytest

from eqc.domains.hanabi.training.config import TrainConfig


def tiny_config(**changes: dict) -> TrainConfig:
    """A PQN config small enough for unit tests: 64 games, a 64-wide MLP, short evaluations."""
    base = TrainConfig().replace(
        run={"num_envs": 64, "total_moves": 4096, "eval_every_moves": 2048, "eval_games": 64, "checkpoint_minutes": 10.0},
        network={"hidden_size": 64, "mlp_layers": 1},
        pqn={"rollout_steps": 8, "epochs": 1, "minibatches": 2, "eps_decay_moves": 100_000},
    )
    return base.replace(**changes) if changes else base


@pytest.fixture(name="tiny_config")
def tiny_config_fixture():
    """``tiny_config(**section_changes)`` -> a small PQN TrainConfig."""
    return tiny_config
