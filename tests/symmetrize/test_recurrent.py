import pytest
import torch
from torch import nn

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.groups import dihedral
from eqc.symmetrize import RecurrentSymmetrizer
from eqc.verification import assert_equivariant, equivariance_error

colour = Labels("colour", 5)
OBS = Layout([Block("cards", colour, 3), Block("hint", colour), Block("tokens", 4)])
ACT = Layout([Block("play", 3), Block("hint_colour", colour)])
D5 = dihedral(5)


class LSTMPolicy(nn.Module):
    """Linear -> 2-layer LSTM -> linear head, one step at a time: (x [B, d], (h, c)) -> (q [B, a], (h, c))."""

    def __init__(self, hidden: int = 16) -> None:
        super().__init__()
        self.inp = nn.Linear(OBS.dim, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=2)
        self.head = nn.Linear(hidden, ACT.dim)

    def forward(self, x, state):
        z, state = self.lstm(torch.relu(self.inp(x)).unsqueeze(0), state)
        return self.head(z[0]), state


def make(scheme, group=D5):
    torch.manual_seed(0)
    sym = Symmetry(group, acts_on=colour, observation_layout=OBS, action_layout=ACT)
    return sym, RecurrentSymmetrizer(LSTMPolicy().double(), sym.observation_rep, sym.action_rep, hidden_scheme=scheme)


