"""The prioritized episode replay: sampling law, importance weights, priorities, rings, memory bound."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.training.replay import MIN_PRIORITY, EpisodeReplay, ReplayMemoryError, sequence_priority

W, PER, T, P, D, A = 4, 10, 3, 2, 5, 4


def make_replay(alpha: float = 0.9, beta: float = 0.6, aux_slots: int = 0, seed: int = 0) -> EpisodeReplay:
    return EpisodeReplay(
        W * PER, W, T, P, D, A, aux_slots=aux_slots, priority_exponent=alpha, importance_exponent=beta,
        priority_max_weight=0.9, generator=torch.Generator().manual_seed(seed),
    )


def write_episode(replay: EpisodeReplay, lengths: list[int], tag: float = 0.0) -> None:
    """One episode per writer, writer w's of length ``lengths[w]`` (0: that writer writes nothing);
    obs = tag + 100 w + t, reward = t + 1, action = t."""
    for t in range(max(lengths)):
        recording = torch.tensor([t < n for n in lengths])
        obs = (tag + 100 * torch.arange(W).view(W, 1, 1) + t).float().expand(W, P, D)
        legal = torch.ones(W, P, A, dtype=torch.bool)
        action = torch.full((W, P), t)
        aux = torch.full((W, P, replay.aux_slots), t % 3) if replay.aux_slots else None
        replay.record(torch.full((W,), t), recording, obs, legal, action, torch.full((W,), t + 1.0), aux)
    replay.finish(torch.tensor([n > 0 for n in lengths]), torch.tensor(lengths))


def fill(replay: EpisodeReplay) -> None:
    """Every slot but each writer's one in progress holds a finished episode."""
    for k in range(PER - 1):
        write_episode(replay, [1 + (k + w) % T for w in range(W)])


def test_new_episodes_enter_with_the_max_priority_and_in_progress_slots_are_never_drawn() -> None:
    replay = make_replay()
    write_episode(replay, [2, 0, 3, 1])
    assert int(replay.size) == 3
    done = torch.tensor([0, 2 * PER, 3 * PER])
    assert replay.probabilities()[done].tolist() == pytest.approx([1 / 3] * 3)
    replay.update_priorities(torch.tensor([0]), torch.tensor([5.0]))
    assert float(replay.max_priority) == 5.0
    write_episode(replay, [0, 2, 0, 0])  # writer 1's first episode
    assert float(replay.priority[PER]) == 5.0
    drawn = replay.sample(500).indices
    assert set(drawn.tolist()) == {0, PER, 2 * PER, 3 * PER}  # never a slot in progress (1, PER + 1, ...)


def test_sampling_follows_priority_to_the_alpha() -> None:
    """Chi-square of 200k draws against p^alpha / sum; the same draws reject p^1 (negative control)."""
    alpha = 0.6
    replay = make_replay(alpha=alpha, seed=3)
    fill(replay)
    slots = replay.complete.nonzero().squeeze(1)
    priorities = torch.linspace(0.05, 4.0, len(slots))
    replay.update_priorities(slots, priorities)
    counts = torch.bincount(replay.sample(200_000).indices, minlength=replay.slots)[slots].double()

    def chi2(exponent: float) -> float:
        expected = priorities.double() ** exponent
        expected = 200_000 * expected / expected.sum()
        return float(((counts - expected) ** 2 / expected).sum())

    # 35 degrees of freedom: the 99.9% quantile of chi-square(35) is 66.6.
    assert len(slots) == 36 and chi2(alpha) < 66.6
    assert chi2(1.0) > 1000
    law = priorities.double() ** alpha
    assert replay.probabilities()[slots].double().tolist() == pytest.approx((law / law.sum()).tolist(), rel=1e-5)


def test_importance_weights_match_a_hand_computation() -> None:
    beta, alpha = 0.6, 0.9
    replay = make_replay(alpha=alpha, beta=beta)
    write_episode(replay, [1, 2, 3, 2])
    replay.update_priorities(torch.tensor([0, PER, 2 * PER, 3 * PER]), torch.tensor([1.0, 2.0, 4.0, 8.0]))
    batch = replay.sample(64)
    p = {0: 1.0, PER: 2.0, 2 * PER: 4.0, 3 * PER: 8.0}
    total = sum(v**alpha for v in p.values())
    raw = [(4 * p[i] ** alpha / total) ** -beta for i in batch.indices.tolist()]
    expected = [w / max(raw) for w in raw]
    assert batch.weights.tolist() == pytest.approx(expected, rel=1e-5)
    assert float(batch.weights.max()) == 1.0


