"""Hanabi on the Hanabi Learning Environment (HLE 0.0.4) as an eqc DecPOMDP.

``HanabiEnv`` drives HLE's C++ core through its cffi layer (``pyhanabi.lib``). Every argument is
validated in Python before it reaches C++, because HLE aborts the whole process on an illegal
move. All chance is fixed by the deck passed to (or sampled by) ``reset``: cards are dealt in
deck order (see ``eqc.domains.hanabi.dealing``), never by HLE's random number generator.

Conventions:
- players are 0..P-1, player 0 acts first (HLE's ``random_start_player`` is off);
- move uids are HLE's: discard slot 0..h-1, play slot h..2h-1, reveal colour
  2h + (offset-1)*C + c, reveal rank 2h + (P-1)*C + (offset-1)*R + r, where offset is the target's
  seat relative to the actor (1 = next player);
- observations are HLE's canonical encoding for each player (658 floats for 2 players with card
  knowledge), optionally followed by the SAD block (see ``HanabiEnv``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from eqc._checks import check_int
from eqc.domains.hanabi.dealing import (
    DealMoves,
    as_deck,
    deck_log_probability,
    deck_size,
    default_hand_size,
    random_deck,
    relabel_deck,
)

__all__ = ["HanabiEnv", "OBSERVATION_TYPES", "load_pyhanabi"]

OBSERVATION_TYPES: dict[str, int] = {"minimal": 0, "full": 1}
"""eqc name -> HLE AgentObservationType (MINIMAL, CARD_KNOWLEDGE)."""

_CHANCE = -1


def load_pyhanabi() -> tuple[object, object]:
    """Return HLE's (ffi, lib); ImportError with an install hint if HLE is missing."""
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


