"""Proof by test, against HLE itself, that the declared colour symmetry is a symmetry of Hanabi.

Two ways: eqc.verification.check_env_symmetry (the generic check any user runs), and a
Hanabi-specific differential test that also compares scores, lives, tokens, fireworks and the
true hands, and drives the SAD block with greedy actions that differ from the moves taken.
Negative tests: deliberately wrong declarations are reported with the wrong block's name.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("hanabi_learning_environment")

from eqc.dec_pomdp import Block, Layout, Symmetry
from eqc.domains.hanabi.dealing import relabel_deck
from eqc.domains.hanabi.hle import HanabiEnv
from eqc.domains.hanabi.rules import HanabiRules, action_layout, colour_labels, observation_layout, rank_labels
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.groups import PermutationRepresentation, cyclic, dihedral, symmetric
from eqc.verification import check_env_symmetry

pytestmark = pytest.mark.hanabi

PLAYERS = [2, 3, 4, 5]
S5 = symmetric(5)


def relabelled_game_mismatch(
    env_a: HanabiEnv, env_b: HanabiEnv, symmetry: Symmetry, perm: torch.Tensor, generator: torch.Generator
) -> str | None:
    """Play a random game in ``env_a`` and its colour-relabelled twin in ``env_b``; describe the first mismatch."""
    labels = symmetry.label_permutations(permutation=perm)
    sigma = labels["colour"].tolist()
    env_a.reset()
    env_b.reset(env_b.relabel_outcome(env_a.last_outcome, labels))
    moves = symmetry.action_rep.coordinate_map(perm).tolist()  # uid -> relabelled uid
    layout = symmetry.observation_layout
    num_ranks = env_a.num_ranks
    for step in range(1000):
        expected = symmetry.observation_rep.act_permutations(env_a.observations(), perm)
        got = env_b.observations()
        if not torch.equal(expected, got):
            player, coord = (expected != got).nonzero()[0].tolist()
            return f"step {step}, player {player}: observation {layout.describe(coord)}"
        legal_a = env_a.legal_move_uids()
        if sorted(moves[u] for u in legal_a) != env_b.legal_move_uids():
            return f"step {step}: legal moves {legal_a} map to {sorted(moves[u] for u in legal_a)}, got {env_b.legal_move_uids()}"
        for name in ("terminal", "current_player", "score", "lives", "info_tokens", "bombed_out", "cards_dealt"):
            if getattr(env_a, name) != getattr(env_b, name):
                return f"step {step}: {name} {getattr(env_a, name)} != {getattr(env_b, name)}"
        fireworks = [0] * len(sigma)
        for c, height in enumerate(env_a.fireworks):
            fireworks[sigma[c]] = height
        if fireworks != env_b.fireworks:
            return f"step {step}: fireworks {env_b.fireworks}, expected {fireworks}"
        if [list(relabel_deck(hand, sigma, num_ranks)) for hand in env_a.hands()] != env_b.hands():
            return f"step {step}: hands differ"
        if env_a.terminal:
            return None
        move, greedy = (legal_a[int(i)] for i in torch.randint(len(legal_a), (2,), generator=generator))
        kwargs_a = dict(greedy=greedy) if env_a.uses_sad else {}
        kwargs_b = dict(greedy=moves[greedy]) if env_b.uses_sad else {}
        reward_a, reward_b = env_a.play(move, **kwargs_a), env_b.play(moves[move], **kwargs_b)
        if reward_a != reward_b:
            return f"step {step}: reward {reward_a} != {reward_b}"
    return "game did not end within 1000 steps"


def _run_differential(num_players: int, games: int, seed: int, *, observation_type: str = "full", sad: str = "off") -> None:
    rules = HanabiRules(num_players, observation_type=observation_type, sad=sad)
    env_a, env_b = HanabiEnv(rules, seed=seed), HanabiEnv(rules)
    symmetry = colour_symmetry(S5, rules)
    generator = torch.Generator().manual_seed(seed)
    for game, perm in enumerate(S5.random_permutations(games, generator)):
        found = relabelled_game_mismatch(env_a, env_b, symmetry, perm, generator)
        assert found is None, f"{num_players} players, game {game}, element {perm.tolist()}: {found}"


# ----------------------------------------------------------------------------- layout vs HLE
@pytest.mark.parametrize("num_players", PLAYERS)
@pytest.mark.parametrize("observation_type", ["full", "minimal"])
@pytest.mark.parametrize("sad", ["off", "greedy_onehot"])
def test_layout_dims_equal_hle(hle_env, num_players: int, observation_type: str, sad: str) -> None:
    env = hle_env(num_players, observation_type, sad=sad)
    symmetry = colour_symmetry(S5, env.rules)
    assert symmetry.observation_rep.dim == symmetry.observation_layout.dim == env.obs_dim
    assert symmetry.action_rep.dim == env.num_moves


@pytest.mark.parametrize(
    ("num_players", "num_colours", "num_ranks", "hand_size", "info", "life"),
    [(2, 1, 1, 1, 1, 1), (2, 3, 4, 2, 5, 2), (3, 2, 5, 3, 8, 3), (4, 4, 3, 2, 3, 1), (5, 5, 2, 2, 8, 3)],
)
def test_layout_dims_equal_hle_for_other_games(num_players, num_colours, num_ranks, hand_size, info, life) -> None:
    shape = dict(num_colours=num_colours, num_ranks=num_ranks, hand_size=hand_size, max_info_tokens=info, max_lives=life)
    for observation_type in ("full", "minimal"):
        rules = HanabiRules(num_players, observation_type=observation_type, **shape)
        env = HanabiEnv(rules)
        assert observation_layout(rules).dim == env.obs_dim
        assert action_layout(rules).dim == env.num_moves


# ----------------------------------------------------------------------------- positive
@pytest.mark.parametrize("num_players", PLAYERS)
@pytest.mark.parametrize("observation_type", ["full", "minimal"])
def test_check_env_symmetry_accepts_colour_symmetry(hle_env, num_players: int, observation_type: str) -> None:
    env = hle_env(num_players, observation_type)
    symmetry = colour_symmetry(S5, env.rules)
    found = check_env_symmetry(env, symmetry, episodes=2, generator=torch.Generator().manual_seed(num_players))
    assert found is None, str(found)


@pytest.mark.parametrize("group", [cyclic(5), dihedral(5)], ids=["C5", "D10"])
def test_check_env_symmetry_subgroups_and_sad(hle_env, group) -> None:
    env = hle_env(2, "full", sad="greedy_onehot")
    found = check_env_symmetry(env, colour_symmetry(group, env.rules), episodes=2, generator=torch.Generator().manual_seed(7))
    assert found is None, str(found)


def test_check_env_symmetry_fewer_colours() -> None:
    rules = HanabiRules(3, num_colours=3, num_ranks=3, hand_size=3)
    found = check_env_symmetry(HanabiEnv(rules), colour_symmetry(symmetric(3), rules), episodes=3)
    assert found is None, str(found)


@pytest.mark.parametrize("num_players", PLAYERS)
def test_differential_relabelled_games(num_players: int) -> None:
    _run_differential(num_players, games=2, seed=10 + num_players)


@pytest.mark.parametrize("num_players", [2, 3])
def test_differential_relabelled_games_sad_greedy(num_players: int) -> None:
    _run_differential(num_players, games=2, seed=20 + num_players, sad="greedy_onehot")


# ----------------------------------------------------------------------------- negative
class _Tampered(Symmetry):
    """A declaration whose observation representation was replaced (to model a wrong declaration)."""

    def __init__(self, base: Symmetry, observation: PermutationRepresentation) -> None:
        super().__init__(base.group, base.acts_on, base.observation_layout, base.action_layout)
        self._tampered = observation

    @property
    def observation_rep(self) -> PermutationRepresentation:  # type: ignore[override]
        return self._tampered

    @property
    def observation(self) -> PermutationRepresentation:  # type: ignore[override]  # the old name
        return self._tampered


def _inverse_on_blocks(symmetry: Symmetry, prefix: str) -> _Tampered:
    """The paper's public-code bug: blocks whose name starts with ``prefix`` permuted by g^-1."""
    offsets = symmetry.observation_layout.offsets()
    spans = [slice(offsets[b.name], offsets[b.name] + b.size) for b in symmetry.observation_layout if b.name.startswith(prefix)]
    return _inverse_on(symmetry, spans)


