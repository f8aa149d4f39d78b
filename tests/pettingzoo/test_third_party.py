"""Proofs by test on environments eqc did not write: mpe2's simple_spread_v3 and PettingZoo's hanabi_v5."""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")

import math

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.groups import cyclic, dihedral, symmetric
from eqc.pettingzoo import PettingZooDecPOMDP, assert_pettingzoo_symmetry, check_pettingzoo_symmetry
from eqc.pettingzoo.examples import hanabi_symmetry, move_landmarks, relabel_card, spread_symmetry


@pytest.fixture
def simple_spread():
    return pytest.importorskip("mpe2.simple_spread_v3")


@pytest.fixture
def hanabi_v5():
    pytest.importorskip("shimmy")
    pytest.importorskip("pyspiel")
    import pettingzoo

    class Hanabi:  # PettingZoo's registry (importing pettingzoo.classic.hanabi_v5 is deprecated)
        @staticmethod
        def env(**kwargs):
            return pettingzoo.make("aec", "classic/hanabi-v5", **kwargs)

    return Hanabi


ROTATIONS = cyclic(3).elements[1:2].repeat(10, 1)  # ten episodes under the rotation (0 1 2) of the landmarks


# ---------------------------------------------------------------- simple_spread
@pytest.mark.parametrize("api", ["env", "parallel_env"])
def test_landmark_permutations_are_a_symmetry_of_simple_spread(simple_spread, api):
    env = getattr(simple_spread, api)(N=3, max_cycles=25)
    elements = symmetric(3).elements.repeat(2, 1)  # every element of S3, twice
    assert_pettingzoo_symmetry(env, spread_symmetry(3), relabel_state=move_landmarks, reward_ulps=4, episodes=12, permutations=elements)


def test_simple_spread_with_four_landmarks_under_a_subgroup(simple_spread):
    env = simple_spread.env(N=4, max_cycles=10)
    assert_pettingzoo_symmetry(env, spread_symmetry(4, dihedral(4)), relabel_state=move_landmarks, reward_ulps=4, episodes=4)


def test_the_check_is_exact_on_rewards_unless_told(simple_spread):
    """simple_spread sums over its landmarks, so relabelled rewards differ in the last bits: that is reported, not hidden."""
    found = check_pettingzoo_symmetry(simple_spread.env(), spread_symmetry(), relabel_state=move_landmarks, episodes=12)
    assert found is not None and found.kind == "reward" and found.expected != found.actual
    assert abs(found.expected - found.actual) <= 4 * math.ulp(abs(found.expected))  # a few units in the last place
    assert "unit(s) in the last place apart" in str(found) and "pass reward_ulps=4" in str(found)


def test_a_wrong_spread_declaration_names_the_landmark_block_and_step_0(simple_spread):
    landmark = Labels("landmark", 3)
    obs = Layout([Block("velocity", 2), Block("position", 2), Block("landmarks", 2, landmark),  # x/y and landmark swapped
                  Block("other_agents", 2, 2), Block("communication", 2, 2)])
    wrong = Symmetry(symmetric(3), acts_on=landmark, observation_layout=obs, action_layout=Layout([Block("move", 5)]))
    with pytest.raises(AssertionError, match=r"observation differs in block 'landmarks' at landmarks\[.*\] \(episode 0, step 0,"):
        assert_pettingzoo_symmetry(simple_spread.env(), wrong, relabel_state=move_landmarks, reward_ulps=4, permutations=ROTATIONS)


def test_a_wrong_relabel_state_is_caught(simple_spread):
    def leave_landmarks(env, labels):
        pass

    found = check_pettingzoo_symmetry(simple_spread.env(), spread_symmetry(), relabel_state=leave_landmarks, permutations=ROTATIONS)
    assert found is not None and found.block == "landmarks" and found.step == 0


def test_simple_spread_refusals(simple_spread):
    with pytest.raises(ValueError, match=r"draws chance .* no relabel_state"):
        PettingZooDecPOMDP(simple_spread.env())
    with pytest.raises(TypeError, match=r"action space is Box.*not Discrete"):
        PettingZooDecPOMDP(simple_spread.env(continuous_actions=True), relabel_state=move_landmarks)
    with pytest.raises(ValueError, match=r"observation layout has 18 coordinates but simple_spread_v3's observations have 24"):
        check_pettingzoo_symmetry(simple_spread.env(N=4), spread_symmetry(3), relabel_state=move_landmarks)


# ---------------------------------------------------------------- hanabi_v5
def test_colour_permutations_are_a_symmetry_of_pettingzoo_hanabi(hanabi_v5):
    assert_pettingzoo_symmetry(hanabi_v5.env(), hanabi_symmetry(symmetric(5)), relabel_chance=relabel_card, episodes=20)


def test_hanabi_three_players(hanabi_v5):
    sym = hanabi_symmetry(dihedral(5), num_players=3)
    assert_pettingzoo_symmetry(hanabi_v5.env(players=3), sym, relabel_chance=relabel_card, episodes=5)


def test_a_wrong_hanabi_declaration_names_the_discards_block_and_step(hanabi_v5):
    from eqc.domains.hanabi import HanabiRules, action_layout, observation_layout

    rules = HanabiRules(num_players=2)
    obs = Layout(Block("discards", 5, 10) if b.name == "discards" else b for b in observation_layout(rules))  # colours not acted on
    wrong = Symmetry(dihedral(5), acts_on=Labels("colour", 5), observation_layout=obs, action_layout=action_layout(rules))
    found = check_pettingzoo_symmetry(hanabi_v5.env(), wrong, relabel_chance=relabel_card, episodes=20)
    assert found is not None and found.kind == "observation" and found.block == "discards" and found.step >= 1
    assert "in block 'discards' at discards[axis0=" in str(found) and f"step {found.step}" in str(found)


def test_a_wrong_deal_relabelling_is_caught(hanabi_v5):
    found = check_pettingzoo_symmetry(hanabi_v5.env(), hanabi_symmetry(), relabel_chance=lambda card, labels: card, episodes=5)
    assert found is not None and found.step == 0 and found.block == "partner_hands"
    found = check_pettingzoo_symmetry(hanabi_v5.env(), hanabi_symmetry(), relabel_chance=lambda card, labels: 0, episodes=2)
    assert found is not None and found.kind in ("error", "outcome_probability")


def test_a_relabel_chance_that_returns_no_outcome_is_named_not_reported_as_a_counterexample(hanabi_v5):
    from eqc.pettingzoo import HookError

    for returned, shown in ((1.5, "float 1.5"), (None, "NoneType None"), (True, "bool True")):
        with pytest.raises(HookError, match=f"relabel_chance must return an int chance outcome, got {shown} for outcome "):
            check_pettingzoo_symmetry(hanabi_v5.env(), hanabi_symmetry(), relabel_chance=lambda card, labels, r=returned: r, episodes=2)


def test_hanabi_refusals(hanabi_v5):
    with pytest.raises(ValueError, match="OpenSpiel game 'hanabi', which deals chance outcomes during play; give relabel_chance"):
        PettingZooDecPOMDP(hanabi_v5.env())
    with pytest.raises(ValueError, match=r"observation layout has 658 coordinates but hanabi_v5's observations have 956"):
        check_pettingzoo_symmetry(hanabi_v5.env(players=3), hanabi_symmetry(), relabel_chance=relabel_card)
    with pytest.raises(ValueError, match=r"no 'obs'; pass observation_key="):
        PettingZooDecPOMDP(hanabi_v5.env(), relabel_chance=relabel_card, observation_key="obs")
