import math

import pytest
import torch
from hypothesis import given

from eqc.groups import (
    GroupTooLargeError,
    PermutationGroup,
    alternating,
    check_is_group,
    compose,
    cyclic,
    dihedral,
    direct_product,
    symmetric,
    trivial,
)
from eqc.verification import check_group
from eqc.verification import strategies as eqst


@pytest.mark.parametrize(
    "group, order",
    [
        (cyclic(1), 1), (cyclic(5), 5), (cyclic(9), 9), (dihedral(3), 6), (dihedral(5), 10), (dihedral(6), 12),
        (symmetric(1), 1), (symmetric(4), 24), (symmetric(5), 120), (alternating(4), 12), (alternating(5), 60),
        (trivial(4), 1), (direct_product(cyclic(3), symmetric(3)), 18),
    ],
)
def test_catalogue_orders_and_axioms(group, order):
    assert group.order == order == len(group)
    check_group(group)


def test_catalogue_generators_follow_documented_conventions():
    assert cyclic(5).generators.tolist() == [[1, 2, 3, 4, 0]]
    assert dihedral(5).generators.tolist()[1] == [0, 4, 3, 2, 1]  # (1 4)(2 3), the paper's D10 reflection
    assert cyclic(5).is_subgroup_of(dihedral(5)) and dihedral(5).is_subgroup_of(symmetric(5))
    assert not dihedral(5).is_subgroup_of(cyclic(5))
    assert not alternating(5).is_subgroup_of(dihedral(5))


@given(eqst.groups())
def test_random_small_groups_satisfy_axioms(group):
    check_group(group)


def test_elements_sorted_identity_first_and_index_round_trip():
    g = symmetric(4)
    assert g.elements[0].tolist() == [0, 1, 2, 3]
    assert torch.equal(g.index_of(g.elements), torch.arange(24))
    assert torch.equal(g.index_of(g.elements.reshape(4, 6, 4)), torch.arange(24).reshape(4, 6))


def test_compose_matches_table_and_convention():
    g = dihedral(5)
    i, j = torch.meshgrid(torch.arange(10), torch.arange(10), indexing="ij")
    table = g.compose(i, j)
    assert torch.equal(table, g.multiplication_table)
    for a, b in [(1, 2), (3, 7), (9, 4)]:
        assert g.elements[int(table[a, b])].tolist() == compose(g.elements[a], g.elements[b]).tolist()
    assert torch.equal(g.compose(torch.arange(10), g.inverse), torch.zeros(10, dtype=torch.long))


def test_large_group_order_without_enumeration_and_refusal():
    s9 = symmetric(9)
    assert s9.order == math.factorial(9)
    assert symmetric(12).order == math.factorial(12)
    with pytest.raises(GroupTooLargeError, match="enumeration_limit"):
        s9.elements
    with pytest.raises(GroupTooLargeError, match="subgroup"):
        s9.random_elements(3)
    assert symmetric(9, enumeration_limit=400_000).is_enumerable


def test_random_permutations_are_members_and_uniform():
    gen = torch.Generator().manual_seed(0)
    for group in (symmetric(9), dihedral(7), direct_product(cyclic(3), symmetric(4))):
        sample = group.random_permutations(200, gen)
        assert all(p in group for p in sample)
    group = symmetric(4)
    counts = torch.bincount(group.index_of(group.random_permutations(24_000, gen)), minlength=24).double()
    chi2 = float(((counts - 1000) ** 2 / 1000).sum())
    assert chi2 < 60  # 23 degrees of freedom: P(chi2 > 60) < 1e-4 under uniformity


def test_random_elements_reproducible_from_seed():
    g = symmetric(5)
    a = g.random_elements(10, torch.Generator().manual_seed(3))
    b = g.random_elements(10, torch.Generator().manual_seed(3))
    assert torch.equal(a, b) and a.max() < 120


def test_direct_product_acts_on_disjoint_blocks():
    g = direct_product(cyclic(3), symmetric(2))
    assert g.degree == 5 and g.order == 6
    for p in g.elements:
        assert sorted(p[:3].tolist()) == [0, 1, 2] and sorted(p[3:].tolist()) == [3, 4]


def test_subgroup_membership_checked():
    s5 = symmetric(5)
    c5 = s5.subgroup([[1, 2, 3, 4, 0]])
    assert c5.order == 5 and c5 == cyclic(5)
    with pytest.raises(ValueError, match="not an element"):
        cyclic(5).subgroup([[1, 0, 2, 3, 4]])


@pytest.mark.parametrize(
    "gens, kwargs, match",
    [
        ([[0, 0, 1]], {}, r"generators\[0\].*not a permutation"),
        ([[1, 0, 2], [1, 0]], {}, "same degree"),
        ([[1, 0]], {"degree": 3}, "degree is 3"),
        ([], {}, "degree is required"),
    ],
)
def test_from_generators_bad_input(gens, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PermutationGroup.from_generators(gens, **kwargs)


def test_index_errors():
    g = cyclic(5)
    with pytest.raises(ValueError, match="not an element"):
        g.index_of(torch.tensor([1, 0, 2, 3, 4]))
    with pytest.raises(ValueError, match="last dimension 5"):
        g.index_of(torch.tensor([1, 0, 2]))
    with pytest.raises(ValueError, match="outside 0..4"):
        g.compose(5, 0)
    with pytest.raises(TypeError, match="integer"):
        g.compose(torch.tensor([0.5]), 0)
    with pytest.raises(ValueError, match="not a permutation"):
        cyclic(3).index_of(torch.tensor([0, 0, 5]))  # would alias the identity without the check
    with pytest.raises(TypeError, match="from_generators"):
        PermutationGroup([[1, 0]])


def test_check_is_group():
    assert check_is_group(cyclic(4).elements).shape == (4, 4)
    with pytest.raises(ValueError, match="not a group"):
        check_is_group([[0, 1, 2], [1, 2, 0]])
