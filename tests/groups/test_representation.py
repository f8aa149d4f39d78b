import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from eqc.groups import (
    GroupTooLargeError,
    PermutationRepresentation,
    cyclic,
    dihedral,
    direct_sum,
    symmetric,
    tensor_product,
)
from eqc.verification import check_representation
from eqc.verification import strategies as eqst


@given(st.data())
def test_homomorphism_exhaustively_for_random_small_representations(data):
    group = data.draw(eqst.groups())
    rep = data.draw(eqst.representations(group))
    check_representation(rep)  # rho(g*h) = rho(g) rho(h) for all pairs; inverses; identity


def test_feature_at_label_c_moves_to_g_of_c():
    group = cyclic(5)
    rep = PermutationRepresentation.standard(group)
    x = torch.eye(5)
    for k, g in enumerate(group.elements):
        for c in range(5):
            assert rep.act(x[c], k).argmax() == g[c]


def test_act_agrees_with_dense_matrices_and_composition():
    group = dihedral(4)
    rep = tensor_product(PermutationRepresentation.standard(group), PermutationRepresentation.trivial(group, 2))
    mats = rep.matrices()
    x = torch.randn(3, rep.dim, dtype=torch.float64)
    for k in range(group.order):
        assert torch.allclose(rep.act(x, k), x @ mats[k].T.double())
    for a in range(group.order):
        for b in range(group.order):
            ab = int(group.compose_indices(a, b))
            assert torch.equal(rep.act(rep.act(x, b), a), rep.act(x, ab))


def test_tensor_product_is_row_major():
    group = cyclic(3)
    std = PermutationRepresentation.standard(group)
    rep = tensor_product(PermutationRepresentation.trivial(group, 2), std)
    x = torch.arange(6.0)  # index 3*i + c
    g = 1  # element [1, 2, 0]
    assert group.elements[g].tolist() == [1, 2, 0]
    assert rep.act(x, g).tolist() == [2.0, 0.0, 1.0, 5.0, 3.0, 4.0]


def test_broadcasting_one_element_per_vector():
    group = symmetric(4)
    rep = PermutationRepresentation.standard(group)
    x = torch.randn(7, 3, 4)
    g = torch.randint(24, (3,))
    out = rep.act(x, g)
    for b in range(7):
        for j in range(3):
            assert torch.equal(out[b, j], rep.act(x[b, j], int(g[j])))
    assert torch.equal(rep.act(out, g, inverse=True), x)


def test_act_all_and_inverse_round_trip_and_permutation_form():
    group = symmetric(4)
    rep = direct_sum(PermutationRepresentation.standard(group), PermutationRepresentation.trivial(group, 2))
    x = torch.randn(5, rep.dim)
    copies = rep.act_all(x)
    assert copies.shape == (5, 24, rep.dim)
    assert torch.equal(copies[:, 7], rep.act(x, 7))
    assert torch.equal(rep.act_all(copies, inverse=True), x.unsqueeze(1).expand(5, 24, rep.dim))
    assert torch.equal(rep.act_permutations(x, group.elements[7]), rep.act(x, 7))
    assert torch.equal(rep.act_permutations(rep.act(x, 7), group.elements[7], inverse=True), x)
    assert int(rep.act_index(2, 7)) == int(group.elements[7, 2])


def test_representation_of_large_group_acts_by_sampled_permutations():
    group = symmetric(9)
    rep = PermutationRepresentation.standard(group)
    perms = group.random_permutations(4, torch.Generator().manual_seed(0))
    x = torch.randn(4, 9)
    out = rep.act_permutations(x, perms)
    for b in range(4):
        assert out[b, perms[b]].tolist() == x[b].tolist()
    with pytest.raises(GroupTooLargeError):
        rep.act(x, 0)


def test_restrict_and_from_table():
    rep = PermutationRepresentation.standard(symmetric(5))
    sub = rep.restrict(dihedral(5))
    assert sub.group.order == 10
    check_representation(sub)
    table = PermutationRepresentation.from_table(cyclic(3), cyclic(3).elements)
    check_representation(table)
    with pytest.raises(ValueError, match="not a homomorphism"):
        PermutationRepresentation.from_table(cyclic(3), torch.tensor([[0, 1, 2], [1, 0, 2], [2, 1, 0]]))
    with pytest.raises(ValueError, match="not a subgroup"):
        PermutationRepresentation.standard(cyclic(5)).restrict(symmetric(5))


