"""Dealing in ``HanabiBatch``: seeded generators only, uniform decks, the lazy shuffle of auto_reset."""

from __future__ import annotations

import itertools

import pytest
import torch

from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.batched.dynamics import apply_moves
from eqc.domains.hanabi.batched.state import new_state, pad_decks, restart, shuffle_front
from eqc.domains.hanabi.batched.tables import tables_for
from eqc.domains.hanabi.dealing import standard_deck
from eqc.domains.hanabi.rules import HanabiRules

CPU = torch.device("cpu")
EXPECTED = torch.tensor([3, 2, 2, 2, 1] * 5, dtype=torch.float64) / 50


def chi_square(cards: torch.Tensor) -> float:
    """Pearson's statistic of card ids ``cards`` (1-D) against the deck's card frequencies (24 dof)."""
    counts = torch.bincount(cards.long(), minlength=25).double()
    expected = EXPECTED * cards.numel()
    return float(((counts - expected) ** 2 / expected).sum())


def test_reset_samples_seeded_permutations() -> None:
    a, b, c = HanabiBatch(64, seed=5), HanabiBatch(64, seed=5), HanabiBatch(64, seed=6)
    state = torch.random.get_rng_state()
    for env in (a, b, c):
        env.reset()
    assert torch.equal(torch.random.get_rng_state(), state), "the global RNG must not be used"
    assert torch.equal(a.decks, b.decks) and not torch.equal(a.decks, c.decks)
    assert (a.decks.sort(dim=1).values == torch.tensor(standard_deck())).all()
    assert chi_square(a.decks.flatten()) < 70


def test_lazy_draw_reaches_every_undealt_position() -> None:
    """A shuffled draw at deck position k picks position k + floor(noise * (50 - k))."""
    t = tables_for(HanabiRules(), CPU)
    s = new_state(3, t)
    deck = pad_decks(torch.arange(50).remainder(25).repeat(3, 1), t)
    restart(s, t, torch.ones(3, dtype=torch.bool), deck, shuffle_draws=True)
    s.dealt.fill_(48)
    s.info.fill_(0)
    apply_moves(s, t, torch.zeros(3, dtype=torch.long), torch.ones(3, dtype=torch.bool), torch.tensor([0.0, 0.49, 0.9999]))
    assert s.hands[:, 0, 4].tolist() == [48 % 25, 48 % 25, 49 % 25]
    assert s.deck[2, 48:50].tolist() == [49 % 25, 48 % 25]


def test_auto_reset_deals_are_uniform_at_every_position() -> None:
    """Pool decks (front re-drawn by Fisher-Yates) plus lazy draws deal every position uniformly."""
    b = 4000
    t = tables_for(HanabiRules(), CPU)
    gen = torch.Generator().manual_seed(0)
    pool = pad_decks(t.initial_deck.repeat(b, 1), t)  # sorted: any bias would show
    shuffle_front(pool, 10, t.deck_size, torch.rand(b, 10, generator=gen))
    s = new_state(b, t)
    restart(s, t, torch.ones(b, dtype=torch.bool), pool, shuffle_draws=True)
    active = torch.ones(b, dtype=torch.bool)
    for _ in range(40):
        s.info.fill_(0)  # keep discards legal and the games running
        s.lives.fill_(3)
        s.terminal.fill_(False)
        apply_moves(s, t, torch.zeros(b, dtype=torch.long), active, torch.rand(b, generator=gen))
    assert (s.dealt == 50).all()
    assert (s.deck[:, :50].sort(dim=1).values == t.initial_deck).all()
    worst = max(chi_square(s.deck[:, k]) for k in range(50))
    assert worst < 70, worst  # 24 dof: the 99.99% quantile is about 57


def test_auto_reset_never_reuses_a_spare_deck() -> None:
    """Games that bomb out as fast as the rules allow still get fresh, uniform initial hands."""
    b = 300
    env = HanabiBatch(b, seed=2, auto_reset=True, check=False)
    env.reset()
    hands: list[list[torch.Tensor]] = [[] for _ in range(b)]
    for _ in range(120):
        env.step(torch.full((b,), 5))  # always play slot 0: bombs out within a few moves
        for i in env.restarted.nonzero().flatten().tolist():
            hands[i].append(env.decks[i, :10])
    firsts = [h for env_hands in hands for h in env_hands]
    assert len(firsts) > 5 * b
    for env_hands in hands:
        for x, y in itertools.pairwise(env_hands):
            assert not torch.equal(x, y)
    assert max(chi_square(torch.stack(firsts)[:, k]) for k in range(10)) < 70


