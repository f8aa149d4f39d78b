"""Exact returns of tabular policies on a game tree (eqc.domains.lever.game_tree, .tabular_policies).

Checked against hand-computed values of the toy games, against each other (tables vs choices, the Other-Play
objective with and without its per-orbit shortcut), and against eqc.symmetrize.OtherPlay's own relabelling.
"""

from __future__ import annotations

import itertools

import pytest
import torch

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.domains.lever import CatDogGame, IteratedLeverGame, expected_return, game_tree
from eqc.domains.lever.tabular_policies import (
    cross_play_matrix,
    every_choice,
    other_play_values,
    relabel_choices,
    self_play,
)
from eqc.groups import PermutationGroup, symmetric
from eqc.symmetrize import OtherPlay

CAT_DOG = CatDogGame()
LEVERS = IteratedLeverGame()


def one_hot(choices: torch.Tensor, actions: int) -> torch.Tensor:
    return torch.nn.functional.one_hot(choices, actions).double()


def test_the_trees_hold_every_history() -> None:
    cat_dog, levers = CAT_DOG.tree, LEVERS.tree
    assert len(cat_dog.observations) == 4 and cat_dog.legal.sum(-1).tolist() == [2, 2, 3, 3]  # Alice's two, Bob's two
    assert cat_dog.initial.tolist() == [0.5, 0.5] and [level.observation.shape[0] for level in cat_dog.levels] == [2, 4]
    assert len(levers.observations) == 10 and bool(levers.legal.all())
    assert [level.observation.shape[0] for level in levers.levels] == [1, 9]
    assert levers.observations[0].sum() == 0 and bool((levers.observations[1:].sum(-1) == 2).all())  # round 1, then rows


def test_cat_dog_returns_by_hand() -> None:
    tree = CAT_DOG.tree
    rows = {tuple(o.tolist()): k for k, o in enumerate(tree.observations)}
    sees = [rows[(1.0, 0.0, 0.0, 0.0)], rows[(0.0, 1.0, 0.0, 0.0)]]  # Alice sees a cat, a dog
    hears = [rows[(0.0, 0.0, 1.0, 0.0)], rows[(0.0, 0.0, 0.0, 1.0)]]  # Bob hears "cat", "dog"
    truth = torch.zeros(4, dtype=torch.long)
    truth[sees[1]], truth[hears[1]] = 1, 1
    lie = 1 - truth
    bail = truth.clone()
    bail[hears] = 2
    table = torch.stack([truth, lie, bail])
    assert self_play(tree, table).tolist() == [1.0, 1.0, 0.5]
    assert cross_play_matrix(tree, table).tolist() == [[1.0, -1.0, 0.5], [-1.0, 1.0, 0.5], [1.0, -1.0, 0.5]]  # Alice, Bob
    uniform = tree.legal.double() / tree.legal.sum(-1, keepdim=True)  # Bob guesses at random or bails, a third each
    assert float(expected_return(tree, tables=uniform.expand(2, 4, 3))) == pytest.approx((1 - 1 + 0.5) / 3)


def test_tables_and_choices_agree() -> None:
    for game in (CAT_DOG, LEVERS):
        tree = game.tree
        choices = every_choice(tree)[torch.randperm(len(every_choice(tree)), generator=torch.Generator().manual_seed(0))[:32]]
        pairs = torch.stack([choices[:16], choices[16:]], dim=1)
        by_choice = expected_return(tree, choices=pairs)
        by_table = expected_return(tree, tables=one_hot(pairs, tree.num_actions))
        assert torch.equal(by_choice, by_table)


def test_iterated_levers_by_hand() -> None:
    tree = LEVERS.tree
    record = {tuple(o.tolist()): k for k, o in enumerate(tree.observations)}

    def observation(first: int, second: int) -> int:
        return record[tuple(torch.eye(3)[[first, second]].flatten().tolist())]

    third = torch.zeros(10, dtype=torch.long)  # round 1: lever 0; round 2: repeat a match, else the third lever
    for x, y in itertools.product(range(3), repeat=2):
        third[observation(x, y)] = x if x == y else 3 - x - y
    shifted = third.clone()
    shifted[0] = 1
    assert self_play(tree, third).item() == 2.0
    assert cross_play_matrix(tree, torch.stack([third, shifted])).tolist() == [[2.0, 1.0], [1.0, 2.0]]
    uniform = torch.full((2, 10, 3), 1 / 3, dtype=torch.float64)
    assert float(expected_return(tree, tables=uniform)) == pytest.approx(2 / 3)


def test_every_choice_lists_each_policy_once() -> None:
    choices = every_choice(CAT_DOG.tree)
    assert choices.shape == (36, 4) and len({tuple(c) for c in choices.tolist()}) == 36
    assert len(every_choice(LEVERS.tree)) == 3**10
    with pytest.raises(ValueError, match="more than limit=100"):
        every_choice(LEVERS.tree, limit=100)


def brute_other_play(game: CatDogGame | IteratedLeverGame, symmetry: Symmetry, choices: torch.Tensor) -> torch.Tensor:
    """The Other-Play objective from its definition: every pair of elements, no per-orbit shortcut."""
    copies = [relabel_choices(game.tree, symmetry, g, choices) for g in symmetry.group.elements]
    pairs = [expected_return(game.tree, choices=torch.stack([a, b], dim=-2)) for a in copies for b in copies]
    return torch.stack(pairs).mean(0)


