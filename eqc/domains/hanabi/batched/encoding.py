"""HLE's canonical observation encoding for a batch of games, every player at once.

Output ``[B, P, D]`` (D = ``rules.canonical_dim``): row ``[b, o]`` is what player ``o`` of game ``b``
sees, with players numbered relative to the observer (k-th player = seat ``(o + k) % P``), bit for
bit as HLE's ``CanonicalObservationEncoder`` (layout: ``eqc.domains.hanabi.rules.observation_layout``):

- other players' hands: one-hot card per slot, zeros for an empty slot;
- missing-card bit per player (hand shorter than h: some slot empty, wherever it is);
- deck thermometer (cards left), fireworks (one-hot of the height - 1, zeros at height 0),
  information and life thermometers, discards (per card id, one bit per discarded copy);
- last action, HLE's most recent non-deal move: actor (relative), kind, hint target (relative),
  hinted colour or rank, revealed slots, slot and card played/discarded, scored and
  information-token flags (the flags for plays only);
- card knowledge of every player's slots (relative order): plausible cards (colour plausible AND
  rank plausible), hinted colour, hinted rank; zeros for an empty slot.

Each section is one ``index_select`` of precomputed float rows (``HanabiTables``) into a reusable
scratch buffer; one ``torch.cat`` writes every coordinate of ``out``.
"""

from __future__ import annotations

import torch

from eqc.domains.hanabi.batched.state import BatchState
from eqc.domains.hanabi.batched.tables import HanabiTables

__all__ = ["EncodingScratch", "encode"]


class EncodingScratch:
    """Preallocated float buffers for the sections of ``num_envs`` observations."""

    def __init__(self, num_envs: int, tables: HanabiTables) -> None:
        b, p, h, lay = num_envs, tables.num_players, tables.hand_size, tables.layout
        nc, per_colour = tables.num_colours, tables.discard_rows.shape[1]

        def buf(rows: int, width: int) -> torch.Tensor:
            return torch.empty(rows, width, device=tables.device)

        self.hands = buf(b * p * (p - 1) * h, tables.num_cards)
        self.missing = buf(b * p, p)
        self.deck = buf(b, lay.deck_len)
        self.fireworks = buf(b * nc, tables.num_ranks)
        self.tokens = buf(b, lay.discards - lay.info)
        self.discards = buf(b * nc, per_colour)
        self.board = buf(b, lay.last_action - lay.deck)
        self.boards = torch.empty(b, p, lay.last_action - lay.deck, device=tables.device)
        self.last_action = buf(b * p, lay.last_action_len)
        self.knowledge = buf(b * p * p * h, lay.knowledge_per_card)


def encode(
    state: BatchState,
    tables: HanabiTables,
    out: torch.Tensor,
    scratch: EncodingScratch,
    extra: torch.Tensor | None = None,
    knowledge: bool = True,
) -> torch.Tensor:
    """Write every player's canonical observation into ``out`` (float [B, P, D]) and return it.

    ``knowledge=False`` leaves out the card-knowledge section (HLE's "minimal" observation).
    ``extra`` (float [B, P, E]), if given, is written after the canonical coordinates.
    """
    s, t, sc = state, tables, scratch
    b, p, _ = s.hands.shape
    nc = t.num_colours
    sel = torch.index_select
    sel(t.card_rows, 0, s.hands.index_select(1, t.others).view(-1), out=sc.hands)
    missing = ((s.hands == t.empty).any(dim=2).long() << t.arange_players).sum(dim=1)  # any slot: slot relabellings
    sel(t.missing_rows, 0, ((t.arange_players << p) + missing.view(b, 1)).view(-1), out=sc.missing)
    # The board is the same for every observer: built once, then copied per observer so that
    # every piece of the final cat is contiguous (torch.cat's fast path).
    sel(t.deck_rows, 0, t.deck_size - s.dealt, out=sc.deck)
    sel(t.fireworks_rows, 0, s.fireworks[:, :nc].reshape(-1), out=sc.fireworks)
    sel(t.tokens_rows, 0, s.info * (t.max_lives + 1) + s.lives, out=sc.tokens)
    sel(t.discard_rows, 0, s.discard_code[:, :nc].reshape(-1), out=sc.discards)
    torch.cat([sc.deck, sc.fireworks.view(b, -1), sc.tokens, sc.discards.view(b, -1)], dim=1, out=sc.board)
    sc.boards.copy_(sc.board.view(b, 1, -1).expand(b, p, -1))
    row = t.last_action_base.index_select(0, s.last_player + 1) + s.last_code.view(b, 1)
    sel(t.last_action_rows, 0, row.view(-1), out=sc.last_action)
    pieces = [sc.hands.view(b, p, -1), sc.missing.view(b, p, p), sc.boards, sc.last_action.view(b, p, -1)]
    if knowledge:
        sel(t.knowledge_rows, 0, s.knowledge.index_select(1, t.rotation_flat).view(-1), out=sc.knowledge)
        pieces.append(sc.knowledge.view(b, p, -1))
    if extra is not None:
        pieces.append(extra)
    return torch.cat(pieces, dim=2, out=out)
