"""The R2D2 learner: n-step double-Q targets, VDN/IQL losses, acting into replay, learning, checkpoints."""

from __future__ import annotations

import io

import pytest
import torch

from eqc.domains.hanabi.play.self_play import evaluate_agent
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.learner import LearnerSetup
from eqc.domains.hanabi.training.r2d2 import R2D2, R2D2Learner, ape_x_epsilons, nstep_targets, own_hand_labels, q_learning_loss
from eqc.domains.hanabi.training.replay import EpisodeBatch

CPU = torch.device("cpu")
INF = float("inf")


def tiny_r2d2(**changes: dict) -> TrainConfig:
    """64 games, a 64-wide 1-layer LSTM, a small buffer: learns visibly within a minute on a loaded CPU (in fp32 on
    every processor)."""
    base = TrainConfig().replace(
        run={"algorithm": "r2d2", "num_envs": 64, "eval_games": 64},
        network={"hidden_size": 64, "mlp_layers": 1, "lstm_layers": 1, "layer_norm": False, "precision": "fp32"},
        optim={"optimizer": "adam", "lr": 3e-3, "adam_eps": 1.5e-5, "grad_clip": 5.0},
        r2d2={
            "batch_size": 16, "buffer_episodes": 1024, "warmup_episodes": 64, "updates_per_step": 1.0, "target_update": 50, "gamma": 0.99,
        },
    )
    return base.replace(**changes) if changes else base


