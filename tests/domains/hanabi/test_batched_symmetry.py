"""The colour symmetry holds on ``HanabiBatch``, one group element per game, in one batch.

Deal every game's deck relabelled by its own colour permutation, map every move by the action
representation, and the relabelled batch must show exactly ``rho_obs(g)`` of the original
observations (and ``rho_act(g)`` of the legal masks), with equal rewards, scores and flags.
Needs no HLE: the declaration (``colour_symmetry``) and the batched env are checked against each
other; ``test_batched_differential`` ties the batched env to HLE.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from eqc.dec_pomdp import Symmetry
from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.dealing import standard_deck
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import colour_symmetry
from eqc.groups import cyclic, dihedral, symmetric


def relabel_decks(decks: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Card (c, r) -> (sigma[b, c], r) in every deck b; ``sigma`` [B, 5] image arrays."""
    return sigma.gather(1, decks // 5) * 5 + decks % 5


def first_mismatch(
    symmetry: Symmetry, decks: torch.Tensor, g: torch.Tensor, seed: int, inverse: bool = False, rules: HanabiRules | None = None
) -> str | None:
    """Play random games and their relabelled twins in lockstep; describe the first mismatch.

    ``inverse=True`` compares against ``rho_obs(g)^-1`` instead (a deliberately wrong convention).
    """
    b = decks.shape[0]
    sigma = symmetry.group.elements[g]
    original = HanabiBatch(b, rules)
    relabelled = HanabiBatch(b, rules)
    original.reset(decks)
    relabelled.reset(relabel_decks(decks, sigma))
    rng = torch.Generator().manual_seed(seed)
    rho_obs, rho_act = symmetry.observation_rep, symmetry.action_rep
    for step in range(200):
        expected = rho_obs.act(original.observations(), g.view(b, 1), inverse=inverse)
        got = relabelled.observations()
        if not torch.equal(expected, got):
            game, player, coord = (expected != got).nonzero()[0].tolist()
            return f"step {step}, game {game}, player {player}: {symmetry.observation_layout.describe(coord)}"
        legal = original.legal_move_mask()
        if not torch.equal(rho_act.act(legal.float(), g).bool(), relabelled.legal_move_mask()):
            return f"step {step}: legal moves"
        for name in ("terminal", "score", "lives", "info_tokens", "current_player", "cards_left", "moves_made"):
            if not torch.equal(getattr(original, name), getattr(relabelled, name)):
                return f"step {step}: {name}"
        if bool(original.terminal.all()):
            return None
        moves = (torch.rand(legal.shape, generator=rng) * legal).argmax(dim=1)
        greedy = (torch.rand(legal.shape, generator=rng) * legal).argmax(dim=1)
        mapped, mapped_greedy = rho_act.act_index(moves, g), rho_act.act_index(greedy, g)
        sad = original.uses_sad
        if not torch.equal(original.step(moves, greedy if sad else None), relabelled.step(mapped, mapped_greedy if sad else None)):
            return f"step {step}: rewards"
    return "games did not end"


def random_decks(count: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    cards = torch.tensor(standard_deck())
    return torch.stack([cards[torch.randperm(50, generator=gen)] for _ in range(count)])


S5 = symmetric(5)


@settings(max_examples=15, deadline=None)
@given(
    decks=st.lists(st.permutations(standard_deck()), min_size=1, max_size=6),
    elements=st.lists(st.integers(0, S5.order - 1), min_size=6, max_size=6),
    seed=st.integers(0, 2**31 - 1),
)
def test_colour_symmetry_holds_per_game(decks: list[list[int]], elements: list[int], seed: int) -> None:
    deck_tensor = torch.tensor(decks)
    g = torch.tensor(elements[: len(decks)])
    assert first_mismatch(colour_symmetry(S5), deck_tensor, g, seed) is None


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_colour_symmetry_more_players(num_players: int) -> None:
    g = torch.tensor([7, 63, 119, 1])
    rules = HanabiRules(num_players)
    assert first_mismatch(colour_symmetry(S5, rules), random_decks(4, num_players), g, 0, rules=rules) is None


@pytest.mark.parametrize("group", [cyclic(5), dihedral(5)], ids=["C5", "D10"])
def test_colour_symmetry_sad_and_v0_belief(group: object) -> None:
    g = torch.arange(group.order)  # every element once
    decks = random_decks(group.order, 1)
    for seed, rules in enumerate((HanabiRules(sad="greedy_onehot"), HanabiRules(knowledge="v0_belief")), start=1):
        assert first_mismatch(colour_symmetry(group, rules), decks, g, seed, rules=rules) is None


@pytest.mark.parametrize(
    "rules",
    [
        HanabiRules(sad="greedy_last_action"),
        HanabiRules(observation_type="minimal"),
        HanabiRules(3, knowledge="v0_belief", sad="greedy_last_action"),
    ],
    ids=["greedy_last_action", "minimal", "3p_v0_greedy_last_action"],
)
def test_colour_symmetry_of_every_variant(rules: HanabiRules) -> None:
    g = torch.tensor([1, 57, 119, 30, 0, 88])
    symmetry = colour_symmetry(S5, rules)
    assert symmetry.observation_rep.dim == rules.obs_dim
    assert first_mismatch(symmetry, random_decks(6, 4), g, 3, rules=rules) is None


def test_a_wrong_convention_is_caught() -> None:
    """Sanity check of the check: rho(g)^-1 in place of rho(g) (the paper's code's mix-up) fails for 5-cycles."""
    c5 = cyclic(5)
    g = torch.tensor([1, 2, 3, 4])
    assert first_mismatch(colour_symmetry(c5), random_decks(4, 3), g, 0, inverse=True) is not None
    assert first_mismatch(colour_symmetry(c5), random_decks(4, 3), g, 0) is None
