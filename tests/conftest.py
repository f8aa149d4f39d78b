"""Test configuration.

- ``--runslow`` (or ``EQC_SLOW=1``) runs the long property suites marked ``slow``.
- ``EQC_REQUIRE_ESCNN=1`` (set by ``make test-escnn``) makes a skip of an escnn test (marked
  ``escnn``, or skipped for want of escnn) a failure, and so is a run with no escnn test passed:
  the bridge cannot pass CI by being skipped.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, settings

import eqc

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


_EQC_DIR = str(Path(eqc.__file__).resolve().parent)
#: Tensor methods that read values back to the host (on an accelerator: wait for it).
_READS = ("item", "tolist", "__bool__", "__int__", "__float__", "__index__", "cpu", "numpy", "nonzero", "unique", "masked_select")
#: Factories that build on the CPU unless given ``device=``.
_FACTORIES = ("zeros", "ones", "full", "empty", "arange", "rand", "randn", "randint", "randperm", "eye", "linspace")


class HostTraffic:
    """Records what eqc's own code does that would stall or break on an accelerator, as ``"file:function what"``:

    - ``read X``: a value read back to the host (``.item()``, ``bool(t)``, ``int(t)``, ``.tolist()``, ``.cpu()``,
      ``.nonzero()``, ``.unique()``, indexing with a boolean mask, ...);
    - ``host X``: a tensor built from host data (``torch.tensor``, ``torch.as_tensor`` of a non-tensor), or a
      factory called without ``device=`` (a CPU tensor whatever the device in use).

    Only calls made directly by eqc's modules count (not torch's internals). Use as a context manager.
    """

    def __init__(self) -> None:
        self.events: list[str] = []
        self._saved: list[tuple[Any, str, Any]] = []

    def _site(self, what: str) -> None:
        frame = sys._getframe(2)
        if frame.f_code.co_filename.startswith(_EQC_DIR):
            self.events.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name} {what}")

    def _patch(self, owner: Any, name: str, wrapper: Any) -> None:
        self._saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, wrapper)

    def __enter__(self) -> HostTraffic:
        for name in _READS:
            self._patch(torch.Tensor, name, self._counting(getattr(torch.Tensor, name), f"read {name}"))
        for name in ("__getitem__", "__setitem__"):
            self._patch(torch.Tensor, name, self._mask_index(getattr(torch.Tensor, name), name))
        self._patch(torch, "tensor", self._counting(torch.tensor, "host tensor"))
        as_tensor = torch.as_tensor

        def from_host(data: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
            if not isinstance(data, torch.Tensor):
                self._site("host as_tensor")
            return as_tensor(data, *args, **kwargs)

        self._patch(torch, "as_tensor", from_host)
        for name in _FACTORIES:
            self._patch(torch, name, self._without_device(getattr(torch, name), name))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)

    def _counting(self, original: Any, what: str) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self._site(what)
            return original(*args, **kwargs)

        return wrapper

    def _mask_index(self, original: Any, name: str) -> Any:
        def wrapper(tensor: torch.Tensor, index: Any, *rest: Any) -> Any:
            parts = index if isinstance(index, tuple) else (index,)
            if any(isinstance(p, torch.Tensor) and p.dtype == torch.bool and p.dim() > 0 for p in parts):
                self._site(f"read {name} with a boolean mask")
            return original(tensor, index, *rest)

        return wrapper

    def _without_device(self, original: Any, name: str) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if "device" not in kwargs:
                self._site(f"host {name} without device=")
            return original(*args, **kwargs)

        return wrapper


@pytest.fixture
def host_traffic() -> type[HostTraffic]:
    """:class:`HostTraffic`: ``with host_traffic() as traffic: ...`` then look at ``traffic.events``."""
    return HostTraffic
