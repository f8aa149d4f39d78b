import pytest
import torch

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.groups import cyclic, dihedral, direct_product, symmetric
from eqc.verification import check_representation

colour, rank = Labels("colour", 5), Labels("rank", 5)
OBS = Layout([Block("hand", 5, colour, rank), Block("fireworks", colour, rank), Block("last_hint", colour), Block("tokens", 8)])
ACT = Layout([Block("play", 5), Block("hint_colour", colour), Block("hint_rank", rank)])


def test_quick_start_declaration_moves_colour_features():
    sym = Symmetry(dihedral(5), acts_on=colour, observation=OBS, action=ACT)
    assert sym.observation.dim == OBS.dim and sym.action.dim == 15
    x = torch.arange(OBS.dim, dtype=torch.float64)
    for g in range(10):
        sigma = sym.label_permutations(g)["colour"]
        y = sym.observation.act(x, g)
        for slot, c, r in [(0, 0, 0), (2, 3, 1), (4, 4, 4)]:
            assert y[25 * slot + 5 * sigma[c] + r] == x[25 * slot + 5 * c + r]
        assert y[125 + 5 * sigma[2] + 3] == x[125 + 5 * 2 + 3]
        assert y[150 + sigma[1]] == x[150 + 1]
        assert torch.equal(y[155:], x[155:])  # tokens fixed
        a = sym.action.act(torch.arange(15.0), g)
        assert torch.equal(a[:5], torch.arange(5.0)) and torch.equal(a[10:], torch.arange(10.0, 15.0))
        assert a[5 + sigma[0]] == 5.0
    check_representation(sym.observation)
    check_representation(sym.action)


def test_two_label_sets_with_a_direct_product():
    group = direct_product(cyclic(5), symmetric(5))
    sym = Symmetry(group, acts_on=[colour, rank], observation=OBS, action=ACT)
    g = 123
    perms = sym.label_permutations(g)
    y = sym.observation.act(torch.arange(OBS.dim, dtype=torch.float64), g)
    assert y[125 + 5 * perms["colour"][1] + perms["rank"][3]] == 125 + 5 * 1 + 3
    check_representation(sym.action)


def test_restrict_to_subgroup():
    sym = Symmetry(symmetric(5), acts_on=colour, observation=OBS, action=ACT).restrict(cyclic(5))
    assert sym.group.order == 5 and sym.observation.group.order == 5


def test_large_group_labels_from_image_array():
    lever = Labels("lever", 9)
    sym = Symmetry(symmetric(9), acts_on=lever, observation=Layout([Block("payoff", lever)]), action=Layout([Block("pull", lever)]))
    perm = sym.group.random_permutations(1, torch.Generator().manual_seed(0))[0]
    assert torch.equal(sym.label_permutations(perm)["lever"], perm)
    x = torch.randn(9)
    assert torch.equal(sym.observation.act_by_permutations(x, perm)[perm], x)


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
        Symmetry(observation=OBS, action=ACT, **kwargs)


def test_axis_size_mismatch_names_block_and_axis():
    wrong = Layout([Block("discards", 3, Labels("colour", 4))])
    with pytest.raises(ValueError, match=r"observation block 'discards', axis 1.*size 4.*size 5"):
        Symmetry(cyclic(5), acts_on=colour, observation=wrong, action=ACT)


def test_label_set_used_by_no_block_is_refused():
    with pytest.raises(ValueError, match=r"\['color'\] that no observation, action or state block uses"):
        Symmetry(cyclic(5), acts_on=Labels("color", 5), observation=OBS, action=ACT)


def test_label_permutations_checks_membership():
    sym = Symmetry(cyclic(5), acts_on=colour, observation=OBS, action=ACT)
    with pytest.raises(ValueError, match="not an element of cyclic"):
        sym.label_permutations(torch.tensor([1, 0, 2, 3, 4]))
    with pytest.raises(ValueError, match="not a permutation"):
        sym.label_permutations(torch.tensor([0, 0, 0, 0, 0]))
