"""Test configuration: `--runslow` (or EQC_SLOW=1) runs the long property suites marked `slow`."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow") or os.environ.get("EQC_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow or EQC_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
