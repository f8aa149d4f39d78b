"""``HanabiEnv``: Hanabi on the Hanabi Learning Environment (HLE 0.0.4) as an eqc DecPOMDP.

It drives HLE's C++ core through its cffi layer (``native``). Every argument is validated in
Python before it reaches C++, because HLE aborts the whole process on an illegal move. All chance
is fixed by the deck passed to (or sampled by) ``reset``: cards are dealt in deck order, never by
HLE's random number generator. Card ids, move uids and player numbering:
:mod:`eqc.domains.hanabi.rules`. Player 0 acts first. (Over 400 lines: one class, most of it
the validation that keeps illegal input away from C++.)
"""

from __future__ import annotations

import copy as _copy
import math
from collections.abc import Mapping, Sequence
from typing import NoReturn

import numpy as np
import torch

from eqc._checks import check_int
from eqc.domains.hanabi.dealing import as_deck, deck_log_probability, random_deck, relabel_deck
from eqc.domains.hanabi.hle.native import CHANCE, HLEGame
from eqc.domains.hanabi.hle.variants import ObservationVariants
from eqc.domains.hanabi.rules import HanabiRules, check_rules

__all__ = ["HanabiEnv"]

_RELABEL_KEYS = ("colour", "slot")


class HanabiEnv:
    """One game of Hanabi for 2-5 players on HLE, implementing the eqc ``DecPOMDP`` protocol.

    Args:
        rules: the game and the observation variant (``HanabiRules``; default: 2 players,
            standard game, HLE's canonical "full" observation).
        seed: seeds the torch.Generator used when ``reset()`` samples a deck.

    The vocabulary is shared with ``HanabiBatch`` (one game here, a batch there):
    ``observations()`` float [P, obs_dim] (row p: player p's view), ``legal_move_mask()`` bool
    [num_moves] of the player to act (all False once ``terminal``), ``current_player``,
    ``terminal``, ``score``, ``lives``, ``info_tokens``, ``fireworks``, ``cards_left``,
    ``moves_made``. Protocol methods: ``reset(outcome)``, ``step(actions)`` (one entry per player;
    only the actor's is used), ``legal_actions()`` bool [P, num_moves], ``relabel_outcome``.
    ``play(move)`` is the turn-based shortcut. Rewards are the change of HLE's score (0 once all
    lives are lost), so losing the last life yields minus the fireworks total, as in HLE's rl_env.

    Moves must be Python ``int`` s (not bools, numpy integers or tensor elements: convert with
    ``int()``), in range and legal; a whole ``actions`` vector may be a 1-D integer tensor. A move
    after the game ended raises ValueError (as in ``HanabiBatch``); calls before ``reset``
    RuntimeError. ``copy.copy``/``copy.deepcopy`` give an independent env (HLE's state is copied
    in C++; the immutable C++ game is shared); pickling is refused (C++ state).
    """

    def __init__(self, rules: HanabiRules | None = None, *, seed: int = 0) -> None:
        self.rules = r = check_rules(rules)
        check_int(seed, "seed", low=0, high=2**63 - 1)
        self._hle = HLEGame(r)
        self.num_players = self.num_agents = r.num_players
        self.num_colours, self.num_ranks, self.hand_size = r.num_colours, r.num_ranks, r.hand_size
        self.max_info_tokens, self.max_lives = r.max_info_tokens, r.max_lives
        self.observation_type = r.observation_type
        self.num_moves, self.obs_dim, self.canonical_dim = r.num_moves, r.obs_dim, r.canonical_dim
        if self._hle.obs_dim != r.canonical_dim or len(self._hle.moves) != r.num_moves:
            raise RuntimeError(
                f"HLE reports {self._hle.obs_dim} floats and {len(self._hle.moves)} moves; "
                f"eqc's layouts expect {r.canonical_dim} and {r.num_moves}"
            )
        self._variants = ObservationVariants(r, self._hle)
        self._generator = torch.Generator().manual_seed(seed)
        self._log_prob_deck = deck_log_probability(r.num_colours, r.num_ranks)
        self._state: object | None = None
        self._deck: tuple[int, ...] = ()
        self._dealt = 0
        self._moves_made = 0
        self._sad: tuple[int, int | torch.Tensor] | None = None  # (actor, greedy uid or [P, E] rows) for the SAD block
        self._obs_cache: torch.Tensor | None = None
        self.last_outcome: object = None
        self.last_outcome_probability: float = 1.0

    # ----------------------------------------------------------------- lifecycle
    def reset(self, outcome: object = None) -> None:
        """Start a game from deck ``outcome`` (card ids in dealing order) or a sampled deck."""
        r = self.rules
        deck = random_deck(self._generator, r.num_colours, r.num_ranks) if outcome is None else as_deck(outcome, r.num_colours, r.num_ranks)
        self._free_state()
        self._state = self._hle.new_state()
        self._deck, self._dealt, self._moves_made, self._sad, self._obs_cache = deck, 0, 0, None, None
        self._deal_pending()
        self.last_outcome = deck
        self.last_outcome_probability = math.exp(self._log_prob_deck)

    def step(
        self, actions: Sequence[int] | torch.Tensor, outcome: object = None, *, greedy_actions: Sequence[int] | torch.Tensor | None = None
    ) -> float:
        """Apply the acting player's entry of ``actions`` (one move uid per player); return the reward.

        Entries of players who are not acting are ignored (they must still be ints, e.g. -1).
        ``outcome`` must be None: the deck fixed at ``reset`` decides every deal.
        ``greedy_actions`` (SAD variants only): the actor's greedy move uid; defaults to the move made.
        """
        self._require_running()
        if outcome is not None:
            raise ValueError("outcome must be None: every deal is fixed by the deck given to reset()")
        actor = self.current_player
        move = self._agent_entry(actions, "actions", actor)
        greedy = move
        if greedy_actions is not None:
            self._require_sad("greedy_actions")
            greedy = self._agent_entry(greedy_actions, "greedy_actions", actor)
        return self._apply(actor, move, greedy)

    def play(self, move: int, greedy: int | None = None) -> float:
        """Apply move uid ``move`` for the acting player (turn-based shortcut for ``step``)."""
        self._require_running()
        actor = self.current_player
        move = self._check_move(move, "move", actor)
        if greedy is not None:
            self._require_sad("greedy")
            greedy = self._check_move(greedy, "greedy", actor)
        return self._apply(actor, move, move if greedy is None else greedy)

    # --------------------------------------------------------------- observations
    def observations(self) -> torch.Tensor:
        """Float [num_players, obs_dim]: row p is player p's observation (``rules``' variant)."""
        self._require_state()
        if self._obs_cache is None:
            array = np.zeros((self.num_players, self.obs_dim), dtype=np.float32)
            for p in range(self.num_players):
                array[p, : self.canonical_dim] = self._encode(p)
            rows = torch.from_numpy(array)
            if self.rules.knowledge == "v0_belief":
                self._variants.v0_belief(rows, self._state)
            if self._sad is not None:
                actor, value = self._sad
                if self.rules.sad == "greedy_onehot":
                    rows[:, self.canonical_dim + value] = 1.0
                    rows[actor, self.canonical_dim :] = 0.0
                else:
                    rows[:, self.canonical_dim :] = value
            self._obs_cache = rows
        return self._obs_cache.clone()

    def observation(self, player: int) -> torch.Tensor:
        """Float [obs_dim]: player ``player``'s observation."""
        check_int(player, "player", low=0, high=self.num_players - 1)
        return self.observations()[player]

    def legal_move_mask(self) -> torch.Tensor:
        """Bool [num_moves]: the legal moves of the player to act; all False once ``terminal``."""
        mask = torch.zeros(self.num_moves, dtype=torch.bool)
        mask[self.legal_move_uids()] = True
        return mask

    def legal_actions(self) -> torch.Tensor:
        """Bool [num_players, num_moves] (the DecPOMDP protocol): only the acting player's row has True entries."""
        mask = torch.zeros(self.num_players, self.num_moves, dtype=torch.bool)
        if not self.terminal:
            mask[self.current_player] = self.legal_move_mask()
        return mask

    def legal_move_uids(self) -> list[int]:
        """The acting player's legal move uids, ascending; [] once ``terminal``."""
        self._require_state()
        if self.terminal:
            return []
        lib, state = self._hle.lib, self._state
        return [uid for uid, m in enumerate(self._hle.moves) if lib.MoveIsLegal(state, m)]


    # ------------------------------------------------------------------ status
    @property
    def terminal(self) -> bool:
        """Whether the game has ended (True before the first ``reset``: no game is running)."""
        return self._state is None or self._hle.lib.StateEndOfGameStatus(self._state) != 0

    @property
    def current_player(self) -> int:
        """The seat to act (meaningless once ``terminal``)."""
        self._require_state()
        return int(self._hle.lib.StateCurPlayer(self._state))

    @property
    def score(self) -> int:
        """HLE's score: the fireworks total, or 0 once all lives are lost."""
        self._require_state()
        return int(self._hle.lib.StateScore(self._state))

    @property
    def fireworks(self) -> list[int]:
        """Cards played per colour."""
        self._require_state()
        return [int(self._hle.lib.StateFireworks(self._state, c)) for c in range(self.num_colours)]

    @property
    def lives(self) -> int:
        """Life tokens left."""
        self._require_state()
        return int(self._hle.lib.StateLifeTokens(self._state))

    @property
    def info_tokens(self) -> int:
        """Information tokens held."""
        self._require_state()
        return int(self._hle.lib.StateInformationTokens(self._state))


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
        """Cards dealt so far (``cards_left = rules.deck_size - cards_dealt``)."""
        self._require_state()
        return self._dealt

    @property
    def cards_left(self) -> int:
        """Cards left in the deck."""
        return self.rules.deck_size - self.cards_dealt

    @property
    def moves_made(self) -> int:
        """Moves made in the current game."""
        self._require_state()
        return self._moves_made

    @property
    def uses_sad(self) -> bool:
        """Whether a SAD block is appended (``rules.sad != "off"``)."""
        return self.rules.sad != "off"

    def hands(self) -> list[list[int]]:
        """Card ids in every hand, slot 0 (oldest) first: the true state, for tests and evaluation."""
        self._require_state()
        ffi, lib = self._hle.ffi, self._hle.lib
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
        """Relabel a deck by ``perms["colour"]`` (an image array: card (c, r) -> (sigma(c), r)) and ``perms["slot"]``
        (the card dealt to slot i of a starting hand is dealt to slot sigma(i)); None stays None.

        ``perms`` may only hold the keys "colour" and "slot" (from ``Symmetry.label_permutations``); any other
        key is an error that lists the allowed keys.
        """
        if not isinstance(perms, Mapping):
            raise TypeError(f"perms must be a mapping label-set name -> permutation, got {type(perms).__name__}")
        unknown = sorted(set(perms) - set(_RELABEL_KEYS), key=str)
        if unknown:
            raise ValueError(f"perms has unknown label set(s) {unknown}; HanabiEnv relabels only {list(_RELABEL_KEYS)}")
        if outcome is None:
            return None
        sigma, slots = perms.get("colour"), perms.get("slot")
        deck = as_deck(outcome, self.num_colours, self.num_ranks)
        deck = deck if sigma is None else relabel_deck(deck, sigma, self.num_ranks)
        return deck if slots is None else _relabel_starting_hands(deck, slots.tolist(), self.num_players)

    def __str__(self) -> str:
        if self._state is None:
            return "HanabiEnv(not reset)"
        c = self._hle.lib.StateToString(self._state)
        text = self._hle.ffi.string(c).decode("ascii")
        self._hle.lib.DeleteString(c)
        return text

    # ---------------------------------------------------------------- copying
    def __copy__(self) -> HanabiEnv:
        """An independent env in the same position: HLE's state copied in C++, the C++ game shared."""
        new = object.__new__(HanabiEnv)
        new.__dict__.update(self.__dict__)
        new._generator = torch.Generator().set_state(self._generator.get_state())
        new._state = None if self._state is None else self._hle.new_state(self._state)
        new._obs_cache = None
        return new

    def __deepcopy__(self, memo: dict) -> HanabiEnv:
        """Same as ``copy.copy`` (nothing mutable is shared), plus deep copies of the Python fields."""
        new = self.__copy__()
        new.last_outcome = _copy.deepcopy(self.last_outcome, memo)
        return new

    def __reduce__(self) -> NoReturn:
        raise TypeError(
            "HanabiEnv holds HLE's C++ state and cannot be pickled; save env.rules.to_dict(), env.deck and the "
            "moves made, and replay them (copy.copy(env) gives an independent copy in memory)"
        )

    # ---------------------------------------------------------------- internals
    def _require_state(self) -> None:
        if self._state is None:
            raise RuntimeError("call reset() first")

    def _require_running(self) -> None:
        self._require_state()
        if self.terminal:
            raise ValueError("the game is over (terminal); call reset() to start a new one")

    def _require_sad(self, name: str) -> None:
        if not self.uses_sad:
            raise ValueError(f"{name} is only accepted with a SAD observation (rules.sad != 'off')")

    def _check_move(self, value: object, name: str, actor: int) -> int:
        move = check_int(value, name, low=0, high=self.num_moves - 1)
        if not self._hle.lib.MoveIsLegal(self._state, self._hle.moves[move]):
            raise ValueError(f"{name} = {move} is not legal for player {actor}; legal move uids: {self.legal_move_uids()}")
        return move

    def _agent_entry(self, values: object, name: str, actor: int) -> int:
        if isinstance(values, torch.Tensor):
            if values.dim() != 1 or values.dtype == torch.bool or values.dtype.is_floating_point or values.dtype.is_complex:
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
        lib = self._hle.lib
        if self.rules.sad == "greedy_last_action":
            self._sad = (actor, self._variants.greedy_last_action(self._state, greedy))
        elif self.rules.sad == "greedy_onehot":
            self._sad = (actor, greedy)
        before = lib.StateScore(self._state)
        lib.StateApplyMove(self._state, self._hle.moves[move])
        self._deal_pending()
        self._moves_made += 1
        self._obs_cache = None
        self.last_outcome, self.last_outcome_probability = None, 1.0
        return float(lib.StateScore(self._state) - before)

    def _deal_pending(self) -> None:
        lib, state = self._hle.lib, self._state
        while lib.StateCurPlayer(state) == CHANCE:
            if self._dealt >= len(self._deck):
                raise RuntimeError("HLE asked for a card after the whole deck was dealt")
            if self._hle.deals is None:
                raise RuntimeError("HLE's game was freed")
            move = self._hle.deals[self._deck[self._dealt]]
            if not lib.MoveIsLegal(state, move):
                raise RuntimeError(f"deck[{self._dealt}] = {self._deck[self._dealt]} is not in HLE's remaining deck")
            lib.StateApplyMove(state, move)
            self._dealt += 1

    def _encode(self, player: int) -> np.ndarray:
        text = self._hle.encode(self._state, player)
        if len(text) != 2 * self.canonical_dim - 1:
            raise RuntimeError(f"HLE encoding has {len(text)} characters, expected {2 * self.canonical_dim - 1}")
        return np.frombuffer(text, dtype=np.uint8)[::2] - ord("0")

    def _free_state(self) -> None:
        if getattr(self, "_state", None) is not None:
            self._hle.lib.DeleteState(self._state)
            self._state = None

    def __del__(self) -> None:
        if getattr(self, "_hle", None) is not None:
            self._free_state()


def _relabel_starting_hands(deck: tuple[int, ...], slots: list[int], players: int) -> tuple[int, ...]:
    """``deck`` with each starting hand's card of slot i dealt to slot ``slots[i]`` (hands are dealt player by player)."""
    h = len(slots)
    out = list(deck)
    for p in range(players):
        for i in range(h):
            out[p * h + slots[i]] = deck[p * h + i]
    return tuple(out)
