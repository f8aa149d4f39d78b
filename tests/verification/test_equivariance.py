import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from eqc.dec_pomdp import Block, Labels, Layout
from eqc.groups import PermutationRepresentation, cyclic, dihedral, symmetric
from eqc.verification import assert_equivariant, check_group, check_representation, equivariance_error
from eqc.verification import strategies as eqst


def test_reports_worst_element_and_coordinate_of_a_broken_map():
    group = cyclic(4)
    rep = PermutationRepresentation.standard(group)
    broken = lambda x: x * torch.tensor([1.0, 1.0, 1.0, 2.0], dtype=x.dtype)  # noqa: E731  coordinate 3 is special
    report = equivariance_error(broken, rep, rep, torch.randn(3, 4, dtype=torch.float64))
    assert not report.ok
    out = report.outputs[0]
    assert out.per_element[0] == 0.0  # the identity never fails
    assert (out.per_element[1:] > 0).all()
    with pytest.raises(AssertionError, match="worst element"):
        assert_equivariant(broken, rep, rep, torch.randn(3, 4, dtype=torch.float64))


def test_untransformed_inputs_and_unchecked_outputs():
    group = symmetric(3)
    rep = PermutationRepresentation.standard(group)

    def fn(x, scale):
        return x * scale, x.sum() + torch.randn(())  # second output is noise: not checked

    report = assert_equivariant(fn, [rep, None], [rep, None], (torch.randn(2, 3, dtype=torch.float64), 3.0))
    assert len(report.outputs) == 1


def test_masked_outputs_with_equal_infinities_count_as_equal():
    group = symmetric(3)
    rep = PermutationRepresentation.standard(group)
    fn = lambda x: torch.where(x > 0, x, torch.full_like(x, float("-inf")))  # noqa: E731
    assert assert_equivariant(fn, rep, rep, torch.tensor([[1.0, -1.0, 2.0]])).max_error == 0.0


def test_tolerance_follows_dtype():
    rep = PermutationRepresentation.standard(cyclic(3))
    f32 = equivariance_error(lambda x: x, rep, rep, torch.randn(2, 3))
    f64 = equivariance_error(lambda x: x, rep, rep, torch.randn(2, 3, dtype=torch.float64))
    assert f32.outputs[0].tolerance > f64.outputs[0].tolerance


def test_group_too_large_is_sampled():
    rep = PermutationRepresentation.standard(symmetric(10))
    report = assert_equivariant(torch.tanh, rep, rep, torch.randn(2, 10))
    assert report.permutations.shape == (64, 10)


def test_check_group_and_representation_catch_violations():
    group = cyclic(3)
    with pytest.raises(AssertionError, match=r"not a homomorphism|rho"):
        bad = PermutationRepresentation(group, 3, lambda p: torch.tensor([[0, 1, 2], [1, 0, 2], [0, 2, 1]])[group.permutation_to_index(p)])
        check_representation(bad)
    check_group(group)


@given(st.data())
def test_observation_strategy_respects_one_hot_blocks(data):
    colour = Labels("colour", 3)
    layout = Layout([Block("hand", 2, colour, 4, encoding="one_hot", one_hot_axes=2), Block("bits", 5, encoding="binary")])
    x = data.draw(eqst.observations(layout, batch=6))
    hand = x[:, :24].reshape(6, 2, 12)
    assert ((hand == 0) | (hand == 1)).all() and (hand.sum(-1) <= 1).all()
    assert ((x[:, 24:] == 0) | (x[:, 24:] == 1)).all()


