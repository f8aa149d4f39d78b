"""Observation variants of ``HanabiBatch`` beyond HLE's canonical encoding (``HanabiRules``'
``knowledge`` and ``sad``; ``HanabiEnv`` computes the same from HLE, ``eqc.domains.hanabi.hle.variants``).

OBL's "v0 belief" (Hu et al., off-belief learning; their HLE fork's ``EncodeV0Belief_`` with
public counts): in the card-knowledge section, each slot's plausible-card bits (one per card id) are replaced by
``plausible[card] * count[card] / sum_card(plausible * count)``, where ``count`` is the public
count of each card not yet seen by everyone: the deck's copies minus discarded copies minus
played copies (cards in hands are *not* subtracted, so the belief is common knowledge). The
hinted-colour and hinted-rank bits and every other section stay as in the canonical encoding;
empty slots stay zero.

SAD blocks (``eqc.domains.hanabi.rules.SAD_VARIANTS``): ``greedy_onehot`` looks up a one-hot row
of the last actor's greedy move uid; ``greedy_last_action`` looks up HLE's last-action rows for the
observer-independent code (``HanabiTables``) that the greedy move would have left, computed by
``dynamics.last_action_codes`` on the state before the move.
"""

from __future__ import annotations

import torch

from eqc.domains.hanabi.batched.state import BatchState
from eqc.domains.hanabi.batched.tables import HanabiTables

__all__ = ["public_card_counts", "sad_block", "v0_belief"]


def public_card_counts(state: BatchState, tables: HanabiTables) -> torch.Tensor:
    """Long [B, num_card_ids]: copies of each card neither discarded nor played."""
    b, nc = state.fireworks.shape[0], tables.num_colours
    played = (tables.rank_range < state.fireworks[:, :nc].unsqueeze(-1)).flatten(1)
    discarded = tables.discard_counts.index_select(0, state.discard_code[:, :nc].reshape(-1)).view(b, tables.num_cards)
    return tables.card_totals - discarded - played.long()


def v0_belief(state: BatchState, tables: HanabiTables, out: torch.Tensor) -> torch.Tensor:
    """Turn the plausible-card bits of canonical observations ``out`` [B, P, D] into v0 beliefs, in place."""
    lay = tables.layout
    b, p, h = state.hands.shape
    section = out[:, :, lay.knowledge : lay.knowledge + p * h * lay.knowledge_per_card]
    plausible = section.view(b, p, p * h, lay.knowledge_per_card)[..., : tables.num_cards]
    weighted = plausible * public_card_counts(state, tables).view(b, 1, 1, tables.num_cards).to(out.dtype)
    total = weighted.sum(dim=-1, keepdim=True)
    plausible.copy_(weighted / total.clamp(min=1.0))
    return out


def sad_block(state: BatchState, tables: HanabiTables, variant: str, player: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """Float [B, P, E]: the SAD block of every observer for the last actor ``player`` (long [B], -1: none)
    and ``value`` (long [B]: the greedy move uid for "greedy_onehot", its last-action code for
    "greedy_last_action")."""
    t = tables
    b, p = player.shape[0], t.num_players
    if variant == "greedy_onehot":  # shown to every player but the actor
        shown = (player >= 0).view(b, 1) & (t.arange_players != player.view(b, 1))
        row = torch.where(shown, value.view(b, 1), t.num_moves)
        return t.onehot_rows.index_select(0, row.view(-1)).view(b, p, t.num_moves)
    row = t.last_action_base.index_select(0, player + 1) + value.view(b, 1)  # shown to everyone
    return t.last_action_rows.index_select(0, row.view(-1)).view(b, p, -1)
