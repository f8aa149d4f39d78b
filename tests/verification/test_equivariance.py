import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from eqc.dec_pomdp import Block, Labels, Layout
from eqc.groups import PermutationRepresentation, cyclic, symmetric
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
    assert report.elements.shape == (64, 10)


def test_check_group_and_representation_catch_violations():
    group = cyclic(3)
    with pytest.raises(AssertionError, match="not a homomorphism|rho"):
        bad = PermutationRepresentation(group, 3, lambda p: torch.tensor([[0, 1, 2], [1, 0, 2], [0, 2, 1]])[group.index_of(p)])
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
