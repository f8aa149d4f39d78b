"""A simple rule-based Hanabi agent that reads only the canonical ("full") observation vector.

Move uids and card ids: :mod:`eqc.domains.hanabi.rules`.

Its rules break ties by slot and seat, not by colour, so it is colour-equivariant (up to the
last-resort fallback of rule 4):
``act(rho_obs(g) o, rho_act(g) legal) == rho_act(g) act(o, legal)`` for every colour permutation g.

Rules, first applicable wins:
1. play the lowest slot whose card knowledge says it is surely playable;
2. with an information token, for the nearest partner first and its lowest slot first, find a
   playable card the partner does not know to be playable and reveal its rank (if the rank was
   not hinted yet) or else its colour;
3. discard the lowest slot with no hint (slot 0 if all are hinted);
4. reveal the rank of the next player's slot-0 card, else its colour; else the legal move of
   lowest uid, non-colour moves first (the one rule that can look at a colour index; reached only
   when the next player's slot 0 is empty and no discard is legal).
"""

from __future__ import annotations

import torch

from eqc._checks import check_tensor
from eqc.domains.hanabi.rules import HanabiRules, action_layout, check_rules, observation_layout

__all__ = ["RuleAgent"]


class RuleAgent:
    """Rule-based policy over the observations of ``rules`` (see module docstring).

    ``rules`` must have ``observation_type="full"`` and ``knowledge="canonical"`` (the rules read
    the card-knowledge bits); any SAD block is ignored. None means ``HanabiRules()``.
    """

    def __init__(self, rules: HanabiRules | None = None) -> None:
        self.rules = r = check_rules(rules)
        if r.observation_type != "full" or r.knowledge != "canonical":
            raise ValueError(
                f"RuleAgent reads HLE's card-knowledge bits: rules need observation_type='full' and knowledge='canonical', "
                f"got {r.observation_type!r} and {r.knowledge!r}"
            )
        self.layout = observation_layout(r)
        self.actions = action_layout(r)
        self.num_players, self.num_colours, self.num_ranks, self.hand_size = r.num_players, r.num_colours, r.num_ranks, r.hand_size
        self.obs_dim, self.num_moves = self.layout.dim, self.actions.dim
        offsets = self.layout.offsets()
        self._views = {b.name: (offsets[b.name], b.size, b.shape) for b in self.layout}

    def _view(self, obs: torch.Tensor, name: str) -> torch.Tensor:
        start, size, shape = self._views[name]
        return obs[start : start + size].reshape(shape)

    def _knowledge(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per (player, slot): plausible cards [P, h, C, R] and colour/rank-hinted flags [P, h]."""
        C, R, h, P = self.num_colours, self.num_ranks, self.hand_size, self.num_players
        start = self._views["knowledge"][0]
        k = obs[start : start + P * h * (C * R + C + R)].reshape(P, h, C * R + C + R) > 0.5
        return k[..., : C * R].reshape(P, h, C, R), k[..., C * R : C * R + C].any(-1), k[..., C * R + C :].any(-1)

    @staticmethod
    def _surely_playable(plausible: torch.Tensor, playable: torch.Tensor) -> torch.Tensor:
        """[...] bool: some card is plausible and every plausible card is playable."""
        return plausible.flatten(-2).any(-1) & ~(plausible & ~playable).flatten(-2).any(-1)

    def act(self, obs: torch.Tensor, legal: torch.Tensor) -> int:
        """Move uid for one observation ``obs [obs_dim]`` and legal mask ``legal [num_moves]`` (bool)."""
        check_tensor(obs, "obs")
        check_tensor(legal, "legal", dtypes=(torch.bool,))
        if obs.shape != (self.obs_dim,):
            raise ValueError(f"obs must have shape ({self.obs_dim},), got {tuple(obs.shape)}")
        if legal.shape != (self.num_moves,):
            raise ValueError(f"legal must have shape ({self.num_moves},), got {tuple(legal.shape)}")
        if not bool(legal.any()):
            raise ValueError("no legal move: the agent is not acting")
        C, R, h = self.num_colours, self.num_ranks, self.hand_size
        play0, colour0, rank0 = self.actions.offset("play"), self.actions.offset("reveal_colour"), self.actions.offset("reveal_rank")
        fireworks = self._view(obs, "fireworks")  # [C, R], one-hot of height - 1
        height = torch.where(fireworks.any(dim=1), fireworks.argmax(dim=1) + 1, torch.zeros(C, dtype=torch.long))
        playable = torch.arange(R)[None, :] == height[:, None]  # [C, R]: card (c, r) playable now
        plausible, colour_hinted, rank_hinted = self._knowledge(obs)
        known = self._surely_playable(plausible, playable).tolist()  # [P][h]
        legal_list = legal.tolist()
        for i in range(h):
            if legal_list[play0 + i] and known[0][i]:
                return play0 + i
        hands = self._view(obs, "partner_hands").flatten(-2)  # [P-1, h, C*R]
        present = hands.any(-1).tolist()
        cards = hands.argmax(-1).tolist()
        colour_hints, rank_hints = colour_hinted.tolist(), rank_hinted.tolist()
        playable_list = playable.flatten().tolist()
        if bool(self._view(obs, "information_tokens")[0] > 0.5):
            for k in range(self.num_players - 1):
                for i in range(h):
                    if not present[k][i] or not playable_list[cards[k][i]] or known[k + 1][i]:
                        continue
                    c, r = divmod(cards[k][i], R)
                    if not rank_hints[k + 1][i] and legal_list[rank0 + k * R + r]:
                        return rank0 + k * R + r
                    if not colour_hints[k + 1][i] and legal_list[colour0 + k * C + c]:
                        return colour0 + k * C + c
        discards = [i for i in range(h) if legal_list[i]]
        if discards:
            unhinted = [i for i in discards if not (colour_hints[0][i] or rank_hints[0][i])]
            return (unhinted or discards)[0]
        if present[0][0] and legal_list[rank0 + cards[0][0] % R]:
            return rank0 + cards[0][0] % R
        if present[0][0] and legal_list[colour0 + cards[0][0] // R]:
            return colour0 + cards[0][0] // R
        colour_moves = set(range(colour0, rank0))
        order = [u for u in range(self.num_moves) if u not in colour_moves] + sorted(colour_moves)
        return next(u for u in order if legal_list[u])
