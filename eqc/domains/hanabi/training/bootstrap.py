"""Induced colour conventions: a shaping reward that teaches "a colour hint c means: play slot pi(c)".

``[bootstrap] slots`` is pi, given explicitly: ``slots[c]`` is the hand slot a hint of colour ``c`` asks
the receiver to play (distinct slots, one per colour). Two conventions (``[bootstrap] convention``):

- ``colour_to_slot``: a player who plays slot ``pi(c)`` on the move right after its partner revealed
  colour ``c`` to it, and scores, earns ``[bootstrap] bonus``, whichever slots the hint touched. The
  bonus then also pays for a hint-to-slot *code* that no colour permutation maps ("any colour hint
  means play slot X"), a second arbitrary choice beside the colour convention.
- ``colour_to_touched_slot``: the same, but only when the hint touched slot ``pi(c)`` (the card there
  has colour ``c``), so what is paid is grounded in the cards: "colour c, touching slot pi(c), means
  that card is playable".

The bonus is paid for the first ``[bootstrap] moves`` moves of training; afterwards the game's reward
alone trains, so the convention survives only if it keeps paying. The shaping acts on the game's own
colours: under Other-Play or G-OP a player sees its game relabelled, so the convention it is paid for
is not one it can express consistently. Two players (the hint's receiver is the next player to act).
"""

from __future__ import annotations

import itertools

import torch

from eqc.domains.hanabi.rules import HanabiRules

__all__ = ["NO_HINT", "colour_slot_maps", "convention_bonus", "touched_hint"]

#: ``hinted`` value of a game whose last move was not a (paying) colour hint.
NO_HINT = -1


def colour_slot_maps(num_colours: int, hand_size: int) -> list[tuple[int, ...]]:
    """Every injective map from ``num_colours`` colours to ``hand_size`` slots, in lexicographic order
    (``[bootstrap] slots`` values; for Mini-Hanabi the six permutations of (0, 1, 2))."""
    if not 1 <= num_colours <= hand_size:
        raise ValueError(f"a colour-to-slot map needs 1 <= colours <= hand_size, got {num_colours} colours, hand {hand_size}")
    return list(itertools.permutations(range(hand_size), num_colours))


def touched_hint(rules: HanabiRules, slot_of_colour: torch.Tensor, hands: torch.Tensor, current: torch.Tensor,
                 move: torch.Tensor) -> torch.Tensor:
    """``[B]`` bool: ``move`` (env uids, about to be played by player ``current``) reveals a colour ``c`` whose
    hint touches the receiver's slot ``slot_of_colour[b, c]`` (each game's map ``[B, colours]``; ``hands [B, P, h]`` card
    ids before the move). Two players."""
    h, colours, ranks = rules.hand_size, rules.num_colours, rules.num_ranks
    is_colour_hint = (move >= 2 * h) & (move < 2 * h + colours)
    colour = (move - 2 * h).clamp(0, colours - 1)
    rows = torch.arange(move.shape[0], device=move.device)
    card = hands[rows, 1 - current, slot_of_colour[rows, colour]]
    return is_colour_hint & (card < colours * ranks) & (card // ranks == colour)


def convention_bonus(
    rules: HanabiRules, slot_of_colour: torch.Tensor, hinted: torch.Tensor, move: torch.Tensor, reward: torch.Tensor,
    ended: torch.Tensor, bonus: float, pays: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The shaping reward ``[B]`` of ``move`` (uids ``[B]``, just played, scoring ``reward``) and the games'
    next ``hinted`` colour (:data:`NO_HINT` after any other move and when a game ended).

    ``bonus`` is paid where the previous move revealed colour ``c = hinted`` to the mover, ``move`` plays
    slot ``slot_of_colour[b, c]`` (each game's map ``[B, colours]``) and the play scored (a play is the only move with a positive reward).
    ``pays`` (``[B]`` bool, None: every colour hint): which of this move's colour hints can pay the next
    move (``colour_to_touched_slot``: those that touched slot ``pi(c)``, :func:`touched_hint`).
    """
    h, colours = rules.hand_size, rules.num_colours
    played_slot = torch.where((move >= h) & (move < 2 * h), move - h, -1)
    asked_slot = slot_of_colour[torch.arange(move.shape[0], device=move.device), hinted.clamp(min=0)]
    paid = (hinted != NO_HINT) & (played_slot == asked_slot) & (reward > 0)
    revealed = torch.where((move >= 2 * h) & (move < 2 * h + colours), move - 2 * h, NO_HINT)
    if pays is not None:
        revealed = torch.where(pays, revealed, NO_HINT)
    return paid.to(reward.dtype) * bonus, torch.where(ended, NO_HINT, revealed)
