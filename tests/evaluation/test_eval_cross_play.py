"""Generic cross-play: every ordered pair, XP/SP summaries, per-pair matrices."""

from __future__ import annotations

import math

import pytest
import torch

from eqc.evaluation import GameResults, cross_play, mean_sem


def _play_by_numbers(i: int, j: int) -> GameResults:
    """Agents are ints; three games scoring i + j, 2i, 3j; the first bombs out, the last is perfect when i == j."""
    scores = torch.tensor([i + j, 2 * i, 3 * j], dtype=torch.float64)
    return GameResults(scores, torch.tensor([True, False, False]), torch.tensor([False, False, i == j]))


def test_summary_by_hand() -> None:
    result = cross_play([0, 1, 2], _play_by_numbers)

    def pair_mean(i: int, j: int) -> float:
        return (i + j + 2 * i + 3 * j) / 3

    expected = torch.tensor([[pair_mean(i, j) for j in range(3)] for i in range(3)], dtype=torch.float64)
    assert torch.allclose(result.mean, expected)
    off = [pair_mean(i, j) for i in range(3) for j in range(3) if i != j]
    assert result.xp.mean == pytest.approx(sum(off) / 6)
    m = sum(off) / 6
    assert result.xp.sem == pytest.approx(math.sqrt(sum((v - m) ** 2 for v in off) / 5) / math.sqrt(6))
    assert result.sp.mean == pytest.approx((pair_mean(0, 0) + pair_mean(1, 1) + pair_mean(2, 2)) / 3)
    assert result.xp_bomb_out_rate == pytest.approx(1 / 3) and result.sp_bomb_out_rate == pytest.approx(1 / 3)
    assert result.xp_perfect_rate == 0.0 and result.sp_perfect_rate == pytest.approx(1 / 3)
    assert torch.equal(result.num_games, torch.full((3, 3), 3))
    assert result.sem[1, 2] == pytest.approx(mean_sem([3.0, 2.0, 6.0]).sem)
    assert result.xp_scores().numel() == 18 and result.sp_scores().numel() == 9
    assert result.as_dict()["xp_mean"] == result.xp.mean


def test_identical_agents_cross_play_equals_self_play() -> None:
    def play(a: str, b: str) -> list[float]:
        base = {"u": 10.0, "v": 10.0}
        return [base[a] + base[b], 2 * base[a], 3.0]

    result = cross_play(["u", "v"], play)  # two copies of the same deterministic policy
    assert torch.equal(result.mean, torch.full((2, 2), result.mean[0, 0].item(), dtype=torch.float64))
    assert result.xp.mean == result.sp.mean
    assert torch.equal(result.xp_scores(), result.sp_scores())
    assert math.isnan(result.xp_bomb_out_rate) and math.isnan(result.sp_perfect_rate)  # plain scores: no flags


def test_every_ordered_pair_is_played_once() -> None:
    calls: list[tuple[int, int]] = []

    def play(a: int, b: int) -> list[float]:
        calls.append((a, b))
        return [float(a - b), 0.0]

    result = cross_play([0, 1, 2, 3], play)
    assert sorted(calls) == [(i, j) for i in range(4) for j in range(4)]
    assert result.mean[3, 0] == 1.5 and result.mean[0, 3] == -1.5


def test_cross_play_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="at least 2 agents"):
        cross_play([0], _play_by_numbers)
    with pytest.raises(TypeError, match="agents"):
        cross_play(iter([0, 1]), _play_by_numbers)
    with pytest.raises(TypeError, match="play"):
        cross_play([0, 1], "not callable")
    with pytest.raises(TypeError, match="play must return"):
        cross_play([0, 1], lambda a, b: {"score": 1})


def test_game_results_validate_flags() -> None:
    with pytest.raises(ValueError, match="bombed_out"):
        GameResults(torch.zeros(3), torch.zeros(2, dtype=torch.bool))
    with pytest.raises(TypeError, match="perfect"):
        GameResults(torch.zeros(3), None, torch.zeros(3))
    with pytest.raises(ValueError, match="at least one game"):
        GameResults(torch.zeros(0))
