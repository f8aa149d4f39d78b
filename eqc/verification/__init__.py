"""Property tests ("proofs by test"): equivariance of networks, algebra of groups and
representations, and symmetries of environments. Import from your own pytest suites."""

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
