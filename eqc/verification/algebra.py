"""Checks of the algebra: group axioms and the homomorphism property of representations.

Exhaustive for groups up to ``exhaustive_limit`` elements, sampled beyond. Each check
raises ``AssertionError`` naming the first violation and returns ``None`` otherwise.
"""

from __future__ import annotations

import torch

from eqc.groups import PermutationGroup, PermutationRepresentation, compose, identity, invert

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
    e = group.elements
    n = group.order
    if e.shape != (n, group.degree):
        raise AssertionError(f"elements has shape {tuple(e.shape)}, expected [{n}, {group.degree}]")
    if not torch.equal(e[0], identity(group.degree)):
        raise AssertionError(f"row 0 is {e[0].tolist()}, not the identity")
    if not torch.equal(torch.sort(e, dim=-1).values, identity(group.degree).expand_as(e)):
        raise AssertionError("some element is not a permutation")
    if torch.unique(e, dim=0).shape[0] != n:
        raise AssertionError("elements are not distinct")
    a, b = _pairs(n, exhaustive_limit, generator)
    try:
        ab = group.index_of(compose(e[a], e[b]))  # raises if a product leaves the group
    except ValueError as err:
        raise AssertionError(f"not closed under composition: {err}") from err
    if not torch.equal(compose(e, e[group.inverse]), identity(group.degree).expand_as(e)):
        raise AssertionError("inverse[k] is not the inverse of element k for some k")
    c = torch.randint(n, a.shape, generator=generator)
    left = group.index_of(compose(e[ab], e[c]))
    right = group.index_of(compose(e[a], e[group.index_of(compose(e[b], e[c]))]))
    if not torch.equal(left, right):
        k = int((left != right).nonzero()[0, 0])
        raise AssertionError(f"associativity fails for elements {int(a[k])}, {int(b[k])}, {int(c[k])}")


def check_representation(
    rep: PermutationRepresentation, *, exhaustive_limit: int = EXHAUSTIVE_LIMIT, generator: torch.Generator | None = None
) -> None:
    """Each rho(g) is a permutation, rho(e) = id, rho(g*h) = rho(g) rho(h), rho(g^-1) = rho(g)^-1."""
    group = rep.group
    table = rep.coordinate_permutations
    if table.shape != (group.order, rep.dim):
        raise AssertionError(f"coordinate table has shape {tuple(table.shape)}, expected [{group.order}, {rep.dim}]")
    if not torch.equal(torch.sort(table, dim=-1).values, identity(rep.dim).expand_as(table)):
        raise AssertionError("some rho(g) is not a permutation of the coordinates")
    if not torch.equal(table[0], identity(rep.dim)):
        raise AssertionError("rho(identity) is not the identity")
    a, b = _pairs(group.order, exhaustive_limit, generator)
    products = group.index_of(compose(group.elements[a], group.elements[b]))
    expected = compose(table[a], table[b])
    bad = (table[products] != expected).any(-1)
    if bool(bad.any()):
        k = int(bad.nonzero()[0, 0])
        raise AssertionError(
            f"rho(g*h) != rho(g) rho(h) for g = {group.elements[a[k]].tolist()}, h = {group.elements[b[k]].tolist()}"
        )
    if not torch.equal(table[group.inverse], invert(table)):
        raise AssertionError("rho(g^-1) != rho(g)^-1 for some g")
