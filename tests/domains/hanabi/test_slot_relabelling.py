"""Hand slots as a label set: a slot relabelling of an observation is the observation of the state whose hands were
physically permuted, exactly, and it is not a symmetry of the game.

The state is permuted here by hand, independently of the layouts: the cards and card knowledge of every hand move
from slot i to slot sigma(i), and the last move's code (its slot, or the revealed-slot mask of a hint) and the SAD
block's move follow. Encoding that state with ``HanabiBatch`` must give ``rho_obs(sigma)`` of the original
observation for every player, bit for bit, in both knowledge encodings and every SAD variant, and its legal moves
``rho_act(sigma)`` of the original's. ``test_batched_differential`` ties ``HanabiBatch`` to HLE's encoder.
"""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.batched.tables import HanabiTables
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import colour_symmetry, label_relabelling
from eqc.groups import symmetric
from eqc.verification import check_env_symmetry

GAMES, STEPS = 64, 60


def _permute_code(code: torch.Tensor, t: HanabiTables, sigma: list[int]) -> torch.Tensor:
    """A last-action code (``HanabiTables``) with its slots moved by ``sigma``."""
    h, n = t.hand_size, t.empty
    out = code.clone()
    hint = code < t.num_hint_codes
    mask = code & ((1 << h) - 1)
    moved = sum(((mask >> i) & 1) << sigma[i] for i in range(h))
    out[hint] = ((code >> h << h) | moved)[hint]
    rest = code - t.num_hint_codes
    flag, card, uid = rest % 3, rest // 3 % (n + 1), rest // 3 // (n + 1)
    new_uid = uid - uid % h + torch.tensor(sigma)[uid.clamp(min=0) % h]
    out[~hint] = (t.num_hint_codes + (new_uid * (n + 1) + card) * 3 + flag)[~hint]
    return out


def _permute_uid(uid: torch.Tensor, h: int, sigma: list[int]) -> torch.Tensor:
    """A move uid with a discard or play slot moved by ``sigma``."""
    moved = uid - uid % h + torch.tensor(sigma)[uid % h]
    return torch.where(uid < 2 * h, moved, uid)


def physically_permuted(state: dict[str, torch.Tensor], t: HanabiTables, sad: str, sigma: list[int]) -> dict[str, torch.Tensor]:
    """``state`` (``HanabiBatch.state_dict``) with every hand's slot i moved to slot ``sigma[i]``."""
    inverse = torch.argsort(torch.tensor(sigma))
    out = dict(state)
    out["hands"], out["knowledge"] = state["hands"][..., inverse], state["knowledge"][..., inverse]
    out["last_code"] = _permute_code(state["last_code"], t, sigma)
    if sad == "greedy_last_action":
        out["sad_value"] = _permute_code(state["sad_value"], t, sigma)
    elif sad == "greedy_onehot":
        out["sad_value"] = _permute_uid(state["sad_value"], t.hand_size, sigma)
    return out


