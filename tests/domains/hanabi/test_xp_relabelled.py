"""Relabelled self-play: the relabelled copy is the agent in a renamed world, exactly; its losses mean what they say."""

from __future__ import annotations

import math

import pytest
import torch

from eqc.domains.hanabi.agent.network import Agent, QNetwork
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.setup import make_batch
from eqc.domains.hanabi.xp import RelabelledAgent, relabelled_self_play
from eqc.domains.hanabi.xp.relabelled import _colour_hint_share

CPU = torch.device("cpu")
CONFIG = TrainConfig().replace(network={"hidden_size": 32, "mlp_layers": 1, "precision": "fp32"})


def _network(seed: int) -> QNetwork:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return QNetwork(658, 21, CONFIG.network).double()


def _policy(agent: Agent) -> TrainedPolicy:
    return TrainedPolicy(agent, CONFIG.agent, 0, CPU)


def _observations(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    env = make_batch(CONFIG.game.rules(), n, CPU, seed=4)
    env.reset()
    for _ in range(6):  # a few random moves, so hints and discards show in the observations
        env.step(torch.multinomial(env.legal_move_mask().float(), 1).squeeze(1))
    obs = env.observations()[torch.arange(n), env.state.current].double()
    legal = torch.cat([env.legal_move_mask(), torch.zeros(n, 1, dtype=torch.bool)], dim=1)
    return obs, legal


def test_a_relabelled_copy_of_an_s5_equivariant_agent_is_the_agent() -> None:
    """For an agent symmetrized over S5 the renamed world changes nothing: the same Q-values for every element."""
    s5 = colour_group("S5")
    sym = colour_symmetry(s5, CONFIG.game.rules())
    agent = Agent(_network(0), sym.observation_rep, sym.action_rep)
    obs, legal = _observations(16)
    q, _ = agent.step(obs, legal)
    for element in (1, 17, 64, 119):
        relabelled, _ = RelabelledAgent(agent, colour_symmetry(s5, CONFIG.game.rules()), element).step(obs, legal)
        torch.testing.assert_close(relabelled, q, rtol=0, atol=1e-10)


def test_a_plain_agent_changes_and_relabelling_back_restores_it() -> None:
    s5 = colour_group("S5")
    agent = Agent(_network(1))
    obs, legal = _observations(32)
    q, _ = agent.step(obs, legal)
    relabelled, _ = RelabelledAgent(agent, colour_symmetry(s5, CONFIG.game.rules()), 37).step(obs, legal)
    finite = torch.isfinite(q)
    assert torch.equal(torch.isfinite(relabelled), finite)  # the same legal moves
    assert (relabelled - q)[finite].abs().max() > 1e-3  # negative control: the bare net depends on colour names
    s5_symmetry = colour_symmetry(s5, CONFIG.game.rules())
    back = RelabelledAgent(RelabelledAgent(agent, s5_symmetry, 37), s5_symmetry, int(s5.inverse_indices(37)))
    torch.testing.assert_close(back.step(obs, legal)[0], q, rtol=0, atol=1e-10)
    assert bool(legal.gather(1, relabelled.argmax(-1, keepdim=True)).all())  # its moves are legal in the real game


def test_relabelled_self_play_of_an_equivariant_agent_loses_nothing() -> None:
    s5 = colour_group("S5")
    sym = colour_symmetry(s5, CONFIG.game.rules())
    equivariant = _policy(Agent(_network(2).float(), sym.observation_rep, sym.action_rep))
    result = relabelled_self_play(equivariant, elements=3, games=40)
    assert result.loss == 0.0 and result.relabelled == (result.self_play,) * 3
    assert len(result.elements) == 3 and 0 not in result.elements and result.games == 40
    plain = relabelled_self_play(_policy(Agent(_network(2).float())), elements=[5, 50], games=40)
    assert plain.elements == (5, 50) and math.isfinite(plain.loss_sem)


def test_colour_hint_share_counts_hle_move_uids() -> None:
    rules = CONFIG.game.rules()
    moves = torch.tensor([[0, 5, 10, 14, 15, 19, -1], [12, 16, 16, 3, -1, -1, -1]])
    assert _colour_hint_share(moves, rules) == pytest.approx(3 / 7)  # colour: 10, 14, 12; rank: 15, 19, 16, 16
    assert math.isnan(_colour_hint_share(torch.tensor([[0, 5, -1]]), rules))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"elements": 0}, "elements"), ({"elements": [0]}, r"elements\[0\]"), ({"elements": []}, "non-empty"),
    ({"games": 1}, "games"), ({"group": "Z7"}, "colour group must be one of"),
])
def test_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        relabelled_self_play(_policy(Agent(_network(3).float())), **kwargs)
    with pytest.raises(TypeError, match="TrainedPolicy"):
        relabelled_self_play("runs/agent")
