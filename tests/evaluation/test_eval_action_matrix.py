"""Conditional action matrices from known action sequences, and their heatmaps."""

from __future__ import annotations

import math

import matplotlib
import pytest
import torch

from eqc.evaluation import (
    action_pair_counts,
    conditional_action_matrix,
    plot_action_matrix,
)


def test_counts_of_known_sequences() -> None:
    counts = action_pair_counts([[0, 1, 2, 1], [2, 2], [1]], 3)
    expected = torch.zeros(3, 3, dtype=torch.long)
    for prev, now in [(0, 1), (1, 2), (2, 1), (2, 2)]:
        expected[prev, now] += 1
    assert torch.equal(counts, expected)


def test_responders_restrict_the_pairs() -> None:
    sequences = [[0, 1, 2, 1], torch.tensor([2, 2, 0])]
    actors = [[0, 1, 0, 1], [1, 0, 0]]  # the last move of game 2 follows the same player's move
    counts = action_pair_counts(sequences, 3, actors=actors, responders=[1])
    expected = torch.zeros(3, 3, dtype=torch.long)
    expected[0, 1] = expected[2, 1] = 1
    assert torch.equal(counts, expected)
    both = action_pair_counts(sequences, 3, actors=actors, responders=[0, 1])
    assert int(both.sum()) == 4 and int(both[2, 2]) == 1 and int(both[2, 0]) == 0


def test_row_normalisation() -> None:
    counts = torch.tensor([[1, 3, 0], [0, 0, 0], [2, 2, 4]])
    matrix = conditional_action_matrix(counts)
    assert matrix[0].tolist() == [0.25, 0.75, 0.0]
    assert all(math.isnan(v) for v in matrix[1].tolist())  # never observed: undefined
    assert matrix[2].tolist() == [0.25, 0.25, 0.5]


def test_heatmap_is_written_without_touching_the_backend(tmp_path) -> None:
    backend = matplotlib.get_backend()
    labels = ["D1", "P1", "C1"]
    matrix = conditional_action_matrix(torch.tensor([[1, 3, 0], [0, 0, 0], [2, 2, 4]]))
    figure = plot_action_matrix(matrix, labels, title="t", path=tmp_path / "m.png")
    assert (tmp_path / "m.png").stat().st_size > 0
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == labels
    assert [t.get_text() for t in ax.get_yticklabels()] == labels
    assert matplotlib.get_backend() == backend


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match=r"sequences\[0\]\[1\]"):
        action_pair_counts([[0, 3]], 3)
    with pytest.raises(TypeError, match=r"sequences\[0\]\[0\]"):
        action_pair_counts([[0.0, 1]], 3)
    with pytest.raises(ValueError, match="together"):
        action_pair_counts([[0, 1]], 3, actors=[[0, 1]])
    with pytest.raises(ValueError, match=r"actors\[0\]"):
        action_pair_counts([[0, 1]], 3, actors=[[0]], responders=[0])
    with pytest.raises(ValueError, match="num_actions"):
        action_pair_counts([[0, 1]], 0)
    with pytest.raises(ValueError, match="counts"):
        conditional_action_matrix(torch.ones(2, 3))
    with pytest.raises(ValueError, match="labels"):
        plot_action_matrix(torch.eye(3), ["a", "b"])
