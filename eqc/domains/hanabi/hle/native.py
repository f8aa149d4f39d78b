"""HLE 0.0.4's C++ objects through its cffi layer (``pyhanabi.lib``): the game, its encoder, its
move objects, and the deal moves that let eqc deal a chosen deck (``DealMoves``).

``HLEGame`` owns every C++ object that does not change during play; several ``HanabiEnv`` s (an
env and its copies) share one, and it is freed when the last of them is garbage-collected. Game
states are owned by the envs. Card ids and move uids: see :mod:`eqc.domains.hanabi.rules`.
"""

from __future__ import annotations

from typing import Any

from eqc.domains.hanabi.rules import HanabiRules

__all__ = ["OBSERVATION_TYPES", "CData", "DealMoves", "HLEGame", "load_pyhanabi"]

#: HLE's cffi objects (its ``ffi``, ``lib``, and the C structs they make): cffi gives them no static type.
CData = Any

OBSERVATION_TYPES: dict[str, int] = {"minimal": 0, "full": 1}
"""eqc name -> HLE AgentObservationType (MINIMAL, CARD_KNOWLEDGE)."""

CHANCE = -1
"""HLE's current player at a chance node (a card is to be dealt)."""


def load_pyhanabi() -> tuple[CData, CData]:
    """Return HLE's (ffi, lib), cffi objects without type information; ImportError with an install hint if HLE is missing."""
    try:
        from hanabi_learning_environment import pyhanabi
    except ImportError as err:  # pragma: no cover - exercised only without HLE
        raise ImportError(
            "eqc.domains.hanabi.HanabiEnv needs hanabi-learning-environment 0.0.4: "
            "pip install 'eqc[hanabi]' (or CMAKE_POLICY_VERSION_MINIMUM=3.5 pip install hanabi-learning-environment==0.0.4)"
        ) from err
    if not (pyhanabi.cdef_loaded() and pyhanabi.lib_loaded()):  # pragma: no cover
        raise ImportError("hanabi_learning_environment is installed but its C library (libpyhanabi) did not load")
    return pyhanabi.ffi, pyhanabi.lib


class HLEGame:
    """HLE's game for ``rules`` (player 0 starts), its canonical encoder, one move object per uid
    (``moves[uid]``) and the deal moves (``deals[card_id]``)."""

    def __init__(self, rules: HanabiRules) -> None:
        self.ffi, self.lib = load_pyhanabi()
        ffi, lib = self.ffi, self.lib
        params = {
            "players": rules.num_players,
            "colors": rules.num_colours,
            "ranks": rules.num_ranks,
            "hand_size": rules.hand_size,
            "max_information_tokens": rules.max_info_tokens,
            "max_life_tokens": rules.max_lives,
            "observation_type": OBSERVATION_TYPES[rules.observation_type],
            "random_start_player": 0,
            "seed": 1,
        }
        keep = [ffi.new("char[]", str(x).encode("ascii")) for kv in params.items() for x in kv]
        self.moves: list[CData] = []
        self.deals: DealMoves | None = None
        self.encoder: CData = None
        self.game: CData = ffi.new("pyhanabi_game_t*")
        lib.NewGame(self.game, len(keep), ffi.new("char*[]", keep))
        self.encoder = ffi.new("pyhanabi_observation_encoder_t*")
        lib.NewObservationEncoder(self.encoder, self.game, 0)
        c_shape = lib.ObservationShape(self.encoder)
        self.obs_dim = int(ffi.string(c_shape).decode("ascii").split(",")[0])
        lib.DeleteString(c_shape)
        for uid in range(int(lib.MaxMoves(self.game))):
            m = ffi.new("pyhanabi_move_t*")
            lib.GetMoveByUid(self.game, uid, m)
            self.moves.append(m)
        self.deals = DealMoves(ffi, lib, self.game, rules.num_colours, rules.num_ranks, rules.hand_size)

    def new_state(self, source: CData = None) -> CData:
        """A new C++ state: the initial state, or a copy of ``source`` (a state of this game)."""
        state = self.ffi.new("pyhanabi_state_t*")
        if source is None:
            self.lib.NewState(self.game, state)
        else:
            self.lib.CopyState(source, state)
        return state

    def encode(self, state: CData, player: int) -> bytes:
        """HLE's canonical encoding of ``player``'s observation of ``state``, as b"0,1,..."."""
        ffi, lib = self.ffi, self.lib
        obs = ffi.new("pyhanabi_observation_t*")
        lib.NewObservation(state, player, obs)
        c = lib.EncodeObservation(self.encoder, obs)
        text = ffi.string(c)
        lib.DeleteString(c)
        lib.DeleteObservation(obs)
        return text

    def __del__(self) -> None:
        lib = getattr(self, "lib", None)
        if lib is None:
            return
        for m in getattr(self, "moves", []):
            lib.DeleteMove(m)
        self.moves = []
        if getattr(self, "encoder", None) is not None:
            lib.DeleteObservationEncoder(self.encoder)
            self.encoder = None
        deals = getattr(self, "deals", None)
        if deals is not None:
            deals.close()
            self.deals = None
        if getattr(self, "game", None) is not None:
            lib.DeleteGame(self.game)
            self.game = None


