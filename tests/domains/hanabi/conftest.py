"""Fixtures for the Hanabi tests: seeded generators and HLE envs reused across tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch


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
