"""``HanabiBatch``'s API contract: argument checks, the unchecked fast path, finished games."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.dealing import standard_deck
from eqc.domains.hanabi.rules import HanabiRules


def decks(count: int, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    cards = torch.tensor(standard_deck())
    return torch.stack([cards[torch.randperm(50, generator=gen)] for _ in range(count)])


def test_constructor_checks() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        HanabiBatch(0)
    with pytest.raises(TypeError, match="num_envs"):
        HanabiBatch(2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="auto_reset"):
        HanabiBatch(2, auto_reset=1)  # type: ignore[arg-type]


def test_calls_before_reset() -> None:
    env = HanabiBatch(2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(torch.zeros(2, dtype=torch.long))
    with pytest.raises(RuntimeError, match="reset"):
        env.observations()


def test_deck_checks_name_the_argument_and_the_games() -> None:
    env = HanabiBatch(3)
    good = decks(3)
    with pytest.raises(TypeError, match="decks"):
        env.reset(good.tolist())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"decks.*integer"):
        env.reset(good.float())
    with pytest.raises(ValueError, match=r"decks must have shape \[3, 50\]"):
        env.reset(good[:, :49])
    with pytest.raises(ValueError, match="decks is on device meta"):
        env.reset(good.to("meta"))
    bad = good.clone()
    bad[1, 0] = 25
    with pytest.raises(ValueError, match=r"outside .* games 1"):
        env.reset(bad)
    bad = good.clone()
    bad[2] = torch.tensor(standard_deck())
    bad[2, 0] = 24  # now two copies of the single blue 5 and only two red 1s
    with pytest.raises(ValueError, match=r"permutations of the 50-card deck; games 2 .*card 0 appears 2 times, expected 3"):
        env.reset(bad)


def test_move_checks_name_the_argument_and_the_games() -> None:
    env = HanabiBatch(3)
    env.reset(decks(3))
    with pytest.raises(TypeError, match="moves"):
        env.step([15, 15, 15])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"moves.*integer"):
        env.step(torch.full((3,), 15.0))
    with pytest.raises(ValueError, match=r"moves must have shape \[3\]"):
        env.step(torch.full((3, 1), 15))
    with pytest.raises(ValueError, match="move uids in \\[0, 20\\); games 1"):
        env.step(torch.tensor([15, 20, 15]))
    with pytest.raises(ValueError, match="games 0"):
        env.step(torch.tensor([-1, 15, 15]))
    # Discarding with 8 information tokens is illegal in HLE.
    with pytest.raises(ValueError, match="illegal moves in games 2: moves\\[2\\] = 0"):
        env.step(torch.tensor([5, 5, 0]))
    with pytest.raises(ValueError, match="greedy"):
        env.step(torch.tensor([5, 5, 5]), torch.tensor([5, 5, 5]))
    with pytest.raises(ValueError, match="moves is on device meta"):
        env.step(torch.tensor([5, 5, 5], device="meta"))
    with pytest.raises(TypeError, match="out"):
        env.observations(torch.empty(3, 2, 658, dtype=torch.float64))
    with pytest.raises(ValueError, match="out"):
        env.observations(torch.empty(3, 2, 657))
    env.step(torch.tensor([5, 6, 7], dtype=torch.int32))  # any integer dtype is accepted


def test_sad_greedy_checks() -> None:
    env = HanabiBatch(2, HanabiRules(sad="greedy_onehot"))
    env.reset(decks(2))
    with pytest.raises(ValueError, match="illegal moves in games 1: greedy\\[1\\] = 0"):
        env.step(torch.tensor([5, 5]), torch.tensor([5, 0]))
    env.step(torch.tensor([5, 5]), torch.tensor([10 + int(decks(2)[0, 5]) // 5, 5]))


def play_until_done(env: HanabiBatch, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    while not bool(env.terminal.all()):
        legal = env.legal_move_mask()
        env.step((torch.rand(legal.shape, generator=gen) * legal).argmax(dim=1))


def test_finished_games_keep_their_final_state() -> None:
    """Without auto_reset a finished game's entries of ``moves`` are ignored while other games run;
    a step when every game is over is a ValueError, as a move after the end is in HanabiEnv."""
    env = HanabiBatch(4, seed=3)
    env.reset()
    gen = torch.Generator().manual_seed(0)
    while not bool(env.terminal.any()):
        legal = env.legal_move_mask()
        env.step((torch.rand(legal.shape, generator=gen) * legal).argmax(dim=1))
    over = int(env.terminal.nonzero()[0, 0])
    assert env.ended[over] and int(env.final_score[over]) == int(env.score[over])
    obs, state = env.observations()[over], env.state.clone()
    assert not env.legal_move_mask()[over].any()
    legal = env.legal_move_mask()
    moves = (torch.rand(legal.shape, generator=gen) * legal).argmax(dim=1)
    moves[over] = 19  # ignored: that game is over
    reward = env.step(moves)
    assert reward[over] == 0 and not env.ended[over] and env.final_score[over] == -1 and not env.restarted.any()
    assert torch.equal(env.observations()[over], obs)
    for k in ("hands", "knowledge", "deck", "score", "lives", "last_code", "moves_made"):
        assert torch.equal(getattr(env.state, k)[over], getattr(state, k)[over]), k
    play_until_done(env, 1)
    state = env.state.clone()
    with pytest.raises(ValueError, match="every game is over"):
        env.step(torch.tensor([0, 19, 7, 12]))
    assert all(torch.equal(getattr(env.state, k), getattr(state, k)) for k in ("hands", "score", "terminal", "moves_made"))


def test_status_tensors_are_copies() -> None:
    env = HanabiBatch(2)
    env.reset()
    for name in ("score", "lives", "info_tokens", "current_player", "moves_made", "cards_left", "final_score", "fireworks"):
        getattr(env, name).add_(5)
    for name in ("terminal", "ended", "restarted"):
        getattr(env, name).fill_(True)
    assert env.score.tolist() == [0, 0] and env.terminal.tolist() == [False, False] and env.cards_left.tolist() == [40, 40]
    assert env.moves_made.tolist() == [0, 0] and env.final_score.tolist() == [-1, -1] and not env.ended.any()


def test_fast_path_equals_checked_path() -> None:
    checked, fast = HanabiBatch(16, seed=9, auto_reset=True), HanabiBatch(16, seed=9, auto_reset=True, check=False)
    checked.reset()
    fast.reset()
    gen = torch.Generator().manual_seed(1)
    for _ in range(120):
        legal = checked.legal_move_mask()
        assert torch.equal(legal, fast.legal_move_mask())
        assert torch.equal(checked.observations(), fast.observations())
        moves = (torch.rand(legal.shape, generator=gen) * legal).argmax(dim=1)
        assert torch.equal(checked.step(moves), fast.step(moves))
        assert torch.equal(checked.final_score, fast.final_score) and torch.equal(checked.ended, fast.ended)
        assert torch.equal(checked.state.deck, fast.state.deck)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"rules": HanabiRules(sad="greedy_onehot")},
        {"rules": HanabiRules(knowledge="v0_belief")},
        {"rules": HanabiRules(4)},
        {"rules": HanabiRules(3, sad="greedy_last_action", observation_type="minimal")},
    ],
    ids=str,
)
def test_fast_path_never_reads_tensor_values(kwargs: dict) -> None:
    """On the meta device tensors have no values, so any host read or data-dependent branch would fail."""
    b = 300  # large enough for the vectorised pool refresh
    env = HanabiBatch(b, device="meta", check=False, auto_reset=True, **kwargs)
    env.reset()
    moves = torch.zeros(b, dtype=torch.long, device="meta")
    for _ in range(6):
        obs = env.observations()
        env.legal_move_mask()
        env.step(moves, moves if env.uses_sad else None)
    assert obs.shape == (b, env.num_players, env.obs_dim) and obs.device.type == "meta"


def test_legal_move_mask_out_buffer_is_validated() -> None:
    env = HanabiBatch(2, seed=0)
    env.reset()
    with pytest.raises(TypeError, match="bool"):
        env.legal_move_mask(torch.empty(2, 20))
    with pytest.raises(ValueError, match="shape"):
        env.legal_move_mask(torch.empty(2, 7, dtype=torch.bool))
    buf = torch.empty(2, 20, dtype=torch.bool)
    assert env.legal_move_mask(buf) is buf and torch.equal(buf, env.legal_move_mask())


def test_one_name_per_idea() -> None:
    """The game is ``rules``; the end of a game is ``terminal``; the legal moves are ``legal_move_mask``."""
    env = HanabiBatch(3, HanabiRules(3, sad="greedy_onehot", knowledge="v0_belief"), "cpu", 5)
    env.reset()
    assert not env.terminal.any() and torch.equal(env.terminal, env.state.terminal)
    for gone in ("done", "legal_moves", "deck_size"):
        assert not hasattr(env, gone), gone
    assert not hasattr(env.state, "done") and env.rules.deck_size == 50  # the full deck; cards left is cards_left


def test_huge_batches_are_refused_before_allocating() -> None:
    with pytest.raises(ValueError, match=r"num_envs = 1000000000000000 needs about .* GiB"):
        HanabiBatch(10**15)


def test_bad_rules_are_refused() -> None:
    with pytest.raises(TypeError, match="rules must be a HanabiRules"):
        HanabiBatch(2, "2p")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"rules must be a HanabiRules \(e\.g\. HanabiRules\(num_players=3\)"):
        HanabiBatch(3, 3, "cpu", 5)  # type: ignore[arg-type]  # players where the rules go
    with pytest.raises(TypeError, match="unexpected keyword argument 'sad'"):
        HanabiBatch(2, HanabiRules(), sad=True)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="device"):
        HanabiBatch(2, device="gpu")


def test_decks_are_checked_against_the_deck_of_the_rules() -> None:
    """Mini-Hanabi's deck: 18 cards, card ids 0..8 (colour * 3 + rank)."""
    env = HanabiBatch(2, HanabiRules.preset("mini"))
    deck = torch.tensor(standard_deck(3, 3))
    env.reset(torch.stack([deck, deck.flip(0)]))
    assert env.decks.shape == (2, 18) and env.cards_left.tolist() == [12, 12] and env.fireworks.shape == (2, 3)
    with pytest.raises(ValueError, match=r"decks must have shape \[2, 18\]"):
        env.reset(torch.zeros(2, 50, dtype=torch.long))
    bad = torch.stack([deck, deck]).clone()
    bad[1, 0] = 9
    with pytest.raises(ValueError, match=r"card ids outside \[0, 9\) in games 1"):
        env.reset(bad)
    bad[1, 0] = 1
    with pytest.raises(ValueError, match="permutations of the 18-card deck; games 1 are not"):
        env.reset(bad)
