"""``HanabiBatch``: many games of Hanabi at once as torch tensors, exactly HLE 0.0.4's game.

The whole game lives in dense tensors with a leading batch dimension on any torch device (see
``state``); ``step`` applies one move per game without a Python loop over games and without
host-device synchronisation when ``check=False``. Observations are HLE's canonical encoding for
every player (``encoding``) in the variant of ``HanabiRules`` (``variants``). Card ids, move uids
and player numbering: :mod:`eqc.domains.hanabi.rules`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import fields

import torch

from eqc._checks import check_bool, check_device, check_int
from eqc._compile import check_compilable, compiled, mark_static
from eqc.domains.hanabi.batched.checks import check_decks, check_legal, check_moves, check_out
from eqc.domains.hanabi.batched.dynamics import apply_moves, last_action_codes, legal_moves
from eqc.domains.hanabi.batched.encoding import EncodingScratch, encode
from eqc.domains.hanabi.batched.state import BatchState, new_state, pad_decks, restart, shuffle_front, shuffled_decks
from eqc.domains.hanabi.batched.tables import HanabiTables, tables_for
from eqc.domains.hanabi.batched.variants import sad_block, v0_belief
from eqc.domains.hanabi.rules import HanabiRules, check_rules

__all__ = ["HanabiBatch"]

# Below this many games a full shuffle of the spare-deck pool (one argsort) is cheaper than P*h
# vectorised Fisher-Yates steps; both give uniform deals.
_FRONT_SHUFFLE_MIN_ENVS = 256


class HanabiBatch:
    """``num_envs`` games of Hanabi under ``rules`` on ``device``.

    Args:
        num_envs: number of games B.
        rules: the game and observation variant (``HanabiRules``, any deck shape; default:
            2 players, standard game, canonical "full" observation).
        device: torch device of every tensor ("cpu", "cuda", ...).
        seed: seeds the ``torch.Generator`` that shuffles decks (the global RNG is never used; :meth:`joined` joins
            the games of several batches, each block dealt from its own batch's generator).
        auto_reset: same-step reset. A game that ends on a ``step`` is re-dealt within that
            call: ``step`` returns the reward of the move made (the ending move included),
            ``ended`` marks those games and ``final_score`` gives their final score (-1 elsewhere);
            afterwards ``observations()``/``legal_move_mask()`` describe the new game, so every
            game always has a legal move and ``terminal`` stays all False. Without it a finished
            game keeps its final state and observations, has no legal move, and its entries of
            ``moves`` are ignored.
        check: validate every argument (types, shapes, devices, deck contents, move legality);
            ``check=False`` is the fast path: no validation, no host-device synchronisation.
        compile: run the tensor work of ``step``, ``observations`` and ``legal_move_mask`` compiled
            (:func:`eqc._compile.compiled`: ``torch.compile``, mode "reduce-overhead", i.e. CUDA graphs, on CUDA; plain
            inductor on a CPU); the games are the same bit for bit. The spare-deck refresh and the random draws of
            ``auto_reset`` stay outside (eager, on the deck generator). The first calls compile (seconds).

    Usage::

        env = HanabiBatch(1024, HanabiRules(knowledge="v0_belief"), auto_reset=True)
        env.reset()
        for _ in range(steps):
            obs, legal = env.observations(), env.legal_move_mask()   # [B, P, obs_dim], [B, M]
            moves = torch.multinomial(legal.float(), 1).squeeze(1)   # a move of env.current_player
            reward = env.step(moves)                                  # [B]
            scores = env.final_score[env.ended]                       # games that just ended

    ``observations(out)``/``legal_move_mask(out)`` write into caller-owned buffers. Status tensors
    (``current_player``, ``score``, ``lives``, ``info_tokens``, ``fireworks``, ``cards_left``,
    ``moves_made``, ``terminal``, ``reward``, ``ended``, ``final_score``, ``decks``) are copies;
    ``state`` is the live ``BatchState``. The end of a game has one word, ``terminal`` (the game is
    over, as ``HanabiEnv.terminal``); ``ended`` is the event (the game's last move was made by the
    last ``step``). With ``check=False`` ``moves`` must be valid move uids
    (a long tensor on ``device``); nothing is read back to the host, so the calls can be captured
    by CUDA graphs; ``compile=True`` does that for the tensor work of ``step`` and the views (with ``auto_reset`` the
    spare-deck refresh every few steps and the draws stay eager, outside the captured graphs).
    ``state_dict()``/``load_state_dict()`` save the games in progress and continue them in another
    batch of the same games, on any device (exact resume of training; the deck generator is saved beside).
    In checked mode a ``step`` when every game is over raises ValueError, as ``HanabiEnv`` does
    for a move after the end; a ``step`` or view before ``reset`` raises RuntimeError.
    On the "meta" device (shape-only tracing) sampling uses no generator.
    """

    def __init__(
        self,
        num_envs: int,
        rules: HanabiRules | None = None,
        device: torch.device | str = "cpu",
        seed: int = 0,
        *,
        auto_reset: bool = False,
        check: bool = True,
        compile: bool = False,
    ) -> None:
        self.rules = r = check_rules(rules)
        check_int(num_envs, "num_envs", low=1)
        self.device = check_device(device)
        check_int(seed, "seed", low=0, high=2**63 - 1)
        self.auto_reset = check_bool(auto_reset, "auto_reset")
        self.check = check_bool(check, "check")
        self.compile = check_bool(compile, "compile")
        if self.compile:
            check_compilable(self.device)
        self.tables = tables_for(r, self.device)
        _check_memory(num_envs, r, self.device)
        self.num_envs = num_envs
        self.num_players, self.hand_size = r.num_players, r.hand_size
        self.num_moves, self.obs_dim, self.canonical_dim = r.num_moves, r.obs_dim, r.canonical_dim
        # The meta device (shape-only tracing; the tests use it to prove the fast path never reads a
        # tensor value) has no random generator.
        generator = None if self.device.type == "meta" else torch.Generator(device=self.device).manual_seed(seed)
        #: The deck generators, one per block of ``block_envs`` games (one block unless :meth:`joined`).
        self.generators: tuple[torch.Generator | None, ...] = (generator,)
        self.block_envs = num_envs
        self._state = new_state(num_envs, self.tables)
        # SAD: the last actor's seat (-1: none) and greedy move uid (greedy_onehot) or last-action code (greedy_last_action).
        self._sad_player = torch.full((num_envs,), -1, dtype=torch.long, device=self.device)
        self._sad_value = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self._legal = torch.zeros(num_envs, self.num_moves, dtype=torch.bool, device=self.device)
        self._pool = self._state.deck.clone()
        # A game lasts at least this many moves (bomb-out, completed fireworks or deck-out, whichever
        # is fastest), so refreshing the spare-deck pool this often means no game is re-dealt twice
        # from one pool deck (re-dealt at step t, it ends at step t + period at the earliest).
        self._pool_period = min(r.max_lives, r.max_score, r.deck_size - r.num_players * r.hand_size + r.num_players)
        self._scratch = EncodingScratch(num_envs, self.tables)
        self._steps = 0
        self._started = False
        self._advance, self._observe, self._legal_moves = _advance, _observe, legal_moves
        if self.compile:
            live = [tensor for name, tensor in self._saved_tensors().items() if name != "steps"]
            constants = [value for value in vars(self.tables).values() if isinstance(value, torch.Tensor)]
            mark_static([*live, self._legal, *vars(self._scratch).values(), *constants])  # CUDA graphs read them in place
            self._advance = compiled(_advance, self.device)
            self._observe = compiled(_observe, self.device)
            self._legal_moves = compiled(legal_moves, self.device)

    # ---------------------------------------------------------------- lifecycle
    def reset(self, decks: torch.Tensor | None = None) -> None:
        """Deal new games in every environment: from ``decks`` (long [B, rules.deck_size], card ids in dealing order) or shuffled decks."""
        if decks is None:
            decks = shuffled_decks(self._noise(self.rules.deck_size), self.tables)
        else:
            if self.check:
                decks = check_decks(decks, self.num_envs, self.tables)
            decks = pad_decks(decks, self.tables)
        s = self._state
        restart(s, self.tables, torch.ones_like(s.terminal), decks, shuffle_draws=False)
        s.reward.fill_(0.0)
        s.ended.fill_(False)
        s.restarted.fill_(False)
        s.final_score.fill_(-1)
        self._sad_player.fill_(-1)
        self._sad_value.fill_(0)
        self._steps = 0
        self._started = True

    def step(self, moves: torch.Tensor, greedy: torch.Tensor | None = None) -> torch.Tensor:
        """Apply ``moves`` (long [B] move uids of the players to act); return the rewards (float [B]).

        With ``auto_reset`` games that end here are re-dealt before returning (see the class
        docstring). ``greedy`` (SAD variants only, long [B]): the actors' greedy moves (default:
        the moves made).
        """
        if not self._started:
            raise RuntimeError("call reset() before step()")
        s, t = self._state, self.tables
        if self.check:
            if bool(s.terminal.all()):
                raise ValueError("every game is over (terminal); call reset() to start new ones (or use auto_reset=True)")
            moves = check_moves(moves, self.num_envs, t)
            check_legal(moves, legal_moves(s, t, self._legal), ~s.terminal)
        elif moves.dtype != torch.long:
            moves = moves.long()
        if greedy is not None:
            greedy = self._check_greedy(greedy)
        noise = None
        if self.auto_reset:
            if self._steps % self._pool_period == 0:
                if self.block_envs >= _FRONT_SHUFFLE_MIN_ENVS:
                    count = self.num_players * self.hand_size
                    shuffle_front(self._pool, count, t.deck_size, self._noise(count))
                else:
                    self._pool.copy_(shuffled_decks(self._noise(t.deck_size), t))  # keep the storage (CUDA graphs)
            noise = self._noise()
        self._advance(s, t, self.rules.sad, moves, moves if greedy is None else greedy, noise, self._pool, self._sad_player,
                      self._sad_value)
        self._steps += 1
        return s.reward.clone()

    def _noise(self, *shape: int) -> torch.Tensor:
        """Uniform noise ``[num_envs, *shape]``, each block's rows from its own generator (:attr:`generators`): what a
        batch of that block's games alone would draw."""
        draws = [torch.rand(self.block_envs, *shape, generator=g, device=self.device) for g in self.generators]
        return draws[0] if len(draws) == 1 else torch.cat(draws)

    @classmethod
    def joined(cls, batches: Sequence[HanabiBatch]) -> HanabiBatch:
        """One batch of the games of ``batches`` (each started; one rules, size, device, ``auto_reset``, ``check`` and
        ``compile``), in their order: block ``k`` continues batch ``k``'s games and draws its deals from batch ``k``'s
        generator (the same object, so it advances there too). Given the same moves, block ``k`` plays batch ``k``'s games
        bit for bit (:meth:`block_state_dict`): K runs' games stepped as one ``K * B`` batch."""
        if not batches:
            raise ValueError("batches must hold at least one HanabiBatch")
        first = batches[0]
        shape = (first.rules, first.num_envs, first.device, first.auto_reset, first.check, first.compile)
        for batch in batches:
            if (batch.rules, batch.num_envs, batch.device, batch.auto_reset, batch.check, batch.compile) != shape:
                raise ValueError("the batches must share rules, num_envs, device, auto_reset, check and compile to be joined")
            if batch.generators[0] is None or len(batch.generators) != 1:
                raise ValueError("each batch must be an unjoined batch with a deck generator (not on the meta device)")
            batch._require_started()
        joined = cls(first.num_envs * len(batches), first.rules, first.device, auto_reset=first.auto_reset, check=first.check,
                     compile=first.compile)
        joined.generators, joined.block_envs = tuple(batch.generators[0] for batch in batches), first.num_envs
        states = [batch.state_dict() for batch in batches]
        steps = {int(state["steps"]) for state in states}
        if len(steps) > 1:
            raise ValueError(f"the batches must have made the same number of steps to be joined (their spare decks refresh "
                             f"together), got {sorted(steps)}")
        joined.load_state_dict({name: torch.cat([state[name] for state in states]) if name != "steps" else states[0][name]
                                for name in states[0]})
        return joined

    def block_state_dict(self, block: int) -> dict[str, torch.Tensor]:
        """The :meth:`state_dict` of block ``block``'s games (:meth:`joined`): that of the batch it continues, after the
        same moves."""
        self._require_started()
        check_int(block, "block", low=0, high=len(self.generators) - 1)
        rows = slice(block * self.block_envs, (block + 1) * self.block_envs)
        return {name: tensor.clone() if name == "steps" else tensor[rows].clone() for name, tensor in self._saved_tensors().items()}

    # ---------------------------------------------------------------- views
    def observations(self, out: torch.Tensor | None = None) -> torch.Tensor:
        """Float [B, P, obs_dim]: every player's observation (players relative to the observer).

        ``out``: an optional float32 buffer of that shape on the env's device to write into.
        """
        self._require_started()
        shape = (self.num_envs, self.num_players, self.obs_dim)
        if out is None:
            out = torch.empty(shape, dtype=torch.float32, device=self.device)
        else:
            self._take_out(out, torch.float32, shape)
        self._observe(self._state, self.tables, self.rules, self._sad_player, self._sad_value, self._scratch, out)
        return out

    def legal_move_mask(self, out: torch.Tensor | None = None) -> torch.Tensor:
        """Bool [B, M]: HLE's legal moves of the player to act; all False for finished games
        (never with ``auto_reset``). ``out``: an optional bool buffer of that shape to write into."""
        self._require_started()
        shape = (self.num_envs, self.num_moves)
        if out is None:
            out = torch.empty(shape, dtype=torch.bool, device=self.device)
        else:
            self._take_out(out, torch.bool, shape)
        return self._legal_moves(self._state, self.tables, out)

    @property
    def state(self) -> BatchState:
        """The live state tensors (updated in place by ``step``/``reset``)."""
        return self._state

    @property
    def uses_sad(self) -> bool:
        """Whether a SAD block is appended (``rules.sad != "off"``)."""
        return self.rules.sad != "off"

    @property
    def knowledge(self) -> str:
        """``rules.knowledge``."""
        return self.rules.knowledge

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
        """Long [B, num_colours]: cards played per colour."""
        return self._state.fireworks[:, : self.rules.num_colours].clone()

    def own_hand_labels(self) -> torch.Tensor:
        """Long ``[B, P, h]``, what each player's own cards are for (SAD-AUX's targets): 0 playable now,
        1 dead (its rank is already played), 2 later, -1 an empty slot."""
        hands, t = self._state.hands, self.tables
        B, P, h = hands.shape
        colour, rank = (hands // t.num_ranks).clamp(max=t.num_colours - 1), hands % t.num_ranks
        played = self._state.fireworks[:, : t.num_colours].gather(1, colour.view(B, P * h)).view(B, P, h)
        labels = torch.where(rank == played, 0, torch.where(rank < played, 1, 2))
        return labels.masked_fill(hands >= t.empty, -1)

    @property
    def decks(self) -> torch.Tensor:
        """Long [B, rules.deck_size]: each game's deck; its first ``rules.deck_size - cards_left`` cards were
        dealt in this order (with auto_reset, draws pick uniformly among the undealt cards, so only that prefix is fixed)."""
        return self._state.deck[:, : self.rules.deck_size].long()

    @property
    def cards_left(self) -> torch.Tensor:
        """Long [B]: cards left in the deck (``rules.deck_size`` is the full deck)."""
        return self.rules.deck_size - self._state.dealt

    @property
    def moves_made(self) -> torch.Tensor:
        """Long [B]: moves made in each current game."""
        return self._state.moves_made.clone()

    @property
    def terminal(self) -> torch.Tensor:
        """Bool [B]: the game is over (always False after a ``step`` with ``auto_reset``; see ``ended``)."""
        return self._state.terminal.clone()

    @property
    def reward(self) -> torch.Tensor:
        """Float [B]: reward of the last step (change of the score; 0 where no move was made)."""
        return self._state.reward.clone()

    @property
    def ended(self) -> torch.Tensor:
        """Bool [B]: games whose last move was made by the last ``step`` (with or without ``auto_reset``)."""
        return self._state.ended.clone()

    @property
    def final_score(self) -> torch.Tensor:
        """Long [B]: the final score of the games that ended on the last step (``ended``); -1 elsewhere."""
        return self._state.final_score.clone()

    @property
    def restarted(self) -> torch.Tensor:
        """Bool [B]: games re-dealt by the last step (with ``auto_reset`` exactly ``ended``, else none)."""
        return self._state.restarted.clone()

    # ---------------------------------------------------------------- saving
    def state_dict(self) -> dict[str, torch.Tensor]:
        """Everything a later ``step`` or view reads, as tensors (copies): the ``BatchState`` fields, the SAD block's
        last actor and move, the spare decks of ``auto_reset`` and the step count that times their refresh.
        The deck generators are not in it: their owner saves them beside (``get_state()``)."""
        self._require_started()
        return {name: tensor.clone() for name, tensor in self._saved_tensors().items()}

    def load_state_dict(self, state: Mapping[str, torch.Tensor]) -> None:
        """Continue the games of ``state`` (:meth:`state_dict` of a batch of the same ``num_envs`` and ``rules``, saved on
        any device): copied into this batch's tensors, whose storage is kept. ValueError naming an entry that is
        missing or of another dtype or shape; nothing is changed then."""
        live = self._saved_tensors()
        for name, tensor in live.items():
            saved = state.get(name)
            if not isinstance(saved, torch.Tensor) or saved.dtype != tensor.dtype or saved.shape != tensor.shape:
                got = f"{saved.dtype} {list(saved.shape)}" if isinstance(saved, torch.Tensor) else type(saved).__name__
                raise ValueError(f"state[{name!r}] must be a {tensor.dtype} tensor of shape {list(tensor.shape)} "
                                 f"({self.num_envs} games of these rules), got {got}")
        for name, tensor in live.items():
            if name != "steps":
                tensor.copy_(state[name])
        self._steps = int(state["steps"])
        self._started = True

    def _saved_tensors(self) -> dict[str, torch.Tensor]:
        s = self._state
        return {**{f.name: getattr(s, f.name) for f in fields(s)}, "sad_player": self._sad_player, "sad_value": self._sad_value,
                "pool": self._pool, "steps": torch.tensor(self._steps)}

    # ---------------------------------------------------------------- internals
    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("call reset() first")

    def _take_out(self, out: torch.Tensor, dtype: torch.dtype, shape: tuple[int, ...]) -> None:
        """A caller's ``out`` buffer: checked (``check``); compiled, marked as keeping its storage, so that on CUDA the
        graph writing into it is replayed (pass the same buffer every call, as the learners do)."""
        if self.check:
            check_out(out, "out", dtype, shape, self.device)
        if self.compile:
            mark_static([out])

    def _check_greedy(self, greedy: torch.Tensor) -> torch.Tensor:
        if self.rules.sad == "off":
            raise ValueError("greedy is only accepted with a SAD observation (rules.sad != 'off')")
        if not self.check:
            return greedy.long()
        greedy = check_moves(greedy, self.num_envs, self.tables, "greedy")
        check_legal(greedy, self._legal, ~self._state.terminal, "greedy")
        return greedy


def _advance(s: BatchState, t: HanabiTables, sad: str, moves: torch.Tensor, shown: torch.Tensor, noise: torch.Tensor | None,
             pool: torch.Tensor, sad_player: torch.Tensor, sad_value: torch.Tensor) -> None:
    """The tensor work of ``HanabiBatch.step``, in place: the SAD block's last actor and its ``shown`` move (``sad``: the
    rules' variant), ``moves`` applied (``noise``: the lazy shuffle's draws, None without ``auto_reset``), the games that
    ended and, with ``noise``, their re-deal from the spare decks ``pool``. Branch-free, no host sync: compilable whole."""
    active = ~s.terminal
    if sad != "off":
        code = last_action_codes(s, t, shown) if sad == "greedy_last_action" else shown
        torch.where(active, code, sad_value, out=sad_value)
        torch.where(active, s.current, sad_player, out=sad_player)
    apply_moves(s, t, moves, active, noise)
    torch.logical_and(s.terminal, active, out=s.ended)
    s.final_score.copy_(s.score).masked_fill_(~s.ended, -1)
    if noise is not None:
        restart(s, t, s.ended, pool, shuffle_draws=True)
        s.restarted.copy_(s.ended)
        sad_player.masked_fill_(s.ended, -1)
        sad_value.masked_fill_(s.ended, 0)


def _observe(s: BatchState, t: HanabiTables, rules: HanabiRules, sad_player: torch.Tensor, sad_value: torch.Tensor,
             scratch: EncodingScratch, out: torch.Tensor) -> None:
    """The tensor work of ``HanabiBatch.observations``: every player's observation in ``rules``' variant into ``out``."""
    extra = None if rules.sad == "off" else sad_block(s, t, rules.sad, sad_player, sad_value)
    encode(s, t, out, scratch, extra, knowledge=rules.observation_type == "full")
    if rules.knowledge == "v0_belief":
        v0_belief(s, t, out)


def _check_memory(num_envs: int, rules: HanabiRules, device: torch.device) -> None:
    """Refuse a batch whose buffers cannot fit in the device's memory, before allocating anything."""
    if device.type == "meta":
        return
    p, h = rules.num_players, rules.hand_size
    n, d = rules.num_card_ids, rules.deck_size
    knowledge = n + rules.num_colours + rules.num_ranks
    floats = p * (p - 1) * h * n + p * p + 3 * d + 3 * 60 + 2 * p * 60 + p * p * h * knowledge + p * rules.obs_dim
    per_game = 4 * floats + 8 * (4 * p * h + 40) + 2 * (d + 8)
    need = num_envs * per_game
    if device.type == "cuda":
        have = torch.cuda.get_device_properties(device).total_memory
    else:
        try:
            have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
            return
    if need > have:
        raise ValueError(
            f"num_envs = {num_envs} needs about {need / 2**30:,.1f} GiB for the game state and observation buffers "
            f"({per_game:,} bytes per game), more than the {have / 2**30:,.1f} GiB of memory on {device}; use fewer games"
        )
