"""Observation variants of ``HanabiBatch`` beyond HLE's canonical encoding.

OBL's "v0 belief" (Hu et al., off-belief learning; their HLE fork's ``EncodeV0Belief_`` with
public counts): in the card-knowledge section, each slot's 25 plausible-card bits are replaced by
``plausible[card] * count[card] / sum_card(plausible * count)``, where ``count`` is the public
count of each card not yet seen by everyone: the deck's copies minus discarded copies minus
played copies (cards in hands are *not* subtracted, so the belief is common knowledge). The
hinted-colour and hinted-rank bits and every other section stay as in the canonical encoding;
empty slots stay zero.
"""

from __future__ import annotations

import torch

from eqc.domains.hanabi.batched_state import BatchState
from eqc.domains.hanabi.batched_tables import NUM_CARDS, NUM_COLOURS, HanabiTables

__all__ = ["KNOWLEDGE_ENCODINGS", "public_card_counts", "v0_belief"]

KNOWLEDGE_ENCODINGS = ("canonical", "v0_belief")


def public_card_counts(state: BatchState, tables: HanabiTables) -> torch.Tensor:
    """Long [B, 25]: copies of each card neither discarded nor played."""
    b = state.fireworks.shape[0]
    played = (tables.rank_range < state.fireworks[:, :NUM_COLOURS].unsqueeze(-1)).flatten(1)
    discarded = tables.discard_counts.index_select(0, state.discard_code[:, :NUM_COLOURS].reshape(-1)).view(b, NUM_CARDS)
    return tables.card_totals - discarded - played.long()


def v0_belief(state: BatchState, tables: HanabiTables, out: torch.Tensor) -> torch.Tensor:
    """Turn the plausible-card bits of canonical observations ``out`` [B, P, D] into v0 beliefs, in place."""
    lay = tables.layout
    b, p, h = state.hands.shape
    section = out[:, :, lay.knowledge : lay.knowledge + p * h * lay.knowledge_per_card]
    plausible = section.view(b, p, p * h, lay.knowledge_per_card)[..., :NUM_CARDS]
    weighted = plausible * public_card_counts(state, tables).view(b, 1, 1, NUM_CARDS).to(out.dtype)
    total = weighted.sum(dim=-1, keepdim=True)
    plausible.copy_(weighted / total.clamp(min=1.0))
    return out