def _elements(h: int) -> list[int]:
    """Every element of S_h for h <= 3, else 12 spread over it (row indices)."""
    order = symmetric(h).order
    return list(range(order)) if order <= 6 else list(range(1, order, order // 12))[:12]


RULES = [
    HanabiRules.preset("mini"),
    HanabiRules.preset("mini", knowledge="v0_belief"),
    HanabiRules.preset("mini", sad="greedy_last_action"),
    HanabiRules(2),
    HanabiRules(2, knowledge="v0_belief", sad="greedy_last_action"),
    HanabiRules(2, sad="greedy_onehot"),
    HanabiRules(3, knowledge="v0_belief"),
    HanabiRules(4, sad="greedy_last_action"),
    HanabiRules.preset("small", num_players=2),
    HanabiRules(2, observation_type="minimal"),
]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.num_players}p-h{r.hand_size}-{r.knowledge}-{r.sad}-{r.observation_type}")
def test_slot_relabelling_is_the_physically_permuted_state(rules: HanabiRules) -> None:
    """Thousands of states of random games (ends of decks and finished games included) under every tested sigma."""
    relabelling = label_relabelling({"slot": symmetric(rules.hand_size)}, rules)
    rho_obs, rho_act = relabelling.observation_rep, relabelling.action_rep
    env, twin = HanabiBatch(GAMES, rules, seed=7, auto_reset=True), HanabiBatch(GAMES, rules, seed=8, auto_reset=True)
    env.reset()
    twin.reset()
    rng = torch.Generator().manual_seed(11)
    elements = _elements(rules.hand_size)
    compared = 0
    for step in range(STEPS):
        obs, legal = env.observations(), env.legal_move_mask()
        state = env.state_dict()
        for g in elements:
            sigma = relabelling.group.elements[g].tolist()
            twin.load_state_dict(physically_permuted(state, env.tables, rules.sad, sigma))
            expected = rho_obs.act(obs, g)
            got = twin.observations()
            if not torch.equal(expected, got):
                game, player, coord = (expected != got).nonzero()[0].tolist()
                pytest.fail(f"step {step}, sigma {sigma}, game {game}, player {player}: {relabelling.observation_layout.describe(coord)}")
            assert torch.equal(rho_act.act(legal, g), twin.legal_move_mask()), f"legal moves at step {step}, sigma {sigma}"
            compared += GAMES * rules.num_players
        moves = torch.multinomial(legal.float(), 1, generator=rng).squeeze(1)
        greedy = torch.multinomial(legal.float(), 1, generator=rng).squeeze(1) if rules.sad != "off" else None
        env.step(moves, greedy=greedy)
    assert compared >= GAMES * STEPS * len(elements) * 2


def test_slot_relabelling_moves_what_it_should() -> None:
    """Mini-Hanabi, slots swapped 0 <-> 1: the slot-labelled blocks move, the others (colours included) stay."""
    rules = HanabiRules.preset("mini")
    relabelling = label_relabelling({"slot": symmetric(3)}, rules)
    g = next(k for k, e in enumerate(relabelling.group.elements.tolist()) if e == [1, 0, 2])
    coords = relabelling.observation_rep.coordinate_permutations[g]
    layout = relabelling.observation_layout
    moved = {layout.block_at(int(i))[0].name for i in torch.nonzero(coords != torch.arange(layout.dim)).view(-1)}
    assert moved == {"partner_hands", "last_action_reveal_outcome", "last_action_position", "knowledge"}
    assert relabelling.action_rep.coordinate_permutations[g].tolist()[:6] == [1, 0, 2, 4, 3, 5]


def test_colour_and_slot_relabelling_is_a_direct_product() -> None:
    """Colour S3 x slot S3 (36 elements): its colour-only elements act as the colour symmetry does."""
    rules = HanabiRules.preset("mini")
    both = label_relabelling({"colour": symmetric(3), "slot": symmetric(3)}, rules)
    colours = colour_symmetry(symmetric(3), rules)
    assert both.group.order == 36 and [lab.name for lab in both.acts_on] == ["colour", "slot"]
    for k, sigma in enumerate(colours.group.elements.tolist()):
        g = both.group.elements.tolist().index([*sigma, 3, 4, 5])
        assert torch.equal(both.observation_rep.coordinate_permutations[g], colours.observation_rep.coordinate_permutations[k])
        assert torch.equal(both.action_rep.coordinate_permutations[g], colours.action_rep.coordinate_permutations[k])


@pytest.mark.parametrize(("groups", "message"), [
    ({"slot": symmetric(5)}, "acts on 5 points but the game has 3 slots"),
    ({"suit": symmetric(3)}, "unknown label set 'suit'"),
    ({}, "non-empty mapping"),
])
def test_label_relabelling_refuses_bad_input(groups: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        label_relabelling(groups, HanabiRules.preset("mini"))


@pytest.mark.parametrize("num_players", [2, 3])
def test_slot_relabelling_is_not_a_symmetry_of_the_game(hle_env, num_players: int) -> None:
    """Slot order is card age: after the first play or discard the relabelled game departs; the check names where."""
    env = hle_env(num_players)
    relabelling = label_relabelling({"slot": symmetric(env.rules.hand_size)}, env.rules)
    swap = torch.tensor([[1, 0, 2, 3, 4][: env.rules.hand_size]] * 4)
    found = check_env_symmetry(env, relabelling, episodes=4, permutations=swap, generator=torch.Generator().manual_seed(2))
    assert found is not None and found.kind == "observation", str(found)
    assert found.step >= 1 and found.block in {"partner_hands", "knowledge", "last_action_position"}, str(found)
    assert f"step {found.step}" in str(found) and repr(found.block) in str(found)
