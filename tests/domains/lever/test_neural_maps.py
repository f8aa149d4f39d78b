"""The ERS paper's neural maps on the Cat/Dog game, with exact float64 returns.

The pool is the game's two self-play optima ("say the pet, guess the word" and "say the other animal, guess the
other"), fitted as small MLPs. What is shown: a new map is the identity (loss 0, the same tables); with the move
permutation of "swap the said words only", which the exact search accepts and the game's symmetry does not contain,
training ends at zero return loss and the XP variant turns cross-play -1 into 1; with "dog <-> bail", which no
expected-return symmetry pairs with an identity-like observation map, the loss stays near 1/4; Other-Play over the
learned candidate set makes Bob bail out (0.5), as Other-Play over the learned group does, where Other-Play over a
set whose map keeps the moves keeps a convention (1).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from eqc.dec_pomdp import CandidateSet, LearnedMap, NeuralMapOptions, load_candidate_set, train_candidate_map, transform_logits
from eqc.domains.lever import CatDogGame, learn_toy_group, other_play_optima, self_play_optima
from eqc.domains.lever.neural_maps import exact_returns, fit_policies, learn_toy_maps, other_play_value, train_other_play
from eqc.domains.lever.tabular_policies import cross_play_matrix

GAME = CatDogGame()
TREE = GAME.tree
SAID_ONLY, DOG_BAIL = [1, 0, 2], [0, 2, 1]  # move permutations (cat 0, dog 1, bail 2)
OPTIONS = NeuralMapOptions(hidden_size=16, steps=100, lr=0.01)


@pytest.fixture(scope="module")
def pool() -> list[nn.Module]:
    return fit_policies(TREE, self_play_optima(GAME), steps=200)


def train(pool: list[nn.Module], sigma: list[int], **options: object) -> LearnedMap:
    settings = {**OPTIONS.to_dict(), **options}
    return train_candidate_map(pool, sigma, exact_returns(TREE), observation_size=TREE.observations.shape[1],
                               options=NeuralMapOptions(**settings), dtype=torch.float64)  # type: ignore[arg-type]


def test_the_pool_plays_the_self_play_optima(pool: list[nn.Module]) -> None:
    returns = exact_returns(TREE)
    for pi in pool:
        seat = lambda obs, legal, pi=pi: transform_logits(pi, (), obs, legal)  # noqa: E731
        assert float(returns([seat, seat])) == pytest.approx(1.0, abs=1e-4)


def test_an_untrained_map_is_the_identity(pool: list[nn.Module]) -> None:
    learned = train(pool, [0, 1, 2], steps=0)
    assert learned.loss == 0.0
    obs = TREE.observations.double()
    for pi in pool:
        assert torch.equal(transform_logits(pi, (learned.map,), obs, TREE.legal), transform_logits(pi, (), obs, TREE.legal))


def test_swapping_the_said_words_is_learned_at_zero_loss(pool: list[nn.Module]) -> None:
    """The said-only element: accepted by the exact search, outside the game's group; its observation map is the
    identity, so training starts at a solution and must stay there under the closure and invertibility terms."""
    found = learn_toy_group(GAME)
    said_only = (0, 1, 2, 3, 5, 4)
    assert said_only in [m.permutation for m in found.members]
    assert list(said_only) not in GAME.symmetry.group.elements.tolist()
    assert GAME.candidate.action_rep.coordinate_map(torch.tensor(said_only)).tolist() == SAID_ONLY
    learned = train(pool, SAID_ONLY, invertibility=0.1)
    assert abs(learned.loss) < 1e-3 and learned.self_play == pytest.approx(1.0, abs=1e-3)


def test_dog_for_bail_is_not_learned(pool: list[nn.Module]) -> None:
    """No expected-return symmetry has move permutation (dog bail): Alice can then say only "cat"; the loss stays
    about 1/4 (the best the map finds), far above the said-only map's."""
    learned = train(pool, DOG_BAIL, steps=150)
    assert 0.2 < learned.loss < 0.3


def test_the_xp_variant_maps_one_convention_onto_the_other(pool: list[nn.Module]) -> None:
    """Without the closure term: with it, phi o phi is asked to map one convention onto the other as well, which
    the identity-like phi o phi of an involution cannot; training then drifts (self-play loss 0.04 after 150 steps)."""
    assert cross_play_matrix(TREE, self_play_optima(GAME))[0, 1] == -1.0
    learned = train(pool, SAID_ONLY, cross_play=True, closure_probability=0.0)
    assert learned.cross_play == pytest.approx(1.0, abs=1e-3) and abs(learned.loss) < 1e-3


@pytest.fixture(scope="module")
def said_set(pool: list[nn.Module]) -> CandidateSet:
    return learn_toy_maps(GAME, pool, [SAID_ONLY], options=OPTIONS)


def test_other_play_over_the_learned_set_bails_out(said_set: CandidateSet, pool: list[nn.Module]) -> None:
    """Each seat draws identity or the said-swap map; the exact objective averages the 4 draws. Its optimum is Bob
    bailing at both words (0.5), the value Other-Play over the learned group attains among deterministic policies."""
    policy, value = train_other_play(TREE, said_set, steps=200)
    assert value == pytest.approx(0.5, abs=1e-3)
    assert value == pytest.approx(other_play_optima(GAME, learn_toy_group(GAME).symmetry).value, abs=1e-3)
    bob = TREE.legal.sum(-1) == 3
    probs = torch.softmax(transform_logits(policy, (), TREE.observations.double(), TREE.legal), -1)
    assert bool((probs[bob, 2] > 0.99).all())
    keeping = learn_toy_maps(GAME, pool, [[0, 1, 2]], options=OPTIONS)
    assert train_other_play(TREE, keeping, steps=200)[1] > 0.9  # a map that keeps the moves leaves a convention optimal


def test_a_learned_set_saves_and_loads_with_the_same_values(said_set: CandidateSet, pool: list[nn.Module], tmp_path) -> None:
    path = said_set.save(tmp_path / "cat_dog.json")
    back = load_candidate_set(path)
    assert back.context == {"game": repr(GAME)} and back.maps[0].loss == said_set.maps[0].loss
    with torch.no_grad():
        assert float(other_play_value(TREE, pool[0], back)) == float(other_play_value(TREE, pool[0], said_set))
