"""The colour symmetry's declaration (no HLE needed): layouts, representations, argument checks.

The expected coordinates below are written out from DESIGN.md's table of HLE's 658-float
observation, independently of the Block declaration they check.
(Named test_hanabi_symmetry.py: pytest's default import mode refuses two test_symmetry.py.)
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from eqc.dec_pomdp import Symmetry
from eqc.domains.hanabi.dealing import card_counts, deck_size, random_deck, relabel_deck, standard_deck
from eqc.domains.hanabi.rules import HanabiRules, action_layout, observation_layout
from eqc.domains.hanabi.symmetry import COLOUR_GROUP_NAMES, colour_group, colour_group_name, colour_group_names, colour_symmetry
from eqc.groups import PermutationGroup, cyclic, dihedral, symmetric

S5 = symmetric(5)


def _expected_image(c_index: int, sigma: list[int]) -> int:
    """Where coordinate ``c_index`` of the 2-player 658-vector goes under colour permutation sigma (DESIGN table)."""
    i = c_index
    if i < 125:  # partner hand: 25*slot + 5c + r
        slot, rest = divmod(i, 25)
        c, r = divmod(rest, 5)
        return 25 * slot + 5 * sigma[c] + r
    if 167 <= i < 192:  # fireworks
        c, r = divmod(i - 167, 5)
        return 167 + 5 * sigma[c] + r
    if 203 <= i < 253:  # discards, 10 bits per colour
        c, j = divmod(i - 203, 10)
        return 203 + 10 * sigma[c] + j
    if 261 <= i < 266:  # last action: colour revealed
        return 261 + sigma[i - 261]
    if 281 <= i < 306:  # last action: card played / discarded
        c, r = divmod(i - 281, 5)
        return 281 + 5 * sigma[c] + r
    if i >= 308:  # card knowledge, 35 per (player, slot)
        base, k = 308 + 35 * ((i - 308) // 35), (i - 308) % 35
        if k < 25:
            c, r = divmod(k, 5)
            return base + 5 * sigma[c] + r
        if k < 30:
            return base + 25 + sigma[k - 25]
    return i


def test_observation_matches_design_table() -> None:
    symmetry = colour_symmetry(S5)
    assert symmetry.observation_rep.dim == 658 and symmetry.action_rep.dim == 20
    offsets = symmetry.observation_layout.offsets()
    table = {
        "partner_hands": 0, "missing_card": 125, "deck": 127, "fireworks": 167, "information_tokens": 192,
        "life_tokens": 200, "discards": 203, "last_action_player": 253, "last_action_type": 255,
        "last_action_target": 259, "last_action_colour": 261, "last_action_rank": 266,
        "last_action_reveal_outcome": 271, "last_action_position": 276, "last_action_card": 281,
        "last_action_scored_token": 306, "knowledge": 308,
    }  # fmt: skip
    assert {k: offsets[k] for k in table} == table
    coords = symmetry.observation_rep.coordinate_permutations  # [120, 658]
    for g in range(0, S5.order, 7):
        sigma = S5.elements[g].tolist()
        assert coords[g].tolist() == [_expected_image(i, sigma) for i in range(658)], sigma


def test_action_moves_only_colour_hints() -> None:
    symmetry = colour_symmetry(S5)
    for g in range(S5.order):
        sigma = S5.elements[g].tolist()
        expected = list(range(10)) + [10 + sigma[c] for c in range(5)] + list(range(15, 20))
        assert symmetry.action_rep.act_index(torch.arange(20), g).tolist() == expected


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_general_dimensions(num_players: int) -> None:
    """HLE's section lengths for P players, hand size h, C = R = 5, deck 50."""
    P, h = num_players, (5 if num_players < 4 else 4)
    hands, board, discards = (P - 1) * h * 25 + P, 50 - P * h + 25 + 8 + 3, 50
    last_action, knowledge = P + 4 + P + 5 + 5 + h + h + 25 + 2, P * h * 35
    moves = 2 * h + (P - 1) * 10
    full = hands + board + discards + last_action + knowledge
    rules = HanabiRules(P)
    assert observation_layout(rules).dim == full
    assert observation_layout(HanabiRules(P, observation_type="minimal")).dim == full - knowledge
    assert observation_layout(HanabiRules(P, sad="greedy_onehot")).dim == full + moves
    assert action_layout(rules).dim == moves
    symmetry = colour_symmetry(dihedral(5), HanabiRules(P, sad="greedy_onehot"))
    assert (symmetry.observation_rep.dim, symmetry.action_rep.dim) == (full + moves, moves)


def test_sad_block_moves_like_actions() -> None:
    symmetry = colour_symmetry(S5, HanabiRules(3, sad="greedy_onehot"))
    layout = symmetry.observation_layout
    start = layout.offset("greedy_discard")
    obs_coords = symmetry.observation_rep.coordinate_permutations[:, start:] - start
    assert torch.equal(obs_coords, symmetry.action_rep.coordinate_permutations)
    assert not torch.equal(obs_coords, torch.arange(symmetry.action_rep.dim).expand_as(obs_coords))


