"""Hint-colour -> slot counts and their dependence measure."""

from __future__ import annotations

import math

import pytest
import torch

from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.xp.conventions import hint_slot_counts, slot_dependence

MINI = HanabiRules.preset("mini", num_players=2)  # hand 3: discard 0-2, play 3-5, reveal colour 6-8, rank 9-11


def test_counts_by_hand() -> None:
    # game 0: colour 0 hinted, then slot 2 played; colour 2 hinted, then a discard; game 1: colour 1, slot 0;
    # a rank hint then a play; a colour hint as the game's last move (answered by -1).
    moves = torch.tensor([[6, 7], [5, 3], [8, 9], [0, 4], [7, 6], [-1, -1]])
    counts, answered = hint_slot_counts(moves, MINI)
    assert counts.tolist() == [[0, 0, 1], [1, 0, 0], [0, 0, 0]]
    assert answered == 3  # three colour hints got a reply; the two that ended their games did not


def test_dependence_is_zero_for_alike_rows_and_one_for_disjoint_slots() -> None:
    assert slot_dependence(torch.tensor([[50, 50, 0], [100, 100, 0], [20, 20, 0]]), min_plays=30) == 0.0
    assert slot_dependence(torch.tensor([[70, 0, 0], [0, 30, 0], [0, 0, 90]])) == 1.0
    assert slot_dependence(torch.tensor([[40, 0, 0], [0, 40, 0], [0, 2, 0]])) == 1.0  # a colour answered twice is left out
    assert slot_dependence(torch.tensor([[1, 0, 0], [0, 1, 0], [0, 0, 0]]), min_plays=1) == 1.0
    assert math.isnan(slot_dependence(torch.tensor([[40, 0, 0], [0, 29, 0], [0, 0, 0]])))


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="two-player"):
        hint_slot_counts(torch.zeros(3, 2, dtype=torch.long), HanabiRules.preset("mini", num_players=3))
    with pytest.raises(TypeError, match="long tensor"):
        hint_slot_counts(torch.zeros(3, 2), MINI)


def test_rank_hints_are_counted_like_colour_hints() -> None:
    # rank hints are uids 9-11 in Mini-Hanabi: rank 0 then slot 1 played; rank 2 then slot 2; a colour hint is not a rank hint
    moves = torch.tensor([[9, 11, 6], [4, 5, 3]])
    counts, answered = hint_slot_counts(moves, MINI, hint="rank")
    assert counts.tolist() == [[0, 1, 0], [0, 0, 0], [0, 0, 1]] and answered == 2
    with pytest.raises(ValueError, match="hint must be 'colour' or 'rank', got 'suit'"):
        hint_slot_counts(moves, MINI, hint="suit")

