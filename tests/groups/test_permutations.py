import pytest
import torch
from sympy.combinatorics import Permutation

from eqc.groups import as_permutations, compose_permutations, from_sympy, inverse_permutations, to_sympy


def test_compose_applies_right_factor_first():
    g = torch.tensor([1, 2, 0])  # 0->1, 1->2, 2->0
    h = torch.tensor([0, 2, 1])  # swaps 1 and 2
    gh = compose_permutations(g, h)
    for i in range(3):
        assert gh[i] == g[h[i]]
    assert gh.tolist() == [1, 0, 2]


def test_sympy_boundary_reverses_product_order():
    g, h = torch.tensor([1, 2, 0, 3]), torch.tensor([3, 0, 2, 1])
    # sympy's p*q applies p first, so our g*h is sympy's h*g
    assert from_sympy(to_sympy(h) * to_sympy(g), 4).tolist() == compose_permutations(g, h).tolist()
    assert from_sympy(Permutation([1, 0]), 4).tolist() == [1, 0, 2, 3]


def test_invert_and_batched_compose():
    p = torch.stack([torch.randperm(6, generator=torch.Generator().manual_seed(s)) for s in range(5)])
    assert torch.equal(compose_permutations(p, inverse_permutations(p)), torch.arange(6).expand(5, 6))
    assert torch.equal(compose_permutations(inverse_permutations(p), p), torch.arange(6).expand(5, 6))


@pytest.mark.parametrize(
    "bad, error, match",
    [
        ([0, 0, 1], ValueError, r"perm = \[0, 0, 1\] is not a permutation of 0\.\.2"),
        ([0, 1, 3], ValueError, "not a permutation"),
        ([0.0, 1.0], TypeError, r"perm must hold integers \(a permutation\), got dtype torch.float32"),
        (torch.tensor([0.0, 1.0]), TypeError, "integers"),
        (torch.tensor([[0, 1]]), ValueError, r"perm must be image arrays of shape \[n\], got shape \[1, 2\]"),
        ([True, False], TypeError, "must hold integers"),
        (torch.tensor(3), ValueError, r"shape \[n\], got shape \[\]"),
    ],
)
def test_as_permutations_rejects_bad_input(bad, error, match):
    with pytest.raises(error, match=match):
        as_permutations(bad, name="perm", batch_dims=0)


def test_as_permutations_checks_degree_and_names_the_bad_row():
    with pytest.raises(ValueError, match=r"last dimension 4 \(the degree\), got shape \[3\]"):
        as_permutations([1, 0, 2], degree=4)
    assert as_permutations(torch.tensor([[[1, 0], [0, 1]]]), batch_dims=2).shape == (1, 2, 2)
    with pytest.raises(ValueError, match=r"perms\[1, 0\] = \[1, 1\] is not a permutation"):
        as_permutations([[[1, 0]], [[1, 1]]])


def test_permutation_verbs_check_their_arguments():
    import eqc.groups as groups

    assert not any(hasattr(groups, old) for old in ("compose", "invert", "identity"))  # one spelling per verb
    assert groups.identity_permutation(4).tolist() == [0, 1, 2, 3]
    with pytest.raises(TypeError, match=r"g must be a torch\.Tensor"):
        groups.compose_permutations([1, 0], torch.tensor([1, 0]))
    with pytest.raises(TypeError, match=r"p must be a torch\.Tensor"):
        groups.inverse_permutations(__import__("numpy").array([1, 0]))
    with pytest.raises(ValueError, match="degree"):
        groups.identity_permutation(-1)
    with pytest.raises(TypeError, match="perm must be a permutation given as a LongTensor or ints, got NoneType"):
        as_permutations(None, name="perm", batch_dims=0)
