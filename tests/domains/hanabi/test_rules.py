"""``HanabiRules``: validation once, derived sizes, JSON round trip, and the entry points that take it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import pytest

from eqc.domains.hanabi import HanabiRules
from eqc.domains.hanabi.agent.rule_agent import RuleAgent
from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.rules import action_layout, observation_layout
from eqc.domains.hanabi.symmetry import colour_symmetry
from eqc.groups import dihedral, symmetric


def test_defaults_and_derived_sizes() -> None:
    rules = HanabiRules()
    assert rules.hand_size == 5 and rules == HanabiRules(hand_size=5)
    assert (rules.num_moves, rules.obs_dim, rules.deck_size, rules.canonical_dim, rules.sad_dim) == (20, 658, 50, 658, 0)
    assert HanabiRules(sad="greedy_onehot").obs_dim == 678
    assert HanabiRules(sad="greedy_last_action").obs_dim == 713  # hanabi_SAD's 2-player size
    assert HanabiRules(observation_type="minimal").obs_dim == 308
    assert HanabiRules(knowledge="v0_belief").obs_dim == 658
    four = HanabiRules(4)
    assert four.hand_size == 4 and four.num_moves == 2 * 4 + 3 * 10
    small = HanabiRules(3, num_colours=3, num_ranks=2, hand_size=2, max_info_tokens=4, max_lives=1)
    assert small.deck_size == 12 and small.obs_dim == observation_layout(small, max_deck_size=12).dim


@pytest.mark.parametrize(
    "rules",
    [
        HanabiRules(),
        HanabiRules(5, 4, 3, 3, 6, 2, "minimal", "canonical", "greedy_onehot"),
        HanabiRules(knowledge="v0_belief", sad="greedy_last_action"),
    ],
)
def test_json_round_trip(rules: HanabiRules) -> None:
    data = json.loads(json.dumps(rules.to_dict()))
    assert HanabiRules.from_dict(data) == rules
    assert hash(HanabiRules.from_dict(data)) == hash(rules)


def test_from_dict_refuses_unknown_keys_naming_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown HanabiRules key\(s\) \['num_player'\]; allowed keys: \['num_players'"):
        HanabiRules.from_dict({"num_player": 2})
    with pytest.raises(TypeError, match="mapping"):
        HanabiRules.from_dict([("num_players", 2)])  # type: ignore[arg-type]
    assert HanabiRules.from_dict({}) == HanabiRules()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(num_players=1), ValueError, "num_players"),
        (dict(num_players=2.0), TypeError, "num_players"),
        (dict(num_colours=6), ValueError, "num_colours"),
        (dict(num_ranks=0), ValueError, "num_ranks"),
        (dict(hand_size=9), ValueError, "hand_size"),
        (dict(num_colours=1, num_ranks=1, hand_size=2), ValueError, "exceeds the deck"),
        (dict(num_colours=2, num_ranks=1, hand_size=3), ValueError, "at least one card to draw"),
        (dict(max_info_tokens=0), ValueError, "max_info_tokens"),
        (dict(max_lives=True), TypeError, "max_lives"),
        (dict(observation_type="seer"), ValueError, r"observation_type must be one of \['full', 'minimal'\]"),
        (dict(knowledge="v1_belief"), ValueError, "knowledge must be one of"),
        (dict(knowledge=None), TypeError, "knowledge must be a str"),
        (dict(sad=True), TypeError, "sad must be a str"),
        (dict(sad="sad"), ValueError, "greedy_last_action"),
        (dict(observation_type="minimal", knowledge="v0_belief"), ValueError, "card-knowledge section"),
    ],
)
def test_bad_rules(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        HanabiRules(**kwargs)


def test_rules_are_frozen_and_replace_revalidates() -> None:
    rules = HanabiRules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.num_players = 3  # type: ignore[misc]
    assert dataclasses.replace(rules, sad="greedy_onehot").obs_dim == 678
    with pytest.raises(ValueError, match="num_players"):
        dataclasses.replace(rules, num_players=7)


def test_layouts_and_symmetry_take_rules() -> None:
    rules = HanabiRules(3, sad="greedy_last_action")
    assert observation_layout(rules).dim == rules.obs_dim
    assert observation_layout(dataclasses.replace(rules, sad="off")).dim == rules.canonical_dim
    assert action_layout(rules).dim == rules.num_moves and action_layout().dim == HanabiRules().num_moves
    symmetry = colour_symmetry(dihedral(5), rules)
    assert symmetry.observation_rep.dim == rules.obs_dim and symmetry.action_rep.dim == 30
    with pytest.raises(ValueError, match=r"group D6 acts on 3 colours but rules\.num_colours is 5; colour groups of this game"):
        colour_symmetry(symmetric(3), rules)


@pytest.mark.parametrize(
    "call",
    [
        lambda: action_layout(2),
        lambda: observation_layout("2"),
        lambda: colour_symmetry(symmetric(5), 3),
        lambda: HanabiBatch(3, 3, "cpu", 5),
        lambda: RuleAgent(2),
        lambda: RuleAgent({"num_players": 2}),
    ],
)
def test_the_game_is_only_a_hanabi_rules(call: Callable[[], object]) -> None:
    """The old positional forms (``num_players`` where ``rules`` goes) are refused naming ``rules``."""
    with pytest.raises(TypeError, match=r"rules must be a HanabiRules \(e\.g\. HanabiRules\(num_players=3\)"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: observation_layout(num_players=3),
        lambda: colour_symmetry(symmetric(5), sad=True),
        lambda: HanabiBatch(2, num_players=3),
        lambda: RuleAgent(max_life_tokens=1),
    ],
)
def test_the_old_game_keywords_are_gone(call: Callable[[], object]) -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        call()


def test_presets_are_hle_and_jax_aht_games() -> None:
    full, small, mini = (HanabiRules.preset(name) for name in ("full", "small", "mini"))
    assert full == HanabiRules() and HanabiRules.preset("full", num_players=4).hand_size == 4
    assert (small.num_colours, small.num_ranks, small.hand_size, small.max_info_tokens, small.max_lives) == (2, 5, 2, 3, 1)
    assert (small.deck_size, small.max_score, small.num_moves) == (20, 10, 2 * 2 + 2 + 5)
    assert (mini.num_colours, mini.num_ranks, mini.hand_size, mini.max_info_tokens, mini.max_lives) == (3, 3, 3, 5, 3)
    assert (mini.deck_size, mini.max_score, mini.num_moves) == (18, 9, 2 * 3 + 3 + 3)
    three = HanabiRules.preset("mini", num_players=3, sad="greedy_onehot", max_lives=1)
    assert (three.num_players, three.hand_size, three.sad, three.max_lives) == (3, 3, "greedy_onehot", 1)
    with pytest.raises(ValueError, match=r"preset must be one of \['full', 'small', 'mini'\], got 'tiny'"):
        HanabiRules.preset("tiny")
    with pytest.raises(ValueError, match="exceeds the deck"):
        HanabiRules.preset("mini", num_players=5, hand_size=4)
