"""Finite permutation groups and their permutation representations.

Conventions are stated once, where they are implemented: permutations and the product
``g * h`` in :mod:`eqc.groups.permutations`; the two forms of a group element (index or
permutation, always named by the argument) and their one validator in
:class:`~eqc.groups.PermutationGroup`; the direction of a representation in
:mod:`eqc.groups.representation`.
"""

from eqc.groups.catalogue import alternating, cyclic, dihedral, direct_product, symmetric, trivial
from eqc.groups.group import DEFAULT_ENUMERATION_LIMIT, GroupTooLargeError, PermutationGroup, check_is_group
from eqc.groups.permutations import (
    as_permutations,
    compose_permutations,
    from_sympy,
    identity_permutation,
    inverse_permutations,
    to_sympy,
)
from eqc.groups.representation import PermutationRepresentation, direct_sum, tensor_product

__all__ = [
    "DEFAULT_ENUMERATION_LIMIT",
    "GroupTooLargeError",
    "PermutationGroup",
    "PermutationRepresentation",
    "alternating",
    "as_permutations",
    "check_is_group",
    "compose_permutations",
    "cyclic",
    "dihedral",
    "direct_product",
    "direct_sum",
    "from_sympy",
    "identity_permutation",
    "inverse_permutations",
    "symmetric",
    "tensor_product",
    "to_sympy",
    "trivial",
]
