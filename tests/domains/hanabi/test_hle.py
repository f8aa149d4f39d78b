"""The HLE adapter: dimensions, controlled dealing, observation contents, rewards, and argument checking."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch

pytest.importorskip("hanabi_learning_environment")

from eqc.dec_pomdp import DecPOMDP
from eqc.domains.hanabi.dealing import deck_log_probability, random_deck, relabel_deck, standard_deck
from eqc.domains.hanabi.hle import HanabiEnv
from eqc.domains.hanabi.rules import HanabiRules, observation_layout

pytestmark = pytest.mark.hanabi

PLAYERS = [2, 3, 4, 5]


def _random_move(env: HanabiEnv, generator: torch.Generator) -> int:
    legal = env.legal_move_uids()
    return legal[int(torch.randint(len(legal), (1,), generator=generator))]


def _section(obs: torch.Tensor, layout, name: str) -> torch.Tensor:
    return obs[..., layout.slice(name)].reshape(*obs.shape[:-1], *layout.block(name).shape)


@pytest.mark.parametrize("num_players", PLAYERS)
@pytest.mark.parametrize("observation_type", ["full", "minimal"])
def test_dimensions_and_protocol(hle_env, num_players: int, observation_type: str) -> None:
    env = hle_env(num_players, observation_type)
    assert isinstance(env, DecPOMDP)
    env.reset()
    h = 5 if num_players < 4 else 4
    assert env.num_moves == 2 * h + (num_players - 1) * 10
    obs = env.observations()
    assert obs.shape == (num_players, env.obs_dim) and obs.dtype == torch.float32
    assert set(obs.unique().tolist()) <= {0.0, 1.0}
    if (num_players, observation_type) == (2, "full"):
        assert env.obs_dim == 658
    if (num_players, observation_type) == (2, "minimal"):
        assert env.obs_dim == 308
    mask = env.legal_actions()
    assert mask.shape == (num_players, env.num_moves) and mask.dtype == torch.bool
    assert mask[0].nonzero().flatten().tolist() == env.legal_move_uids() and not mask[1:].any()


@pytest.mark.parametrize("num_players", PLAYERS)
def test_initial_hands_follow_deck_order(hle_env, num_players: int, generator: torch.Generator) -> None:
    """HLE deals player 0's whole hand first, then player 1, ...; deck[k] is the k-th card dealt."""
    env = hle_env(num_players)
    deck = random_deck(generator)
    env.reset(list(deck))
    h = env.hand_size
    assert env.hands() == [list(deck[p * h : (p + 1) * h]) for p in range(num_players)]
    assert env.cards_dealt == num_players * h and env.deck == deck


def test_replacement_card_goes_to_actor_last_slot(hle_env, generator: torch.Generator) -> None:
    env = hle_env(3)
    env.reset(random_deck(generator))
    for _ in range(40):
        if env.terminal:
            break
        actor, before, dealt = env.current_player, env.hands(), env.cards_dealt
        move = _random_move(env, generator)
        env.play(move)
        after = env.hands()
        if move < 2 * env.hand_size:  # discard or play: slot removed, next deck card appended
            slot = move % env.hand_size
            expected = before[actor][:slot] + before[actor][slot + 1 :]
            if dealt < len(env.deck):
                expected = [*expected, env.deck[dealt]]
            assert after[actor] == expected
        else:
            assert after == before


def test_same_deck_same_game(hle_env, generator: torch.Generator) -> None:
    """A game is a function of the deck and the moves (HLE's RNG plays no part)."""
    deck = random_deck(generator)
    env_a, env_b = hle_env(2), HanabiEnv(seed=99)
    env_a.reset(deck)
    env_b.reset(torch.tensor(deck))
    while not env_a.terminal:
        assert torch.equal(env_a.observations(), env_b.observations())
        move = _random_move(env_a, generator)
        assert env_a.play(move) == env_b.play(move)
    assert env_b.terminal and env_a.score == env_b.score


def test_sampled_decks_are_seeded() -> None:
    decks = [HanabiEnv(seed=s) for s in (5, 5, 6)]
    for env in decks:
        env.reset()
    assert decks[0].deck == decks[1].deck != decks[2].deck
    assert sorted(decks[0].deck) == standard_deck()
    assert decks[0].last_outcome == decks[0].deck
    assert decks[0].last_outcome_probability == pytest.approx(np.exp(deck_log_probability()))