def test_sequence_priority_mixes_max_and_mean_over_the_episode() -> None:
    td = torch.tensor([[1.0, 4.0], [3.0, 100.0], [2.0, 100.0]])  # [T, N]; episode 1 has one move
    mask = torch.tensor([[True, True], [True, False], [True, False]])
    assert sequence_priority(td, mask, 0.9).tolist() == pytest.approx([0.9 * 3 + 0.1 * 2, 4.0])
    iql = torch.stack([td, 2 * td], dim=-1)  # players count as more entries
    assert sequence_priority(iql, mask, 0.5).tolist() == pytest.approx([0.5 * 6 + 0.5 * 3, 0.5 * 8 + 0.5 * 6])


def test_priority_updates_set_track_the_max_and_keep_a_floor() -> None:
    replay = make_replay()
    write_episode(replay, [1, 1, 1, 1])
    slots = torch.tensor([0, PER, 2 * PER, 3 * PER])
    replay.update_priorities(slots, torch.tensor([0.0, 0.5, 7.0, 2.0]))
    assert replay.priority[slots].tolist() == pytest.approx([MIN_PRIORITY, 0.5, 7.0, 2.0])
    assert float(replay.max_priority) == 7.0
    replay.update_priorities(slots, torch.tensor([1.0, 1.0, 1.0, 1.0]))
    assert float(replay.max_priority) == 7.0  # the running max never decreases
    assert int(replay.sample(200).indices.eq(0).sum()) > 0  # zero TD error still sampleable


def test_batches_are_time_major_and_padded() -> None:
    replay = make_replay(aux_slots=5)
    write_episode(replay, [1, 3, 2, 1])
    batch = replay.sample(64)
    assert batch.obs.shape == (3, 64, P, D) and batch.obs.dtype == torch.float32  # T = the longest episode
    assert set(batch.indices.tolist()) == {0, PER, 2 * PER, 3 * PER}
    for j, slot in enumerate(batch.indices.tolist()):
        n, writer = {0: 1, PER: 3, 2 * PER: 2, 3 * PER: 1}[slot], slot // PER
        assert int(batch.length[j]) == n and batch.mask[:, j].tolist() == [t < n for t in range(3)]
        assert batch.obs[:n, j, 1, 2].tolist() == [100.0 * writer + t for t in range(n)]
        assert batch.reward[:, j].tolist() == [t + 1.0 if t < n else 0.0 for t in range(3)]
        assert batch.action[:n, j, 0].tolist() == list(range(n))
        assert batch.aux[:, j, 0, 0].tolist() == [t % 3 if t < n else -1 for t in range(3)]


def test_each_writer_overwrites_its_oldest_episode() -> None:
    replay = make_replay()
    for k in range(PER + 2):
        write_episode(replay, [1, 0, 0, 0], tag=1000.0 * k)
    assert int(replay.size) == PER - 1  # one slot always in progress
    held = sorted(int(replay.obs[s, 0, 0, 0]) // 1000 for s in range(PER) if replay.complete[s])
    assert held == list(range(3, PER + 2))  # episodes 0..2 were overwritten


def test_games_not_recording_write_nowhere() -> None:
    replay = make_replay()
    before = replay.obs[: replay.slots].clone()
    nobody = torch.zeros(W, dtype=torch.bool)
    legal = torch.ones(W, P, A, dtype=torch.bool)
    replay.record(torch.zeros(W, dtype=torch.long), nobody, torch.ones(W, P, D), legal, torch.zeros(W, P), torch.ones(W))
    assert torch.equal(replay.obs[: replay.slots], before)


def test_capacity_beyond_memory_is_refused_with_the_estimate() -> None:
    per_episode = EpisodeReplay.bytes_per_episode(80, 2, 658, 21)
    assert per_episode > 80 * 2 * 658 * 2  # float16 observations dominate
    with pytest.raises(ReplayMemoryError, match=r"needs about .* GiB .* KiB per episode.* lower \[r2d2\] buffer_episodes"):
        EpisodeReplay(2**16, 64, 80, 2, 658, 21, generator=torch.Generator(), memory_limit=2**30)
    with pytest.raises(ValueError, match=r"at least 2 x \[run\] num_envs"):
        EpisodeReplay(100, 64, 80, 2, 658, 21, generator=torch.Generator())
    small = EpisodeReplay(128, 64, 80, 2, 658, 21, generator=torch.Generator(), memory_limit=2**30)  # fits
    assert small.slots == 128 and small.max_size == 64
