import pytest
import torch

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.groups import cyclic, dihedral, direct_product, symmetric
from eqc.verification import check_representation

colour, rank = Labels("colour", 5), Labels("rank", 5)
OBS = Layout([Block("hand", 5, colour, rank), Block("fireworks", colour, rank), Block("last_hint", colour), Block("tokens", 8)])
ACT = Layout([Block("play", 5), Block("hint_colour", colour), Block("hint_rank", rank)])


def test_quick_start_declaration_moves_colour_features():
    sym = Symmetry(dihedral(5), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    assert sym.observation_rep.dim == OBS.dim and sym.action_rep.dim == 15
    x = torch.arange(OBS.dim, dtype=torch.float64)
    for g in range(10):
        sigma = sym.label_permutations(index=g)["colour"]
        y = sym.observation_rep.act(x, g)
        for slot, c, r in [(0, 0, 0), (2, 3, 1), (4, 4, 4)]:
            assert y[25 * slot + 5 * sigma[c] + r] == x[25 * slot + 5 * c + r]
        assert y[125 + 5 * sigma[2] + 3] == x[125 + 5 * 2 + 3]
        assert y[150 + sigma[1]] == x[150 + 1]
        assert torch.equal(y[155:], x[155:])  # tokens fixed
        a = sym.action_rep.act(torch.arange(15.0), g)
        assert torch.equal(a[:5], torch.arange(5.0)) and torch.equal(a[10:], torch.arange(10.0, 15.0))
        assert a[5 + sigma[0]] == 5.0
    check_representation(sym.observation_rep)
    check_representation(sym.action_rep)


def test_two_label_sets_with_a_direct_product():
    group = direct_product(cyclic(5), symmetric(5))
    sym = Symmetry(group, acts_on=[colour, rank], observation_layout=OBS, action_layout=ACT)
    g = 123
    perms = sym.label_permutations(index=g)
    y = sym.observation_rep.act(torch.arange(OBS.dim, dtype=torch.float64), g)
    assert y[125 + 5 * perms["colour"][1] + perms["rank"][3]] == 125 + 5 * 1 + 3
    check_representation(sym.action_rep)


def test_restrict_to_subgroup():
    sym = Symmetry(symmetric(5), acts_on=colour, observation_layout=OBS, action_layout=ACT).restrict(cyclic(5))
    assert sym.group.order == 5 and sym.observation_rep.group.order == 5


def test_large_group_labels_from_image_array():
    lever = Labels("lever", 9)
    sym = Symmetry(
        symmetric(9), acts_on=lever, observation_layout=Layout([Block("payoff", lever)]), action_layout=Layout([Block("pull", lever)])
    )
    perm = sym.group.random_permutations(1, torch.Generator().manual_seed(0))[0]
    assert torch.equal(sym.label_permutations(permutation=perm)["lever"], perm)
    x = torch.randn(9)
    assert torch.equal(sym.observation_rep.act_permutations(x, perm)[perm], x)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(group=cyclic(4), acts_on=colour), ValueError, r"acts on 4 points but acts_on has colour\(5\)"),
        (dict(group=cyclic(5), acts_on=[]), ValueError, "at least one"),
        (dict(group=cyclic(10), acts_on=[colour, colour]), ValueError, "twice"),
        (dict(group=dihedral(10), acts_on=[colour, rank]), ValueError, "onto themselves"),
        (dict(group="S5", acts_on=colour), TypeError, "PermutationGroup"),
    ],
)
def test_bad_symmetry_declarations(kwargs, error, match):
    with pytest.raises(error, match=match):
        Symmetry(observation_layout=OBS, action_layout=ACT, **kwargs)


def test_axis_size_mismatch_names_block_and_axis():
    wrong = Layout([Block("discards", 3, Labels("colour", 4))])
    with pytest.raises(ValueError, match=r"observation block 'discards', axis 1.*size 4.*size 5"):
        Symmetry(cyclic(5), acts_on=colour, observation_layout=wrong, action_layout=ACT)


def test_label_set_used_by_no_block_is_refused():
    with pytest.raises(ValueError, match=r"\['color'\] that no observation, action or state block uses"):
        Symmetry(cyclic(5), acts_on=Labels("color", 5), observation_layout=OBS, action_layout=ACT)


def test_label_permutations_checks_membership():
    sym = Symmetry(cyclic(5), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    with pytest.raises(ValueError, match=r"permutation = \[1, 0, 2, 3, 4\] is not an element of cyclic"):
        sym.label_permutations(permutation=torch.tensor([1, 0, 2, 3, 4]))
    with pytest.raises(ValueError, match="not a permutation"):
        sym.label_permutations(permutation=torch.tensor([0, 0, 0, 0, 0]))


def test_label_permutations_takes_one_element_in_a_named_form():
    """The form is the keyword's, never the shape's: a 1-D tensor is refused as an index, and a positional one is refused."""
    sym = Symmetry(dihedral(5), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    rotation = torch.tensor([1, 2, 3, 4, 0])
    k = int(sym.group.permutation_to_index(rotation))
    assert torch.equal(sym.label_permutations(permutation=rotation)["colour"], rotation)
    assert torch.equal(sym.label_permutations(index=k)["colour"], rotation)
    assert torch.equal(sym.label_permutations(index=torch.tensor(k))["colour"], rotation)
    with pytest.raises(TypeError, match="positional"):
        sym.label_permutations(rotation)
    with pytest.raises(ValueError, match=r"index must be element indices of shape \[\] \(an int or a 0-d tensor\), got shape \[5\]"):
        sym.label_permutations(index=rotation)
    with pytest.raises(ValueError, match=r"permutation must be permutations of shape \[5\], got shape \[\]"):
        sym.label_permutations(permutation=torch.tensor(k))
    with pytest.raises(TypeError, match="one element, as index= or as permutation=, got both"):
        sym.label_permutations(index=k, permutation=rotation)
    with pytest.raises(TypeError, match="got neither"):
        sym.label_permutations()
    with pytest.raises(ValueError, match=r"index = 10 is outside 0\.\.9"):
        sym.label_permutations(index=10)


def test_layouts_and_representations_have_distinct_names():
    sym = Symmetry(dihedral(5), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    assert sym.observation_layout is OBS and sym.action_layout is ACT
    assert not hasattr(sym, "observation") and not hasattr(sym, "action")  # one spelling: observation_rep, action_rep
    positional = Symmetry(dihedral(5), colour, OBS, ACT)
    assert positional.action_rep.dim == ACT.dim
    assert torch.equal(positional.observation_rep.coordinate_permutations, sym.observation_rep.coordinate_permutations)
    with pytest.raises(TypeError, match="observation"):
        Symmetry(dihedral(5), acts_on=colour, observation=OBS, action=ACT)
    with pytest.raises(TypeError, match="Symmetry needs action_layout"):
        Symmetry(dihedral(5), acts_on=colour, observation_layout=OBS)
    with pytest.raises(TypeError, match="observation_layout must be a Layout, got PermutationRepresentation"):
        Symmetry(dihedral(5), acts_on=colour, observation_layout=sym.observation_rep, action_layout=ACT)
    with pytest.raises(TypeError, match="acts_on must be a list of Labels"):
        Symmetry(dihedral(5), acts_on=None, observation_layout=OBS, action_layout=ACT)
    with pytest.raises(TypeError, match="subgroup must be a PermutationGroup"):
        sym.restrict("C5")
    with pytest.raises(AttributeError, match="without a state layout"):
        _ = sym.state_rep