def _inverse_on(symmetry: Symmetry, spans: list[slice]) -> _Tampered:
    """The coordinates in ``spans`` permuted by g^-1."""
    table = symmetry.observation_rep.coordinate_permutations.clone()
    inverse = symmetry.group.inverse
    for s in spans:
        table[:, s] = symmetry.observation_rep.coordinate_permutations[inverse][:, s]
    return _Tampered(symmetry, PermutationRepresentation.from_table(symmetry.group, table))


def _rotations(n: int) -> torch.Tensor:
    """Non-identity rotations of the colours (g != g^-1 for each)."""
    return torch.stack([torch.roll(torch.arange(5), k) for k in range(1, 5)] * (n // 4 + 1))[:n]


def test_hint_colour_by_inverse_is_caught(hle_env) -> None:
    env = hle_env(2)
    wrong = _inverse_on_blocks(colour_symmetry(cyclic(5)), "last_action_colour")
    found = check_env_symmetry(env, wrong, episodes=8, permutations=_rotations(8), generator=torch.Generator().manual_seed(3))
    assert found is not None and found.kind == "observation"
    assert found.block == "last_action_colour", str(found)


def test_knowledge_colour_hint_by_inverse_is_caught(hle_env) -> None:
    env = hle_env(2)
    base = colour_symmetry(cyclic(5))
    table = base.observation_rep.coordinate_permutations.clone()
    start = base.observation_layout.offset("knowledge") + 25  # player 0, slot 0: plausible (25), then colour hinted
    wrong = _inverse_on(base, [slice(start, start + 5)])
    found = check_env_symmetry(env, wrong, episodes=20, permutations=_rotations(20), generator=torch.Generator().manual_seed(4))
    assert found is not None and found.block == "knowledge", str(found)
    entry = "knowledge[axis0=0, slot=0, record=colour_hinted[colour="
    assert found.coordinate is not None and found.coordinate.startswith(entry), str(found)
    assert torch.equal(base.observation_rep.coordinate_permutations, table)  # the correct declaration was not touched


def _declaration_with(block: Block, num_players: int = 2) -> Symmetry:
    rules = HanabiRules(num_players)
    blocks = [block if b.name == block.name else b for b in observation_layout(rules)]
    return Symmetry(S5, colour_labels(), Layout(blocks), action_layout(rules))


def test_block_moved_when_it_should_be_fixed_is_caught(hle_env) -> None:
    """Revealed *rank* declared as if it were a colour."""
    wrong = _declaration_with(Block("last_action_rank", colour_labels(), encoding="one_hot"))
    found = check_env_symmetry(hle_env(2), wrong, episodes=5, generator=torch.Generator().manual_seed(5))
    assert found is not None and found.block == "last_action_rank", str(found)


def test_block_fixed_when_it_should_move_is_caught(hle_env) -> None:
    """Discards declared without their colour axis."""
    wrong = _declaration_with(Block("discards", 5, 10, encoding="binary"), num_players=3)
    found = check_env_symmetry(hle_env(3), wrong, episodes=5, generator=torch.Generator().manual_seed(6))
    assert found is not None and found.block == "discards", str(found)


def test_wrong_action_declaration_is_caught(hle_env) -> None:
    """Reveal-rank moves declared as colour moves: reported on the legal-move mask."""
    layout = action_layout(HanabiRules())
    blocks = [Block("reveal_rank", 1, colour_labels()) if b.name == "reveal_rank" else b for b in layout]
    wrong = Symmetry(S5, colour_labels(), observation_layout(HanabiRules()), Layout(blocks))
    found = check_env_symmetry(hle_env(2), wrong, episodes=5, generator=torch.Generator().manual_seed(8))
    assert found is not None and found.kind == "legal_actions" and found.block == "reveal_rank", str(found)


def test_differential_helper_catches_wrong_declaration() -> None:
    env_a, env_b = HanabiEnv(seed=1), HanabiEnv()
    wrong = _declaration_with(Block("fireworks", 5, rank_labels(), encoding="one_hot"))  # colour axis missing
    generator = torch.Generator().manual_seed(2)
    results = [relabelled_game_mismatch(env_a, env_b, wrong, torch.tensor([1, 2, 3, 4, 0]), generator) for _ in range(3)]
    assert any(r is not None and "fireworks" in r for r in results), results


# ----------------------------------------------------------------------------- slow: 1000+ games
@pytest.mark.slow
@pytest.mark.parametrize(("num_players", "games"), [(2, 300), (3, 250), (4, 250), (5, 250)])
def test_differential_many_games(num_players: int, games: int) -> None:
    _run_differential(num_players, games=games, seed=100 + num_players)


@pytest.mark.slow
@pytest.mark.parametrize("num_players", PLAYERS)
def test_differential_many_games_minimal_and_sad(num_players: int) -> None:
    _run_differential(num_players, games=40, seed=200 + num_players, observation_type="minimal")
    _run_differential(num_players, games=40, seed=300 + num_players, sad="greedy_onehot")


@pytest.mark.slow
@pytest.mark.parametrize("num_players", PLAYERS)
def test_check_env_symmetry_many_episodes(hle_env, num_players: int) -> None:
    generator = torch.Generator().manual_seed(num_players)
    found = check_env_symmetry(hle_env(num_players), colour_symmetry(S5, HanabiRules(num_players)), episodes=60, generator=generator)
    assert found is None, str(found)


# ----------------------------------------------------------------------------- other deck shapes
SHAPE_SYMMETRIES = {
    "small_S2": (HanabiRules.preset("small"), "S2"),
    "mini_S3_sad": (HanabiRules.preset("mini", sad="greedy_last_action"), "S3"),
    "mini_3p_D6_v0": (HanabiRules.preset("mini", num_players=3, knowledge="v0_belief"), "D6"),
    "c3r5_S3": (HanabiRules(num_colours=3, max_lives=2), "S3"),
    "c4r2_S4": (HanabiRules(num_colours=4, num_ranks=2, hand_size=4), "S4"),
}


@pytest.mark.parametrize("name", list(SHAPE_SYMMETRIES))
def test_check_env_symmetry_accepts_the_colour_symmetry_of_every_shape(name: str) -> None:
    """The declaration for c colours (named groups of ``colour_group``) holds in HLE for the presets and unequal shapes."""
    rules, group = SHAPE_SYMMETRIES[name]
    symmetry = colour_symmetry(colour_group(group), rules)
    assert symmetry.observation_rep.dim == rules.obs_dim and symmetry.action_rep.dim == rules.num_moves
    found = check_env_symmetry(HanabiEnv(rules), symmetry, episodes=4, generator=torch.Generator().manual_seed(len(name)))
    assert found is None, str(found)


def test_hint_colour_by_inverse_is_caught_with_three_colours() -> None:
    """The negative control on Mini-Hanabi: C3's rotations with hint colours permuted by g^-1 are caught."""
    rules = HanabiRules.preset("mini")
    wrong = _inverse_on_blocks(colour_symmetry(colour_group("C3"), rules), "last_action_colour")
    rotations = torch.tensor([[1, 2, 0], [2, 0, 1]] * 4)
    found = check_env_symmetry(HanabiEnv(rules), wrong, episodes=8, permutations=rotations, generator=torch.Generator().manual_seed(3))
    assert found is not None and found.block == "last_action_colour", str(found)


def test_a_group_of_another_degree_is_refused_naming_the_groups_of_the_game() -> None:
    message = r"group S5 acts on 5 colours but rules.num_colours is 3; .*\['C3', 'D6', 'S3', 'A3', 'C2', 'S2'\]"
    with pytest.raises(ValueError, match=message):
        colour_symmetry(colour_group("S5"), HanabiRules.preset("mini"))
    with pytest.raises(ValueError, match=r"colour group must be one of \['C5', 'D10'.*got 'D4'"):
        colour_group("D4")