@pytest.mark.parametrize("group", [cyclic(5), dihedral(5), S5, S5.subgroup([[1, 0, 2, 3, 4]], name="swap R Y")])
def test_any_group_on_five_colours(group: PermutationGroup) -> None:
    symmetry = colour_symmetry(group)
    assert isinstance(symmetry, Symmetry) and symmetry.group is group
    x = torch.rand(3, 658)
    for g in range(group.order):
        assert torch.equal(symmetry.observation_rep.act(symmetry.observation_rep.act(x, g), g, inverse=True), x)


def test_fewer_colours_and_ranks() -> None:
    symmetry = colour_symmetry(symmetric(3), HanabiRules(num_colours=3, num_ranks=4, hand_size=3))
    layout = symmetry.observation_layout
    assert layout.block("discards").shape == (3, sum(card_counts(4)))
    assert layout.block("partner_hands").shape == (1, 3, 3, 4)


def test_colour_group_names_of_a_game() -> None:
    assert colour_group_names(5)[:4] == ("C5", "D10", "S5", "A5")
    assert colour_group_names(3) == ("C3", "D6", "S3", "A3", "C2", "S2")
    assert colour_group_names(1) == ("C1", "S1")
    assert set(colour_group_names(4)) < set(COLOUR_GROUP_NAMES)


@pytest.mark.parametrize(("name", "num_colours", "elements"), [
    ("S2", 3, [[0, 1, 2], [1, 0, 2]]),
    ("C3", 5, [[0, 1, 2, 3, 4], [1, 2, 0, 3, 4], [2, 0, 1, 3, 4]]),
    ("C3", None, [[0, 1, 2], [1, 2, 0], [2, 0, 1]]),
])
def test_a_colour_group_on_the_first_colours_fixes_the_others(name: str, num_colours: int | None, elements: list) -> None:
    group = colour_group(name, num_colours)
    assert sorted(group.elements.tolist()) == elements
    assert colour_group_name(group) in (name, "C2")  # S2 and C2 are one group


def test_a_subgroup_acts_as_its_elements_do_in_the_full_group() -> None:
    """S2 on Mini-Hanabi's 3 colours moves every coordinate as the same permutation does in S3."""
    rules = HanabiRules.preset("mini")
    s2, s3 = colour_symmetry(colour_group("S2", 3), rules), colour_symmetry(symmetric(3), rules)
    swap = next(k for k, p in enumerate(s3.group.elements.tolist()) if p == [1, 0, 2])
    x = torch.rand(4, rules.obs_dim)
    for rep in ("observation_rep", "action_rep"):
        a, b = getattr(s2, rep), getattr(s3, rep)
        y = torch.rand(4, a.dim)
        assert torch.equal(a.act(y, 1), b.act(y, swap))
    assert not torch.equal(s2.observation_rep.act(x, 1), x)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: colour_symmetry(symmetric(6)), ValueError, "at most 5 colours"),
        (lambda: colour_symmetry([0, 1, 2, 3, 4]), TypeError, "PermutationGroup"),
        (lambda: colour_symmetry(symmetric(3)), ValueError, r"acts on 3 colours but rules\.num_colours is 5"),
        (lambda: colour_group("S4", 3), ValueError, r"S4 moves 4 colours but the game has 3; colour groups of this game"),
        (lambda: colour_group("D4"), ValueError, "colour group"),
        (lambda: colour_symmetry(S5, 2), TypeError, "rules must be a HanabiRules"),
        (lambda: observation_layout(HanabiRules(), max_deck_size=48), ValueError, "multiple of num_colours"),
        (lambda: observation_layout(HanabiRules(), max_deck_size=10), ValueError, "must exceed"),
        (lambda: observation_layout(HanabiRules(), max_deck_size=50.0), TypeError, "max_deck_size"),
    ],
)
def test_bad_arguments(call, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_decks() -> None:
    assert len(standard_deck()) == deck_size() == 50
    assert card_counts(5) == [3, 2, 2, 2, 1] and card_counts(1) == [3]
    g = torch.Generator().manual_seed(0)
    deck = random_deck(g)
    assert sorted(deck) == standard_deck() and deck != tuple(standard_deck())
    sigma = [4, 0, 1, 2, 3]
    assert sorted(relabel_deck(deck, sigma)) == standard_deck()
    assert relabel_deck(relabel_deck(deck, sigma), [1, 2, 3, 4, 0]) == deck
    with pytest.raises(ValueError, match="permutation"):
        relabel_deck(deck, [0, 0, 1, 2, 3])


def test_package_imports_without_hle() -> None:
    """``import eqc.domains.hanabi`` and the symmetry work when HLE cannot be imported."""
    code = (
        "import sys; sys.modules['hanabi_learning_environment'] = None\n"
        "import eqc.domains.hanabi as h\n"
        "from eqc.groups import symmetric\n"
        "assert h.colour_symmetry(symmetric(5)).observation_rep.dim == 658\n"
        "try:\n    h.HanabiEnv()\nexcept ImportError as e:\n    assert 'hanabi-learning-environment' in str(e); print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
