"""``HanabiBatch``: many games of Hanabi at once as torch tensors, exactly HLE 0.0.4's game.

The whole game lives in dense tensors with a leading batch dimension on any torch device (see
``batched_state``); ``step`` applies one move per game without a Python loop over games and
without host-device synchronisation when ``check=False``. Observations are HLE's canonical
encoding for every player (``batched_encoding``), optionally followed by the SAD block.

Conventions: card id = colour*5 + rank; a deck lists card ids in dealing order (initial hands
player by player, then one draw after every play or discard); move uids are HLE's (for 2
players: 0-4 discard slot, 5-9 play slot, 10-14 reveal colour, 15-19 reveal rank); player 0
starts; observations number players relative to the observer.
"""

from __future__ import annotations

import torch

from eqc._checks import check_int
from eqc.domains.hanabi.batched_checks import check_decks, check_legal, check_moves
from eqc.domains.hanabi.batched_encoding import EncodingScratch, encode
from eqc.domains.hanabi.batched_rules import apply_moves, legal_moves
from eqc.domains.hanabi.batched_state import BatchState, new_state, pad_decks, restart, sample_decks, shuffle_front
from eqc.domains.hanabi.batched_tables import DECK_SIZE, MAX_LIVES, NUM_COLOURS, tables_for
from eqc.domains.hanabi.batched_variants import KNOWLEDGE_ENCODINGS, v0_belief

__all__ = ["HanabiBatch"]

# auto_reset re-deals finished games from a pool of spare decks, one per game, whose first P*h
# cards are re-drawn (``shuffle_front``) every _POOL_PERIOD steps; later draws of such games pick a
# uniform undealt card (lazy Fisher-Yates in ``apply_moves``), so every game is uniformly dealt.
# A game lasts at least MAX_LIVES moves, so a game re-dealt at step t is re-dealt again at step
# t + MAX_LIVES + 1 at the earliest: with that period no spare deck is used twice between refreshes.
_POOL_PERIOD = MAX_LIVES + 1
# Below this many games a full shuffle of the pool (one argsort) is cheaper than P*h vectorised
# Fisher-Yates steps; both give uniform deals.
_FRONT_SHUFFLE_MIN_ENVS = 256


