"""Lever cross-play: the exact matrix, summarised by the one shared ``eqc.evaluation.cross_play``."""

from __future__ import annotations

import math

import pytest
import torch

from eqc.domains.lever import cross_play_matrix, lever_cross_play, lever_game
from eqc.evaluation import CrossPlayResult, mean_sem


def test_matrix_by_hand() -> None:
    game = lever_game()
    one_hot = torch.eye(10)
    pool = torch.stack([one_hot[0], one_hot[0], one_hot[3], one_hot[9]])
    matrix = cross_play_matrix(game, pool)
    expected = torch.tensor(
        [[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.9]], dtype=torch.float64
    )
    assert torch.allclose(matrix, expected)
    result = lever_cross_play(game, pool)
    assert isinstance(result, CrossPlayResult)
    assert torch.equal(result.mean, matrix)
    assert result.sp.mean == pytest.approx((3 + 0.9) / 4)
    off = torch.tensor([1.0, 0, 0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=torch.float64)
    assert result.xp.mean == pytest.approx(2 / 12)
    assert result.xp.sem == pytest.approx(float(off.std()) / math.sqrt(12))
    assert result.xp == mean_sem(off)  # the same statistic as everywhere else in eqc


def test_two_player_pools_pair_player_1_with_player_2() -> None:
    game = lever_game()
    one_hot = torch.eye(10)
    matrix = cross_play_matrix(game, one_hot[[0, 1]], one_hot[[1, 0]])
    assert matrix.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    result = lever_cross_play(game, one_hot[[0, 1]], one_hot[[1, 0]])
    assert (result.sp.mean, result.xp.mean) == (0.0, 1.0)


def test_bad_input() -> None:
    game = lever_game()
    with pytest.raises(ValueError, match="at least 2 agents"):
        lever_cross_play(game, torch.eye(10)[:1])
    with pytest.raises(ValueError, match=r"shape \[agents, 10\]"):
        lever_cross_play(game, torch.eye(9))
    with pytest.raises(ValueError, match="probability distributions"):
        lever_cross_play(game, torch.ones(2, 10))
    with pytest.raises(TypeError, match=r"must be a torch\.Tensor"):
        lever_cross_play(game, [[1.0] + [0.0] * 9] * 2)
    with pytest.raises(ValueError, match="same shape"):
        cross_play_matrix(game, torch.eye(10)[:2], torch.eye(10)[:3])
