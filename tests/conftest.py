"""Test configuration.

- ``--runslow`` (or ``EQC_SLOW=1``) runs the long property suites marked ``slow``.
- ``EQC_REQUIRE_ESCNN=1`` (set by ``make test-escnn``) makes a skip of an escnn test (marked
  ``escnn``, or skipped for want of escnn) a failure, and so is a run with no escnn test passed:
  the bridge cannot pass CI by being skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")

_REQUIRE_ESCNN = os.environ.get("EQC_REQUIRE_ESCNN") == "1"
_escnn_passed: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow") or os.environ.get("EQC_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow or EQC_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def _about_escnn(report: pytest.CollectReport | pytest.TestReport) -> bool:
    return "escnn" in str(report.longrepr) or "escnn" in getattr(report, "keywords", {})


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if _REQUIRE_ESCNN and report.skipped and _about_escnn(report):
        report.outcome = "failed"
        report.longrepr = f"EQC_REQUIRE_ESCNN=1 but {report.nodeid} was skipped: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    if not _REQUIRE_ESCNN or item.get_closest_marker("escnn") is None:
        return
    report = outcome.get_result()
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = f"EQC_REQUIRE_ESCNN=1 but this escnn test was skipped: {report.longrepr}"
    elif report.when == "call" and report.passed:
        _escnn_passed.append(item.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _REQUIRE_ESCNN and not _escnn_passed and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