def test_an_empty_batch_or_nothing_to_check_is_an_error_not_a_pass():
    rep = PermutationRepresentation.standard(cyclic(4))
    broken = lambda x: x * torch.tensor([1.0, 1.0, 1.0, 2.0], dtype=x.dtype)  # noqa: E731  not equivariant
    with pytest.raises(ValueError, match=r"x is empty \(shape \[0, 4\]\): a check on no inputs checks nothing"):
        equivariance_error(broken, rep, rep, torch.randn(0, 4))
    with pytest.raises(ValueError, match="x is empty"):
        assert_equivariant(broken, rep, rep, torch.randn(0, 4))
    with pytest.raises(ValueError, match="indices is empty"):
        assert_equivariant(broken, rep, rep, torch.randn(3, 4), indices=torch.tensor([], dtype=torch.long))
    with pytest.raises(ValueError, match="permutations is empty"):
        assert_equivariant(broken, rep, rep, torch.randn(3, 4), permutations=torch.zeros(0, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="every output representation is None"):
        assert_equivariant(broken, rep, None, torch.randn(3, 4))
    with pytest.raises(ValueError, match="output 0 of fn is empty"):
        assert_equivariant(lambda x: x[:0], rep, rep, torch.randn(3, 4))


def test_nan_outputs_are_reported_as_nan_and_not_blamed_on_the_identity():
    rep = PermutationRepresentation.standard(cyclic(4))
    nan_everywhere = lambda x: x * float("nan")  # noqa: E731
    report = equivariance_error(nan_everywhere, rep, rep, torch.randn(3, 4))
    assert not report.ok and math.isnan(report.max_error) and report.outputs[0].reference_nan
    assert "fn(x) itself, on the untransformed input, returned NaN" in report.describe()
    with pytest.raises(AssertionError, match="returned NaN"):
        assert_equivariant(nan_everywhere, rep, rep, torch.randn(3, 4))

    def nan_when_moved(x):  # fine on x, NaN for every transformed copy whose first coordinate moved
        return torch.where(x[..., :1] == probe[..., :1], x, x * float("nan"))

    probe = torch.arange(1.0, 5.0).expand(2, 4)
    report = equivariance_error(nan_when_moved, rep, rep, probe)
    out = report.outputs[0]
    assert not report.ok and math.isnan(report.max_error) and not out.reference_nan
    assert out.per_element[0] == 0.0 and out.worst_element == 1  # the identity is fine; element 1 is the first NaN
    assert "returned NaN for 3 of 4 elements, first for element [1, 2, 3, 0]" in report.describe()


def test_bad_tolerances_inputs_and_elements():
    rep = PermutationRepresentation.standard(cyclic(133))
    with pytest.raises(TypeError, match=r"x must be a torch.Tensor, got ndarray \(convert with torch.as_tensor\)"):
        equivariance_error(torch.tanh, rep, rep, torch.randn(2, 133).numpy())
    with pytest.raises(ValueError, match="atol must be a finite number"):
        equivariance_error(torch.tanh, rep, rep, torch.randn(2, 133), atol=float("nan"))
    with pytest.raises(ValueError, match=r"atol must be in \[0.0, inf\]"):
        equivariance_error(torch.tanh, rep, rep, torch.randn(2, 133), atol=-1)
    with pytest.raises(ValueError, match=r"permutations\[0\] = .* is not an element of cyclic\(133\)"):
        equivariance_error(torch.tanh, rep, rep, torch.randn(2, 133), permutations=torch.arange(133).flip(0).unsqueeze(0))
    report = equivariance_error(torch.tanh, rep, rep, torch.randn(2, 133), indices=torch.tensor([0, 5]))
    assert report.permutations.shape == (2, 133)


def test_the_d10_rotation_of_issue_22_is_tested_as_meant_or_refused():
    """A 1-D tensor is never read as indices or as one permutation by its shape: each form has its keyword."""
    rep = PermutationRepresentation.standard(dihedral(5))
    broken = lambda x: x * torch.tensor([1.0, 1.0, 1.0, 1.0, 2.0], dtype=x.dtype)  # noqa: E731
    x, rotation = torch.randn(3, 5, dtype=torch.float64), [1, 2, 3, 4, 0]
    with pytest.raises(TypeError, match="unexpected keyword argument 'elements'"):
        equivariance_error(broken, rep, rep, x, elements=torch.tensor(rotation))
    with pytest.raises(ValueError, match=r"ambiguous.*permutations=torch.tensor\(\[\[1, 2, 3, 4, 0\]\]\).*indices=torch.tensor"):
        equivariance_error(broken, rep, rep, x, permutations=torch.tensor(rotation))
    report = equivariance_error(broken, rep, rep, x, permutations=torch.tensor([rotation]))
    assert report.permutations.tolist() == [rotation] and not report.ok
    by_index = equivariance_error(broken, rep, rep, x, indices=torch.tensor(rotation))
    assert torch.equal(by_index.permutations, dihedral(5).elements[rotation])
    with pytest.raises(AssertionError, match=r"worst element \[1, 2, 3, 4, 0\]"):
        assert_equivariant(broken, rep, rep, x, permutations=[rotation])


@given(st.data())
def test_the_two_forms_give_identical_reports(data):
    group = data.draw(eqst.groups(max_degree=5))
    rep = PermutationRepresentation.standard(group)
    rows = data.draw(st.lists(st.integers(0, group.order - 1), min_size=1, max_size=6))
    weights = torch.arange(1.0, group.degree + 1, dtype=torch.float64)
    broken = lambda x: x * weights  # noqa: E731  not equivariant unless the group is trivial
    x = torch.randn(2, group.degree, dtype=torch.float64, generator=torch.Generator().manual_seed(len(rows)))
    by_index = equivariance_error(broken, rep, rep, x, indices=rows)
    by_perm = equivariance_error(broken, rep, rep, x, permutations=group.elements[rows])
    assert torch.equal(by_index.permutations, by_perm.permutations)
    assert torch.equal(by_index.outputs[0].per_element, by_perm.outputs[0].per_element)
    assert by_index.describe() == by_perm.describe()


def test_both_forms_at_once_are_refused():
    rep = PermutationRepresentation.standard(cyclic(4))
    with pytest.raises(TypeError, match="indices= or permutations=, got both"):
        equivariance_error(torch.tanh, rep, rep, torch.randn(2, 4), indices=[1], permutations=[[1, 2, 3, 0]])


def test_assert_equivariant_hides_its_frame_from_pytest():
    assert "__tracebackhide__" in assert_equivariant.__code__.co_varnames


@given(st.data())
def test_element_strategies_in_both_forms(data):
    group = data.draw(eqst.groups(max_degree=5))
    k = data.draw(eqst.element_indices(group))
    assert 0 <= k < group.order
    assert data.draw(eqst.element_permutations(group)) in group
