import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.groups import GroupTooLargeError, PermutationRepresentation, cyclic, dihedral, symmetric
from eqc.symmetrize import Symmetrizer
from eqc.verification import assert_equivariant, equivariance_error
from eqc.verification import strategies as eqst

colour = Labels("colour", 5)
OBS = Layout([Block("hand", 3, colour, 2, encoding="one_hot", one_hot_axes=2), Block("hint", colour), Block("tokens", 4)])
ACT = Layout([Block("play", 3), Block("hint_colour", colour)])
D5 = dihedral(5)


def symmetry(group=D5):
    return Symmetry(group, acts_on=colour, observation_layout=OBS, action_layout=ACT)


def masked_problem(rows, seed, mask_seed, illegal_share):
    """A seeded float64 MLP (OBS -> 16 -> ACT), ``rows`` observations and legal masks with move 0 always legal."""
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(OBS.dim, 16), nn.Tanh(), nn.Linear(16, ACT.dim)).double()
    x = torch.randn(rows, OBS.dim, dtype=torch.float64)
    mask = torch.rand(rows, ACT.dim, generator=torch.Generator().manual_seed(mask_seed)) > illegal_share
    mask[:, 0] = True
    return net, x, mask


@settings(max_examples=12)
@given(st.sampled_from([cyclic(5), dihedral(5), symmetric(5)]), st.data())
def test_proposition_1_symmetrized_network_is_equivariant(group, data):
    sym = symmetry(group)
    net = data.draw(eqst.networks(OBS.dim, ACT.dim))
    x = data.draw(eqst.observations(OBS, batch=4))
    report = assert_equivariant(Symmetrizer(net, sym.observation_rep, sym.action_rep), sym.observation_rep, sym.action_rep, x)
    assert report.max_error < 1e-12
    # the bare network is not equivariant: the check can fail
    assert not equivariance_error(net, sym.observation_rep, sym.action_rep, x).ok


@settings(max_examples=30)
@given(st.data())
def test_proposition_2_symmetrizer_fixes_equivariant_networks(data):
    sym = symmetry()
    net = data.draw(eqst.networks(OBS.dim, ACT.dim))
    x = data.draw(eqst.observations(OBS, batch=3))
    once = Symmetrizer(net, sym.observation_rep, sym.action_rep)
    twice = Symmetrizer(once, sym.observation_rep, sym.action_rep)
    assert torch.allclose(twice(x), once(x), atol=1e-12)


def test_proposition_2_on_a_hand_built_equivariant_map():
    group = symmetric(4)
    rep = PermutationRepresentation.standard(group)
    equivariant = lambda x: torch.tanh(x) * 2 + x.sum(-1, keepdim=True)  # noqa: E731
    x = torch.randn(6, 4, dtype=torch.float64)
    assert torch.allclose(Symmetrizer(equivariant, rep, rep)(x), equivariant(x), atol=1e-12)


def test_symmetrizer_is_the_group_average_of_a_python_loop():
    sym = symmetry()
    torch.manual_seed(0)
    net = nn.Linear(OBS.dim, ACT.dim).double()
    x = torch.randn(2, OBS.dim, dtype=torch.float64)
    loop = sum(sym.action_rep.act(net(sym.observation_rep.act(x, g)), g, inverse=True) for g in range(10)) / 10
    assert torch.allclose(Symmetrizer(net, sym.observation_rep, sym.action_rep)(x), loop, atol=1e-12)


def test_probability_averaging_with_masks_is_equivariant_and_normalised():
    sym = symmetry(symmetric(5))
    net, x, mask = masked_problem(5, seed=1, mask_seed=0, illegal_share=0.4)
    s = Symmetrizer(net, sym.observation_rep, sym.action_rep, average="probabilities")
    logp = s(x, mask)
    assert torch.allclose(logp.exp().sum(-1), torch.ones(5, dtype=torch.float64))
    assert torch.all(logp[~mask] == float("-inf"))
    assert_equivariant(s, [sym.observation_rep, sym.action_rep], sym.action_rep, (x, mask))


