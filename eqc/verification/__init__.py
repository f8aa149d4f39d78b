"""Property tests ("proofs by test"): equivariance of networks, algebra of groups and
representations, and symmetries of environments. Import from your own pytest suites; the
plugin :mod:`eqc.verification.pytest_plugin` (``pytest_plugins = ["eqc.verification.pytest_plugin"]``)
adds the ``float_tolerance`` fixture that runs a test in float32 and float64."""

from eqc.verification.algebra import check_group, check_representation
from eqc.verification.env_symmetry import Counterexample, assert_env_symmetry, check_env_symmetry
from eqc.verification.equivariance import EquivarianceReport, OutputError, assert_equivariant, equivariance_error

__all__ = [
    "Counterexample",
    "EquivarianceReport",
    "OutputError",
    "assert_env_symmetry",
    "assert_equivariant",
    "check_env_symmetry",
    "check_group",
    "check_representation",
    "equivariance_error",
]
