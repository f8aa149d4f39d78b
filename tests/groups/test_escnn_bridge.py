"""eqc permutation representations transported onto escnn's cyclic and dihedral groups."""

import numpy as np
import pytest
import torch

escnn = pytest.importorskip("escnn")

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry  # noqa: E402
from eqc.groups import (  # noqa: E402
    PermutationGroup,
    PermutationRepresentation,
    alternating,
    cyclic,
    dihedral,
    direct_product,
    direct_sum,
    symmetric,
    tensor_product,
)
from eqc.groups.escnn_bridge import (  # noqa: E402
    UnsupportedGroupError,
    escnn_group_map,
    field_type,
    gspace,
    to_escnn,
)

pytestmark = pytest.mark.escnn


def _mixed_representation(group: PermutationGroup) -> PermutationRepresentation:
    """Fixed coordinates, the points, and pairs of points: trivial, non-free and (for n >= 3) free orbits."""
    std = PermutationRepresentation.standard(group)
    return direct_sum(PermutationRepresentation.trivial(group, 2), std, tensor_product(std, std))


def _assert_matches_dense(rep: PermutationRepresentation, **kwargs: object) -> None:
    escnn_rep = to_escnn(rep, **kwargs)
    gmap = escnn_group_map(rep.group, **kwargs)
    dense = rep.matrices().double().numpy()
    assert escnn_rep.size == rep.dim
    assert escnn_rep.group == gmap.escnn_group
    for k in range(rep.group.order):
        np.testing.assert_allclose(escnn_rep(gmap.elements[k]), dense[k], atol=1e-10, err_msg=f"element {k}")


def _assert_isomorphism(group: PermutationGroup, **kwargs: object) -> None:
    gmap = escnn_group_map(group, **kwargs)
    target = gmap.escnn_group
    assert target.order() == group.order
    assert set(gmap.elements) == set(target.elements)  # a bijection
    assert gmap.elements[0] == target.identity
    table = group.multiplication_table
    for i in range(group.order):
        assert gmap.elements[int(group.inverse[i])] == ~gmap.elements[i]
        for j in range(group.order):
            assert gmap.elements[int(table[i, j])] == gmap.elements[i] @ gmap.elements[j]
    for k, element in enumerate(gmap.elements):
        assert gmap.from_escnn_element(element) == k


@pytest.mark.parametrize("group", [cyclic(1), cyclic(2), cyclic(5), cyclic(6), dihedral(3), dihedral(4), dihedral(5)])
def test_escnn_matrices_equal_eqc_dense_matrices(group):
    _assert_matches_dense(_mixed_representation(group))


@pytest.mark.parametrize("group", [cyclic(1), cyclic(4), cyclic(7), dihedral(3), dihedral(5), dihedral(6)])
def test_group_map_is_an_isomorphism(group):
    _assert_isomorphism(group)


@pytest.mark.parametrize("n", [3, 5, 8])
def test_catalogue_generators_go_to_escnn_generators(n):
    shift = [(i + 1) % n for i in range(n)]
    reflection = [(-i) % n for i in range(n)]
    c = escnn_group_map(cyclic(n))
    assert c.kind == "cyclic" and c.escnn_group == escnn.group.cyclic_group(n)
    assert c.elements[int(cyclic(n).permutation_to_index(torch.tensor(shift)))] == c.escnn_group.element(1)
    d = escnn_group_map(dihedral(n))
    assert d.kind == "dihedral" and d.escnn_group == escnn.group.dihedral_group(n)
    assert d.elements[int(dihedral(n).permutation_to_index(torch.tensor(shift)))] == d.escnn_group.element((0, 1))
    assert d.elements[int(dihedral(n).permutation_to_index(torch.tensor(reflection)))] == d.escnn_group.element((1, 0))


