"""Recurrent PQN: the learning pass replays exactly what acting computed; it learns; OP and symmetrizers run."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.training.learner import LearnerSetup
from eqc.domains.hanabi.training.learners import make_learner
from eqc.domains.hanabi.training.pqn import PQN, PQNLearner

CPU = torch.device("cpu")


def _recurrent(tiny_config, **changes):
    base = {"network": {"hidden_size": 32, "mlp_layers": 1, "lstm_layers": 1}, "run": {"num_envs": 32}}
    for section, values in changes.items():
        base[section] = {**base.get(section, {}), **values}
    return tiny_config(**base)


@pytest.mark.parametrize("rule", ["sp", "op"])
def test_learning_pass_replays_the_q_values_of_acting(tiny_config, rule: str) -> None:
    """With the weights frozen, replaying each game's rollout from its start state (zeroing states where games
    ended) gives exactly the acting players' Q-values that acting computed, move for move."""
    learner = make_learner(_recurrent(tiny_config, rule={"objective": rule}, pqn={"rollout_steps": 12}), 0, CPU)
    assert isinstance(learner, PQNLearner) and learner.recurrent
    for group in learner.optimizer.param_groups:
        group["lr"] = 0.0  # RAdam with lr 0 leaves the weights as they are
    learner.iteration()  # carry states across a rollout boundary first
    seen: list[torch.Tensor] = []
    step = learner.agent.step

    def recording(obs, legal, state=None):
        q, state = step(obs, legal, state)
        seen.append(q.detach().clone())
        return q, state

    start = tuple(s.clone() for s in learner.rollout.lstm_state)
    learner.agent.step = recording
    learner.iteration()
    del learner.agent.step
    T, B, P = 12, 32, 2
    acting = torch.stack([q.view(B, P, -1)[torch.arange(B), learner.rollout.current[t]] for t, q in enumerate(seen[:T])])
    with torch.no_grad():
        replayed, _ = learner.replay(torch.arange(B), start)
    assert bool(learner.rollout.ended.any()), "no game ended in the rollout: the reset is untested"
    torch.testing.assert_close(replayed, acting, rtol=0, atol=1e-6)
    wrong, _ = learner.replay(torch.arange(B), (torch.zeros_like(start[0]), torch.zeros_like(start[1])))
    assert (wrong - acting)[torch.isfinite(acting)].abs().max() > 1e-4  # negative control: the start state matters


def test_recurrent_pqn_learns(tiny_config) -> None:
    config = _recurrent(tiny_config, run={"num_envs": 64}, optim={"lr": 3e-3}, network={"hidden_size": 64})
    learner = make_learner(config, 1, CPU)
    from eqc.domains.hanabi.play.self_play import evaluate_agent

    """~50k moves: the untrained greedy agent bombs out (about 0); training must beat it by 0.3 points and 3 SEM."""
    before = evaluate_agent(learner.agent, learner.games.env.rules, 200, 5, CPU)
    for _ in range(100):
        learner.iteration()
    after = evaluate_agent(learner.agent, learner.games.env.rules, 200, 5, CPU)
    assert after.mean > before.mean + max(0.3, 3 * (after.sem + before.sem)), (before, after)


@pytest.mark.parametrize("changes", [{"rule": {"objective": "gop", "group": "C5"}},
                                     {"network": {"symmetrize": "C5", "hidden_scheme": "identity"}},
                                     {"game": {"sad": "greedy_last_action"}}])
def test_rules_symmetrizers_and_sad_run(tiny_config, changes: dict) -> None:
    learner = make_learner(_recurrent(tiny_config, run={"num_envs": 8}, **changes), 0, CPU)
    stats = learner.iteration()
    assert torch.isfinite(stats["loss"]) and learner.moves_played == 8 * 8
    state = learner.state_dict()
    carried = learner.rollout.lstm_state
    assert float(carried[0].abs().sum()) > 0.0
    learner.load_state_dict(state)
    assert all(torch.equal(a, b) for a, b in zip(learner.rollout.lstm_state, carried, strict=True))  # the games continue, with their states
    del state["games"]
    learner.load_state_dict(state)
    assert float(learner.rollout.lstm_state[0].abs().sum()) == 0.0  # a checkpoint without games: they restart from zero state


@pytest.mark.parametrize("rule", ["op", "gop"])
def test_an_iteration_never_goes_through_the_host(tiny_config, host_traffic, rule: str) -> None:
    """Every player's relabelled view is gathered on the device: no read back, no tensor from host data."""
    config = _recurrent(tiny_config, rule={"objective": rule} | ({"group": "C5"} if rule == "gop" else {}))
    learner = PQNLearner(LearnerSetup.of(config, 0, CPU), config.settings(PQN))
    learner.iteration()
    with host_traffic() as traffic:
        learner.iteration()
    assert traffic.events == []
