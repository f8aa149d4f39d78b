"""The pytest plugin for users' suites, hidden assertion frames, and the documented property-test snippet as written."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from eqc.verification.equivariance import DTYPE_TOLERANCE

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


def _code(page: str, heading: str) -> str:
    section = (ROOT / page).read_text().split(heading, 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_float_tolerance_runs_each_test_in_float32_and_float64(pytester):
    pytester.makepyfile(
        """
        import torch
        pytest_plugins = ["eqc.verification.pytest_plugin"]

        def test_dtype(float_tolerance, float_dtype):
            assert torch.get_default_dtype() == float_dtype and torch.randn(2).dtype == float_dtype
            assert float_tolerance == {torch.float32: TOL32, torch.float64: TOL64}[float_dtype]

        def test_default_dtype_is_restored_afterwards():
            assert torch.get_default_dtype() == torch.float32
        """.replace("TOL32", repr(DTYPE_TOLERANCE[torch.float32])).replace("TOL64", repr(DTYPE_TOLERANCE[torch.float64]))
    )
    result = pytester.runpytest_inprocess("-v", "-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*test_dtype[[]float32[]] PASSED*", "*test_dtype[[]float64[]] PASSED*"])
    assert torch.get_default_dtype() == torch.float32


def test_failed_assertions_point_at_the_users_test_not_at_eqc(pytester):
    pytester.makepyfile(
        """
        import torch
        from eqc.groups import PermutationRepresentation, cyclic
        from eqc.verification import assert_equivariant

        def test_broken():
            rep = PermutationRepresentation.standard(cyclic(4))
            broken = lambda x: x * torch.tensor([1.0, 1.0, 1.0, 2.0])
            assert_equivariant(broken, rep, rep, torch.randn(3, 4))
        """
    )
    result = pytester.runpytest_inprocess("--tb=long", "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*assert_equivariant(broken, rep, rep, torch.randn(3, 4))*", "*fn is not equivariant*"])
    result.stdout.no_fnmatch_line("*report = equivariance_error(fn, in_rep, out_rep, x*")  # eqc's own frame is hidden


def test_documented_property_tests_run_as_written_after_the_quick_start(pytester):
    code = _code("README.md", "## Quick start") + "\n" + _code("docs/tutorials/symmetrize-a-network.md", "## 4. In your own test suite")
    pytester.makepyfile(test_my_policy=code)
    result = pytester.runpytest_inprocess("-v", "-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)  # the policy test in float32 and float64, and the env test
    result.stdout.fnmatch_lines(["*test_my_policy_is_equivariant[[]float32[]] PASSED*"])
