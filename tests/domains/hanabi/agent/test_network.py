"""The Hanabi Q-network and its symmetrized agent: exact equivariance, dueling, no-op."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.agent.network import Agent, QNetwork, dueling_q, no_op_representation
from eqc.domains.hanabi.config.agent import NetworkConfig
from eqc.domains.hanabi.symmetry import colour_symmetry
from eqc.groups import cyclic, dihedral
from eqc.verification import equivariance_error

OBS, MOVES = 658, 20


def _agent(group, lstm_layers: int, hidden_scheme: str = "average", symmetrize: bool = True) -> tuple[Agent, object, object]:
    torch.manual_seed(0)
    config = NetworkConfig(hidden_size=32, mlp_layers=1, lstm_layers=lstm_layers, layer_norm=lstm_layers == 0)
    network = QNetwork(OBS, MOVES + 1, config).double()
    sym = colour_symmetry(group)
    agent = Agent(network, sym.observation_rep, sym.action_rep, hidden_scheme=hidden_scheme) if symmetrize else Agent(network)
    return agent, sym.observation_rep, no_op_representation(sym.action_rep, 1)


def _inputs(batch: int, generator: torch.Generator, *lead: int) -> tuple[torch.Tensor, torch.Tensor]:
    obs = torch.rand(*lead, batch, OBS, generator=generator, dtype=torch.float64)
    legal = torch.rand(*lead, batch, MOVES + 1, generator=generator) < 0.6
    legal[..., 0] = True
    return obs, legal


def _q(agent: Agent, recurrent: bool):
    def fn(obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        q, _ = agent.sequence(obs, legal) if recurrent else agent.step(obs, legal)
        return q.masked_fill(~legal, 0.0)  # -inf at illegal moves would compare as NaN

    return fn


@pytest.mark.parametrize("group", [cyclic(5), dihedral(5)], ids=["C5", "D10"])
def test_symmetrized_feedforward_agent_is_exactly_equivariant(group) -> None:
    agent, obs_rep, act_rep = _agent(group, lstm_layers=0)
    obs, legal = _inputs(16, torch.Generator().manual_seed(1))
    report = equivariance_error(_q(agent, False), [obs_rep, act_rep], act_rep, [obs, legal])
    assert report.max_error < 1e-12


def test_plain_agent_is_not_equivariant() -> None:
    agent, obs_rep, act_rep = _agent(cyclic(5), lstm_layers=0, symmetrize=False)
    obs, legal = _inputs(16, torch.Generator().manual_seed(1))
    report = equivariance_error(_q(agent, False), [obs_rep, act_rep], act_rep, [obs, legal])
    assert report.max_error > 1e-4


@pytest.mark.parametrize("hidden_scheme", ["average", "identity"])
def test_symmetrized_recurrent_agent_steps_equivariantly(hidden_scheme: str) -> None:
    agent, obs_rep, act_rep = _agent(dihedral(5), lstm_layers=1, hidden_scheme=hidden_scheme)
    obs, legal = _inputs(8, torch.Generator().manual_seed(2), 5)
    report = equivariance_error(_q(agent, True), [obs_rep, act_rep], act_rep, [obs[:1], legal[:1]])
    assert report.max_error < 1e-12  # one step from the zero state: both schemes equivariant


def test_average_scheme_sequence_is_equivariant_identity_is_not() -> None:
    generator = torch.Generator().manual_seed(3)
    obs, legal = _inputs(8, generator, 6)
    average, obs_rep, act_rep = _agent(dihedral(5), lstm_layers=1, hidden_scheme="average")
    assert equivariance_error(_q(average, True), [obs_rep, act_rep], act_rep, [obs, legal]).max_error < 1e-12
    identity, _, _ = _agent(dihedral(5), lstm_layers=1, hidden_scheme="identity")
    assert equivariance_error(_q(identity, True), [obs_rep, act_rep], act_rep, [obs, legal]).max_error > 1e-6


@pytest.mark.parametrize("symmetrize", [True, False], ids=["symmetrized", "plain"])
def test_sequence_equals_stepping(symmetrize: bool) -> None:
    agent, _, _ = _agent(dihedral(5), lstm_layers=2, symmetrize=symmetrize)
    obs, legal = _inputs(4, torch.Generator().manual_seed(4), 5)
    whole, _ = agent.sequence(obs, legal)
    state, steps = None, []
    for t in range(5):
        q, state = agent.step(obs[t], legal[t], state)
        steps.append(q)
    torch.testing.assert_close(whole, torch.stack(steps), rtol=0, atol=1e-12)


def test_dueling_combines_over_legal_moves_only() -> None:
    raw = torch.tensor([[1.0, 2.0, 30.0, 5.0]])  # A = (1, 2, 30), V = 5
    legal = torch.tensor([[True, True, False]])
    q = dueling_q(raw, legal, dueling=True)
    assert q[0, :2].tolist() == [5 + 1 - 1.5, 5 + 2 - 1.5]
    assert q[0, 2] == float("-inf")
    assert dueling_q(raw[:, :3], None, dueling=False).tolist() == [[1.0, 2.0, 30.0]]
    # hanabi_SAD's centre: the legal-masked advantages (1, 2, 0) averaged over all three actions
    q_all = dueling_q(raw, legal, dueling=True, centre="all")
    assert q_all[0, :2].tolist() == [5 + 1 - 1.0, 5 + 2 - 1.0] and q_all[0, 2] == float("-inf")


def test_mismatched_representations_are_refused() -> None:
    network = QNetwork(100, MOVES + 1, NetworkConfig(hidden_size=8, lstm_layers=0))
    sym = colour_symmetry(cyclic(5))
    with pytest.raises(ValueError, match="do not fit a network"):
        Agent(network, sym.observation_rep, sym.action_rep)
    with pytest.raises(ValueError, match="both be given"):
        Agent(network, sym.observation_rep, None)


@pytest.mark.parametrize("lstm_layers", [0, 1])
def test_aux_head_reads_the_symmetrized_trajectory(lstm_layers: int) -> None:
    """SAD-AUX's own-hand logits (playable/dead/later per slot) do not depend on colour names: under a
    symmetrized agent they come out of the same symmetrized pass as Q, so they are exactly invariant."""
    torch.manual_seed(1)
    config = NetworkConfig(hidden_size=32, mlp_layers=1, lstm_layers=lstm_layers, layer_norm=False)
    network = QNetwork(OBS, MOVES + 1, config, aux_outputs=15).double()
    sym = colour_symmetry(dihedral(5))
    symmetrized, bare = Agent(network, sym.observation_rep, sym.action_rep), Agent(network)
    obs, legal = _inputs(4, torch.Generator().manual_seed(2), 3)  # [T=3, N=4, ...]
    g = torch.full((3, 4), 7)
    moved = sym.observation_rep.act(obs, g)
    move_rep = no_op_representation(sym.action_rep, 1)
    for agent, invariant in ((symmetrized, True), (bare, False)):
        q, aux, _ = agent.sequence_with_aux(obs, legal)
        q_moved, aux_moved, _ = agent.sequence_with_aux(moved, move_rep.act(legal, g))
        assert aux.shape == (3, 4, 15)
        if invariant:
            torch.testing.assert_close(aux_moved, aux, rtol=0, atol=1e-10)
            expected = move_rep.act(q, g)
            finite = expected.isfinite()
            torch.testing.assert_close(q_moved.masked_fill(~finite, 0), expected.masked_fill(~finite, 0), rtol=0, atol=1e-10)
        else:
            assert (aux_moved - aux).abs().max() > 1e-4  # negative control