def test_standard_representation_of_cyclic_group_is_escnns_regular_representation():
    rep = to_escnn(PermutationRepresentation.standard(cyclic(5)))
    regular = escnn.group.cyclic_group(5).regular_representation
    for element in regular.group.elements:
        np.testing.assert_allclose(rep(element), regular(element), atol=1e-10)


@pytest.mark.parametrize(
    "generators, kind, n",
    [
        ([[2, 3, 4, 0, 1]], "cyclic", 5),  # i -> i+2 generates C5 too
        ([[1, 2, 0, 3, 4], [0, 1, 2, 4, 3]], "cyclic", 6),  # C3 x C2 = C6, no generator of full order
        ([[1, 0, 2, 3], [0, 1, 3, 2]], "dihedral", 2),  # Klein four group = D2
        ([[0, 4, 3, 2, 1], [1, 2, 3, 4, 0]], "dihedral", 5),  # D5 with the generators swapped
        ([[1, 0, 3, 2, 5, 4], [2, 3, 4, 5, 0, 1]], "cyclic", 6),  # a free action on 6 points
        ([[3, 0, 1, 2, 5, 4], [2, 1, 0, 3, 4, 5]], "dihedral", 4),  # D4 whose rotation also swaps points 4 and 5
    ],
)
def test_other_presentations_are_recognised(generators, kind, n):
    group = PermutationGroup.from_generators(generators)
    if group.order != (n if kind == "cyclic" else 2 * n):
        pytest.skip(f"example group has order {group.order}")
    gmap = escnn_group_map(group)
    assert (gmap.kind, gmap.n) == (kind, n)
    _assert_isomorphism(group)
    _assert_matches_dense(_mixed_representation(group))


def test_explicit_rotation_and_reflection():
    group = dihedral(5)
    rotation = [2, 3, 4, 0, 1]  # i -> i+2
    reflection = [1, 0, 4, 3, 2]  # i -> 1-i
    _assert_matches_dense(_mixed_representation(group))  # default map first: cached orbit reps must not leak
    gmap = escnn_group_map(group, rotation=rotation, reflection=reflection)
    assert gmap.elements[int(group.permutation_to_index(torch.tensor(rotation)))] == gmap.escnn_group.element((0, 1))
    assert gmap.elements[int(group.permutation_to_index(torch.tensor(reflection)))] == gmap.escnn_group.element((1, 0))
    _assert_isomorphism(group, rotation=rotation, reflection=reflection)
    _assert_matches_dense(_mixed_representation(group), rotation=rotation, reflection=reflection)
    # an order-2 group presented as escnn's D1 (a reflection only)
    flip = PermutationGroup.from_generators([[0, 2, 1]])
    d1 = escnn_group_map(flip, reflection=[0, 2, 1])
    assert (d1.kind, d1.n) == ("dihedral", 1)
    _assert_matches_dense(_mixed_representation(flip), reflection=[0, 2, 1])


def test_bad_explicit_generators_raise():
    group = dihedral(5)
    with pytest.raises(UnsupportedGroupError, match="does not generate"):
        escnn_group_map(group, rotation=[1, 2, 3, 4, 0])  # order 5 in a group of order 10
    with pytest.raises(UnsupportedGroupError, match="dihedral"):
        escnn_group_map(group, rotation=[1, 2, 3, 4, 0], reflection=[1, 2, 3, 4, 0])
    with pytest.raises(ValueError, match="not an element"):
        escnn_group_map(group, rotation=[1, 0, 2, 3, 4])
    with pytest.raises(ValueError, match=r"rotation = 10 is outside 0\.\.9"):
        escnn_group_map(group, rotation=10)


@pytest.mark.parametrize(
    "group",
    [symmetric(4), alternating(4), direct_product(cyclic(3), cyclic(3)), direct_product(cyclic(2), cyclic(4))],
)
def test_groups_that_are_neither_cyclic_nor_dihedral_are_rejected(group):
    with pytest.raises(UnsupportedGroupError, match="neither cyclic nor dihedral") as info:
        to_escnn(PermutationRepresentation.standard(group))
    assert group.name in str(info.value)