def test_pass_mask_gives_each_copy_its_relabelled_mask():
    sym = symmetry()
    seen = []

    def policy(x, mask):
        seen.append(mask.clone())
        return torch.zeros(x.shape[0], ACT.dim).masked_fill(~mask, -1.0)

    mask = torch.zeros(1, ACT.dim, dtype=torch.bool)
    mask[0, 3 + 0] = True  # hint colour 0 legal
    Symmetrizer(policy, sym.observation_rep, sym.action_rep, pass_mask=True)(torch.zeros(1, OBS.dim), mask)
    masks = seen[0]
    for g in range(10):
        assert masks[g, 3 + int(sym.label_permutations(index=g)["colour"][0])]


def test_sampled_symmetrization_for_a_group_too_large_to_list():
    lever = Labels("lever", 9)
    sym = Symmetry(symmetric(9), acts_on=lever, observation_layout=Layout([Block("x", lever)]), action_layout=Layout([Block("a", lever)]))
    torch.manual_seed(0)
    net = nn.Linear(9, 9).double()
    with pytest.raises(GroupTooLargeError, match="exact symmetrization"):
        Symmetrizer(net, sym.observation_rep, sym.action_rep)
    x = torch.randn(1, 9, dtype=torch.float64)
    # exact S9 average of a linear map: E_g[(W rho(g) x + b)[g(c)]] = mean(b) + x_c mean(diag W) + (sum x - x_c) mean(offdiag W)
    w, b = net.weight.detach(), net.bias.detach()
    diag, off = w.diagonal().mean(), (w.sum() - w.diagonal().sum()) / 72
    exact = b.mean() + x[0] * diag + (x[0].sum() - x[0]) * off
    errors = []
    for samples in (10, 200, 5000):
        s = Symmetrizer(net, sym.observation_rep, sym.action_rep, samples=samples, generator=torch.Generator().manual_seed(0))
        errors.append(float((s(x)[0].detach() - exact).abs().max()))
    assert errors[0] > errors[1] > errors[2] and errors[2] < 0.05  # unbiased: the error shrinks like 1/sqrt(k)


def test_bad_inputs():
    sym = symmetry()
    net = nn.Linear(OBS.dim, ACT.dim)
    s = Symmetrizer(net, sym.observation_rep, sym.action_rep)
    with pytest.raises(ValueError, match=f"last dimension {OBS.dim}"):
        s(torch.randn(2, OBS.dim + 1))
    with pytest.raises(TypeError, match="bool"):
        s(torch.randn(2, OBS.dim), torch.ones(2, ACT.dim))
    with pytest.raises(ValueError, match="average"):
        Symmetrizer(net, sym.observation_rep, sym.action_rep, average="mean")
    with pytest.raises(ValueError, match="share one group"):
        Symmetrizer(net, sym.observation_rep, symmetry(cyclic(5)).action_rep)
    with pytest.raises(ValueError, match="samples"):
        Symmetrizer(net, sym.observation_rep, sym.action_rep, samples=0)
    with pytest.raises(ValueError, match="must return a tensor with last dimension"):
        Symmetrizer(nn.Linear(OBS.dim, 3), sym.observation_rep, sym.action_rep)(torch.randn(2, OBS.dim))


def test_rows_without_any_legal_action_stay_finite_in_gradients():
    """A player not to act has an all-False mask row; it must not produce NaN (values or gradients)."""
    sym = symmetry()
    net = nn.Linear(OBS.dim, ACT.dim).double()
    x = torch.randn(2, OBS.dim, dtype=torch.float64)
    mask = torch.zeros(2, ACT.dim, dtype=torch.bool)
    mask[0, :4] = True  # row 1: nobody may act
    for average in ("outputs", "probabilities"):
        out = Symmetrizer(net, sym.observation_rep, sym.action_rep, average=average)(x, mask)
        assert torch.all(out[1] == float("-inf")) and torch.isfinite(out[0, :4]).all()
        out[0, :4].sum().backward()
        assert all(torch.isfinite(p.grad).all() for p in net.parameters())
        net.zero_grad()


def test_mask_shape_must_match_the_input_batch():
    sym = symmetry()
    s = Symmetrizer(nn.Linear(OBS.dim, ACT.dim), sym.observation_rep, sym.action_rep)
    with pytest.raises(ValueError, match=r"legal_mask must have shape \(2, 8\)"):
        s(torch.randn(2, OBS.dim), torch.ones(3, ACT.dim, dtype=torch.bool))


