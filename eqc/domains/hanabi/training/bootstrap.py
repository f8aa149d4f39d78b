"""Induced colour conventions: a shaping reward that teaches "a colour hint c means: play slot pi(c)".

With ``[bootstrap] convention = "colour_to_slot"`` a player who plays slot ``pi(c)`` on the move right
after its partner revealed colour ``c`` to it, and scores, earns ``[bootstrap] bonus`` on top of the
game's reward, for the first ``[bootstrap] moves`` moves of training; afterwards the game's reward alone
trains, so the convention survives only if it keeps paying. ``pi`` is an injective map from colours to
hand slots drawn from the run's seed (:func:`colour_to_slot`): each seed is taught another convention,
so agents of one pool disagree about what each colour means, which is the symmetry breaking the paper's
method repairs. The shaping acts on the game's own colours: under Other-Play or G-OP a player sees its
game relabelled, so the convention it is paid for is not one it can express consistently.
Two players (the hint's receiver is the next player to act).
"""

from __future__ import annotations

import torch

from eqc.domains.hanabi.rules import HanabiRules

__all__ = ["NO_HINT", "colour_to_slot", "convention_bonus"]

#: ``hinted`` value of a game whose last move was not a colour hint.
NO_HINT = -1


def colour_to_slot(rules: HanabiRules, seed: int) -> torch.Tensor:
    """``pi`` of run ``seed``: long ``[num_colours]``, the distinct hand slot each colour hint asks to play."""
    if rules.num_colours > rules.hand_size:
        raise ValueError(f"colour_to_slot needs at most hand_size ({rules.hand_size}) colours, got {rules.num_colours}")
    generator = torch.Generator().manual_seed(seed + 4_000_037)
    return torch.randperm(rules.hand_size, generator=generator)[: rules.num_colours]


def convention_bonus(
    rules: HanabiRules, slot_of_colour: torch.Tensor, hinted: torch.Tensor, move: torch.Tensor, reward: torch.Tensor,
    ended: torch.Tensor, bonus: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The shaping reward ``[B]`` of ``move`` (uids ``[B]``, just played, scoring ``reward``) and the games'
    next ``hinted`` colour (:data:`NO_HINT` after any other move and when a game ended).

    ``bonus`` is paid where the previous move revealed colour ``c = hinted`` to the mover, ``move`` plays
    slot ``slot_of_colour[c]`` and the play scored (a play is the only move with a positive reward).
    """
    h, colours = rules.hand_size, rules.num_colours
    played_slot = torch.where((move >= h) & (move < 2 * h), move - h, -1)
    asked_slot = slot_of_colour[hinted.clamp(min=0)]
    paid = (hinted != NO_HINT) & (played_slot == asked_slot) & (reward > 0)
    revealed = torch.where((move >= 2 * h) & (move < 2 * h + colours), move - 2 * h, NO_HINT)
    return paid.to(reward.dtype) * bonus, torch.where(ended, NO_HINT, revealed)
