"""Section offsets of HLE's canonical Hanabi observation for any number of players."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ObservationLayout"]

_CARDS, _COLOURS, _RANKS, _DECK, _INFO, _LIVES = 25, 5, 5, 50, 8, 3


@dataclass(frozen=True)
class ObservationLayout:
    """Offsets of the sections of HLE's canonical observation for ``num_players`` players.

    Sections in order: other players' hands ``(p-1)*h*25``, missing-card bits ``p``, deck
    thermometer ``50 - p*h``, fireworks 25, information tokens 8, lives 3, discards 50, last
    action ``2p + 4 + 5 + 5 + 2h + 25 + 2``, card knowledge ``p*h*35``: 658 floats for 2 players.
    """

    num_players: int
    hand_size: int

    @property
    def hands(self) -> int:
        return 0

    @property
    def missing(self) -> int:
        return (self.num_players - 1) * self.hand_size * _CARDS

    @property
    def deck(self) -> int:
        return self.missing + self.num_players

    @property
    def deck_len(self) -> int:
        return _DECK - self.num_players * self.hand_size

    @property
    def fireworks(self) -> int:
        return self.deck + self.deck_len

    @property
    def info(self) -> int:
        return self.fireworks + _CARDS

    @property
    def lives(self) -> int:
        return self.info + _INFO

    @property
    def discards(self) -> int:
        return self.lives + _LIVES

    @property
    def last_action(self) -> int:
        return self.discards + _DECK

    @property
    def last_action_len(self) -> int:
        return 2 * self.num_players + 4 + _COLOURS + _RANKS + 2 * self.hand_size + _CARDS + 2

    @property
    def knowledge(self) -> int:
        return self.last_action + self.last_action_len

    @property
    def knowledge_per_card(self) -> int:
        return _CARDS + _COLOURS + _RANKS

    @property
    def dim(self) -> int:
        return self.knowledge + self.num_players * self.hand_size * self.knowledge_per_card
