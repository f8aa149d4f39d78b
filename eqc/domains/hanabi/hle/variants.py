"""Observation variants of ``HanabiEnv`` beyond HLE's canonical encoding, computed from HLE itself.

The same variants as ``HanabiBatch`` (``eqc.domains.hanabi.batched.variants`` defines them; the
differential tests check that both agree bit for bit), computed here independently from HLE's
C++ state so that an agent trained on the batched env plays in HLE unchanged:

- ``v0_belief``: each slot's plausible-card bits times the public count of each card (deck
  copies minus discarded minus played), normalised (``HanabiRules.knowledge``);
- ``greedy_onehot`` and ``greedy_last_action`` SAD blocks (``HanabiRules.sad``).
"""

from __future__ import annotations

import torch

from eqc.domains.hanabi.hle.native import HLEGame
from eqc.domains.hanabi.rules import HanabiRules, card_counts, last_action_blocks, observation_layout

__all__ = ["ObservationVariants"]


class ObservationVariants:
    """Section offsets for ``rules`` and the functions that rewrite/append HLE-encoded rows."""

    def __init__(self, rules: HanabiRules, hle: HLEGame) -> None:
        self.rules, self.hle = rules, hle
        layout = observation_layout(rules)
        self.canonical_dim = rules.canonical_dim
        self.last_action = layout.offset("last_action_player")
        self.last_action_len = sum(b.size for b in last_action_blocks(rules))
        c, r = rules.num_colours, rules.num_ranks
        self.per_slot = c * r + c + r
        self.knowledge = layout.offset("knowledge") if rules.observation_type == "full" else -1
        self.totals = torch.tensor(card_counts(r) * c, dtype=torch.float32)

    def public_counts(self, state: object) -> torch.Tensor:
        """Float [C*R]: copies of each card neither discarded nor played, from HLE's state."""
        ffi, lib = self.hle.ffi, self.hle.lib
        counts = self.totals.clone()
        card = ffi.new("pyhanabi_card_t*")
        ranks = self.rules.num_ranks
        for i in range(lib.StateDiscardPileSize(state)):
            lib.StateGetDiscard(state, i, card)
            counts[card.color * ranks + card.rank] -= 1
        for colour in range(self.rules.num_colours):
            height = lib.StateFireworks(state, colour)
            counts[colour * ranks : colour * ranks + height] -= 1
        return counts

    def v0_belief(self, rows: torch.Tensor, state: object) -> None:
        """Rewrite the plausible-card bits of canonical ``rows`` [P, D] into v0 beliefs, in place."""
        p, h, cr = self.rules.num_players, self.rules.hand_size, self.rules.num_card_ids
        section = rows[:, self.knowledge : self.knowledge + p * h * self.per_slot]
        plausible = section.view(p, p * h, self.per_slot)[..., :cr]
        weighted = plausible * self.public_counts(state).view(1, 1, cr)
        total = weighted.sum(dim=-1, keepdim=True)
        plausible.copy_(weighted / total.clamp(min=1.0))

    def greedy_last_action(self, state: object, greedy_uid: int) -> torch.Tensor:
        """Float [P, last_action_len]: HLE's last-action section, from every player's view, of a copy
        of ``state`` with move ``greedy_uid`` applied (no card dealt after it): hanabi_SAD's block."""
        lib = self.hle.lib
        copy = self.hle.new_state(state)
        try:
            lib.StateApplyMove(copy, self.hle.moves[greedy_uid])
            out = torch.empty(self.rules.num_players, self.last_action_len)
            for player in range(self.rules.num_players):
                bits = torch.frombuffer(bytearray(self.hle.encode(copy, player)[::2]), dtype=torch.uint8)
                out[player] = (bits[self.last_action : self.last_action + self.last_action_len] - ord("0")).float()
            return out
        finally:
            lib.DeleteState(copy)
