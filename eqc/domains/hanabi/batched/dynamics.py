"""Hanabi's rules on a batch of games, exactly as HLE 0.0.4 applies them.

``apply_moves`` plays one move per active game, ``legal_moves`` computes HLE's legal-move
mask and ``last_action_codes`` the last-action code a move would leave (for SAD). All are
branch-free tensor code: no Python loop over games, no host-device synchronisation, so they can
run under torch.compile/CUDA graphs. They trust their input (validation lives in ``checks``).

HLE's rules, as implemented here: a play scores when the card's rank equals its colour's firework
height, else costs a life and goes to the discard pile; completing a firework (its highest rank) returns an
information token when fewer than the maximum are held; a discard (legal only below it) returns one; a
hint (legal only with a token, and only when some card of the target matches) costs one and
updates the target's card knowledge: matching cards keep only the hinted colour/rank and get the
hinted flag, the target's other cards lose it (negative information). After a play or discard the
actor draws the next card of the deck, if any. HLE's ``turns_to_play`` starts at P and drops by
one on every move made while the deck is empty; the game ends when all lives are lost, all
fireworks are complete, or ``turns_to_play`` reaches 0. The score is the fireworks total, 0 once
all lives are lost; the reward is the change of the score (losing the last life gives minus it).
"""

from __future__ import annotations

import torch

from eqc.domains.hanabi.batched.state import BatchState
from eqc.domains.hanabi.batched.tables import (
    AND_MATCH,
    AND_OTHER,
    COLOUR,
    DISCARD,
    HINT_BIT,
    KIND,
    LAST_CODE,
    OFFSET,
    OR_MATCH,
    PLAY,
    RADIX,
    RANK,
    REVEAL_COLOUR,
    SLOT,
    HanabiTables,
)

__all__ = ["apply_moves", "last_action_codes", "legal_moves"]


def apply_moves(
    state: BatchState, tables: HanabiTables, moves: torch.Tensor, active: torch.Tensor, noise: torch.Tensor | None = None
) -> None:
    """Apply move uid ``moves[b]`` (long [B]) of the acting player where ``active`` (bool [B]), in place.

    Inactive games (finished, or just re-dealt) keep their state; ``terminal``, ``score`` and ``reward``
    are recomputed for every game (reward 0 where nothing moved). ``noise`` (float [B] in [0, 1))
    drives the lazy shuffle of games with ``state.shuffle_draws`` set: their draw takes a uniformly
    chosen card among the deck's undealt positions (a Fisher-Yates step), so a deck whose first
    P*h cards are a uniform sample yields uniformly shuffled games. Without ``noise`` every game
    draws ``deck[dealt]``.

    Kept as one function (over 60 lines): one batched move, read top-down step by step as its comments mark.
    """
    s, t = state, tables
    b, p, h = moves.shape[0], t.num_players, t.hand_size
    info = t.move_info_rows.index_select(1, moves)  # [8, B]: one contiguous row per field
    kind = info[KIND]
    is_play = (kind == PLAY) & active
    is_discard = (kind == DISCARD) & active
    removes = is_play | is_discard
    is_hint = (kind >= REVEAL_COLOUR) & active
    current = s.current

    # The card played or discarded (empty for hints and inactive games).
    actor_row = current.view(b, 1, 1).expand(b, 1, h)
    hand = s.hands.gather(1, actor_row).view(b, h)
    slot = torch.where(removes, info[SLOT], h)
    card = torch.where(removes, hand.gather(1, slot.clamp(max=h - 1).view(b, 1)).view(b), t.empty)
    card_info = t.card_info_rows.index_select(1, card)
    colour = card_info[COLOUR].view(b, 1)
    rank = card_info[RANK]
    scored = is_play & (s.fireworks.gather(1, colour).view(b) == rank)
    failed = is_play & ~scored
    token = scored & (rank == t.num_ranks - 1) & (s.info < t.max_info)
    s.fireworks.scatter_add_(1, colour, scored.long().view(b, 1))
    s.discard_code.scatter_add_(1, colour, (card_info[RADIX] * (is_discard | failed)).view(b, 1))
    s.info.add_(is_discard.long() + token.long() - is_hint.long())
    s.lives.sub_(failed.long())

    # HLE decrements turns_to_play on every move made while the deck is already empty.
    d = t.deck_size
    deck_out = s.dealt >= d
    s.turns_left.sub_((active & deck_out).long())
    draws = removes & ~deck_out
    position = s.dealt.clamp(max=d - 1).view(b, 1)
    if noise is None:
        top = s.deck.gather(1, position).view(b)
    else:
        # Swap deck[dealt] with a uniform undealt position (itself where not shuffled).
        spread = ((d - position) * (noise * (draws & s.shuffle_draws)).view(b, 1)).long()
        chosen = position + spread.clamp(max=d - 1 - position)
        top = s.deck.gather(1, chosen)
        s.deck.scatter_(1, chosen, s.deck.gather(1, position))
        s.deck.scatter_(1, position, top)
        top = top.view(b)
    s.dealt.add_(draws.long())

    # The actor's hand loses the card (shift table row ``slot``; row h is the identity) and the
    # drawn card, or an empty slot, takes the last slot with fresh knowledge.
    order = t.shift.index_select(0, slot)
    hand = hand.gather(1, order)
    knowledge = s.knowledge.gather(1, actor_row).view(b, h).gather(1, order)
    hand[:, h - 1] = torch.where(draws, top, torch.where(removes, t.empty, hand[:, h - 1]))  # not out=: a column is not contiguous
    knowledge[:, h - 1] = torch.where(removes, draws.long() * t.fresh, knowledge[:, h - 1])
    s.hands.scatter_(1, actor_row, hand.view(b, 1, h))
    s.knowledge.scatter_(1, actor_row, knowledge.view(b, 1, h))

    # Hints: matching cards keep only the hinted value (and get its flag); the rest lose it.
    target = current + info[OFFSET]
    target = torch.where(target >= p, target - p, target)
    target_row = target.view(b, 1, 1).expand(b, 1, h)
    hand = s.hands.gather(1, target_row).view(b, h)
    knowledge = s.knowledge.gather(1, target_row).view(b, h)
    hint_bit = info[HINT_BIT] * is_hint.long()
    match = (t.card_bits.index_select(0, hand.view(-1)).view(b, h) & hint_bit.view(b, 1)) != 0
    kept = knowledge & torch.where(is_hint, info[AND_OTHER], -1).view(b, 1)
    knowledge = torch.where(match, (knowledge & info[AND_MATCH].view(b, 1)) | info[OR_MATCH].view(b, 1), kept)
    s.knowledge.scatter_(1, target_row, knowledge.view(b, 1, h))

    # Last action: observer-independent code (see HanabiTables) and the absolute actor.
    revealed = (match.long() * t.slot_bits).sum(dim=1)
    detail = torch.where(is_hint, revealed, card * 3 + scored.long() + token.long())
    torch.where(active, info[LAST_CODE] + detail, s.last_code, out=s.last_code)
    torch.where(active, current, s.last_player, out=s.last_player)
    following = current + 1
    torch.where(active & (following < p), following, torch.where(active, 0, current), out=s.current)

    total = s.fireworks[:, : t.num_colours].sum(dim=1)
    score = torch.where(s.lives > 0, total, 0)
    torch.sub(score, s.score, out=s.reward)
    s.score.copy_(score)
    s.moves_made.add_(active.long())
    torch.logical_or((s.lives <= 0) | (total >= t.num_cards), s.turns_left <= 0, out=s.terminal)


