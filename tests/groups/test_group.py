import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from eqc.groups import (
    GroupTooLargeError,
    PermutationGroup,
    alternating,
    check_is_group,
    compose_permutations,
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
    assert torch.equal(g.permutation_to_index(g.elements), torch.arange(24))
    assert torch.equal(g.permutation_to_index(g.elements.reshape(4, 6, 4)), torch.arange(24).reshape(4, 6))


def test_compose_matches_table_and_convention():
    g = dihedral(5)
    i, j = torch.meshgrid(torch.arange(10), torch.arange(10), indexing="ij")
    table = g.compose_indices(i, j)
    assert torch.equal(table, g.multiplication_table)
    for a, b in [(1, 2), (3, 7), (9, 4)]:
        assert g.elements[int(table[a, b])].tolist() == compose_permutations(g.elements[a], g.elements[b]).tolist()
    assert torch.equal(g.compose_indices(torch.arange(10), g.inverse), torch.zeros(10, dtype=torch.long))


def test_large_group_order_without_enumeration_and_refusal():
    s9 = symmetric(9)
    assert s9.order == math.factorial(9)
    assert symmetric(12).order == math.factorial(12)
    with pytest.raises(GroupTooLargeError, match="enumeration_limit"):
        _ = s9.elements
    with pytest.raises(GroupTooLargeError, match="subgroup"):
        s9.random_indices(3)
    assert symmetric(9, enumeration_limit=400_000).is_enumerable


def test_random_permutations_are_members_and_uniform():
    gen = torch.Generator().manual_seed(0)
    for group in (symmetric(9), dihedral(7), direct_product(cyclic(3), symmetric(4))):
        sample = group.random_permutations(200, gen)
        assert all(p in group for p in sample)
    group = symmetric(4)
    counts = torch.bincount(group.permutation_to_index(group.random_permutations(24_000, gen)), minlength=24).double()
    chi2 = float(((counts - 1000) ** 2 / 1000).sum())
    assert chi2 < 60  # 23 degrees of freedom: P(chi2 > 60) < 1e-4 under uniformity


def test_random_elements_reproducible_from_seed():
    g = symmetric(5)
    a = g.random_indices(10, torch.Generator().manual_seed(3))
    b = g.random_indices(10, torch.Generator().manual_seed(3))
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
        ([[1, 0]], {"degree": 3}, r"generators\[0\] must have last dimension 3 \(the degree\)"),
        ([], {}, "degree is required"),
    ],
)
def test_from_generators_bad_input(gens, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PermutationGroup.from_generators(gens, **kwargs)


def test_index_errors():
    g = cyclic(5)
    with pytest.raises(ValueError, match="not an element"):
        g.permutation_to_index(torch.tensor([1, 0, 2, 3, 4]))
    with pytest.raises(ValueError, match="last dimension 5"):
        g.permutation_to_index(torch.tensor([1, 0, 2]))
    with pytest.raises(ValueError, match=r"outside 0\.\.4"):
        g.compose_indices(5, 0)
    with pytest.raises(TypeError, match="integer"):
        g.compose_indices(torch.tensor([0.5]), 0)
    with pytest.raises(ValueError, match="not a permutation"):
        cyclic(3).permutation_to_index(torch.tensor([0, 0, 5]))  # would alias the identity without the check
    with pytest.raises(TypeError, match="from_generators"):
        PermutationGroup([[1, 0]])


# ---------------------------------------------------------------- the one validator of elements
ROTATION, REFLECTION = [1, 2, 3, 4, 0], [1, 0, 2, 3, 4]  # in dihedral(5), and a transposition that is not


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(indices=10), ValueError, r"indices = 10 is outside 0\.\.9, the element indices of dihedral\(5\)"),
        (dict(indices=torch.tensor([0, 10])), ValueError, r"outside 0\.\.9 \(e\.g\. 10\); dihedral\(5\) has order 10"),
        (dict(indices=[-1]), ValueError, r"indices holds element indices outside 0\.\.9 \(e\.g\. -1\)"),
        (dict(indices=torch.tensor([0.0])), TypeError, r"indices must hold integers \(element indices\), got dtype torch.float32"),
        (dict(indices=True), TypeError, r"indices must be element indices given as a LongTensor or ints, got bool"),
        (dict(indices="3"), TypeError, r"indices must be element indices given as a LongTensor or ints, got str"),
        (dict(indices=[1, 2], name="g"), None, None),
        (dict(permutations=[[1, 2, 3, 4, 0.5]]), TypeError, r"permutations must hold integers \(permutations\), got dtype"),
        (dict(permutations=[[0, 0, 2, 3, 4]]), ValueError, r"permutations\[0\] = \[0, 0, 2, 3, 4\] is not a permutation of 0\.\.4"),
        (dict(permutations=[ROTATION, REFLECTION]), ValueError, r"permutations\[1\] = \[1, 0, 2, 3, 4\] is not an element of dihedral"),
        (dict(permutations=[[1, 0, 2]]), ValueError, r"must have last dimension 5 \(the degree\), got shape \[1, 3\]"),
        (dict(permutations=torch.tensor(ROTATION), batch_dims=1), ValueError, r"a 1-D tensor of shape \[5\], which is ambiguous"),
        (dict(permutations=[[ROTATION]], batch_dims=1), ValueError, r"must be permutations of shape \[k, 5\], got shape \[1, 1, 5\]"),
        (dict(indices=[ROTATION], batch_dims=1), ValueError, r"got shape \[1, 5\]; permutations \[\.\.\., 5\] go in permutations="),
        (dict(indices=3, batch_dims=1), ValueError, r"shape \[k\] \(1-D\), got the int 3; write \[3\]"),
        (dict(indices=torch.tensor([3]), batch_dims=0), ValueError, r"shape \[\] \(an int or a 0-d tensor\), got shape \[1\]"),
        (dict(indices=1, permutations=[ROTATION]), TypeError, "one form, indices= or permutations=, got both"),
        (dict(), TypeError, "one form, indices= or permutations=, got neither"),
        (dict(name="g"), TypeError, "g must be group elements"),
    ],
)
def test_check_elements_refuses_bad_elements_with_a_specific_message(kwargs, error, match):
    if error is None:
        assert dihedral(5).check_elements(**kwargs).tolist() == [1, 2]
        return
    with pytest.raises(error, match=match):
        dihedral(5).check_elements(**kwargs)