def make_learner(config: TrainConfig, seed: int) -> R2D2Learner:
    """The learner with its network initialised from ``seed`` (Learner draws initial weights from torch's global RNG)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return R2D2Learner(LearnerSetup.of(config, seed, CPU), config.settings(R2D2))


# ---------------------------------------------------------------- pure pieces
def test_nstep_targets_by_hand() -> None:
    reward = torch.tensor([[1.0], [2.0], [3.0], [4.0], [0.0]])  # one episode of 4 moves, padded to 5
    value = torch.tensor([[10.0], [20.0], [30.0], [40.0], [50.0]])
    got = nstep_targets(reward, value, torch.tensor([4]), n=2, gamma=0.5)
    # t: r_t + 0.5 r_{t+1} + 0.25 [t + 2 < 4] v_{t+2}
    assert got.squeeze(1).tolist() == [1 + 1 + 0.25 * 30, 2 + 1.5 + 0.25 * 40, 3 + 2, 4 + 0, 0]
    per_player = nstep_targets(reward, torch.stack([value, 2 * value], -1), torch.tensor([4]), n=2, gamma=0.5)
    assert per_player[0, 0].tolist() == [9.5, 1 + 1 + 0.25 * 60]


def _constructed_batch() -> tuple[torch.Tensor, torch.Tensor, EpisodeBatch]:
    """Two players alternating for 3 moves (+1 padding step); the no-op is action 2."""
    q = torch.tensor([
        [[1, 2, -INF], [-INF, -INF, 0.5]],
        [[-INF, -INF, 1], [3, 1, -INF]],
        [[0, 4, -INF], [-INF, -INF, 2]],
        [[-INF, -INF, 7], [-INF, -INF, 7]],
    ]).unsqueeze(1)  # [T=4, N=1, P=2, A=3]
    q_target = torch.tensor([
        [[10, 20, -INF], [-INF, -INF, 5]],
        [[-INF, -INF, 10], [30, 100, -INF]],  # double Q takes 30 (online argmax), not the max 100
        [[0, 40, -INF], [-INF, -INF, 20]],
        [[-INF, -INF, 9], [-INF, -INF, 9]],
    ]).unsqueeze(1)
    batch = EpisodeBatch(
        indices=torch.tensor([0]), obs=torch.zeros(4, 1, 2, 1), legal=torch.isfinite(q),
        action=torch.tensor([[0, 2], [2, 1], [1, 2], [2, 2]]).unsqueeze(1),
        reward=torch.tensor([[1.0], [0.0], [1.0], [0.0]]), mask=torch.tensor([[True], [True], [True], [False]]),
        length=torch.tensor([3]), aux=None, weights=torch.ones(1),
    )
    return q.requires_grad_(), q_target, batch


def test_vdn_loss_by_hand() -> None:
    q, q_target, batch = _constructed_batch()
    loss, td = q_learning_loss(q, q_target, batch, vdn=True, n_step=1, gamma=0.5)
    # Q_tot = 1.5, 2, 6; targets 1 + 0.5 (10 + 30) = 21, 0.5 (40 + 20) = 30, 1 (terminal)
    assert td.shape == (4, 1) and td.squeeze(1).tolist() == [19.5, 28.0, 5.0, 0.0]
    assert loss.shape == (1,) and float(loss.detach()) == pytest.approx(19.0 + 27.5 + 4.5)
    loss.sum().backward()
    assert q.grad[3].abs().sum() == 0  # padding teaches nothing
    assert q.grad[0, 0, 1, 2] == -1.0  # the waiting player's no-op is part of Q_tot


def test_iql_loss_by_hand() -> None:
    q, q_target, batch = _constructed_batch()
    loss, td = q_learning_loss(q, q_target, batch, vdn=False, n_step=1, gamma=0.5)
    # player 0: Q 1, 1, 4 against 1 + 0.5*10, 0.5*40, 1; player 1: 0.5, 1, 2 against 1 + 0.5*30, 0.5*20, 1
    assert td.shape == (4, 1, 2)
    assert td[:3, 0].tolist() == [[5.0, 15.5], [19.0, 9.0], [3.0, 1.0]]
    assert float(loss.detach()) == pytest.approx(((4.5 + 18.5 + 2.5) + (15.0 + 8.5 + 0.5)) / 2)


def test_ape_x_epsilons() -> None:
    eps = ape_x_epsilons(torch.tensor([0, 79, 40]), 0.1, 7.0, 80)
    assert eps.tolist() == pytest.approx([0.1, 0.1**8, 0.1 ** (1 + 7 * 40 / 79)], rel=1e-5)


def test_own_hand_labels_from_hands_and_fireworks() -> None:
    # card id = colour * 5 + rank; fireworks: red 2 played, yellow none
    from eqc.domains.hanabi.batched import HanabiBatch

    env = HanabiBatch(1)
    env.reset()
    env._state.hands.copy_(torch.tensor([[[2, 0, 5, 6, 25], [1, 3, 7, 5, 25]]]))  # 25: an empty slot
    env._state.fireworks[:, :5] = torch.tensor([[2, 0, 0, 0, 0]])
    assert own_hand_labels(env).tolist() == [[[0, 1, 0, 2, -1], [1, 2, 2, 0, -1]]]


# ---------------------------------------------------------------- acting
def test_acting_writes_whole_episodes_with_one_mover_per_step_and_the_cap() -> None:
    config = tiny_r2d2(r2d2={"warmup_episodes": 512, "max_moves": 12})  # never learns here
    learner = make_learner(config, 0)
    ended_rows = []
    for _ in range(60):
        learner.act()
        ended = learner.games.env.ended
        ended_rows.append(ended)
        rows = ended.repeat_interleave(2)
        assert learner.lstm_state[0][:, rows].eq(0).all() and learner.lstm_state[1][:, rows].eq(0).all()
    assert learner.moves_played == 60 * 64 and torch.stack(ended_rows).any()
    r = learner.replay
    slots = r.complete.nonzero().squeeze(1)
    assert len(slots) > 64
    lengths = r.length[slots]
    assert lengths.max() == 12 and lengths.min() >= 1
    no_op = learner.num_moves
    for slot, n in zip(slots.tolist(), lengths.tolist(), strict=True):
        actions, legal = r.action[slot, :n].long(), r.legal[slot, :n]
        movers = actions.ne(no_op).sum(-1)
        assert movers.eq(1).all()  # exactly one player moves, the other takes the no-op
        assert legal.gather(-1, actions.unsqueeze(-1)).all()
        assert legal[..., no_op].sum(-1).eq(1).all()  # the waiting player's only move is the no-op
        ret = float(r.reward[slot, :n].sum())
        assert ret >= 0
        if n == 12:
            assert ret == 0.0  # capped: reward -score, like a bomb-out


def test_sad_op_aux_learner_runs_an_update() -> None:
    config = tiny_r2d2(game={"sad": "greedy_last_action"}, rule={"objective": "op"}, network={"aux_weight": 0.25}, r2d2={"vdn": False})
    learner = make_learner(config, 1)
    assert learner.network.aux_head.out_features == 15
    while learner.updates == 0:
        stats = learner.iteration()
    assert torch.isfinite(stats["loss"]) and learner.replay.aux is not None
    assert learner.replay.aux[: learner.replay.slots][learner.replay.complete].max() == 2


def test_impossible_settings_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\[r2d2\] max_moves must be >= 1"):
        make_learner(tiny_r2d2(r2d2={"max_moves": 0}), 0)
    with pytest.raises(ValueError, match=r"warmup_episodes \(1024\) must not exceed"):
        make_learner(tiny_r2d2(r2d2={"warmup_episodes": 1024}), 0)


# ---------------------------------------------------------------- learning and state
def test_tiny_config_beats_the_untrained_agent() -> None:
    torch.set_num_threads(1)
    config = tiny_r2d2()
    learner = make_learner(config, 0)
    before = evaluate_agent(learner.agent, learner.games.env.rules, 200, 7, CPU)
    for _ in range(400):
        learner.iteration()
    after = evaluate_agent(learner.agent, learner.games.env.rules, 200, 7, CPU)
    assert learner.updates > 300
    assert after.mean > before.mean + max(0.3, 3 * (after.sem + before.sem)), f"untrained {before}, trained {after}"


def test_checkpoint_round_trip_restores_everything_but_the_replay() -> None:
    config = tiny_r2d2(r2d2={"target_update": 7, "updates_per_step": 0.5})
    a = make_learner(config, 2)
    while a.updates < 5:
        a.iteration()
    buffer = io.BytesIO()
    torch.save(a.state_dict(), buffer)
    saved = lambda: torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)  # noqa: E731
    b, c = make_learner(config, 2), make_learner(config, 3)  # weights differ until loaded
    b.load_state_dict(saved())
    c.load_state_dict(saved())
    for name in ("network", "target"):
        for (key, x), y in zip(a.modules()[name].state_dict().items(), b.modules()[name].state_dict().values(), strict=True):
            assert torch.equal(x, y), f"{name}.{key}"
    assert not all(torch.equal(x, y) for x, y in zip(a.network.parameters(), a.target_network.parameters(), strict=True))
    sa, sb = a.optimizer.state_dict(), b.optimizer.state_dict()
    assert all(torch.equal(sa["state"][k]["exp_avg"], sb["state"][k]["exp_avg"]) for k in sa["state"])
    assert (b.moves_played, b.updates, b.update_credit) == (a.moves_played, a.updates, a.update_credit)
    assert int(b.replay.size) == 0 and not b.warm  # the replay is refilled, not saved
    assert "games" not in a.state_dict()  # its games restart with the replay (no exact resume for R2D2)
    for _ in range(400):  # refill the warm-up, then learn a few updates: both copies alike
        b.iteration()
        c.iteration()
        if b.updates > a.updates + 3:
            break
    assert b.updates == c.updates > a.updates + 3
    assert all(torch.equal(x, y) for x, y in zip(b.network.parameters(), c.network.parameters(), strict=True))
    assert all(torch.equal(x, y) for x, y in zip(b.target_network.parameters(), c.target_network.parameters(), strict=True))


# ---------------------------------------------------------------- the GPU path without a GPU
def test_an_iteration_reads_the_device_once_per_update(host_traffic) -> None:
    """Acting and learning read nothing back from the device but the batch's longest episode (``replay.sample``,
    kept on purpose: it trims the padded sequences) and build no tensor from host data (the no-op mask was a
    ``torch.tensor`` per update, the empty-replay check a ``bool`` per update)."""
    config = tiny_r2d2(game={"sad": "greedy_last_action"}, rule={"objective": "op"}, network={"aux_weight": 0.25})
    learner = make_learner(config, 1)
    while learner.updates == 0:
        learner.iteration()
    updates = learner.updates
    with host_traffic() as traffic:
        for _ in range(3):
            learner.iteration()
    assert learner.updates == updates + 3
    assert traffic.events == ["replay.py:sample read __int__"] * 3


def test_the_copied_target_lstm_is_flattened(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deep-copied LSTM's weights are not one contiguous cuDNN block: the target network flattens its own
    (``flatten_parameters`` is a no-op on the CPU, so the calls are recorded)."""
    flattened: list[torch.nn.Module] = []
    original = torch.nn.LSTM.flatten_parameters

    def record(module: torch.nn.LSTM) -> None:
        flattened.append(module)
        original(module)

    monkeypatch.setattr(torch.nn.LSTM, "flatten_parameters", record)
    learner = make_learner(tiny_r2d2(), 0)
    target_lstms = [m for m in learner.target_network.modules() if isinstance(m, torch.nn.LSTM)]
    assert target_lstms and all(any(m is f for f in flattened) for m in target_lstms)