def _random_legal(env: HanabiBatch, generator: torch.Generator) -> torch.Tensor:
    return torch.multinomial(env.legal_move_mask().float(), 1, generator=generator).squeeze(1)


def test_a_saved_batch_continues_move_for_move_in_another() -> None:
    """``state_dict``/``load_state_dict`` (with the deck generator's state beside): the games, the SAD block, the spare
    decks and their refresh go on exactly; a batch given only the generator (negative control) does not."""
    rules = HanabiRules(knowledge="v0_belief", sad="greedy_last_action")
    source = HanabiBatch(300, rules, seed=1, auto_reset=True, check=False)  # >= 256 games: the Fisher-Yates pool refresh
    moves = torch.Generator().manual_seed(0)
    source.reset()
    for _ in range(23):  # not a multiple of the refresh period
        source.step(_random_legal(source, moves))
    copy, control = (HanabiBatch(300, rules, seed=9, auto_reset=True, check=False) for _ in range(2))
    copy.load_state_dict(source.state_dict())
    control.reset()
    for env in (copy, control):
        env.generators[0].set_state(source.generators[0].get_state())  # type: ignore[union-attr]  # on the CPU
    ended = 0
    for _ in range(120):
        move = _random_legal(source, moves)
        assert torch.equal(copy.observations(), source.observations())
        assert torch.equal(copy.step(move), source.step(move))
        ended += int(source.ended.sum())
    assert ended > 300  # the games were re-dealt from the spare decks, many times
    assert not torch.equal(control.observations(), source.observations())


@pytest.mark.parametrize("games", [4, 300])  # < 256 games: the pool re-drawn whole; >= 256: its front by Fisher-Yates
def test_joined_batches_play_each_batch_games_bit_for_bit(games: int) -> None:
    """K batches joined into one ``K * B`` batch (each block dealt from its batch's generator) play, given the same moves,
    exactly the games the K batches play on their own, through re-deals and spare-deck refreshes; joined in the other
    order (negative control) the blocks differ."""
    rules = HanabiRules(knowledge="v0_belief", sad="greedy_last_action")
    alone, parts = ([HanabiBatch(games, rules, seed=seed, auto_reset=True, check=False) for seed in (3, 5)] for _ in range(2))
    for env in (*alone, *parts):
        env.reset()
    joined = HanabiBatch.joined(parts)
    moves = torch.Generator().manual_seed(0)
    ended = 0
    for _ in range(60):
        move = [_random_legal(env, moves) for env in alone]
        assert torch.equal(joined.observations(), torch.cat([env.observations() for env in alone]))
        assert torch.equal(joined.step(torch.cat(move)), torch.cat([env.step(m) for env, m in zip(alone, move, strict=True)]))
        ended += int(joined.ended.sum())
    assert ended > 2 * games  # re-dealt many times
    for k, env in enumerate(alone):
        state, want = joined.block_state_dict(k), env.state_dict()
        assert state.keys() == want.keys() and all(torch.equal(state[n], want[n]) for n in want)
    assert not torch.equal(joined.block_state_dict(0)["deck"], alone[1].state_dict()["deck"])


def test_joined_refuses_batches_that_differ() -> None:
    a, b = HanabiBatch(4, seed=1, auto_reset=True, check=False), HanabiBatch(8, seed=2, auto_reset=True, check=False)
    a.reset()
    b.reset()
    with pytest.raises(ValueError, match="share rules, num_envs"):
        HanabiBatch.joined([a, b])
    c = HanabiBatch(4, seed=3, auto_reset=True, check=False)
    c.reset()
    c.step(_random_legal(c, torch.Generator().manual_seed(0)))
    with pytest.raises(ValueError, match="same number of steps"):
        HanabiBatch.joined([a, c])


def test_load_state_dict_refuses_another_batch() -> None:
    source = HanabiBatch(8, seed=1)
    source.reset()
    other = HanabiBatch(4, seed=1)
    with pytest.raises(ValueError, match=r"state\['deck'\] must be a torch.uint8 tensor of shape \[4, \d+\] \(4 games of these rules\)"):
        other.load_state_dict(source.state_dict())
