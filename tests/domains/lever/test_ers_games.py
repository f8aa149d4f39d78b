"""The ERS paper's toy games: expected-return symmetries beyond the game's, and Other-Play over them (exact).

For each game: (a) its declared symmetry group is verified by check_env_symmetry and is, within the candidate group,
exactly what check_env_symmetry accepts; the group the search returns on the self-play pool strictly contains it;
(b) that group holds an element check_env_symmetry refuses, at zero return loss; (c) Other-Play over it has optima
whose cross-play, worst pair and mean pair, beats Other-Play over the game's group. Every number is exact.
"""

from __future__ import annotations

import itertools

import pytest
import torch

from eqc.dec_pomdp import ExpectedReturnGroup
from eqc.domains.lever import CatDogGame, IteratedLeverGame, learn_toy_group, other_play_optima, self_play_optima
from eqc.domains.lever.ers import OtherPlayOptima
from eqc.symmetrize import OtherPlay, Symmetrizer
from eqc.verification import check_env_symmetry

GAMES: dict[str, CatDogGame | IteratedLeverGame] = {"cat_dog": CatDogGame(), "levers": IteratedLeverGame()}


@pytest.fixture(scope="module")
def learned() -> dict[str, ExpectedReturnGroup]:
    return {name: learn_toy_group(game) for name, game in GAMES.items()}


@pytest.fixture(scope="module")
def optima(learned: dict[str, ExpectedReturnGroup]) -> dict[tuple[str, str], OtherPlayOptima]:
    return {(name, which): other_play_optima(game, game.symmetry if which == "game" else learned[name].symmetry)
            for name, game in GAMES.items() for which in ("game", "learned")}


def is_game_symmetry(game: CatDogGame | IteratedLeverGame, permutation: torch.Tensor) -> bool:
    episodes = 12
    found = check_env_symmetry(game, game.candidate, episodes=episodes, permutations=permutation.expand(episodes, -1),
                               generator=torch.Generator().manual_seed(0))
    return found is None


@pytest.mark.parametrize("name", GAMES)
def test_the_declared_group_is_what_the_game_accepts(name: str) -> None:
    """Within the candidate group, check_env_symmetry accepts the declared group's elements and refuses the others."""
    game = GAMES[name]
    assert check_env_symmetry(game, game.symmetry, episodes=30, generator=torch.Generator().manual_seed(1)) is None
    declared = {tuple(p) for p in game.symmetry.group.elements.tolist()}
    accepted = {tuple(p.tolist()) for p in game.candidate.group.elements if is_game_symmetry(game, p)}
    assert accepted == declared and game.symmetry.group.is_subgroup_of(game.candidate.group)


@pytest.mark.parametrize(("name", "pool", "game_order", "learned_order"), [("cat_dog", 2, 2, 4), ("levers", 3**10, 6, 12)])
def test_the_search_finds_more_than_the_game(name: str, pool: int, game_order: int, learned_order: int,
                                             learned: dict[str, ExpectedReturnGroup]) -> None:
    """(a) The learned group strictly contains the game's; (b) it holds non-symmetries of zero return loss."""
    game, found = GAMES[name], learned[name]
    assert len(self_play_optima(game)) == pool
    assert game.symmetry.group.order == game_order and found.group.order == learned_order
    assert game.symmetry.group.is_subgroup_of(found.group) and found.worst_loss == 0.0
    extra = [p for p in found.group.elements if p.tolist() not in game.symmetry.group.elements.tolist()]
    assert extra and not any(is_game_symmetry(game, p) for p in extra)


def test_cat_dog_swapping_the_words_alone_is_kept() -> None:
    """Swapping only the said labels maps "say the pet" to "say the other animal" and keeps every self-play return;
    swapping only what Alice sees does not, and the search refuses it."""
    game = GAMES["cat_dog"]
    found = learn_toy_group(game, cross_play=True)
    losses = {c.permutation: c.loss for c in found.candidates}
    said_only, pet_only = (0, 1, 2, 3, 5, 4), (1, 0, 2, 3, 4, 5)
    assert losses[said_only] == 0.0 and losses[pet_only] == 2.0
    assert found.accepted == (0, 1, 6, 7)  # the pet and the heard word swapped together or not at all
    xp = {m.permutation: m.cross_play for m in found.members}
    assert xp[said_only] == 1.0 and xp[(0, 1, 2, 3, 4, 5)] == -1.0  # it maps one convention onto the other
    refused = check_env_symmetry(game, game.candidate, episodes=1, permutations=[list(said_only)])
    assert refused is not None and refused.block == "heard"


def test_cat_dog_other_play_over_the_learned_group_bails_out(optima: dict[tuple[str, str], OtherPlayOptima]) -> None:
    """(c) Over the game's swap both conventions stay optimal and miscoordinate; over the learned group Bob bails."""
    game, learned = optima[("cat_dog", "game")], optima[("cat_dog", "learned")]
    assert game.value == 1.0 and len(game.choices) == 2
    assert (game.worst, game.mean) == (-1.0, 0.0)
    assert learned.value == 0.5 and len(learned.choices) == 4  # Alice's words no longer matter
    assert (learned.worst, learned.mean) == (0.5, 0.5)
    tree = GAMES["cat_dog"].tree
    bob = tree.legal.sum(-1) == 3
    assert bool((learned.choices[:, bob] == 2).all())
    assert learned.worst > game.worst and learned.mean > game.mean


