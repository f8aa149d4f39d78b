"""Induced colour conventions: the shaping reward of ``[bootstrap] convention = "colour_to_slot"``."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.agent.spec import ConfigError
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.bootstrap import NO_HINT, colour_to_slot, convention_bonus
from eqc.domains.hanabi.training.run import make_learner

RULES = HanabiRules(num_players=2)  # hand 5: discard 0-4, play 5-9, reveal colour 10-14, rank 15-19


def test_each_seed_draws_an_injective_map_and_seeds_differ() -> None:
    maps = [colour_to_slot(RULES, seed) for seed in range(20)]
    assert all(sorted(m.tolist()) == list(range(5)) for m in maps)
    assert torch.equal(colour_to_slot(RULES, 3), colour_to_slot(RULES, 3))
    assert len({tuple(m.tolist()) for m in maps}) > 10
    with pytest.raises(ValueError, match=r"at most hand_size \(2\) colours, got 5"):
        colour_to_slot(HanabiRules(num_players=2, hand_size=2), 0)


def test_bonus_by_hand() -> None:
    pi = torch.tensor([2, 0, 4, 1, 3])  # red -> slot 2, yellow -> slot 0, ...
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


def test_learner_pays_the_bonus_during_the_bootstrap_only(tiny_config) -> None:
    config = tiny_config(bootstrap={"convention": "colour_to_slot", "bonus": 100.0, "moves": 1024})
    learner = make_learner(config, 0, torch.device("cpu"))
    assert torch.equal(learner.games.slot_of_colour, colour_to_slot(learner.games.env.rules, 0))
    paid = []
    for _ in range(8):  # 8 x 64 games x 8 moves: the bootstrap ends after the second rollout
        learner.iteration()
        paid.append(bool((learner._buf_reward > 50).any()))
    assert any(paid[:2]) and not any(paid[2:])


def test_bootstrap_keys_are_validated(tiny_config) -> None:
    with pytest.raises(ConfigError, match=r"\[bootstrap\] convention must be one of \('none', 'colour_to_slot'\)"):
        tiny_config(bootstrap={"convention": "red_means_play"})
    with pytest.raises(ConfigError, match=r"\[bootstrap\] convention 'colour_to_slot' needs 2 players"):
        tiny_config(bootstrap={"convention": "colour_to_slot"}, game={"num_players": 3})
    with pytest.raises(ConfigError, match=r"\[bootstrap\] moves must be >= 0"):
        tiny_config(bootstrap={"moves": -1})
