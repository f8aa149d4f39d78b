"""Checks of the algebra: group axioms and the homomorphism property of representations.

Exhaustive for groups up to ``exhaustive_limit`` elements, sampled beyond. Each check
raises ``AssertionError`` naming the first violation and returns ``None`` otherwise.
"""

from __future__ import annotations

import torch

from eqc._checks import check_int
from eqc.groups import (
    PermutationGroup,
    PermutationRepresentation,
    compose_permutations,
    identity_permutation,
    inverse_permutations,
)

__all__ = ["EXHAUSTIVE_LIMIT", "SAMPLED_PAIRS", "check_group", "check_representation"]

#: Largest order checked over all pairs (and, for associativity, all triples up to the cube root).
EXHAUSTIVE_LIMIT = 4_096
SAMPLED_PAIRS = 20_000


def _pairs(order: int, exhaustive_limit: int, generator: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor]:
    if order <= exhaustive_limit:
        a, b = torch.meshgrid(torch.arange(order), torch.arange(order), indexing="ij")
        return a.reshape(-1), b.reshape(-1)
    return torch.randint(order, (SAMPLED_PAIRS,), generator=generator), torch.randint(order, (SAMPLED_PAIRS,), generator=generator)


def check_group(
    group: PermutationGroup, *, exhaustive_limit: int = EXHAUSTIVE_LIMIT, generator: torch.Generator | None = None
) -> None:
    """Identity at row 0, distinct rows that are permutations, closure, inverses and associativity."""
    if not isinstance(group, PermutationGroup):
        raise TypeError(f"group must be a PermutationGroup, got {type(group).__name__}")
    check_int(exhaustive_limit, "exhaustive_limit", low=0)
    e = group.elements
    n = group.order
    if e.shape != (n, group.degree):
        raise AssertionError(f"elements has shape {tuple(e.shape)}, expected [{n}, {group.degree}]")
    if not torch.equal(e[0], identity_permutation(group.degree)):
        raise AssertionError(f"row 0 is {e[0].tolist()}, not the identity")
    if not torch.equal(torch.sort(e, dim=-1).values, identity_permutation(group.degree).expand_as(e)):
        raise AssertionError("some element is not a permutation")
    if torch.unique(e, dim=0).shape[0] != n:
        raise AssertionError("elements are not distinct")
    a, b = _pairs(n, exhaustive_limit, generator)
    try:
        ab = group.permutation_to_index(compose_permutations(e[a], e[b]))  # raises if a product leaves the group
    except ValueError as err:
        raise AssertionError(f"not closed under composition: {err}") from err
    if not torch.equal(compose_permutations(e, e[group.inverse]), identity_permutation(group.degree).expand_as(e)):
        raise AssertionError("inverse[k] is not the inverse of element k for some k")
    c = torch.randint(n, a.shape, generator=generator)
    left = group.permutation_to_index(compose_permutations(e[ab], e[c]))
    right = group.permutation_to_index(compose_permutations(e[a], e[group.permutation_to_index(compose_permutations(e[b], e[c]))]))
    if not torch.equal(left, right):
        k = int((left != right).nonzero()[0, 0])
        raise AssertionError(f"associativity fails for elements {int(a[k])}, {int(b[k])}, {int(c[k])}")


def check_representation(
    rep: PermutationRepresentation, *, exhaustive_limit: int = EXHAUSTIVE_LIMIT, generator: torch.Generator | None = None
) -> None:
    """Each rho(g) is a permutation, rho(e) = id, rho(g*h) = rho(g) rho(h), rho(g^-1) = rho(g)^-1."""
    if not isinstance(rep, PermutationRepresentation):
        raise TypeError(f"rep must be a PermutationRepresentation, got {type(rep).__name__}")
    check_int(exhaustive_limit, "exhaustive_limit", low=0)
    group = rep.group
    table = rep.coordinate_permutations
    if table.shape != (group.order, rep.dim):
        raise AssertionError(f"coordinate table has shape {tuple(table.shape)}, expected [{group.order}, {rep.dim}]")
    if not torch.equal(torch.sort(table, dim=-1).values, identity_permutation(rep.dim).expand_as(table)):
        raise AssertionError("some rho(g) is not a permutation of the coordinates")
    if not torch.equal(table[0], identity_permutation(rep.dim)):
        raise AssertionError("rho(identity) is not the identity")
    a, b = _pairs(group.order, exhaustive_limit, generator)
    products = group.permutation_to_index(compose_permutations(group.elements[a], group.elements[b]))
    expected = compose_permutations(table[a], table[b])
    bad = (table[products] != expected).any(-1)
    if bool(bad.any()):
        k = int(bad.nonzero()[0, 0])
        raise AssertionError(
            f"rho(g*h) != rho(g) rho(h) for g = {group.elements[a[k]].tolist()}, h = {group.elements[b[k]].tolist()}"
        )
    if not torch.equal(table[group.inverse], inverse_permutations(table)):
        raise AssertionError("rho(g^-1) != rho(g)^-1 for some g")