def legal_moves(state: BatchState, tables: HanabiTables, out: torch.Tensor) -> torch.Tensor:
    """Write HLE's legal-move mask of the acting player into ``out`` (bool [B, M]) and return it.

    Finished games get an all-False row (no player is to act).
    """
    s, t = state, tables
    b, p, h = s.current.shape[0], t.num_players, t.hand_size
    actor_hand = s.hands.gather(1, s.current.view(b, 1, 1).expand(b, 1, h)).view(b, h)
    in_hand = (actor_hand != t.empty).sum(dim=1)
    row = torch.where(s.terminal, 2 * (h + 1), 2 * in_hand + (s.info < t.max_info).long())
    play_discard = t.play_discard_rows.index_select(0, row)
    bits = t.card_bits.index_select(0, s.hands.view(-1)).view(b, p, h)
    have = bits[:, :, 0]
    for j in range(1, h):
        have = have | bits[:, :, j]
    targets = t.targets_of.index_select(0, s.current)
    code = torch.where(((s.info > 0) & ~s.terminal).view(b, 1), have.gather(1, targets), 0)
    hints = t.hint_rows.index_select(0, code.view(-1)).view(b, p - 1, -1)  # per target: colours, then ranks
    colours, ranks = hints[:, :, : t.num_colours].reshape(b, -1), hints[:, :, t.num_colours :].reshape(b, -1)
    return torch.cat([play_discard, colours, ranks], dim=1, out=out)


def last_action_codes(state: BatchState, tables: HanabiTables, moves: torch.Tensor) -> torch.Tensor:
    """Long [B]: the last-action code (``HanabiTables``) that the acting player's move ``moves[b]``
    would leave if it were applied now; the state is not changed.

    This is the last-action section of HLE's state after applying the move to a copy without the
    deal that follows (hanabi_SAD's greedy-action encoding). ``moves`` must be legal.
    """
    s, t = state, tables
    b, p, h = moves.shape[0], t.num_players, t.hand_size
    info = t.move_info_rows.index_select(1, moves)
    kind = info[KIND]
    removes = kind <= DISCARD
    is_hint = kind >= REVEAL_COLOUR
    hand = s.hands.gather(1, s.current.view(b, 1, 1).expand(b, 1, h)).view(b, h)
    card = torch.where(removes, hand.gather(1, torch.where(removes, info[SLOT], 0).view(b, 1)).view(b), t.empty)
    card_info = t.card_info_rows.index_select(1, card)
    rank = card_info[RANK]
    scored = (kind == PLAY) & (s.fireworks.gather(1, card_info[COLOUR].view(b, 1)).view(b) == rank)
    token = scored & (rank == t.num_ranks - 1) & (s.info < t.max_info)
    target = s.current + info[OFFSET]
    target = torch.where(target >= p, target - p, target)
    target_hand = s.hands.gather(1, target.view(b, 1, 1).expand(b, 1, h)).view(b, h)
    match = (t.card_bits.index_select(0, target_hand.view(-1)).view(b, h) & info[HINT_BIT].view(b, 1)) != 0
    revealed = (match.long() * t.slot_bits).sum(dim=1)
    return info[LAST_CODE] + torch.where(is_hint, revealed, card * 3 + scored.long() + token.long())
