"""Induced colour conventions: the shaping reward of ``[bootstrap] convention`` and its ``slots``."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.bootstrap import NO_HINT, colour_slot_maps, convention_bonus, touched_hint
from eqc.domains.hanabi.training.learners import make_learner

RULES = HanabiRules(num_players=2)  # hand 5: discard 0-4, play 5-9, reveal colour 10-14, rank 15-19


def test_colour_slot_maps_are_every_injective_map_once() -> None:
    maps = colour_slot_maps(3, 3)
    assert maps == [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    assert len(colour_slot_maps(2, 3)) == 6 and len(set(colour_slot_maps(5, 5))) == 120
    with pytest.raises(ValueError, match=r"1 <= colours <= hand_size, got 5 colours, hand 2"):
        colour_slot_maps(5, 2)


def test_bonus_by_hand() -> None:
    pi = torch.tensor([2, 0, 4, 1, 3]).expand(6, 5)  # every game's map: red -> slot 2, yellow -> slot 0, ...
    hinted = torch.tensor([0, 0, 1, NO_HINT, 0, 2])
    move = torch.tensor([7, 7, 5, 5, 8, 12])  # play slot 2, 2, 0, 0, 3; reveal colour 2
    reward = torch.tensor([1.0, 0.0, 1.0, 1.0, 1.0, 0.0])
    ended = torch.tensor([False, False, False, False, False, True])
    bonus, after = convention_bonus(RULES, pi, hinted, move, reward, ended, 0.5)
    # paid: red hint then scoring play of slot 2; yellow hint then scoring play of slot 0. Not paid: a failed play,
    # a play without a hint before it, the wrong slot, a hint.
    assert bonus.tolist() == [0.5, 0.0, 0.5, 0.0, 0.0, 0.0]
    assert after.tolist() == [NO_HINT] * 5 + [NO_HINT]  # plays clear it; the hint's game ended
    _, after = convention_bonus(RULES, pi, hinted, torch.tensor([10, 14, 15, 0, 9, 12]), reward, torch.zeros(6, dtype=torch.bool), 0.5)
    assert after.tolist() == [0, 4, NO_HINT, NO_HINT, NO_HINT, 2]  # colour hints remember their colour only


def test_a_touched_hint_pays_only_when_it_touched_the_asked_slot() -> None:
    mini = HanabiRules.preset("mini", num_players=2)  # 3 colours x 3 ranks (card id 3c + r), hand 3: reveal colour 6-8
    pi = torch.tensor([2, 0, 1]).expand(5, 3)  # every game's map: colour 0 -> slot 2, colour 1 -> slot 0, colour 2 -> slot 1
    empty = mini.num_colours * mini.num_ranks
    hands = torch.tensor([
        [[0, 0, 0], [4, 5, 1]],  # player 1's slot 2 holds colour 0 (card 1): a colour-0 hint to it touches slot 2
        [[0, 0, 0], [4, 5, 4]],  # slot 2 holds colour 1: the colour-0 hint does not touch it
        [[3, 8, 0], [0, 0, 0]],  # player 1 hints player 0 colour 2: slot 1 holds card 8 (colour 2)
        [[0, empty, 0], [0, 0, 0]],  # an empty slot is touched by nothing
        [[0, 0, 0], [1, 1, 1]],  # a rank hint
    ])
    current = torch.tensor([0, 0, 1, 1, 0])
    move = torch.tensor([6, 6, 8, 7, 9])
    assert touched_hint(mini, pi, hands, current, move).tolist() == [True, False, True, False, False]
    reward, ended = torch.zeros(5), torch.zeros(5, dtype=torch.bool)
    pays = touched_hint(mini, pi, hands, current, move)
    _, after = convention_bonus(mini, pi, torch.full((5,), NO_HINT), move, reward, ended, 1.0, pays)
    assert after.tolist() == [0, NO_HINT, 2, NO_HINT, NO_HINT]  # only touching hints can pay the next move


@pytest.mark.parametrize("convention", ["colour_to_slot", "colour_to_touched_slot"])
def test_learner_pays_the_bonus_during_the_bootstrap_only(tiny_config, convention: str) -> None:
    config = tiny_config(bootstrap={"convention": convention, "slots": [4, 3, 2, 1, 0], "bonus": 100.0, "moves": 1024})
    learner = make_learner(config, 0, torch.device("cpu"))
    assert learner.games.slot_of_colour.unique(dim=0).tolist() == [[4, 3, 2, 1, 0]]  # every game's map
    paid = []
    for _ in range(8):  # 8 x 64 games x 8 moves: the bootstrap ends after the second rollout
        learner.iteration()
        paid.append(bool((learner.rollout.reward > 50).any()))
    assert any(paid[:2]) and not any(paid[2:])


def test_bootstrap_keys_are_validated(tiny_config) -> None:
    conventions = r"\('none', 'colour_to_slot', 'colour_to_touched_slot'\)"
    with pytest.raises(ConfigError, match=r"\[bootstrap\] convention must be one of " + conventions):
        tiny_config(bootstrap={"convention": "red_means_play"})
    with pytest.raises(ConfigError, match=r"\[bootstrap\] convention 'colour_to_slot' needs 2 players"):
        tiny_config(bootstrap={"convention": "colour_to_slot", "slots": [0, 1, 2, 3, 4]}, game={"num_players": 3})
    for slots in ([], [0, 1, 2, 3], [0, 0, 1, 2, 3], [0, 1, 2, 3, 5]):
        with pytest.raises(ConfigError, match=r"\[bootstrap\] slots must hold one distinct hand slot in 0\.\.4 per colour"):
            tiny_config(bootstrap={"convention": "colour_to_slot", "slots": slots})
    with pytest.raises(ConfigError, match=r"\[bootstrap\] slots must be empty without a convention"):
        tiny_config(bootstrap={"slots": [0, 1, 2, 3, 4]})
    with pytest.raises(ConfigError, match=r"key 'slots' must be an array of integers, got str"):
        tiny_config(bootstrap={"convention": "colour_to_slot", "slots": "01234"})
    with pytest.raises(ConfigError, match=r"\[bootstrap\] moves must be >= 0"):
        tiny_config(bootstrap={"moves": -1})
