"""A pytest plugin for property tests in your own suite: run a test in float32 and in float64.

Enable it in a test module or your root ``conftest.py``::

    pytest_plugins = ["eqc.verification.pytest_plugin"]

and ask for a fixture:

- ``float_tolerance``: the test runs twice, with torch's default dtype set to float32 and then
  float64 (restored afterwards); the fixture's value is the matching tolerance per unit of
  output magnitude (:data:`eqc.verification.equivariance.DTYPE_TOLERANCE`), ready to pass as
  ``atol=`` to :func:`~eqc.verification.assert_equivariant`.
- ``float_dtype``: the same two runs, giving the dtype itself.

Build the network and the inputs inside the test (``nn.Linear`` and ``torch.randn`` follow
the default dtype), or convert them with ``.to(torch.get_default_dtype())``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from eqc.verification.equivariance import DTYPE_TOLERANCE

__all__ = ["FLOAT_DTYPES", "float_dtype", "float_tolerance"]

#: The dtypes every test using the fixtures runs in.
FLOAT_DTYPES = (torch.float32, torch.float64)


@pytest.fixture(params=FLOAT_DTYPES, ids=[str(d).removeprefix("torch.") for d in FLOAT_DTYPES])
def float_dtype(request: pytest.FixtureRequest) -> Iterator[torch.dtype]:
    """Set torch's default dtype to float32, then float64, for the test; restore it afterwards."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(request.param)
    try:
        yield request.param
    finally:
        torch.set_default_dtype(previous)


@pytest.fixture
def float_tolerance(float_dtype: torch.dtype) -> float:
    """The equivariance tolerance (per unit of output magnitude) matching the test's default dtype."""
    return DTYPE_TOLERANCE[float_dtype]