class DealMoves:
    """HLE deal moves (C++ ``HanabiMove`` of type kDeal), one per card id, for controlled dealing.

    HLE 0.0.4's C API has no constructor for a chosen deal move, but it does return copies of
    the moves in a state's history (``HistoryItemMove``), deal moves included. We play one
    scratch game (HLE's own random dealing; always discard when legal, else hint, so the
    whole deck gets dealt), keep the first deal move seen for each card id and check its
    type, colour and rank through the C API. The moves are genuine HLE objects: nothing is
    written into C++ memory. ``StateApplyMove`` copies a move, so each object is reusable.
    """

    DEAL = 5  # HanabiMove::kDeal

    def __init__(self, ffi: CData, lib: CData, c_game: CData, num_colours: int, num_ranks: int, hand_size: int) -> None:
        self._lib = lib
        self._moves: list[CData | None] = [None] * (num_colours * num_ranks)
        state = ffi.new("pyhanabi_state_t*")
        lib.NewState(c_game, state)
        uid_moves = []
        try:
            for uid in range(lib.MaxMoves(c_game)):
                m = ffi.new("pyhanabi_move_t*")
                lib.GetMoveByUid(c_game, uid, m)
                uid_moves.append(m)
            discards, hints = uid_moves[:hand_size], uid_moves[2 * hand_size :]
            for _ in range(100_000):
                if lib.StateEndOfGameStatus(state) != 0:
                    break
                if lib.StateCurPlayer(state) == CHANCE:
                    lib.StateDealRandomCard(state)
                    continue
                move = next((m for m in discards + hints if lib.MoveIsLegal(state, m)), None)
                if move is None:
                    break
                lib.StateApplyMove(state, move)
            for i in range(lib.StateLenMoveHistory(state)):
                item = ffi.new("pyhanabi_history_item_t*")
                lib.StateGetMoveHistory(state, i, item)
                move = ffi.new("pyhanabi_move_t*")
                lib.HistoryItemMove(item, move)
                lib.DeleteHistoryItem(item)
                card = lib.MoveColor(move) * num_ranks + lib.MoveRank(move)
                if lib.MoveType(move) == self.DEAL and 0 <= card < len(self._moves) and self._moves[card] is None:
                    self._moves[card] = move
                else:
                    lib.DeleteMove(move)
        finally:
            for m in uid_moves:
                lib.DeleteMove(m)
            lib.DeleteState(state)
        missing = [k for k, m in enumerate(self._moves) if m is None]
        if missing:
            self.close()
            raise RuntimeError(f"could not obtain HLE deal moves for card ids {missing}")
        for card, m in enumerate(self._moves):
            got = (lib.MoveType(m), lib.MoveColor(m), lib.MoveRank(m))
            if got != (self.DEAL, card // num_ranks, card % num_ranks):
                self.close()
                raise RuntimeError(f"HLE deal move for card {card} reads back as (type, colour, rank) = {got}")

    def __getitem__(self, card: int) -> CData:
        move = self._moves[card]
        if move is None:
            raise RuntimeError("DealMoves was closed")
        return move

    def close(self) -> None:
        """Free the C++ move objects (also done on garbage collection)."""
        for k, m in enumerate(self._moves):
            if m is not None:
                self._lib.DeleteMove(m)
                self._moves[k] = None

    def __del__(self) -> None:
        if getattr(self, "_moves", None) is not None:
            self.close()