def third_lever_convention(choices: torch.Tensor) -> list[str]:
    """Each iterated-lever policy's answer to a round-1 mismatch it can meet (its own round-1 lever in a row)."""
    tree = GAMES["levers"].tree
    rows = {tuple(o.tolist()): k for k, o in enumerate(tree.observations)}
    names = []
    for policy in choices.tolist():
        own = policy[0]
        answers = set()
        for x, y in itertools.permutations(range(3), 2):
            if own in (x, y):
                answer = policy[rows[tuple(torch.eye(3)[[x, y]].flatten().tolist())]]
                answers.add("player 1's" if answer == x else "player 2's" if answer == y else "third")
        assert len(answers) == 1
        names.append(answers.pop())
    return names


def test_levers_other_play_over_the_learned_group_picks_the_third_lever(
        optima: dict[tuple[str, str], OtherPlayOptima]) -> None:
    """(c) Over S3 three conventions are optimal; over the learned group only "the lever nobody pulled"."""
    game, learned = optima[("levers", "game")], optima[("levers", "learned")]
    assert game.value == pytest.approx(4 / 3) and learned.value == pytest.approx(4 / 3)
    conventions = third_lever_convention(game.choices)
    assert len(game.choices) == 729 and {c: conventions.count(c) for c in set(conventions)} == {
        "player 1's": 243, "player 2's": 243, "third": 243}
    assert len(learned.choices) == 243 and set(third_lever_convention(learned.choices)) == {"third"}
    assert game.worst == 0.0 and game.mean == pytest.approx(8 / 9)
    assert learned.worst == 1.0 and learned.mean == pytest.approx(4 / 3)
    assert learned.worst > game.worst and learned.mean > game.mean


@pytest.mark.parametrize("name", GAMES)
def test_the_learned_group_feeds_other_play_and_the_symmetrizer(name: str, learned: dict[str, ExpectedReturnGroup]) -> None:
    symmetry = learned[name].symmetry
    op = OtherPlay.from_symmetry(symmetry, torch.Generator().manual_seed(0))
    assert all(p in symmetry.group for p in op.sample(16, 2).permutations.view(-1, symmetry.group.degree))
    net = Symmetrizer(torch.nn.Linear(symmetry.observation_layout.dim, symmetry.action_layout.dim),
                      symmetry.observation_rep, symmetry.action_rep)
    x = torch.randn(3, symmetry.observation_layout.dim)
    for g in range(symmetry.group.order):
        assert torch.allclose(net(symmetry.observation_rep.act(x, g)), symmetry.action_rep.act(net(x), g), atol=1e-6)


def test_bad_input_is_refused_with_its_name() -> None:
    game = GAMES["cat_dog"]
    with pytest.raises(ValueError, match="tolerance"):
        learn_toy_group(game, tolerance=-0.1)
    with pytest.raises(TypeError, match="cross_play must be a bool"):
        learn_toy_group(game, cross_play="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"pool must be a non-empty \[members, 4\]"):
        learn_toy_group(game, pool=torch.zeros(0, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="illegal at its observation"):
        learn_toy_group(game, pool=torch.full((1, 4), 2))
    with pytest.raises(TypeError, match="game must be a toy game"):
        learn_toy_group(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="symmetry must be an eqc Symmetry"):
        other_play_optima(game, game.symmetry.group)  # type: ignore[arg-type]


def test_the_games_play_by_their_rules() -> None:
    pets = CatDogGame(right=2.0, wrong=-3.0, bail=0.25)
    pets.reset(1)
    assert pets.last_outcome == 1 and pets.last_outcome_probability == 0.5
    assert pets.legal_actions().tolist() == [[True, True, False], [False, False, False]]
    assert pets.step([0, 0]) == 0.0 and pets.observations()[1].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert pets.step([0, 1]) == 2.0 and pets.terminal and pets.last_outcome is None
    pets.reset(0)
    pets.step([1, 0])
    assert pets.step([0, 2]) == 0.25
    with pytest.raises(RuntimeError, match="has ended"):
        pets.step([0, 0])
    pets.reset(0)
    with pytest.raises(ValueError, match="illegal action 2: Alice says"):
        pets.step([2, 0])
    with pytest.raises(ValueError, match="the pet, 0 \\(cat\\) or 1 \\(dog\\)"):
        pets.reset(2)
    with pytest.raises(ValueError, match="unknown label set"):
        pets.relabel_outcome(0, {"colour": torch.tensor([1, 0])})
    with pytest.raises(TypeError, match="right must be a real number"):
        CatDogGame(right="high")
    levers = IteratedLeverGame()
    with pytest.raises(RuntimeError, match="call reset"):
        levers.step([0, 0])
    levers.reset()
    assert levers.step([0, 2]) == 0.0
    assert levers.observations().tolist() == [[1.0, 0, 0, 0, 0, 1.0]] * 2  # player 1 pulled 0, player 2 pulled 2
    assert levers.step([1, 1]) == 1.0 and levers.terminal and not bool(levers.legal_actions().any())
    with pytest.raises(ValueError, match=r"levers are 0\.\.2"):
        levers.reset()
        levers.step([0, 3])