def initial_state(batch):
    z = torch.randn(2, batch, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    return (z, z.clone() * 0.5)


@pytest.mark.parametrize("scheme", ["average", "identity"])
def test_sequence_and_step_by_step_agree_exactly(scheme):
    _, policy = make(scheme)
    xs = torch.randn(6, 3, OBS.dim, dtype=torch.float64)
    ys, final = policy(xs, initial_state(3))
    state, steps = initial_state(3), []
    for t in range(6):
        y, state = policy.step(xs[t], state)
        steps.append(y)
    assert torch.equal(ys, torch.stack(steps))
    assert torch.equal(final[0], state[0]) and torch.equal(final[1], state[1])


@pytest.mark.parametrize("scheme", ["average", "identity"])
def test_each_step_is_equivariant_with_the_state_passed_untransformed(scheme):
    sym, policy = make(scheme, dihedral(5))
    x = torch.randn(4, OBS.dim, dtype=torch.float64)
    report = assert_equivariant(policy.step, [sym.observation_rep, None], [sym.action_rep, None], (x, initial_state(4)))
    assert report.max_error < 1e-12


def test_average_scheme_is_equivariant_over_whole_sequences_with_invariant_state():
    sym, policy = make("average")
    xs = torch.randn(5, 2, OBS.dim, dtype=torch.float64)

    def run(seq):
        ys, (h, _c) = policy(seq, initial_state(2))
        return ys, h

    # outputs move with g; the final hidden state does not move at all (it is invariant)
    report = equivariance_error(lambda s: run(s)[0], sym.observation_rep, sym.action_rep, xs)
    assert report.max_error < 1e-12
    base = run(xs)[1]
    for g in range(10):
        assert torch.allclose(run(sym.observation_rep.act(xs, g))[1], base, atol=1e-12)


def test_identity_scheme_state_depends_on_labelling():
    """Documented behaviour: with hidden_scheme='identity' the carried state is not invariant, so a
    sequence is not treated equivariantly even though every single step is."""
    sym, policy = make("identity")
    xs = torch.randn(5, 2, OBS.dim, dtype=torch.float64)
    report = equivariance_error(lambda s: policy(s, initial_state(2))[0], sym.observation_rep, sym.action_rep, xs)
    assert report.max_error > 1e-6


def test_symmetrizing_twice_changes_nothing_for_average_scheme():
    sym, policy = make("average")
    twice = RecurrentSymmetrizer(policy.step, sym.observation_rep, sym.action_rep, hidden_scheme="average")
    xs = torch.randn(4, 2, OBS.dim, dtype=torch.float64)
    assert torch.allclose(twice(xs, initial_state(2))[0], policy(xs, initial_state(2))[0], atol=1e-12)


def test_bad_inputs():
    sym, policy = make("average")
    with pytest.raises(ValueError, match="hidden_scheme"):
        RecurrentSymmetrizer(LSTMPolicy(), sym.observation_rep, sym.action_rep, hidden_scheme="mean")
    with pytest.raises(ValueError, match=r"\[time, batch, d_in\]"):
        policy(torch.randn(3, OBS.dim, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"state\[0\] must hold one state per input.*batch dimension of size 2 at dim 3"):
        RecurrentSymmetrizer(LSTMPolicy().double(), sym.observation_rep, sym.action_rep, state_batch_dim=3).step(
            torch.randn(2, OBS.dim, dtype=torch.float64), initial_state(2)
        )


def test_wrong_state_shape_names_the_state_and_the_shape_per_copy():
    _, policy = make("average")  # |G| = 10: the module sees 10x the batch, which the message must not blame
    x = torch.randn(3, OBS.dim, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"state\[0\] must hold one state per input.*needs shape \[2, 3, 16\]; got shape \[2, 4, 16\]"):
        policy.step(x, initial_state(4))
    with pytest.raises(ValueError, match=r"state\[1\] .*needs shape \[2, 3, 16\]"):
        policy.step(x, (initial_state(3)[0], torch.zeros(2, 5, 16, dtype=torch.float64)))
    with pytest.raises(TypeError, match=r"state\[1\] must be a torch.Tensor"):
        policy.step(x, (initial_state(3)[0], None))
    with pytest.raises(TypeError, match=r"x must be a torch\.Tensor"):
        policy(x.numpy())
    # a state of the right batch but the wrong hidden size: the module's own error, explained per input
    wrong_hidden = tuple(torch.zeros(2, 3, 7, dtype=torch.float64) for _ in range(2))
    with pytest.raises(RuntimeError, match=r"the module failed on the state given per input as \(\[2, 3, 7\], \[2, 3, 7\]\)"):
        policy.step(x, wrong_hidden)


def test_wrong_calling_convention_is_explained():
    sym, _ = make("average")
    bare_lstm = nn.LSTM(OBS.dim, ACT.dim).double()  # wants a time axis and returns (output, (h, c)) of other shapes
    policy = RecurrentSymmetrizer(bare_lstm, sym.observation_rep, sym.action_rep)
    with pytest.raises((RuntimeError, ValueError), match=r"RecurrentSymmetrizer calls module|module must return"):
        policy.step(torch.randn(3, OBS.dim, dtype=torch.float64), initial_state(3))
    one_arg = RecurrentSymmetrizer(nn.Linear(OBS.dim, ACT.dim).double(), sym.observation_rep, sym.action_rep)
    with pytest.raises(TypeError, match=r"the module failed on the state given per input as None: .*must take \(x, state\)"):
        one_arg.step(torch.randn(3, OBS.dim, dtype=torch.float64))
    returns_tensor = RecurrentSymmetrizer(lambda x, s: x[:, : ACT.dim], sym.observation_rep, sym.action_rep)
    with pytest.raises(TypeError, match=r"module must return a pair \(y, state\), got Tensor"):
        returns_tensor.step(torch.randn(3, OBS.dim, dtype=torch.float64))


class GRUPolicy(nn.Module):
    """A GRU cell with a plain tensor state [B, H] (batch at dim 0)."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.GRUCell(OBS.dim, 8)
        self.head = nn.Linear(8, ACT.dim)

    def forward(self, x, h):
        h = self.cell(x, h)
        return self.head(h), h


def test_gru_with_tensor_state_and_none_initial_state():
    torch.manual_seed(0)
    sym = Symmetry(dihedral(5), acts_on=colour, observation_layout=OBS, action_layout=ACT)
    policy = RecurrentSymmetrizer(GRUPolicy().double(), sym.observation_rep, sym.action_rep, state_batch_dim=0)
    xs = torch.randn(4, 3, OBS.dim, dtype=torch.float64)
    _ys, h = policy(xs)  # None: the GRU starts from zeros
    assert h.shape == (3, 8)
    report = equivariance_error(lambda s: policy(s)[0], sym.observation_rep, sym.action_rep, xs)
    assert report.max_error < 1e-12