class HanabiEnv:
    """Hanabi for 2-5 players on HLE, implementing the eqc DecPOMDP protocol.

    Args:
        num_players: 2..5.
        observation_type: "full" (HLE CARD_KNOWLEDGE: card-knowledge section included) or "minimal".
        num_colours, num_ranks, hand_size, max_information_tokens, max_life_tokens: game
            parameters (defaults: the standard game; hand size 5 for 2-3 players, 4 for 4-5).
        sad: append the SAD block: a one-hot over move uids of the greedy action of the player
            who acted last, in that actor's frame (target offsets relative to the actor); it is
            shown to every player except the actor, and is zero before the first move.
        seed: seeds the torch.Generator used when ``reset()`` samples a deck.

    ``step`` returns the change of HLE's score (0 once all lives are lost), so losing the last life
    yields minus the fireworks total, as in HLE's rl_env.

    Arguments are checked before anything reaches HLE's C++ (which aborts the process on an
    illegal move): a move must be a Python ``int`` (not a bool, numpy integer or tensor element:
    convert with ``int()``), in range and legal; a whole ``actions`` vector may also be a 1-D
    integer tensor. Violations raise TypeError/ValueError naming the argument.
    """

    def __init__(
        self,
        num_players: int = 2,
        observation_type: str = "full",
        *,
        num_colours: int = 5,
        num_ranks: int = 5,
        hand_size: int | None = None,
        max_information_tokens: int = 8,
        max_life_tokens: int = 3,
        sad: bool = False,
        seed: int = 0,
    ) -> None:
        check_int(num_players, "num_players", low=2, high=5)
        if observation_type not in OBSERVATION_TYPES:
            raise ValueError(f"observation_type must be one of {sorted(OBSERVATION_TYPES)}, got {observation_type!r}")
        check_int(num_colours, "num_colours", low=1, high=5)
        check_int(num_ranks, "num_ranks", low=1, high=5)
        if hand_size is None:
            hand_size = default_hand_size(num_players)
        check_int(hand_size, "hand_size", low=1, high=8)  # HLE keeps reveal outcomes in 8-bit masks
        check_int(max_information_tokens, "max_information_tokens", low=1, high=100)
        check_int(max_life_tokens, "max_life_tokens", low=1, high=100)
        if not isinstance(sad, bool):
            raise TypeError(f"sad must be a bool, got {type(sad).__name__}")
        check_int(seed, "seed", low=0, high=2**63 - 1)
        cards = deck_size(num_colours, num_ranks)
        if hand_size * num_players > cards:
            raise ValueError(f"hand_size * num_players = {hand_size * num_players} exceeds the deck's {cards} cards")

        self._ffi, self._lib = load_pyhanabi()
        ffi, lib = self._ffi, self._lib
        self.num_agents = num_players
        self.num_players = num_players
        self.num_colours = num_colours
        self.num_ranks = num_ranks
        self.hand_size = hand_size
        self.max_information_tokens = max_information_tokens
        self.max_life_tokens = max_life_tokens
        self.observation_type = observation_type
        self.sad = sad
        params = {
            "players": num_players,
            "colors": num_colours,
            "ranks": num_ranks,
            "hand_size": hand_size,
            "max_information_tokens": max_information_tokens,
            "max_life_tokens": max_life_tokens,
            "observation_type": OBSERVATION_TYPES[observation_type],
            "random_start_player": 0,
            "seed": 1,
        }
        keep = [ffi.new("char[]", str(x).encode("ascii")) for kv in params.items() for x in kv]
        self._game = ffi.new("pyhanabi_game_t*")
        lib.NewGame(self._game, len(keep), ffi.new("char*[]", keep))
        self._encoder = ffi.new("pyhanabi_observation_encoder_t*")
        lib.NewObservationEncoder(self._encoder, self._game, 0)
        c_shape = lib.ObservationShape(self._encoder)
        self.hle_obs_dim = int(ffi.string(c_shape).decode("ascii").split(",")[0])
        lib.DeleteString(c_shape)
        self.num_actions = int(lib.MaxMoves(self._game))
        self.obs_dim = self.hle_obs_dim + (self.num_actions if sad else 0)
        self._moves = []
        for uid in range(self.num_actions):
            m = ffi.new("pyhanabi_move_t*")
            lib.GetMoveByUid(self._game, uid, m)
            self._moves.append(m)
        self._deals = DealMoves(ffi, lib, self._game, num_colours, num_ranks, hand_size)
        self._generator = torch.Generator().manual_seed(seed)
        self._log_prob_deck = deck_log_probability(num_colours, num_ranks)
        self._state: object | None = None
        self._deck: tuple[int, ...] = ()
        self._dealt = 0
        self._greedy: tuple[int, int] | None = None  # (actor, greedy uid) for the SAD block
        self._obs_cache: torch.Tensor | None = None
        self.last_outcome: object = None
        self.last_outcome_probability: float = 1.0

    # ----------------------------------------------------------------- lifecycle
    def reset(self, outcome: object = None) -> None:
        """Start a game from deck ``outcome`` (card ids in dealing order) or a sampled deck."""
        deck = (
            random_deck(self._generator, self.num_colours, self.num_ranks)
            if outcome is None
            else as_deck(outcome, self.num_colours, self.num_ranks)
        )
        self._free_state()
        self._state = self._ffi.new("pyhanabi_state_t*")
        self._lib.NewState(self._game, self._state)
        self._deck, self._dealt, self._greedy, self._obs_cache = deck, 0, None, None
        self._deal_pending()
        self.last_outcome = deck
        self.last_outcome_probability = math.exp(self._log_prob_deck)

    def step(self, actions: Sequence[int] | torch.Tensor, outcome: object = None, *, greedy_actions: Sequence[int] | torch.Tensor | None = None) -> float:
        """Apply the acting player's entry of ``actions`` (one move uid per player); return the reward.

        Entries of players who are not acting are ignored (they must still be ints, e.g. -1).
        ``outcome`` must be None: the deck fixed at ``reset`` decides every deal.
        ``greedy_actions`` (SAD only): the acting player's greedy move uid, shown to the others;
        defaults to the move taken. Raises ValueError/TypeError on any bad argument.
        """
        self._require_running()
        if outcome is not None:
            raise ValueError("outcome must be None: every deal is fixed by the deck given to reset()")
        actor = self.current_player
        move = self._agent_entry(actions, "actions", actor)
        greedy = move
        if greedy_actions is not None:
            if not self.sad:
                raise ValueError("greedy_actions is only accepted when the env was built with sad=True")
            greedy = self._agent_entry(greedy_actions, "greedy_actions", actor)
        return self._apply(actor, move, greedy)

    def play(self, move: int, greedy: int | None = None) -> float:
        """Apply move uid ``move`` for the acting player (turn-based shortcut for ``step``)."""
        self._require_running()
        actor = self.current_player
        move = self._check_move(move, "move", actor)
        if greedy is not None:
            if not self.sad:
                raise ValueError("greedy is only accepted when the env was built with sad=True")
            greedy = self._check_move(greedy, "greedy", actor)
        return self._apply(actor, move, move if greedy is None else greedy)

    # --------------------------------------------------------------- observations
    def observations(self) -> torch.Tensor:
        """FloatTensor [num_players, obs_dim]: row p is player p's own canonical observation."""
        self._require_state()
        if self._obs_cache is None:
            rows = np.zeros((self.num_players, self.obs_dim), dtype=np.float32)
            for p in range(self.num_players):
                rows[p, : self.hle_obs_dim] = self._encode(p)
            if self.sad and self._greedy is not None:
                actor, uid = self._greedy
                rows[:, self.hle_obs_dim + uid] = 1.0
                rows[actor, self.hle_obs_dim :] = 0.0
            self._obs_cache = torch.from_numpy(rows)
        return self._obs_cache.clone()

    def observation(self, player: int) -> torch.Tensor:
        """FloatTensor [obs_dim]: player ``player``'s observation."""
        check_int(player, "player", low=0, high=self.num_players - 1)
        return self.observations()[player]

    def legal_actions(self) -> torch.Tensor:
        """BoolTensor [num_players, num_actions]; only the acting player's row has True entries."""
        self._require_state()
        mask = np.zeros((self.num_players, self.num_actions), dtype=np.bool_)
        if not self.terminal:
            mask[self.current_player, self.legal_moves()] = True
        return torch.from_numpy(mask)

    def legal_moves(self) -> list[int]:
        """The acting player's legal move uids, ascending; [] when the game is over."""
        self._require_state()
        if self.terminal:
            return []
        lib, state = self._lib, self._state
        return [uid for uid, m in enumerate(self._moves) if lib.MoveIsLegal(state, m)]

    # ------------------------------------------------------------------ status
    @property
    def terminal(self) -> bool:
        """Whether the game has ended (True before the first ``reset``: no game is running)."""
        if self._state is None:
            return True
        return self._lib.StateEndOfGameStatus(self._state) != 0

    @property
    def current_player(self) -> int:
        """The acting player (meaningless once ``terminal``)."""
        self._require_state()
        return int(self._lib.StateCurPlayer(self._state))

    @property
    def score(self) -> int:
        """HLE's score: the fireworks total, or 0 once all lives are lost."""
        self._require_state()
        return int(self._lib.StateScore(self._state))

    @property
    def fireworks(self) -> list[int]:
        """Cards played per colour."""
        self._require_state()
        return [int(self._lib.StateFireworks(self._state, c)) for c in range(self.num_colours)]

    @property
    def lives(self) -> int:
        self._require_state()
        return int(self._lib.StateLifeTokens(self._state))

    @property
    def information_tokens(self) -> int:
        self._require_state()
        return int(self._lib.StateInformationTokens(self._state))

    @property
    def bombed_out(self) -> bool:
        """True when all lives are lost (the game ends with score 0)."""
        return self.lives == 0

    @property
    def deck(self) -> tuple[int, ...]:
        """The deck of the current game, in dealing order."""
        self._require_state()
        return self._deck

    @property
    def cards_dealt(self) -> int:
        self._require_state()
        return self._dealt

    def hands(self) -> list[list[int]]:
        """Card ids in every hand, slot 0 (oldest) first: the true state, for tests and evaluation."""
        self._require_state()
        ffi, lib = self._ffi, self._lib
        card = ffi.new("pyhanabi_card_t*")
        out = []
        for p in range(self.num_players):
            row = []
            for i in range(lib.StateGetHandSize(self._state, p)):
                lib.StateGetHandCard(self._state, p, i, card)
                row.append(card.color * self.num_ranks + card.rank)
            out.append(row)
        return out

    def relabel_outcome(self, outcome: object, perms: Mapping[str, torch.Tensor]) -> object:
        """Relabel a deck by ``perms["colour"]`` (image array); None stays None."""
        if outcome is None:
            return None
        if not isinstance(perms, Mapping):
            raise TypeError(f"perms must be a mapping label-set name -> permutation, got {type(perms).__name__}")
        sigma = perms.get("colour")
        deck = as_deck(outcome, self.num_colours, self.num_ranks)
        return deck if sigma is None else relabel_deck(deck, sigma, self.num_ranks)

    def __str__(self) -> str:
        if self._state is None:
            return "HanabiEnv(not reset)"
        c = self._lib.StateToString(self._state)
        text = self._ffi.string(c).decode("ascii")
        self._lib.DeleteString(c)
        return text

    # ---------------------------------------------------------------- internals
    def _require_state(self) -> None:
        if self._state is None:
            raise RuntimeError("call reset() first")

    def _require_running(self) -> None:
        self._require_state()
        if self.terminal:
            raise ValueError("the game is over (terminal); call reset() to start a new one")

    def _check_move(self, move: object, name: str, actor: int) -> int:
        check_int(move, name, low=0, high=self.num_actions - 1)
        if not self._lib.MoveIsLegal(self._state, self._moves[move]):
            raise ValueError(f"{name} = {move} is not legal for player {actor}; legal move uids: {self.legal_moves()}")
        return move

    def _agent_entry(self, values: object, name: str, actor: int) -> int:
        if isinstance(values, torch.Tensor):
            if values.dim() != 1 or values.dtype in (torch.bool,) or values.dtype.is_floating_point or values.dtype.is_complex:
                raise TypeError(f"{name} as a tensor must be 1-D of an integer dtype, got shape {tuple(values.shape)} {values.dtype}")
            values = values.tolist()
        if not isinstance(values, (list, tuple)):
            raise TypeError(f"{name} must be a list/tuple of {self.num_players} ints (one per player), got {type(values).__name__}")
        if len(values) != self.num_players:
            raise ValueError(f"{name} must hold one entry per player ({self.num_players}), got {len(values)}")
        for p, v in enumerate(values):
            if p != actor and (isinstance(v, bool) or not isinstance(v, int)):
                raise TypeError(f"{name}[{p}] must be a Python int (ignored: player {p} is not acting), got {type(v).__name__}")
        return self._check_move(values[actor], f"{name}[{actor}]", actor)

    def _apply(self, actor: int, move: int, greedy: int) -> float:
        lib = self._lib
        before = lib.StateScore(self._state)
        lib.StateApplyMove(self._state, self._moves[move])
        self._deal_pending()
        self._greedy = (actor, greedy)
        self._obs_cache = None
        self.last_outcome, self.last_outcome_probability = None, 1.0
        return float(lib.StateScore(self._state) - before)

    def _deal_pending(self) -> None:
        lib, state = self._lib, self._state
        while lib.StateCurPlayer(state) == _CHANCE:
            if self._dealt >= len(self._deck):
                raise RuntimeError("HLE asked for a card after the whole deck was dealt")
            move = self._deals[self._deck[self._dealt]]
            if not lib.MoveIsLegal(state, move):
                raise RuntimeError(f"deck[{self._dealt}] = {self._deck[self._dealt]} is not in HLE's remaining deck")
            lib.StateApplyMove(state, move)
            self._dealt += 1

    def _encode(self, player: int) -> np.ndarray:
        ffi, lib = self._ffi, self._lib
        obs = ffi.new("pyhanabi_observation_t*")
        lib.NewObservation(self._state, player, obs)
        c = lib.EncodeObservation(self._encoder, obs)
        text = ffi.string(c)
        lib.DeleteString(c)
        lib.DeleteObservation(obs)
        if len(text) != 2 * self.hle_obs_dim - 1:
            raise RuntimeError(f"HLE encoding has {len(text)} characters, expected {2 * self.hle_obs_dim - 1}")
        return np.frombuffer(text, dtype=np.uint8)[::2] - ord("0")

    def _free_state(self) -> None:
        if getattr(self, "_state", None) is not None:
            self._lib.DeleteState(self._state)
            self._state = None

    def __del__(self) -> None:
        lib = getattr(self, "_lib", None)
        if lib is None:
            return
        self._free_state()
        for m in getattr(self, "_moves", []):
            lib.DeleteMove(m)
        self._moves = []
        if getattr(self, "_encoder", None) is not None:
            lib.DeleteObservationEncoder(self._encoder)
            self._encoder = None
        deals = getattr(self, "_deals", None)
        if deals is not None:
            deals.close()
            self._deals = None
        if getattr(self, "_game", None) is not None:
            lib.DeleteGame(self._game)
            self._game = None
