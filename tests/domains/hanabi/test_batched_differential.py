"""Differential tests: ``HanabiBatch`` against HLE 0.0.4 (through eqc's ``HanabiEnv`` adapter).

Same decks, same moves -> bit-identical observations of every player, identical legal-move
masks, rewards, scores, lives, information tokens, fireworks, hands, current players and terminal
flags, at every step of every game, for a batch of games at different stages at once. Move choice
comes from three policies so that the games cover bomb-outs (``random``), deck exhaustion and the
final round (``cautious``) and completed fireworks with returned tokens (``cheat``, which sees the
true hands). Every deck shape HLE plays is covered (``SHAPES``: the presets and unequal shapes,
since JaxMARL's Hanabi mis-encoded hints whenever colours != ranks), in every observation variant.
"""

from __future__ import annotations

import dataclasses
import gc
import random
from collections.abc import Iterator, Sequence

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("hanabi_learning_environment")

from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.dealing import standard_deck
from eqc.domains.hanabi.hle import HanabiEnv
from eqc.domains.hanabi.rules import HanabiRules, card_counts, observation_layout

pytestmark = pytest.mark.hanabi

STYLES = ("random", "cautious", "cheat")
_ENVS: dict[HanabiRules, list[HanabiEnv]] = {}


@pytest.fixture(scope="module", autouse=True)
def _free_hle_envs() -> Iterator[None]:
    """Free the cached HLE envs while HLE's library is still loaded."""
    yield
    _ENVS.clear()
    gc.collect()


def hle_envs(rules: HanabiRules, count: int) -> list[HanabiEnv]:
    """``count`` HLE adapters for ``rules`` (cached per process; every use resets them)."""
    pool = _ENVS.setdefault(rules, [])
    while len(pool) < count:
        pool.append(HanabiEnv(rules))
    return pool[:count]