def test_check_elements_returns_each_form_as_given_and_never_reads_another_device():
    g = dihedral(5)
    assert isinstance(g.check_elements(indices=3), int)  # an int stays an int: no tensor is built in a hot loop
    assert torch.equal(g.check_elements(indices=torch.tensor([1, 2], dtype=torch.int32)), torch.tensor([1, 2]))
    assert g.check_elements(indices=torch.tensor([70], device="meta")).device.type == "meta"  # not read back
    assert g.check_elements(indices=torch.tensor([70]), check_range=False).tolist() == [70]  # the caller skips the read
    assert torch.equal(g.check_elements(permutations=[[1, 2, 3, 4, 0]]), torch.tensor([[1, 2, 3, 4, 0]]))
    assert g.check_elements(permutations=torch.tensor([1, 2, 3, 4, 0]), batch_dims=0).shape == (5,)


def test_membership_of_permutations_needs_no_listing():
    """Permutations are checked by sifting through the stabiliser chain, also for a group too large to list."""
    big = direct_product(symmetric(6), dihedral(7))
    big.enumeration_limit = 100  # order 10,080: not listable
    perms = big.random_permutations(200, torch.Generator().manual_seed(0))
    assert torch.equal(big.check_elements(permutations=perms), perms)
    swap_across = torch.tensor([[6, *range(1, 6), 0, *range(7, 13)]])  # swaps points of the two factors
    with pytest.raises(ValueError, match="is not an element"):
        big.check_elements(permutations=swap_across)
    with pytest.raises(GroupTooLargeError):
        big.check_elements(indices=0)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_membership_agrees_with_listing(data):
    group = data.draw(eqst.groups(max_degree=5))
    everything = symmetric(group.degree).elements
    members = [p for p in everything if p in group]
    assert torch.equal(torch.stack(members), group.elements)  # both lexicographic


def test_check_is_group():
    assert check_is_group(cyclic(4).elements).shape == (4, 4)
    with pytest.raises(ValueError, match="not a group"):
        check_is_group([[0, 1, 2], [1, 2, 0]])


