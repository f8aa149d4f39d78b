"""The state of a batch of Hanabi games as dense tensors, and (re)dealing games from decks.

Every tensor has a leading batch dimension ``B``; ``P`` players, hand size ``h``. Tensors are
created once and then only updated in place, so their storage never moves (CUDA-graph friendly).

Hands hold card ids (:mod:`eqc.domains.hanabi.rules`) with slot 0 the oldest card, as HLE: a played or
discarded card is removed, later cards move one slot down and a drawn card goes to the last
slot; ``tables.empty`` (the number of card ids) fills the slots a hand no longer has once the deck
is out. Card knowledge is public: one 12-bit integer per (player, slot) as described in ``tables``
(HLE's ``CardKnowledge``: plausible colours and ranks, hinted flags), 0 for an empty slot. C is the
number of colours and D the deck's size (``rules.deck_size``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch

from eqc.domains.hanabi.batched.tables import HanabiTables

__all__ = ["BatchState", "new_state", "pad_decks", "restart", "shuffle_front", "shuffled_decks"]


@dataclass
class BatchState:
    """Tensors of a batch of games (long unless noted).

    deck uint8 [B, tables.padded_deck] card ids in dealing order in columns 0..D-1 (the columns
    after them pad rows to whole int64 words so that re-dealing copies words); dealt [B] cards dealt so far;
    hands [B, P, h] card ids; knowledge [B, P, h] 12-bit card knowledge;
    fireworks [B, C + 1] cards played per colour (column C is scratch for an empty slot);
    discard_code [B, C + 1] discards per colour as a mixed-radix code (``tables.discard_radix``; column C scratch);
    info, lives, current [B]; turns_left [B] HLE's turns_to_play (drops on each move made while
    the deck is empty; the game ends at 0);
    last_player [B] absolute seat of the last mover (-1: none); last_code [B] the
    observer-independent last-action code (see ``HanabiTables``; 0 while there is no last move);
    score [B] HLE's score (0 once all lives are lost); reward float [B] of the last step;
    terminal bool [B] the game is over (eqc's one word for it, as ``HanabiEnv.terminal``);
    moves_made [B] moves made in the current game;
    ended bool [B] the game ended on the last step (its move was the last);
    final_score [B] that game's final score where ``ended``, else -1;
    restarted bool [B] games re-dealt by the last step (auto_reset: equal to ``ended``);
    shuffle_draws bool [B] draws pick a uniform undealt card (lazy shuffle of pool decks, see
    ``rules.apply_moves``) instead of the next one in ``deck`` order.
    """

    deck: torch.Tensor
    dealt: torch.Tensor
    hands: torch.Tensor
    knowledge: torch.Tensor
    fireworks: torch.Tensor
    discard_code: torch.Tensor
    info: torch.Tensor
    lives: torch.Tensor
    current: torch.Tensor
    turns_left: torch.Tensor
    last_player: torch.Tensor
    last_code: torch.Tensor
    score: torch.Tensor
    reward: torch.Tensor
    terminal: torch.Tensor
    moves_made: torch.Tensor
    ended: torch.Tensor
    final_score: torch.Tensor
    restarted: torch.Tensor
    shuffle_draws: torch.Tensor

    def clone(self) -> BatchState:
        """A deep copy (for tests and search)."""
        return BatchState(**{f.name: getattr(self, f.name).clone() for f in fields(self)})


def new_state(num_envs: int, tables: HanabiTables) -> BatchState:
    """Allocate the tensors of ``num_envs`` finished placeholder games; ``restart`` deals real ones."""
    b, p, h, dev = num_envs, tables.num_players, tables.hand_size, tables.device

    def z(*shape: int, dtype: torch.dtype = torch.long) -> torch.Tensor:
        return torch.zeros(*shape, dtype=dtype, device=dev)

    return BatchState(
        deck=pad_decks(tables.initial_deck.repeat(b, 1), tables),
        dealt=z(b),
        hands=torch.full((b, p, h), tables.empty, dtype=torch.long, device=dev),
        knowledge=z(b, p, h),
        fireworks=z(b, tables.num_colours + 1),
        discard_code=z(b, tables.num_colours + 1),
        info=z(b),
        lives=z(b),
        current=z(b),
        turns_left=z(b),
        last_player=z(b) - 1,
        last_code=z(b),
        score=z(b),
        reward=z(b, dtype=torch.float32),
        terminal=torch.ones(b, dtype=torch.bool, device=dev),
        moves_made=z(b),
        ended=z(b, dtype=torch.bool),
        final_score=z(b) - 1,
        restarted=z(b, dtype=torch.bool),
        shuffle_draws=z(b, dtype=torch.bool),
    )


def restart(state: BatchState, tables: HanabiTables, mask: torch.Tensor, decks: torch.Tensor, shuffle_draws: bool) -> None:
    """Re-deal the games where ``mask`` (bool [B]) from ``decks`` (padded, see ``pad_decks``); others are untouched.

    A fresh game: hands dealt player by player from the deck's front (slot 0 first), all
    information tokens and lives, player 0 to act, no last action, no move made; later draws follow
    the deck (``shuffle_draws=False``) or pick uniformly among its undealt cards (``True``).
    ``reward``, ``ended``, ``final_score`` and ``restarted`` are the caller's (they describe the step).
    """
    s, t = state, tables
    b, p, h = mask.shape[0], t.num_players, t.hand_size
    m1, m2 = mask.view(b, 1), mask.view(b, 1, 1)
    words = s.deck.view(torch.int64)
    torch.where(m1, decks.view(torch.int64), words, out=words)
    torch.where(m2, decks[:, : p * h].long().view(b, p, h), s.hands, out=s.hands)
    s.knowledge.masked_fill_(m2, t.fresh)
    s.dealt.masked_fill_(mask, p * h)
    s.fireworks.masked_fill_(m1, 0)
    s.discard_code.masked_fill_(m1, 0)
    s.info.masked_fill_(mask, t.max_info)
    s.lives.masked_fill_(mask, t.max_lives)
    s.current.masked_fill_(mask, 0)
    s.turns_left.masked_fill_(mask, p)
    s.last_player.masked_fill_(mask, -1)
    s.last_code.masked_fill_(mask, 0)
    s.score.masked_fill_(mask, 0)
    s.terminal.masked_fill_(mask, False)
    s.moves_made.masked_fill_(mask, 0)
    s.shuffle_draws.masked_fill_(mask, shuffle_draws)


def pad_decks(decks: torch.Tensor, tables: HanabiTables) -> torch.Tensor:
    """Decks [N, D] of card ids as the state stores them: uint8 [N, tables.padded_deck], zeros after column D-1."""
    out = torch.zeros(decks.shape[0], tables.padded_deck, dtype=torch.uint8, device=decks.device)
    out[:, : tables.deck_size] = decks
    return out


def shuffled_decks(keys: torch.Tensor, tables: HanabiTables) -> torch.Tensor:
    """Padded decks (``pad_decks``), row ``n`` the tables' deck in the order that sorts ``keys[n]`` (uniform ``[N, D]``
    noise: uniformly shuffled decks)."""
    num, d = keys.shape
    return pad_decks(tables.initial_deck.index_select(0, keys.argsort(dim=1).view(-1)).view(num, d), tables)


def shuffle_front(decks: torch.Tensor, count: int, deck_size: int, noise: torch.Tensor) -> None:
    """Fisher-Yates steps 0..count-1 on every row of ``decks`` ([N, >= deck_size]; columns 0..deck_size-1), in place,
    step ``k`` of row ``n`` choosing by ``noise[n, k]`` (uniform ``[N, count]``).

    Afterwards ``decks[:, :count]`` is a uniform ordered sample of each row's cards, whatever the
    rows held before, and the other positions hold the rest of the row's cards.
    """
    steps = torch.arange(count, device=decks.device)
    chosen = steps + ((deck_size - steps) * noise).long().clamp(max=deck_size - 1 - steps)
    for k in range(count):
        j, column = chosen[:, k : k + 1], decks[:, k : k + 1]
        card = decks.gather(1, j)
        decks.scatter_(1, j, column.clone())
        column.copy_(card)
