"""Cross-play statistics."""

from __future__ import annotations

import math

import pytest
import torch

from eqc.domains.lever import cross_play, cross_play_matrix, lever_game, summarize


def test_matrix_by_hand() -> None:
    game = lever_game()
    one_hot = torch.eye(10)
    pool = torch.stack([one_hot[0], one_hot[0], one_hot[3], one_hot[9]])
    matrix = cross_play_matrix(game, pool)
    expected = torch.tensor(
        [[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.9]], dtype=torch.float64
    )
    assert torch.allclose(matrix, expected)
    result = summarize(matrix)
    assert result.sp_mean == pytest.approx((3 + 0.9) / 4)
    off = torch.tensor([1.0, 0, 0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=torch.float64)
    assert result.xp_mean == pytest.approx(2 / 12)
    assert result.xp_sem == pytest.approx(float(off.std()) / math.sqrt(12))
    assert result.as_dict() == {"sp_mean": result.sp_mean, "xp_mean": result.xp_mean, "xp_sem": result.xp_sem}


def test_two_player_pools_pair_player_1_with_player_2() -> None:
    game = lever_game()
    one_hot = torch.eye(10)
    matrix = cross_play_matrix(game, one_hot[[0, 1]], one_hot[[1, 0]])
    assert matrix.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_bad_input() -> None:
    game = lever_game()
    with pytest.raises(ValueError, match="at least 2 agents"):
        cross_play(game, torch.eye(10)[:1])
    with pytest.raises(ValueError, match=r"shape \[agents, 10\]"):
        cross_play(game, torch.eye(9))
    with pytest.raises(ValueError, match="probability distributions"):
        cross_play(game, torch.ones(2, 10))
    with pytest.raises(ValueError, match="square"):
        summarize(torch.zeros(2, 3))
