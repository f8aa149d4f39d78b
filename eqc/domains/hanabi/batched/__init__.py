"""Batched Hanabi in torch: ``HanabiBatch`` (``env``) and its parts, exactly HLE 0.0.4's game.

- ``state``: the game state as dense tensors, (re)dealing from decks;
- ``dynamics``: the rules (applying moves, legal-move masks), branch-free tensor code;
- ``encoding``: HLE's canonical observation, every player at once;
- ``variants``: v0 belief and the SAD blocks;
- ``tables``: constant lookup tables derived from ``HanabiRules``;
- ``checks``: validation of the checked mode.
"""

from __future__ import annotations

from eqc.domains.hanabi.batched.env import HanabiBatch

__all__ = ["HanabiBatch"]