def test_bad_input_errors():
    group = cyclic(5)
    rep = PermutationRepresentation.standard(group)
    with pytest.raises(ValueError, match="last dimension 5"):
        rep.act(torch.randn(3, 4), 0)
    with pytest.raises(ValueError, match=r"outside 0\.\.4"):
        rep.act(torch.randn(3, 5), 7)
    with pytest.raises(TypeError, match="integer"):
        rep.act(torch.randn(3, 5), torch.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        rep.act([1.0] * 5, 0)
    with pytest.raises(ValueError, match="onto themselves"):
        PermutationRepresentation.on_points(dihedral(5), 0, 3)
    with pytest.raises(ValueError, match="not of"):
        direct_sum(rep, PermutationRepresentation.standard(symmetric(5)))
    with pytest.raises(ValueError, match="dense matrices"):
        PermutationRepresentation.trivial(symmetric(5), 1000).matrices()


def test_act_all_needs_a_1d_list_of_elements():
    rep = PermutationRepresentation.standard(cyclic(4))
    x = torch.randn(2, 4)
    assert rep.act_all(x, indices=torch.tensor([1, 3])).shape == (2, 2, 4)
    with pytest.raises(ValueError, match=r"indices must be element indices of shape \[k\] \(1-D\), got the int 3; write \[3\]"):
        rep.act_all(x, indices=3)
    with pytest.raises(ValueError, match="1-D"):
        rep.act_all(torch.randn(2, 1, 4), indices=torch.tensor(3), inverse=True)
    with pytest.raises(TypeError, match="positional"):
        rep.act_all(x, torch.tensor([1, 3]))  # the form is named, never guessed


def test_act_family_is_one_grid_with_one_spelling_of_inverse():
    group = dihedral(5)
    rep = PermutationRepresentation.standard(group) + PermutationRepresentation.trivial(group, 2)
    x = torch.randn(4, rep.dim, dtype=torch.float64)
    g = torch.tensor([0, 3, 7, 9])
    perms = group.index_to_permutation(g)
    y = rep.act(x, g)
    assert torch.equal(rep.act_permutations(x, perms), y)
    assert torch.equal(rep.act(y, g, inverse=True), x)
    assert torch.equal(rep.act_permutations(y, perms, inverse=True), x)
    copies = rep.act_all(x, indices=g)
    assert torch.equal(copies[torch.arange(4), torch.arange(4)], y)
    assert torch.equal(rep.act_all(copies, indices=g, inverse=True), x.unsqueeze(1).expand(4, 4, rep.dim))
    assert torch.equal(rep.act_all(x, permutations=perms), copies)
    assert torch.equal(rep.act_all(copies, permutations=perms, inverse=True), x.unsqueeze(1).expand(4, 4, rep.dim))
    index = torch.tensor([0, 1, 2, 6])
    moved = rep.act_index(index, g)
    assert torch.equal(moved, rep.coordinate_permutations[g, index])
    assert torch.equal(rep.act_index(moved, g, inverse=True), index)
    assert torch.equal(rep.act_index_permutations(index, perms), moved)
    assert torch.equal(rep.act_index_permutations(moved, perms, inverse=True), index)
    # where a one-hot at coordinate c goes is where act_index sends c
    assert torch.equal(rep.act(torch.eye(rep.dim, dtype=torch.float64)[index], g).argmax(-1), moved)


def test_a_trailing_one_that_would_multiply_the_batch_is_refused():
    group = cyclic(4)
    rep = PermutationRepresentation.standard(group)
    x = torch.randn(5, 4)
    g = torch.randint(4, (5, 1))
    with pytest.raises(ValueError, match=r"would broadcast to \[5, 5\].*g.squeeze\(-1\)"):
        rep.act(x, g)  # numpy broadcasting would silently give [5, 5, 4]
    assert torch.equal(rep.act(x, g.squeeze(-1)), torch.stack([rep.act(x[b], int(g[b])) for b in range(5)]))
    with pytest.raises(ValueError, match="would broadcast"):
        rep.act_permutations(x, group.elements[g])  # [5, 1, 4]
    with pytest.raises(ValueError, match="would broadcast"):
        rep.act_index(torch.arange(4).expand(5, 4)[:, 0], g)
    obs = torch.randn(5, 2, 4)  # [games, players, d]: one element per game, shared by both players
    assert rep.act(obs, g).shape == (5, 2, 4)
    assert rep.act(x[0], torch.tensor([1, 2])).shape == (2, 4)  # several elements on one vector
    with pytest.raises(ValueError, match="does not broadcast"):
        rep.act(x, torch.tensor([0, 1, 2]))


def test_a_numpy_array_is_refused_as_not_a_tensor():
    rep = PermutationRepresentation.standard(cyclic(133))
    with pytest.raises(TypeError, match=r"x must be a torch.Tensor, got ndarray \(convert with torch.as_tensor\)"):
        rep.act(torch.randn(2, 133).numpy(), 0)
    with pytest.raises(TypeError, match=r"x must be a torch\.Tensor"):
        rep.act_all(torch.randn(2, 133).numpy())
    with pytest.raises(TypeError, match="inverse must be a bool"):
        rep.act(torch.randn(2, 133), 0, inverse=1)


def test_acting_on_another_device_never_reads_back():
    """The meta device has no values: a hidden copy to the host or a read of an index raises there."""
    rep = PermutationRepresentation.standard(symmetric(5))
    x = torch.empty(4, 5, device="meta")
    g = torch.zeros(4, dtype=torch.long, device="meta")
    for inverse in (False, True):
        assert rep.act(x, g, inverse=inverse).device.type == "meta"
        assert rep.act(x, 3, inverse=inverse).shape == (4, 5)
        assert rep.act_index(torch.zeros(4, dtype=torch.long, device="meta"), g, inverse=inverse).device.type == "meta"
    assert rep.act_all(x, indices=torch.arange(3, device="meta")).shape == (4, 3, 5)
    assert rep.device_table("gather", "meta") is rep.device_table("gather", torch.device("meta"))
    with pytest.raises(ValueError, match="'gather' or 'coordinates'"):
        rep.device_table("matrices", "cpu")


def test_acting_with_one_int_element_builds_no_tensor(host_traffic):
    """An int element is a row of the table: no index tensor is made from it (on a GPU: a host-to-device copy)."""
    rep = PermutationRepresentation.standard(symmetric(5))
    x = torch.randn(4, 5)
    rep.act(x, 3)  # tables built once
    with host_traffic() as traffic:
        rep.act(x, 3)
        rep.act(x, 3, inverse=True)
    assert traffic.events == []
