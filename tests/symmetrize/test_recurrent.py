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


def make(scheme, group=dihedral(5)):
    torch.manual_seed(0)
    sym = Symmetry(group, acts_on=colour, observation=OBS, action=ACT)
    return sym, RecurrentSymmetrizer(LSTMPolicy().double(), sym.observation, sym.action, hidden=scheme)


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
    report = assert_equivariant(policy.step, [sym.observation, None], [sym.action, None], (x, initial_state(4)))
    assert report.max_error < 1e-12


def test_average_scheme_is_equivariant_over_whole_sequences_with_invariant_state():
    sym, policy = make("average")
    xs = torch.randn(5, 2, OBS.dim, dtype=torch.float64)

    def run(seq):
        ys, (h, c) = policy(seq, initial_state(2))
        return ys, h

    # outputs move with g; the final hidden state does not move at all (it is invariant)
    report = equivariance_error(lambda s: run(s)[0], sym.observation, sym.action, xs)
    assert report.max_error < 1e-12
    base = run(xs)[1]
    for g in range(10):
        assert torch.allclose(run(sym.observation.act(xs, g))[1], base, atol=1e-12)


def test_identity_scheme_state_depends_on_labelling():
    """Documented behaviour: with hidden='identity' the carried state is not invariant, so a
    sequence is not treated equivariantly even though every single step is."""
    sym, policy = make("identity")
    xs = torch.randn(5, 2, OBS.dim, dtype=torch.float64)
    report = equivariance_error(lambda s: policy(s, initial_state(2))[0], sym.observation, sym.action, xs)
    assert report.max_error > 1e-6


def test_symmetrizing_twice_changes_nothing_for_average_scheme():
    sym, policy = make("average")
    twice = RecurrentSymmetrizer(policy.step, sym.observation, sym.action, hidden="average")
    xs = torch.randn(4, 2, OBS.dim, dtype=torch.float64)
    assert torch.allclose(twice(xs, initial_state(2))[0], policy(xs, initial_state(2))[0], atol=1e-12)


def test_bad_inputs():
    sym, policy = make("average")
    with pytest.raises(ValueError, match="hidden"):
        RecurrentSymmetrizer(LSTMPolicy(), sym.observation, sym.action, hidden="mean")
    with pytest.raises(ValueError, match=r"\[time, batch, d_in\]"):
        policy(torch.randn(3, OBS.dim, dtype=torch.float64))
    with pytest.raises(ValueError, match="batch dimension at 3"):
        RecurrentSymmetrizer(LSTMPolicy().double(), sym.observation, sym.action, state_batch_dim=3).step(
            torch.randn(2, OBS.dim, dtype=torch.float64), initial_state(2)
        )


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
    sym = Symmetry(dihedral(5), acts_on=colour, observation=OBS, action=ACT)
    policy = RecurrentSymmetrizer(GRUPolicy().double(), sym.observation, sym.action, state_batch_dim=0)
    xs = torch.randn(4, 3, OBS.dim, dtype=torch.float64)
    ys, h = policy(xs)  # None: the GRU starts from zeros
    assert h.shape == (3, 8)
    report = equivariance_error(lambda s: policy(s)[0], sym.observation, sym.action, xs)
    assert report.max_error < 1e-12