@pytest.mark.parametrize("num_players", [2, 4])
def test_observation_sections_match_state(hle_env, num_players: int, generator: torch.Generator) -> None:
    """Decode the canonical vector with the declared layout and compare with HLE's true state."""
    env = hle_env(num_players)
    layout = observation_layout(env.rules)
    env.reset(random_deck(generator))
    steps = 0
    while not env.terminal and steps < 200:
        obs = env.observations()
        hands, fireworks = env.hands(), env.fireworks
        for p in range(num_players):
            partner = _section(obs[p], layout, "partner_hands")  # [P-1, h, C, R]
            for k in range(1, num_players):
                cards = hands[(p + k) % num_players]
                seen = partner[k - 1].flatten(1).nonzero().tolist()
                assert seen == [[i, c] for i, c in enumerate(cards)]
            missing = [float(len(hands[(p + k) % num_players]) < env.hand_size) for k in range(num_players)]
            assert _section(obs[p], layout, "missing_card").tolist() == missing
            assert int(_section(obs[p], layout, "deck").sum()) == len(env.deck) - env.cards_dealt
            fw = _section(obs[p], layout, "fireworks")
            assert [int(row.argmax()) + 1 if row.any() else 0 for row in fw] == fireworks
            assert int(_section(obs[p], layout, "information_tokens").sum()) == env.info_tokens
            assert int(_section(obs[p], layout, "life_tokens").sum()) == env.lives
        env.play(_random_move(env, generator))
        steps += 1
    assert env.terminal


@pytest.mark.parametrize("num_players", PLAYERS)
def test_rewards_score_and_bomb_out(hle_env, num_players: int, generator: torch.Generator) -> None:
    env = hle_env(num_players)
    bombed = 0
    for _ in range(6):
        env.reset()
        total, last = 0.0, 0.0
        while not env.terminal:
            fireworks_before = sum(env.fireworks)
            last = env.play(_random_move(env, generator))
            total += last
            assert 0 <= env.lives <= 3 and 0 <= env.info_tokens <= 8
        assert env.legal_move_uids() == [] and not env.legal_actions().any()
        assert env.bombed_out == (env.lives == 0)
        if env.bombed_out:
            bombed += 1
            assert env.score == 0 and total == 0.0 and last == -fireworks_before
        else:
            assert env.score == sum(env.fireworks) == total
    assert bombed > 0  # random play bombs out most of the time: the branch above was exercised


BAD_MOVES = [
    (0, ValueError, "not legal"),  # discarding with all 8 information tokens
    (20, ValueError, r"\[0, 19\]"),
    (-1, ValueError, r"\[0, 19\]"),
    (np.int64(5), TypeError, "int"),
    (True, TypeError, "int"),
    (5.0, TypeError, "int"),
    ("5", TypeError, "int"),
    (None, TypeError, "int"),
    (torch.tensor(5), TypeError, "int"),
]


@pytest.mark.parametrize(("move", "error", "match"), BAD_MOVES)
def test_bad_moves_raise_and_leave_state_intact(hle_env, move: object, error: type, match: str) -> None:
    env = hle_env(2)
    env.reset(standard_deck())
    before = env.observations()
    with pytest.raises(error, match=match):
        env.play(move)
    with pytest.raises(error, match=match):
        env.step([move, 0])
    assert torch.equal(env.observations(), before)
    env.play(5)  # the env still works
    assert env.current_player == 1


@pytest.mark.parametrize(
    ("actions", "error", "match"),
    [
        ([5], ValueError, "one entry per player"),
        ([5, 0, 0], ValueError, "one entry per player"),
        (5, TypeError, "list/tuple"),
        ({0: 5}, TypeError, "list/tuple"),
        ([5, None], TypeError, r"actions\[1\]"),
        ([5, False], TypeError, r"actions\[1\]"),
        (torch.tensor([5.0, 0.0]), TypeError, "integer dtype"),
        (torch.tensor([[5, 0]]), TypeError, "1-D"),
    ],
)
def test_bad_action_vectors(hle_env, actions: object, error: type, match: str) -> None:
    env = hle_env(2)
    env.reset(standard_deck())
    with pytest.raises(error, match=match):
        env.step(actions)
    assert env.step(torch.tensor([5, -1])) == 1.0  # integer tensor accepted, entry 1 ignored; plays R1
    assert env.fireworks == [1, 0, 0, 0, 0]