class HanabiBatch:
    """``num_envs`` games of ``num_players``-player Hanabi on ``device``.

    Args:
        num_envs: number of games B.
        num_players: 2..5 (hand size 5 for 2-3 players, 4 for 4-5).
        device: torch device of every tensor.
        seed: seeds the ``torch.Generator`` that shuffles decks (the global RNG is never used).
        auto_reset: a finished game is re-dealt at its next ``step`` (its move is ignored; its
            reward is 0); ``restarted`` and ``final_score`` report such games. Without it a finished
            game keeps its final state and observations, and its moves are ignored. Either way, in
            checked mode the move of a finished game must still be a uid in ``0..M-1``.
        check: validate every argument (types, shapes, devices, deck contents, move legality);
            ``check=False`` is the fast path: no validation, no host-device synchronisation.
        sad: append the SAD block to observations: a one-hot over move uids of the greedy move of
            the player who acted last (``step(..., greedy=...)``, default the move made), shown to
            every player but that actor, zeros before the first move.
        knowledge: "canonical" (HLE's card-knowledge bits) or "v0_belief" (OBL's v0 belief: the
            plausible-card bits replaced by public count-based card probabilities).

    Usage: ``reset()``, then per step ``observations()`` (float [B, P, obs_dim]),
    ``legal_moves()`` (bool [B, M]; all False for finished games) and ``step(moves)``.
    ``observations(out)``/``legal_moves(out)`` write into caller-owned buffers (no allocation).
    Status tensors (``score``, ``lives``, ``info_tokens``, ``current_player``, ``done``,
    ``reward``, ``fireworks``, ``decks``, ``deck_size``, ``restarted``, ``final_score``) are copies;
    ``state`` is the live ``BatchState`` for callers that want to avoid the copies. With
    ``check=False``, ``moves`` must be valid move uids (a long tensor on ``device``): nothing is
    validated and nothing is read back to the host, so the calls can be captured by CUDA graphs
    (with ``auto_reset``, ``step`` refreshes its pool of spare decks every few steps from Python:
    capture ``observations``/``legal_moves`` and the policy, not ``step``).
    On the "meta" device (shape-only tracing) sampling uses no generator.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        device: torch.device | str = "cpu",
        seed: int = 0,
        *,
        auto_reset: bool = False,
        check: bool = True,
        sad: bool = False,
        knowledge: str = "canonical",
    ) -> None:
        check_int(num_envs, "num_envs", low=1)
        check_int(num_players, "num_players", low=2, high=5)
        check_int(seed, "seed", low=0, high=2**63 - 1)
        for name, flag in (("auto_reset", auto_reset), ("check", check), ("sad", sad)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
        if knowledge not in KNOWLEDGE_ENCODINGS:
            raise ValueError(f"knowledge must be one of {KNOWLEDGE_ENCODINGS}, got {knowledge!r}")
        self.device = torch.empty(0, device=device).device  # canonical: 'cuda' -> 'cuda:0'
        self.num_envs = num_envs
        self.num_players = num_players
        self.auto_reset = auto_reset
        self.check = check
        self.sad = sad
        self.knowledge = knowledge
        self.tables = tables_for(num_players, self.device)
        self.hand_size = self.tables.hand_size
        self.num_moves = self.tables.num_moves
        self.canonical_dim = self.tables.layout.dim
        self.obs_dim = self.canonical_dim + (self.num_moves if sad else 0)
        # The meta device (shape-only tracing; the tests use it to prove the fast path never reads a
        # tensor value) has no random generator.
        self.generator: torch.Generator | None = None if self.device.type == "meta" else torch.Generator(device=self.device).manual_seed(seed)
        self._state = new_state(num_envs, self.tables)
        self._greedy = torch.full((num_envs,), -1, dtype=torch.long, device=self.device)
        self._legal = torch.zeros(num_envs, self.num_moves, dtype=torch.bool, device=self.device)
        self._pool = self._state.deck.clone()
        self._scratch = EncodingScratch(num_envs, self.tables)
        self._steps = 0
        self._started = False

    # ---------------------------------------------------------------- lifecycle
    def reset(self, decks: torch.Tensor | None = None) -> None:
        """Deal new games in every environment: from ``decks`` (long [B, 50]) or shuffled decks."""
        if decks is None:
            decks = sample_decks(self.num_envs, self.tables, self.generator)
        else:
            if self.check:
                decks = check_decks(decks, self.num_envs, self.tables)
            decks = pad_decks(decks)
        s = self._state
        restart(s, self.tables, torch.ones_like(s.done), decks, shuffle_draws=False)
        s.restarted.fill_(False)
        s.final_score.fill_(-1)
        self._greedy.fill_(-1)
        self._steps = 0
        self._started = True

    def step(self, moves: torch.Tensor, greedy: torch.Tensor | None = None) -> torch.Tensor:
        """Apply ``moves`` (long [B] move uids of the players to act); return the rewards (float [B]).

        Moves of finished games are ignored (with ``auto_reset`` those games are re-dealt instead).
        ``greedy`` (SAD only, long [B]): the actors' greedy moves, shown to their partners.
        """
        if not self._started:
            raise RuntimeError("call reset() before step()")
        s, t = self._state, self.tables
        if self.check:
            moves = check_moves(moves, self.num_envs, t)
            check_legal(moves, legal_moves(s, t, self._legal), ~s.done)
        elif moves.dtype != torch.long:
            moves = moves.long()
        if greedy is not None:
            greedy = self._check_greedy(greedy)
        if self.auto_reset:
            if self._steps % _POOL_PERIOD == 0:
                if self.num_envs >= _FRONT_SHUFFLE_MIN_ENVS:
                    shuffle_front(self._pool, self.num_players * self.hand_size, self.generator)
                else:
                    self._pool.copy_(sample_decks(self.num_envs, t, self.generator))  # keep the storage (CUDA graphs)
            finished = s.done.clone()
            restart(s, t, finished, self._pool, shuffle_draws=True)
            active = ~finished
            if self.sad:
                self._greedy.masked_fill_(finished, -1)
            noise = torch.rand(self.num_envs, generator=self.generator, device=self.device)
        else:
            active = ~s.done
            s.restarted.fill_(False)
            s.final_score.fill_(-1)
            noise = None
        apply_moves(s, t, moves, active, noise)
        if self.sad:
            self._greedy.copy_(torch.where(active, moves if greedy is None else greedy, self._greedy))
        self._steps += 1
        return s.reward.clone()

    # ---------------------------------------------------------------- views
    def observations(self, out: torch.Tensor | None = None) -> torch.Tensor:
        """Float [B, P, obs_dim]: every player's observation (players relative to the observer).

        ``out``: an optional float32 buffer of that shape on the env's device to write into.
        """
        self._require_started()
        shape = (self.num_envs, self.num_players, self.obs_dim)
        if out is None:
            out = torch.empty(shape, dtype=torch.float32, device=self.device)
        elif self.check:
            if not isinstance(out, torch.Tensor) or out.dtype != torch.float32:
                raise TypeError(f"out must be a float32 torch.Tensor, got {getattr(out, 'dtype', type(out).__name__)}")
            if tuple(out.shape) != shape or out.device != self.device:
                raise ValueError(f"out must have shape {list(shape)} on {self.device}, got {list(out.shape)} on {out.device}")
        s, t = self._state, self.tables
        extra = None
        if self.sad:
            shown = (self._greedy >= 0).view(-1, 1) & (t.arange_players != s.last_player.view(-1, 1))
            row = torch.where(shown, self._greedy.view(-1, 1), self.num_moves)
            extra = t.sad_rows.index_select(0, row.view(-1)).view(self.num_envs, self.num_players, self.num_moves)
        encode(s, t, out, self._scratch, extra)
        if self.knowledge == "v0_belief":
            v0_belief(s, t, out)
        return out

    def legal_moves(self, out: torch.Tensor | None = None) -> torch.Tensor:
        """Bool [B, M]: HLE's legal moves of the player to act; all False for finished games.

        ``out``: an optional bool buffer of that shape on the env's device to write into.
        """
        self._require_started()
        shape = (self.num_envs, self.num_moves)
        if out is None:
            out = torch.empty(shape, dtype=torch.bool, device=self.device)
        elif self.check:
            if not isinstance(out, torch.Tensor) or out.dtype != torch.bool:
                raise TypeError(f"out must be a bool torch.Tensor, got {getattr(out, 'dtype', type(out).__name__)}")
            if tuple(out.shape) != shape or out.device != self.device:
                raise ValueError(f"out must have shape {list(shape)} on {self.device}, got {list(out.shape)} on {out.device}")
        return legal_moves(self._state, self.tables, out)

    @property
    def state(self) -> BatchState:
        """The live state tensors (updated in place by ``step``/``reset``)."""
        return self._state

    @property
    def current_player(self) -> torch.Tensor:
        """Long [B]: seat of the player to act."""
        return self._state.current.clone()

    @property
    def score(self) -> torch.Tensor:
        """Long [B]: HLE's score (fireworks total; 0 once all lives are lost)."""
        return self._state.score.clone()

    @property
    def lives(self) -> torch.Tensor:
        """Long [B]: life tokens left."""
        return self._state.lives.clone()

    @property
    def info_tokens(self) -> torch.Tensor:
        """Long [B]: information tokens held."""
        return self._state.info.clone()

    @property
    def fireworks(self) -> torch.Tensor:
        """Long [B, 5]: cards played per colour."""
        return self._state.fireworks[:, :NUM_COLOURS].clone()

    @property
    def decks(self) -> torch.Tensor:
        """Long [B, 50]: each game's deck; its first ``50 - deck_size`` cards were dealt in this order
        (with auto_reset, draws pick uniformly among the undealt cards, so only that prefix is fixed)."""
        return self._state.deck[:, :DECK_SIZE].long()

    @property
    def deck_size(self) -> torch.Tensor:
        """Long [B]: cards left in the deck."""
        return DECK_SIZE - self._state.dealt

    @property
    def done(self) -> torch.Tensor:
        """Bool [B]: the game is over."""
        return self._state.done.clone()

    @property
    def reward(self) -> torch.Tensor:
        """Float [B]: reward of the last step (change of the score)."""
        return self._state.reward.clone()

    @property
    def restarted(self) -> torch.Tensor:
        """Bool [B]: games re-dealt by the last step (auto_reset)."""
        return self._state.restarted.clone()

    @property
    def final_score(self) -> torch.Tensor:
        """Long [B]: score of the game that finished, where the last step re-dealt it; else -1."""
        return self._state.final_score.clone()

    # ---------------------------------------------------------------- internals
    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("call reset() first")

    def _check_greedy(self, greedy: torch.Tensor) -> torch.Tensor:
        if not self.sad:
            raise ValueError("greedy is only accepted when the env was built with sad=True")
        if not self.check:
            return greedy.long()
        greedy = check_moves(greedy, self.num_envs, self.tables, "greedy")
        check_legal(greedy, self._legal, ~self._state.done, "greedy")
        return greedy