@pytest.mark.parametrize(
    "make, order",
    [
        (symmetric, math.factorial),
        (cyclic, lambda n: n),
        (dihedral, lambda n: 2 * n),
        (alternating, lambda n: max(1, math.factorial(n) // 2)),
        (trivial, lambda n: 1),
    ],
)
def test_catalogue_orders_are_closed_form_and_agree_with_schreier_sims(make, order):
    import time

    for n in range(1 if make is not dihedral else 3, 9):
        group = make(n)
        assert group.order == order(n) == int(group.to_sympy().order()), n
    for n in (100, 10_000):
        start = time.perf_counter()
        group = make(n)
        assert group.order == order(n) and f"degree {n}" in repr(group)
        assert time.perf_counter() - start < 2.0  # was 80 s (symmetric(100)) and 20 s (cyclic(10000))
    assert "about 9.333e157" in repr(symmetric(100))  # huge orders are shown rounded, not as 158 digits


def test_direct_product_order_is_the_product():
    assert direct_product(symmetric(50), cyclic(7)).order == math.factorial(50) * 7


def test_from_generators_refuses_a_non_list():
    with pytest.raises(TypeError, match="generators must be a list of permutations"):
        PermutationGroup.from_generators(None)
    with pytest.raises(TypeError, match="generators must be a list of permutations"):
        PermutationGroup.from_generators(3)
    with pytest.raises(TypeError, match=r"generators\[0\] must be a permutation"):
        PermutationGroup.from_generators([None])


def test_index_and_permutation_forms_share_their_verbs():
    g = dihedral(5)
    i, j = torch.tensor([1, 4, 7]), torch.tensor([2, 2, 9])
    product = g.compose_indices(i, j)
    assert torch.equal(g.index_to_permutation(product), compose_permutations(g.index_to_permutation(i), g.index_to_permutation(j)))
    assert torch.equal(g.permutation_to_index(g.index_to_permutation(i)), i)
    assert torch.equal(g.compose_indices(i, g.inverse_indices(i)), torch.zeros(3, dtype=torch.long))
    assert torch.equal(g.inverse_indices(i), g.inverse[i])
    assert g.random_indices(5, torch.Generator().manual_seed(0)).shape == (5,)
    with pytest.raises(TypeError, match="index must be element indices given as a LongTensor or ints, got str"):
        g.index_to_permutation("3")
    with pytest.raises(TypeError, match="perms must be group elements"):
        g.permutation_to_index(None)


# ---------------------------------------------------------------- devices
def _spy_randint(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record, for every ``torch.randint`` with a generator, whether it draws on the generator's device (one
    without ``device=`` draws on the CPU, which a CUDA generator refuses)."""
    draws: list[bool] = []
    randint = torch.randint

    def spy(*args, generator=None, device=None, **kwargs):
        if generator is not None:
            draws.append(device is not None and torch.device(device) == generator.device)
        return randint(*args, generator=generator, device=device, **kwargs)

    monkeypatch.setattr(torch, "randint", spy)
    return draws


def test_random_draws_happen_on_the_generators_device(monkeypatch: pytest.MonkeyPatch):
    draws = _spy_randint(monkeypatch)
    gen = torch.Generator().manual_seed(0)
    symmetric(5).random_indices(4, gen)
    symmetric(5).random_permutations(4, gen)
    assert len(draws) > 1 and all(draws)


def test_index_tensors_on_another_device_are_not_read_back():
    """Checking meta (or CUDA) indices against the order would read them back to the host: they go straight to the
    device's own indexing. CPU indices and ints are still checked."""
    group = symmetric(5)
    index = torch.zeros(3, dtype=torch.long, device="meta")
    assert group.inverse_indices(index).device.type == "meta"
    assert group.index_to_permutation(index).shape == (3, 5)
    assert group.device_table("elements", "meta") is group.device_table("elements", torch.device("meta"))
    with pytest.raises(ValueError, match=r"outside 0\.\.119"):
        group.inverse_indices(torch.tensor([120]))
    with pytest.raises(ValueError, match=r"outside 0\.\.119"):
        group.inverse_indices(120)
    with pytest.raises(ValueError, match="'elements' or 'inverse'"):
        group.device_table("table", "cpu")