def test_errors_after_end_and_before_reset(hle_env) -> None:
    env = HanabiEnv()
    with pytest.raises(RuntimeError, match="reset"):
        env.observations()
    env = hle_env(2)
    env.reset(standard_deck())  # sorted deck: playing slot 0 repeatedly bombs out quickly
    while not env.terminal:
        env.play(env.legal_move_uids()[-1] if env.info_tokens else 5)
    with pytest.raises(ValueError, match="game is over"):
        env.play(5)
    with pytest.raises(ValueError, match="game is over"):
        env.step([5, 5])
    with pytest.raises(ValueError, match="outcome must be None"):
        env.reset(standard_deck())
        env.step([5, 0], outcome=standard_deck())


@pytest.mark.parametrize(
    ("deck", "error", "match"),
    [
        (standard_deck()[:-1], ValueError, "exactly 50"),
        ([*standard_deck(), 0], ValueError, "exactly 50"),
        ([4, *standard_deck()[1:]], ValueError, r"card 0 .* appears 2 times, expected 3"),
        ([25, *standard_deck()[1:]], ValueError, "not a card id"),
        ([-1, *standard_deck()[1:]], ValueError, "not a card id"),
        ([np.int64(0), *standard_deck()[1:]], TypeError, r"deck\[0\]"),
        ([True, *standard_deck()[1:]], TypeError, r"deck\[0\]"),
        (torch.tensor(standard_deck(), dtype=torch.float32), TypeError, "integers"),
        (torch.tensor(standard_deck()).reshape(5, 10), ValueError, "1-D"),
        ("RYGWB", TypeError, "deck must be"),
        (42, TypeError, "deck must be"),
    ],
)
def test_bad_decks_rejected(hle_env, deck: object, error: type, match: str) -> None:
    env = hle_env(2)
    with pytest.raises(error, match=match):
        env.reset(deck)
    env.reset(np.array(standard_deck()))  # a valid integer array is accepted
    assert env.cards_dealt == 10


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(rules=2), TypeError, r"rules must be a HanabiRules \(e\.g\. HanabiRules\(num_players=3\)"),
        (dict(rules={"num_players": 2}), TypeError, "rules must be a HanabiRules"),
        (dict(num_players=2), TypeError, "unexpected keyword argument 'num_players'"),
        (dict(sad=True), TypeError, "unexpected keyword argument 'sad'"),
        (dict(seed=-1), ValueError, "seed"),
        (dict(seed=1.5), TypeError, "seed"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        HanabiEnv(**kwargs)


def test_small_game_parameters(generator: torch.Generator) -> None:
    rules = HanabiRules(3, num_colours=3, num_ranks=2, hand_size=2, max_info_tokens=4, max_lives=1)
    env = HanabiEnv(rules)
    deck = random_deck(generator, 3, 2)
    assert len(deck) == 12
    env.reset(deck)
    assert env.hands() == [list(deck[0:2]), list(deck[2:4]), list(deck[4:6])]
    assert env.num_moves == 4 + 2 * 5 and env.obs_dim == observation_layout(rules).dim == rules.obs_dim
    while not env.terminal:
        env.play(_random_move(env, generator))
    with pytest.raises(ValueError, match="exactly 12"):
        env.reset(standard_deck())


def test_sad_block_shows_greedy_action_to_partners(generator: torch.Generator) -> None:
    env = HanabiEnv(HanabiRules(3, sad="greedy_onehot"))
    env.reset(random_deck(generator))
    base = env.canonical_dim
    assert env.obs_dim == base + env.num_moves
    assert not env.observations()[:, base:].any()
    legal = env.legal_move_uids()
    env.step([legal[-1], 0, 0], greedy_actions=[legal[0], 0, 0])
    sad = env.observations()[:, base:]
    assert not sad[0].any()
    assert sad[1].nonzero().flatten().tolist() == [legal[0]] == sad[2].nonzero().flatten().tolist()
    taken = env.legal_move_uids()[0]
    env.play(taken)  # no greedy action given: the move taken is shown
    sad = env.observations()[:, base:]
    assert not sad[1].any()
    assert sad[0].nonzero().flatten().tolist() == [taken] == sad[2].nonzero().flatten().tolist()
    illegal = [u for u in range(env.num_moves) if u not in env.legal_move_uids()]
    assert illegal
    with pytest.raises(ValueError, match="not legal"):
        env.step([0, 0, env.legal_move_uids()[0]], greedy_actions=[0, 0, illegal[0]])
    plain = HanabiEnv()
    plain.reset()
    with pytest.raises(ValueError, match=r"only accepted with a SAD observation \(rules.sad != 'off'\)"):
        plain.step([5, 0], greedy_actions=[5, 0])
    with pytest.raises(ValueError, match="only accepted with a SAD observation"):
        plain.play(5, greedy=5)


def test_relabel_outcome(hle_env, generator: torch.Generator) -> None:
    env = hle_env(2)
    deck = random_deck(generator)
    sigma = torch.tensor([1, 2, 3, 4, 0])
    relabelled = env.relabel_outcome(deck, {"colour": sigma})
    assert relabelled == relabel_deck(deck, sigma)
    assert all(b // 5 == int(sigma[a // 5]) and b % 5 == a % 5 for a, b in zip(deck, relabelled, strict=False))
    assert env.relabel_outcome(None, {"colour": sigma}) is None
    assert env.relabel_outcome(deck, {}) == deck
    with pytest.raises(TypeError, match="mapping"):
        env.relabel_outcome(deck, sigma)
    assert env.relabel_outcome(deck, {"colour": sigma}) == relabel_deck(deck, sigma)


def test_copies_are_independent_and_deleting_one_is_safe() -> None:
    """copy.copy/deepcopy copy HLE's C++ state (the old shallow copy shared it: deleting the copy
    made the original abort the process). Run in a subprocess so that an abort fails the test."""
    code = (
        "import copy, gc\n"
        "from eqc.domains.hanabi import HanabiEnv\n"
        "from eqc.domains.hanabi.dealing import standard_deck\n"
        "env = HanabiEnv()\n"
        "env.reset(standard_deck())\n"
        "for make in (copy.copy, copy.deepcopy):\n"
        "    twin = make(env)\n"
        "    assert (twin.observations() == env.observations()).all() and twin.deck == env.deck\n"
        "    twin.play(5)\n"
        "    assert twin.fireworks == [1, 0, 0, 0, 0] and env.fireworks == [0, 0, 0, 0, 0]\n"
        "    del twin; gc.collect()\n"
        "    env.observations(); env.legal_move_mask()\n"
        "twin = copy.copy(env)\n"
        "del env; gc.collect()\n"
        "twin.play(5); twin.observations()\n"
        "fresh = copy.copy(HanabiEnv())\n"
        "fresh.reset(); print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_pickling_is_refused_with_a_clear_message(hle_env) -> None:
    env = hle_env(2)
    env.reset(standard_deck())
    with pytest.raises(TypeError, match=r"cannot be pickled.*copy\.copy"):
        pickle.dumps(env)


def test_relabel_outcome_refuses_unknown_keys(hle_env) -> None:
    env = hle_env(2)
    deck = standard_deck()
    with pytest.raises(ValueError, match=r"unknown label set\(s\) \['color'\].*\['colour', 'slot'\]"):
        env.relabel_outcome(deck, {"color": torch.tensor([1, 2, 3, 4, 0])})
    with pytest.raises(ValueError, match="unknown"):
        env.relabel_outcome(None, {"rank": torch.arange(5)})


def test_rules_fix_the_sizes_under_their_names(hle_env) -> None:
    """The env's sizes and token counts carry ``HanabiRules``' names, and only those."""
    rules = HanabiRules(3, max_info_tokens=6, max_lives=2, sad="greedy_last_action", knowledge="v0_belief")
    env = HanabiEnv(rules)
    assert env.rules == rules and env.obs_dim == rules.obs_dim and env.num_moves == rules.num_moves == 30
    small = hle_env(3, "full", max_info_tokens=6, max_lives=2)
    assert small.rules == HanabiRules(3, max_info_tokens=6, max_lives=2)
    assert (small.num_moves, small.canonical_dim, small.max_info_tokens, small.max_lives) == (30, small.rules.canonical_dim, 6, 2)
    small.reset(standard_deck())
    assert small.info_tokens == 6 and small.legal_move_mask().nonzero().flatten().tolist() == small.legal_move_uids()
    assert small.cards_left == 50 - 15 and small.moves_made == 0
    for gone in ("legal_moves", "information_tokens", "num_actions", "hle_obs_dim", "max_information_tokens", "max_life_tokens"):
        assert not hasattr(small, gone), gone


def test_a_move_after_the_end_is_a_value_error_in_both_envs(hle_env) -> None:
    from eqc.domains.hanabi.batched import HanabiBatch

    env, batch = hle_env(2), HanabiBatch(1)
    env.reset(standard_deck())  # sorted deck: playing slot 0 bombs out quickly
    batch.reset(torch.tensor([standard_deck()]))
    while not env.terminal:
        env.play(5)
        batch.step(torch.tensor([5]))
    assert bool(batch.terminal[0])
    with pytest.raises(ValueError, match="over"):
        env.play(5)
    with pytest.raises(ValueError, match="over"):
        batch.step(torch.tensor([5]))