def test_symmetric3_is_d3_when_generators_are_given():
    # S3 is isomorphic to D3: recognised by search, and with an explicit rotation and reflection
    assert (escnn_group_map(symmetric(3)).kind, escnn_group_map(symmetric(3)).n) == ("dihedral", 3)
    group = symmetric(3)
    _assert_isomorphism(group, rotation=[1, 2, 0], reflection=[0, 2, 1])
    _assert_matches_dense(_mixed_representation(group), rotation=[1, 2, 0], reflection=[0, 2, 1])


def test_type_errors():
    with pytest.raises(TypeError, match="PermutationRepresentation"):
        to_escnn(cyclic(3))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="PermutationGroup"):
        escnn_group_map(PermutationRepresentation.standard(cyclic(3)))  # type: ignore[arg-type]


def test_names_are_content_addressed():
    group = dihedral(4)
    std = PermutationRepresentation.standard(group)
    a, b = to_escnn(std + std), to_escnn(std + std)
    c = to_escnn(tensor_product(std, std))
    assert a.name == b.name  # same content, same escnn cache key
    assert a.name != c.name


def _hanabi_like_symmetry(group: PermutationGroup) -> Symmetry:
    colour, rank = Labels("colour", 5), Labels("rank", 5)
    obs = Layout(
        [
            Block("hand", 5, colour, rank),
            Block("deck", 40),
            Block("fireworks", colour, rank),
            Block("discards", colour, 10),
            Block("hint_colour", colour),
        ]
    )
    act = Layout([Block("discard", 5), Block("play", 5), Block("reveal_colour", colour), Block("reveal_rank", rank)])
    return Symmetry(group, acts_on=colour, observation_layout=obs, action_layout=act)


def test_hanabi_like_representation_and_equivariant_escnn_linear_layer():
    group = dihedral(5)
    sym = _hanabi_like_symmetry(group)
    _assert_matches_dense(sym.observation_rep)
    _assert_matches_dense(sym.action_rep)

    torch.manual_seed(0)
    in_type = field_type(sym.observation_rep)
    hidden = field_type(sym.action_rep, regular=3)
    assert in_type.gspace.fibergroup == escnn.group.dihedral_group(5)
    assert hidden.size == sym.action_rep.dim + 3 * group.order
    layer = escnn.nn.Linear(in_type, field_type(sym.action_rep)).double()
    layer.eval()

    def f(x: torch.Tensor) -> torch.Tensor:
        return layer(in_type(x)).tensor

    x = torch.randn(4, sym.observation_rep.dim, dtype=torch.float64)
    for g in range(group.order):  # escnn's layer is equivariant under eqc's action
        torch.testing.assert_close(f(sym.observation_rep.act(x, g)), sym.action_rep.act(f(x), g))


def test_gspace_and_field_type_checks():
    group = cyclic(4)
    assert gspace(group).fibergroup == escnn.group.cyclic_group(4)
    with pytest.raises(ValueError, match="at least one"):
        field_type()
    std = PermutationRepresentation.standard(group)
    with pytest.raises(ValueError, match="not of"):
        field_type(std, PermutationRepresentation.standard(cyclic(5)))
    with pytest.raises(ValueError, match="regular"):
        field_type(std, regular=-1)


def test_reflection_without_rotation_and_numpy_rows() -> None:
    import numpy as np

    from eqc.groups import cyclic, dihedral
    from eqc.groups.escnn_bridge import escnn_group_map

    with pytest.raises(ValueError, match="reflection= needs rotation="):
        escnn_group_map(dihedral(5), reflection=1)
    row = int(cyclic(5).permutation_to_index(torch.tensor([1, 2, 3, 4, 0])))
    assert escnn_group_map(cyclic(5), rotation=np.int64(row)).escnn_group.order() == 5