def test_other_play_objective_matches_its_definition() -> None:
    choices = every_choice(CAT_DOG.tree)
    for symmetry in (CAT_DOG.symmetry, CAT_DOG.candidate):
        assert torch.allclose(other_play_values(CAT_DOG.tree, symmetry, choices), brute_other_play(CAT_DOG, symmetry, choices))
    some = every_choice(LEVERS.tree)[torch.randint(3**10, (40,), generator=torch.Generator().manual_seed(1))]
    assert torch.allclose(other_play_values(LEVERS.tree, LEVERS.candidate, some), brute_other_play(LEVERS, LEVERS.candidate, some))
    assert not torch.allclose(other_play_values(LEVERS.tree, LEVERS.symmetry, some),
                              other_play_values(LEVERS.tree, LEVERS.candidate, some))  # the group matters


def test_relabelling_plays_as_other_play_draws() -> None:
    """relabel_choices(g) is what an agent does in the copy of the game eqc.symmetrize.OtherPlay relabels by g."""
    tree, symmetry = LEVERS.tree, LEVERS.candidate
    choices = every_choice(tree)[torch.randint(3**10, (8,), generator=torch.Generator().manual_seed(2))]
    op = OtherPlay.from_symmetry(symmetry, torch.Generator().manual_seed(0))
    rows = {tuple(o.tolist()): k for k, o in enumerate(tree.observations)}
    for g in symmetry.group.elements:
        relabelling = op.relabelling(g.expand(len(tree.observations), -1))
        seen = [rows[tuple(o.tolist())] for o in relabelling.relabel_observations(tree.observations)]
        played = torch.stack([relabelling.to_env_actions(c[seen]) for c in choices])
        assert torch.equal(relabel_choices(tree, symmetry, g, choices), played)


def test_bad_input_is_refused_with_its_name() -> None:
    tree = CAT_DOG.tree
    with pytest.raises(TypeError, match="one form, tables= or choices=, got neither"):
        expected_return(tree)
    with pytest.raises(TypeError, match="got both"):
        expected_return(tree, tables=torch.ones(2, 4, 3) / 3, choices=torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="illegal at its observation"):
        expected_return(tree, choices=torch.full((2, 4), 2))  # Alice may not bail
    with pytest.raises(ValueError, match="probability distribution"):
        expected_return(tree, tables=torch.ones(2, 4, 3))
    with pytest.raises(ValueError, match="put probability on an action that is illegal"):
        expected_return(tree, tables=torch.ones(2, 4, 3) / 3)
    with pytest.raises(TypeError, match="integer actions"):
        self_play(tree, torch.zeros(4))
    with pytest.raises(ValueError, match="one per agent"):
        expected_return(tree, choices=torch.zeros(3, 4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"shape \[..., 4\]"):
        self_play(tree, torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="is not an element"):
        relabel_choices(LEVERS.tree, LEVERS.symmetry, [0, 1, 2, 4, 3], torch.zeros(10, dtype=torch.long))
    with pytest.raises(ValueError, match="declared for 6 observation"):
        relabel_choices(tree, LEVERS.symmetry, list(range(5)), torch.zeros(4, dtype=torch.long))


def test_elements_that_break_the_game_are_refused() -> None:
    """A permutation that makes a table play an illegal action, or see an observation the game never shows, is refused."""
    act = Labels("act", 3)  # "said" and "bail" as one label set: swapping cat and bail gives Alice a bail
    mixed = Symmetry(symmetric(3), act, Layout([Block("x", 4)]), Layout([Block("act", act)]))
    with pytest.raises(ValueError, match="play illegal actions"):
        relabel_choices(CAT_DOG.tree, mixed, [2, 1, 0], torch.zeros(4, dtype=torch.long))
    cell = Labels("cell", 6)  # player 1's lever 0 <-> player 2's lever 0: a record with two levers for one player
    cells = Symmetry(PermutationGroup.from_generators([[3, 1, 2, 0, 4, 5]]), cell, Layout([Block("pulled", cell)]),
                     Layout([Block("lever", 3)]))
    with pytest.raises(ValueError, match="never shows an acting agent"):
        relabel_choices(LEVERS.tree, cells, [3, 1, 2, 0, 4, 5], torch.zeros(10, dtype=torch.long))


class ChanceInSteps(IteratedLeverGame):
    @property
    def last_outcome_probability(self) -> float:
        return 0.5 if self._pulled is not None else 1.0


class NoOutcomes(IteratedLeverGame):
    def initial_outcomes(self) -> list[None]:
        return []


def test_a_game_a_tree_cannot_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="only reset may have chance"):
        game_tree(ChanceInSteps())
    with pytest.raises(ValueError, match="listed no outcome"):
        game_tree(NoOutcomes())
    with pytest.raises(ValueError, match=r"must be \[policies, O\]"):
        cross_play_matrix(LEVERS.tree, torch.zeros(2, 3, 10, dtype=torch.long))