def choose(env: HanabiEnv, style: str, rng: random.Random) -> int:
    """A legal move uid of the acting player in ``env`` (HLE), by ``style``.

    random: uniform. cautious: discard or hint, never play while either is legal (games run the
    deck out). cheat: play a card known (from the true hand) to be playable, else like cautious
    but sometimes playing blind.
    """
    legal = env.legal_move_uids()
    h = env.hand_size
    if style == "random":
        return rng.choice(legal)
    if style == "cheat":
        hand = env.hands()[env.current_player]
        heights, ranks = env.fireworks, env.num_ranks
        playable = [h + i for i, card in enumerate(hand) if heights[card // ranks] == card % ranks]
        if playable and rng.random() < 0.9:
            return rng.choice(playable)
    discards = [u for u in legal if u < h]
    hints = [u for u in legal if u >= 2 * h]
    plays = [u for u in legal if h <= u < 2 * h]
    roll = rng.random()
    if discards and roll < 0.55:
        return rng.choice(discards)
    if hints and roll < 0.97:
        return rng.choice(hints)
    if style == "cautious" and (discards or hints):
        return rng.choice(discards or hints)
    return rng.choice(plays or legal)


def play_lockstep(
    decks: Sequence[Sequence[int]],
    styles: Sequence[str],
    rngs: Sequence[random.Random],
    num_players: int = 2,
    *,
    rules: HanabiRules | None = None,
) -> dict[str, int]:
    """Play ``len(decks)`` games in one ``HanabiBatch`` and in HLE (``HanabiEnv``, the same ``rules``);
    assert they agree at every step, observations of the rules' variant included.

    For the v0 belief the observations are also checked against an independent reference computed
    from HLE's canonical observations (``v0_reference``). Returns counts of how the games ended
    (for the coverage checks of the callers).
    """
    rules = HanabiRules(num_players) if rules is None else rules
    k, num_players = len(decks), rules.num_players
    envs = hle_envs(rules, k)
    twins = hle_envs(dataclasses.replace(rules, knowledge="canonical", sad="off"), k) if rules.knowledge == "v0_belief" else []
    sad = rules.sad != "off"
    batch = HanabiBatch(k, rules)
    batch.reset(torch.tensor([list(d) for d in decks]))
    for env, deck in zip(envs + twins, list(decks) * (2 if twins else 1), strict=False):
        env.reset(list(deck))
    for step in range(200):
        where = f"step {step}"
        expected = torch.stack([env.observations() for env in envs])
        got = batch.observations()
        assert got.shape == (k, num_players, rules.obs_dim), where
        if twins:
            reference = v0_reference(torch.stack([env.observations() for env in twins]), twins, batch)
            same = torch.equal(expected[..., : rules.canonical_dim], reference)
            assert same, f"{where}: HanabiEnv's v0 belief differs from the reference"
        if not torch.equal(got, expected):
            game, player, coord = (got != expected).nonzero()[0].tolist()
            raise AssertionError(
                f"{where}: game {game}, player {player}, coordinate {coord}: {got[game, player, coord]} != {expected[game, player, coord]}"
            )
        legal = torch.stack([env.legal_move_mask() for env in envs])
        assert torch.equal(batch.legal_move_mask(), legal), where
        assert batch.terminal.tolist() == [env.terminal for env in envs], where
        assert batch.score.tolist() == [env.score for env in envs], where
        assert batch.lives.tolist() == [env.lives for env in envs], where
        assert batch.info_tokens.tolist() == [env.info_tokens for env in envs], where
        assert batch.fireworks.tolist() == [env.fireworks for env in envs], where
        assert batch.cards_left.tolist() == [env.cards_left for env in envs], where
        assert batch.moves_made.tolist() == [env.moves_made for env in envs], where
        hands = [[[c for c in row if c != rules.num_card_ids] for row in game] for game in batch.state.hands.tolist()]
        assert hands == [env.hands() for env in envs], where
        running = [i for i, env in enumerate(envs) if not env.terminal]
        assert batch.current_player[running].tolist() == [envs[i].current_player for i in running], where
        if not running:
            break
        moves = torch.zeros(k, dtype=torch.long)
        greedy = torch.zeros(k, dtype=torch.long)
        expected_reward = torch.zeros(k)
        for i in running:
            env = envs[i]
            moves[i] = choose(env, styles[i], rngs[i])
            greedy[i] = choose(env, "random", rngs[i]) if sad else moves[i]
            actions = [-1] * num_players
            actions[env.current_player] = int(moves[i])
            greedy_actions = None
            if sad:
                greedy_actions = [-1] * num_players
                greedy_actions[env.current_player] = int(greedy[i])
            expected_reward[i] = env.step(actions, greedy_actions=greedy_actions)
            if twins:
                twins[i].step(actions)
        was_running = ~batch.terminal
        reward = batch.step(moves, greedy if sad else None)
        assert torch.equal(reward, expected_reward), where
        assert torch.equal(batch.reward, expected_reward), where
        ended = [bool(was_running[i]) and env.terminal for i, env in enumerate(envs)]
        assert batch.ended.tolist() == ended, where
        assert batch.final_score.tolist() == [env.score if e else -1 for env, e in zip(envs, ended, strict=False)], where
    else:
        raise AssertionError("games did not end within 200 steps")
    return {
        "bombed": sum(env.lives == 0 for env in envs),
        "deck_out": sum(env.lives > 0 and env.cards_dealt == rules.deck_size and env.score < rules.max_score for env in envs),
        "perfect": sum(env.score == rules.max_score for env in envs),
        "completed_colours": sum(sum(height == rules.num_ranks for height in env.fireworks) for env in envs),
    }


def v0_reference(canonical: torch.Tensor, envs: Sequence[HanabiEnv], batch: HanabiBatch) -> torch.Tensor:
    """OBL's v0 belief computed independently from HLE's canonical observations and HLE's state."""
    out = canonical.clone()
    lay, r = batch.tables.layout, batch.rules
    p, h, ranks, n = batch.num_players, batch.hand_size, r.num_ranks, r.num_card_ids
    copies = card_counts(ranks)
    for i, env in enumerate(envs):
        counts = torch.tensor(copies * r.num_colours, dtype=torch.float32)
        discards = out[i, 0, lay.discards : lay.discards + r.deck_size]
        start = 0
        for card in range(n):
            counts[card] -= discards[start : start + copies[card % ranks]].sum()
            start += copies[card % ranks]
        for colour, height in enumerate(env.fireworks):
            counts[colour * ranks : colour * ranks + height] -= 1
        for obs in range(p):
            for slot in range(p * h):
                at = lay.knowledge + slot * lay.knowledge_per_card
                weighted = out[i, obs, at : at + n] * counts
                total = weighted.sum()
                out[i, obs, at : at + n] = weighted / total if total > 0 else weighted
    return out


SHAPES = {
    "small": HanabiRules.preset("small"),
    "mini": HanabiRules.preset("mini"),
    "c5r2": HanabiRules(num_ranks=2, hand_size=4, max_info_tokens=6),
    "c5r3": HanabiRules(num_ranks=3),
    "c3r5": HanabiRules(num_colours=3, max_lives=2),
    "c1r5": HanabiRules(num_colours=1, hand_size=2, max_info_tokens=3, max_lives=1),
    "c4r1_3p": HanabiRules(3, num_colours=4, num_ranks=1, hand_size=2, max_info_tokens=2, max_lives=2),
    "c2r4_4p": HanabiRules(4, num_colours=2, num_ranks=4, hand_size=3, max_info_tokens=4),
}
"""Deck shapes besides the standard one: the presets, unequal shapes (either side larger), one
colour, one rank, fewer information tokens and lives, 3-4 players."""
VARIANTS = {
    "canonical": {},
    "v0_sad": {"knowledge": "v0_belief", "sad": "greedy_last_action"},
    "minimal_onehot": {"observation_type": "minimal", "sad": "greedy_onehot"},
}


def shape_decks(rules: HanabiRules, count: int, seed: int) -> list[list[int]]:
    """``count`` seeded shuffles of the deck of ``rules``."""
    rng = random.Random(seed)
    deck = standard_deck(rules.num_colours, rules.num_ranks)
    return [rng.sample(deck, len(deck)) for _ in range(count)]


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_deck_shape_matches_hle(shape: str, variant: str) -> None:
    """Each shape in each observation variant: bit-exact observations, legal moves, rewards and
    terminals; the canonical runs also reach bomb-outs and deck-outs."""
    rules = dataclasses.replace(SHAPES[shape], **VARIANTS[variant])
    styles = ["random"] * 4 + ["cautious", "cautious", "cheat", "cheat"]
    ends = play_lockstep(shape_decks(rules, 8, seed=len(shape)), styles, [random.Random(s) for s in range(8)], rules=rules)
    if variant == "canonical":
        assert ends["bombed"] >= 1 and ends["deck_out"] >= 1, ends


deck_strategy = st.permutations(standard_deck())
game_strategy = st.tuples(deck_strategy, st.sampled_from(STYLES), st.randoms(use_true_random=False))


@settings(max_examples=12, deadline=None)
@given(games=st.lists(game_strategy, min_size=1, max_size=4))
def test_two_player_batches_match_hle(games: list) -> None:
    decks, styles, rngs = zip(*games, strict=False)
    play_lockstep(decks, styles, rngs)


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_more_players_match_hle(num_players: int) -> None:
    gen = torch.Generator().manual_seed(num_players)
    decks = [torch.randperm(50, generator=gen) for _ in range(3)]
    decks = [[standard_deck()[int(i)] for i in order] for order in decks]
    play_lockstep(decks, STYLES, [random.Random(s) for s in range(3)], num_players=num_players)


def test_deck_exhaustion_and_completed_fireworks_match_hle() -> None:
    """Seeded games that surely reach the final round, complete fireworks and return tokens."""
    rng = random.Random(7)
    decks = [rng.sample(standard_deck(), 50) for _ in range(8)]
    ends = play_lockstep(decks, ["cautious"] * 4 + ["cheat"] * 4, [random.Random(s) for s in range(8)])
    assert ends["deck_out"] >= 2 and ends["completed_colours"] >= 2, ends


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("sad", ["greedy_onehot", "greedy_last_action"])
def test_sad_blocks_match_hle(num_players: int, sad: str) -> None:
    """Both SAD variants; greedy_last_action against HLE itself (HanabiEnv copies HLE's state,
    applies the greedy move and encodes the last-action section), greedy moves drawn apart from the moves made."""
    rng = random.Random(3)
    decks = [rng.sample(standard_deck(), 50) for _ in range(3)]
    play_lockstep(decks, STYLES, [random.Random(s) for s in range(3)], rules=HanabiRules(num_players, sad=sad))


@pytest.mark.parametrize("num_players", [2, 3])
def test_v0_belief_matches_hle_and_reference(num_players: int) -> None:
    rng = random.Random(5)
    decks = [rng.sample(standard_deck(), 50) for _ in range(3)]
    rules = HanabiRules(num_players, knowledge="v0_belief", sad="greedy_last_action" if num_players == 2 else "off")
    play_lockstep(decks, STYLES, [random.Random(s) for s in range(3)], rules=rules)


@pytest.mark.parametrize(
    "rules",
    [
        HanabiRules(2, observation_type="minimal"),
        HanabiRules(2, hand_size=3, max_info_tokens=4, max_lives=1),
        HanabiRules(3, hand_size=2, max_info_tokens=3, max_lives=2, knowledge="v0_belief"),
        HanabiRules(4, hand_size=5, max_lives=5, sad="greedy_last_action"),
    ],
    ids=["minimal", "2p_h3_i4_l1", "3p_h2_i3_l2_v0", "4p_h5_l5_sad"],
)
def test_non_standard_rules_match_hle(rules: HanabiRules) -> None:
    """The batched tables derive hand size, tokens and lives from HanabiRules."""
    rng = random.Random(9)
    decks = [rng.sample(standard_deck(), 50) for _ in range(4)]
    play_lockstep(decks, (*STYLES, "cautious"), [random.Random(s) for s in range(4)], rules=rules)


def test_greedy_last_action_equals_last_action_when_greedy_is_the_move() -> None:
    """When the greedy move is the move made, the SAD block repeats the last-action section (every player)."""
    rules = HanabiRules(3, sad="greedy_last_action")
    rng = random.Random(1)
    deck = rng.sample(standard_deck(), 50)
    batch, env = HanabiBatch(1, rules), hle_envs(rules, 1)[0]
    batch.reset(torch.tensor([deck]))
    env.reset(deck)
    start, width = observation_layout(rules).offset("last_action_player"), rules.sad_dim
    gen = torch.Generator().manual_seed(0)
    while not env.terminal:
        moves = torch.multinomial(batch.legal_move_mask().float(), 1, generator=gen).squeeze(1)
        batch.step(moves)
        env.play(int(moves[0]))
        for obs in (batch.observations(), env.observations()[None]):
            assert obs[..., start : start + width].any()
            assert torch.equal(obs[..., rules.canonical_dim :], obs[..., start : start + width])


def test_auto_reset_games_replay_exactly_in_hle() -> None:
    """Same-step reset: every game always has a legal move (plain ``torch.multinomial`` works); a game
    that ends is re-dealt in the same ``step``, which returns its ending move's reward and reports it in
    ``ended``/``final_score``; games dealt by auto_reset (lazily shuffled pool decks) are HLE games of
    their realised deck, replayed move by move."""
    k = 6
    rules = HanabiRules(2, sad="greedy_last_action")
    batch = HanabiBatch(k, rules, seed=11, auto_reset=True)
    batch.reset()
    gen = torch.Generator().manual_seed(0)
    current: list[list[tuple]] = [[] for _ in range(k)]
    finished: list[tuple[list[tuple], int]] = []
    for _ in range(300):
        obs, legal, decks = batch.observations(), batch.legal_move_mask(), batch.decks
        assert legal.any(dim=1).all() and not batch.terminal.any()
        moves = torch.multinomial(legal.float(), 1, generator=gen).squeeze(1)
        reward = batch.step(moves)
        assert torch.equal(batch.restarted, batch.ended) and torch.equal(reward, batch.reward)
        for i in range(k):
            current[i].append((obs[i], int(moves[i]), float(reward[i]), decks[i].tolist()))
            if batch.ended[i]:
                finished.append((current[i], int(batch.final_score[i])))
                current[i] = []
                assert batch.moves_made[i] == 0 and batch.score[i] == 0 and batch.cards_left[i] == 40
            else:
                assert int(batch.final_score[i]) == -1
    assert len(finished) >= 2 * k
    assert any(game[-1][2] < 0 for game, _ in finished)  # bomb-outs' ending rewards (minus the score) are reported
    env = hle_envs(rules, 1)[0]
    for game, final_score in finished:
        env.reset(game[-1][3])  # the deck as realised before the game's last move
        for obs, move, reward, _ in game:
            assert not env.terminal
            assert torch.equal(env.observations(), obs)
            assert env.play(move) == reward
        assert env.terminal and env.score == final_score


seeded_game = st.tuples(st.integers(0, 2**32 - 1), st.sampled_from(STYLES))


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(num_players=st.integers(2, 5), games=st.lists(seeded_game, min_size=20, max_size=40))
def test_thousands_of_games_match_hle(num_players: int, games: list) -> None:
    """About 3,000 games (100 batches of 20-40), 2-5 players, all three policies.

    Each game is drawn as a seed (deck and move choices) so that examples stay small for
    Hypothesis (40 explicit 50-card permutations would overflow its example buffer).
    """
    decks = [random.Random(seed).sample(standard_deck(), 50) for seed, _ in games]
    rngs = [random.Random(seed + 1) for seed, _ in games]
    play_lockstep(decks, [style for _, style in games], rngs, num_players=num_players)


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(SHAPES))
@settings(max_examples=40, deadline=None)
@given(variant=st.sampled_from(list(VARIANTS)), games=st.lists(seeded_game, min_size=20, max_size=40))
def test_thousands_of_games_of_every_shape_match_hle(shape: str, variant: str, games: list) -> None:
    """About 1,200 games per deck shape (40 batches of 20-40), every observation variant, all three policies."""
    rules = dataclasses.replace(SHAPES[shape], **VARIANTS[variant])
    deck = standard_deck(rules.num_colours, rules.num_ranks)
    decks = [random.Random(seed).sample(deck, len(deck)) for seed, _ in games]
    rngs = [random.Random(seed + 1) for seed, _ in games]
    play_lockstep(decks, [style for _, style in games], rngs, rules=rules)