@pytest.mark.parametrize("average", ["outputs", "probabilities"])
@pytest.mark.parametrize("samples", [None, 50])
def test_chunked_symmetrization_equals_one_batched_call(average, samples):
    sym = symmetry(symmetric(5))
    net, x, mask = masked_problem(3, seed=2, mask_seed=1, illegal_share=0.5)

    def run(chunk_size):
        gen = torch.Generator().manual_seed(0)
        s = Symmetrizer(net, sym.observation_rep, sym.action_rep, average=average, samples=samples, generator=gen, chunk_size=chunk_size)
        return s(x, mask)

    whole, chunked = run(None), run(7)
    assert torch.allclose(whole, chunked, atol=1e-12, rtol=0) and torch.equal(whole.isinf(), chunked.isinf())
    with pytest.raises(ValueError, match="chunk_size"):
        run(0)


def test_auto_chunking_acts_like_one_call_without_gradients():
    sym = symmetry(symmetric(5))
    torch.manual_seed(3)
    net = nn.Linear(OBS.dim, ACT.dim).double()
    x = torch.randn(40, OBS.dim, dtype=torch.float64)  # 40 * 120 rows > AUTO_CHUNK_ROWS: chunks when acting
    auto = Symmetrizer(net, sym.observation_rep, sym.action_rep)
    whole = Symmetrizer(net, sym.observation_rep, sym.action_rep, chunk_size=None)
    assert auto._chunk_size(x) is None  # gradients on: one call
    with torch.no_grad():
        assert auto._chunk_size(x) is not None
        assert torch.allclose(auto(x), whole(x), atol=1e-12, rtol=0)


def test_chunking_with_pass_mask_and_several_leading_dims():
    sym = symmetry(dihedral(5))
    torch.manual_seed(4)
    net = nn.Linear(OBS.dim, ACT.dim).double()

    def policy(x, mask):
        return net(x).masked_fill(~mask, -5.0)

    x = torch.randn(2, 3, OBS.dim, dtype=torch.float64)
    mask = torch.rand(2, 3, ACT.dim, generator=torch.Generator().manual_seed(2)) > 0.3
    whole = Symmetrizer(policy, sym.observation_rep, sym.action_rep, pass_mask=True, chunk_size=None)(x, mask)
    chunked = Symmetrizer(policy, sym.observation_rep, sym.action_rep, pass_mask=True, chunk_size=3)(x, mask)
    assert torch.equal(whole.isinf(), chunked.isinf())
    assert torch.allclose(whole[~whole.isinf()], chunked[~chunked.isinf()], atol=1e-12, rtol=0)
    assert_equivariant(
        lambda x_, m_: Symmetrizer(policy, sym.observation_rep, sym.action_rep, pass_mask=True, chunk_size=3)(x_, m_),
        [sym.observation_rep, sym.action_rep], sym.action_rep, (x, mask),
    )


def test_missing_representation_or_numpy_input_is_a_clear_type_error():
    sym = Symmetry(dihedral(5), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    net = nn.Linear(OBS.dim, ACT.dim)
    with pytest.raises(TypeError, match=r"in_rep must be a PermutationRepresentation \(e.g. sym.observation_rep"):
        Symmetrizer(net, None, sym.action_rep)
    with pytest.raises(TypeError, match="out_rep must be a PermutationRepresentation"):
        Symmetrizer(net, sym.observation_rep, None)
    with pytest.raises(TypeError, match=r"in_rep must be a PermutationRepresentation .*got Layout"):
        Symmetrizer(net, OBS, ACT)
    policy = Symmetrizer(net, sym.observation_rep, sym.action_rep)
    with pytest.raises(TypeError, match=r"x must be a torch.Tensor, got ndarray \(convert with torch.as_tensor\)"):
        policy(torch.randn(2, OBS.dim).numpy())
    with pytest.raises(TypeError, match="legal_mask must have dtype"):
        policy(torch.randn(2, OBS.dim), torch.ones(2, ACT.dim))
    with pytest.raises(TypeError, match=r"samples .* must be a Python int"):
        Symmetrizer(net, sym.observation_rep, sym.action_rep, samples=2.0)
    with pytest.raises(ValueError, match="average must be one of"):
        Symmetrizer(net, sym.observation_rep, sym.action_rep, average="mean")
