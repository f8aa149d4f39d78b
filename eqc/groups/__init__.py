"""Finite permutation groups and their permutation representations.

Convention: a permutation is an image array (point ``i`` goes to ``p[i]``) and
``(g * h)[i] = g[h[i]]`` (apply ``h`` first). A representation moves the feature at
coordinate ``c`` to coordinate ``perm_g(c)``.
"""

from eqc.groups.catalogue import alternating, cyclic, dihedral, direct_product, symmetric, trivial
from eqc.groups.group import DEFAULT_ENUMERATION_LIMIT, GroupTooLargeError, PermutationGroup, check_is_group
from eqc.groups.permutations import as_permutation, compose, from_sympy, identity, invert, to_sympy
from eqc.groups.representation import PermutationRepresentation, direct_sum, tensor_product

__all__ = [
    "DEFAULT_ENUMERATION_LIMIT",
    "GroupTooLargeError",
    "PermutationGroup",
    "PermutationRepresentation",
    "alternating",
    "as_permutation",
    "check_is_group",
    "compose",
    "cyclic",
    "dihedral",
    "direct_product",
    "direct_sum",
    "from_sympy",
    "identity",
    "invert",
    "symmetric",
    "tensor_product",
    "to_sympy",
    "trivial",
]
