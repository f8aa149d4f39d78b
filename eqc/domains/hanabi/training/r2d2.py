"""R2D2 learner as in hanabi_SAD / off-belief-learning: LSTM agents, episode replay, VDN or IQL, SAD, SAD-AUX.

One iteration is one batched environment step followed by the learner updates it has earned:

1. *Acting.* ``[run] num_envs`` games move in lockstep. Every player steps its own LSTM state on
   every move (zero state at the start of each episode): the player on turn picks among its legal
   moves, epsilon-greedily with its own epsilon ``eps_i = eps_base^(1 + eps_alpha i / (eps_count - 1))``
   (Ape-X; ``i`` drawn once per player per episode); the others' only legal move is the no-op
   (index ``num_moves``). Under Other-Play / G-OP each player sees its relabelled game (the
   base class's ``element_indices``) and the acting player's move is mapped back; with ``[game] sad`` its
   greedy move, mapped back too, is shown to everyone (``env.step(moves, greedy=...)``).
2. *Replay.* Every move is written into the game's episode slot of :class:`EpisodeReplay` (all
   players' observations, legal moves and actions, the shared reward, SAD-AUX labels). An
   episode ends when its game ends, or at the cap ``[r2d2] max_moves``: the capped move's reward
   becomes ``-score`` before the move (as hanabi_SAD: the episode returns 0, like a bomb-out);
   the game itself plays on in the env, unrecorded, until it ends, and its next game is recorded.
3. *Learning.* After ``warmup_episodes`` finished episodes, ``updates_per_step`` updates per
   step (fractions accumulate). An update samples ``batch_size`` episodes by priority, runs
   ``Agent.sequence`` from zero state over each padded episode (both players), and regresses on
   n-step double-Q targets (:func:`nstep_targets`: online argmax over legal moves, target-network
   value). VDN: ``Q_tot = sum_p Q_p(o_p, a_p)`` against ``r + gamma^n sum_p Q'_p``; IQL: each
   player's own Q against the shared reward. Smooth-L1 summed over time (mean over players under
   IQL), times the importance weights, averaged over the batch (:func:`q_learning_loss`); with
   ``[network] aux_weight > 0`` plus that weight times the own-hand cross-entropy (its logits come
   from the same, possibly symmetrized, pass as Q: ``Agent.sequence_with_aux``). Adam and
   clipping from ``[optim]``; the target network is synced every ``target_update`` updates and
   priorities are refreshed from |TD|.

A checkpoint keeps the network, the target network, the optimizer, the generators and the
counters; **the replay buffer is not saved** (``paper.toml``'s: 14 GiB, its 5,000 warm-up episodes alone
1.1 GiB, :meth:`EpisodeReplay.bytes_per_episode <eqc.domains.hanabi.training.replay.EpisodeReplay.bytes_per_episode>`):
a resumed run deals new games and refills it with ``warmup_episodes`` new episodes before it learns again
(so, unlike the other learners, it does not continue the interrupted run move for move; the run log says so).
Until the replay is warm the learner is not :attr:`~R2D2Learner.learning` and logs no loss (its
``replay_episodes`` shows the warm-up's progress in ``metrics.csv``); a run evaluated or stopped there keeps its
rows and checkpoint, and a resumed run whose ``max_minutes`` cannot get past the warm-up is refused
(:func:`~eqc.domains.hanabi.training.warmup.check_segment`).

The algorithm ``r2d2`` (:data:`R2D2`): its section ``[r2d2]`` (:class:`R2D2Config`), that section's rules and
:class:`R2D2Learner`.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import nn

from eqc.domains.hanabi.agent.network import as_lstm_state, spec_agent
from eqc.domains.hanabi.config.schema import config_field, require, require_at_least, require_in_unit
from eqc.domains.hanabi.training.learner import Algorithm, Learner, LearnerSetup
from eqc.domains.hanabi.training.replay import EpisodeBatch, EpisodeReplay, sequence_priority

if TYPE_CHECKING:
    from eqc.domains.hanabi.training.config import TrainConfig

__all__ = ["R2D2", "R2D2Config", "R2D2Learner", "ape_x_epsilons", "nstep_targets", "own_hand_labels", "q_learning_loss"]


@dataclass(frozen=True)
class R2D2Config:
    """The section ``[r2d2]``: replay, targets, priorities and Ape-X exploration."""

    batch_size: int = config_field("sequences per update (joint sequences with VDN)", 128)
    buffer_episodes: int = config_field("episodes held in replay", 2**16)
    warmup_episodes: int = config_field("episodes collected before learning starts", 10_000)
    updates_per_step: float = config_field("learner updates per batched environment step (the actor/learner ratio)", 0.25)
    n_step: int = config_field("n of the n-step double-Q target", 3)
    gamma: float = config_field("discount", 0.999)
    target_update: int = config_field("copy the online network to the target network every this many updates", 2500)
    priority_exponent: float = config_field("sampling probability ~ priority ** this", 0.9)
    importance_exponent: float = config_field("importance weights (N P) ** -this, normalised by their max", 0.6)
    priority_max_weight: float = config_field("sequence priority = this * max |TD| + (1 - this) * mean |TD|", 0.9)
    vdn: bool = config_field("VDN: both players' Q of their chosen moves summed (the player not on turn takes the no-op); "
                             "false = IQL", True)
    eps_base: float = config_field("Ape-X exploration: player i of a game draws eps_base ** (1 + eps_alpha * i / (N - 1))", 0.1)
    eps_alpha: float = config_field("Ape-X exponent spread", 7.0)
    eps_count: int = config_field("N, the number of Ape-X epsilons", 80)
    max_moves: int = config_field("training episodes that reach this many moves end with reward -score (SAD's cap); replay "
                                  "episodes are at most this long", 80)


def _check_r2d2(q: R2D2Config, c: TrainConfig) -> None:
    """The rules of ``[r2d2]``'s keys."""
    require_at_least("r2d2", q, ("batch_size", "buffer_episodes", "n_step", "target_update", "eps_count", "max_moves"), 1)
    warmup = f"must be >= batch_size ({q.batch_size}), got {q.warmup_episodes}"
    require(q.warmup_episodes >= q.batch_size, "[r2d2] warmup_episodes", warmup)
    require(q.buffer_episodes >= q.warmup_episodes, "[r2d2] buffer_episodes", f"must be >= warmup_episodes ({q.warmup_episodes})")
    require(q.updates_per_step > 0, "[r2d2] updates_per_step", f"must be > 0, got {q.updates_per_step}")
    require_in_unit("r2d2", q, ("gamma", "priority_exponent", "importance_exponent", "priority_max_weight", "eps_base"))
    require_at_least("r2d2", q, ("eps_alpha",), 0)

#: SAD-AUX classes of an own-hand card: playable now, dead (its rank is already played), later.
AUX_CLASSES = 3


def ape_x_epsilons(index: torch.Tensor, base: float, alpha: float, count: int) -> torch.Tensor:
    """Ape-X exploration rates ``base^(1 + alpha * index / (count - 1))`` for ``index`` in ``0..count-1``."""
    return base ** (1 + alpha * index.float() / max(count - 1, 1))


def nstep_targets(reward: torch.Tensor, value: torch.Tensor, length: torch.Tensor, n: int, gamma: float) -> torch.Tensor:
    """n-step targets ``sum_{k<n} gamma^k r_{t+k} + gamma^n [t+n < length] value_{t+n}``.

    ``reward [T, N]`` (0 after each episode's end), ``value [T, N, ...]`` the bootstrap value of
    the state before move t (e.g. ``Q'(o_t, argmax_a Q(o_t, a))``), ``length [N]``. Returns the
    shape of ``value``.
    """
    T = reward.shape[0]
    padded = torch.cat([reward, reward.new_zeros(n, *reward.shape[1:])])
    returns = sum((gamma**k * padded[k : k + T] for k in range(n)), torch.zeros_like(reward))
    later = torch.cat([value[n:], value.new_zeros(min(n, T), *value.shape[1:])])[:T]
    steps = torch.arange(T, device=reward.device).view(T, 1)
    bootstrap = (steps + n < length.view(1, -1)).to(value.dtype)
    extra = [1] * (value.dim() - 2)
    return returns.view(*returns.shape, *extra) + gamma**n * bootstrap.view(*bootstrap.shape, *extra) * later


def q_learning_loss(
    q: torch.Tensor, q_target: torch.Tensor, batch: EpisodeBatch, *, vdn: bool, n_step: int, gamma: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-episode smooth-L1 loss ``[N]`` (summed over time) and |TD| (``[T, N]`` VDN, ``[T, N, P]`` IQL).

    ``q``/``q_target [T, N, P, A]``: online and target Q-values of every player (illegal moves
    -inf); the online argmax picks the move the target network values (double Q).
    """
    chosen = q.gather(-1, batch.action.unsqueeze(-1)).squeeze(-1)  # [T, N, P]
    with torch.no_grad():
        best = q.detach().argmax(-1, keepdim=True)
        value = q_target.gather(-1, best).squeeze(-1)
        if vdn:
            value = value.sum(-1)
        target = nstep_targets(batch.reward, value, batch.length, n_step, gamma)
    online = chosen.sum(-1) if vdn else chosen
    mask = batch.mask if vdn else batch.mask.unsqueeze(-1)
    online = torch.where(mask, online, target)  # padding: no error, no gradient
    loss = F.smooth_l1_loss(online, target, reduction="none").sum(0)
    if not vdn:
        loss = loss.mean(-1)
    return loss, (online - target).detach().abs()


def own_hand_labels(env: Any) -> torch.Tensor:
    """SAD-AUX labels ``[B, P, h]`` of each player's own cards (``HanabiBatch.own_hand_labels``): the one
    place the learner reads the true game."""
    return env.own_hand_labels()


class R2D2Learner(Learner):
    """The recurrent replay learner (see the module docstring)."""

    resumes_games = False  # its replay is not saved: a resumed run deals new games and refills it
    scalars = ("loss", "epsilon", "replay_episodes")

    def __init__(self, setup: LearnerSetup, r2d2: R2D2Config) -> None:
        spec, device = setup.spec, setup.device
        if r2d2.max_moves < 1:
            raise ValueError("[r2d2] max_moves must be >= 1 (replay episodes are at most that long)")
        if spec.network.lstm_layers < 1:
            raise ValueError("[network] lstm_layers must be >= 1 for algorithm 'r2d2' (a recurrent agent)")
        aux = AUX_CLASSES * spec.rules().hand_size if spec.network.aux_weight > 0 else 0
        super().__init__(setup, aux_outputs=aux, keep_identity=r2d2.vdn)
        self.r2d2 = r2d2
        q, B, P = r2d2, self.num_envs, self.num_players
        self.aux_weight = spec.network.aux_weight
        self.target_network = copy.deepcopy(self.network).requires_grad_(False)
        for module in self.target_network.modules():
            if isinstance(module, nn.RNNBase):
                module.flatten_parameters()  # a deep copy's LSTM weights are not one cuDNN block (a no-op on the CPU)
        self.target_agent = spec_agent(spec, self.target_network)
        self.replay = EpisodeReplay(
            q.buffer_episodes, B, r2d2.max_moves, P, self.obs_dim, self.num_actions,
            aux_slots=self.games.env.hand_size if self.aux_weight else 0,
            priority_exponent=q.priority_exponent, importance_exponent=q.importance_exponent,
            priority_max_weight=q.priority_max_weight, generator=self.learn_generator, device=device,
        )
        if q.warmup_episodes > self.replay.max_size:
            raise ValueError(
                f"[r2d2] warmup_episodes ({q.warmup_episodes}) must not exceed the finished episodes the replay can hold "
                f"({self.replay.max_size}: buffer_episodes rounded to a multiple of num_envs, less one episode in progress per game)"
            )
        self._obs = self.games.env.observations()
        self._legal = self.games.env.legal_move_mask()
        self.update_credit = 0.0
        self._only_no_op = F.one_hot(torch.full((), self.num_moves, device=device), self.num_actions).bool()  # built once
        self.last_loss: torch.Tensor | None = None  # the loss of the last update since the replay warmed up
        self._reset_acting()

    def modules(self) -> dict[str, nn.Module]:
        return {"network": self.network, "target": self.target_network}

    # ---------------------------------------------------------------- acting
    def _reset_acting(self) -> None:
        """Fresh episodes in every game: move 0, recording, zero LSTM state, new epsilons; empty replay."""
        B, P = self.num_envs, self.num_players
        self.move = torch.zeros(B, dtype=torch.long, device=self.device)
        self.recording = torch.ones(B, dtype=torch.bool, device=self.device)
        self.lstm_state = as_lstm_state(self.agent.initial_state(B * P, self.device))
        self.epsilons = self._draw_epsilons()
        self.replay.clear()
        self.warm = False
        self.last_loss = None

    @property
    def learning(self) -> bool:
        """Whether the replay holds ``warmup_episodes`` finished episodes (again after every resume: it is not saved)."""
        return self.warm

    def warmup(self) -> tuple[int, int]:
        """``(finished episodes in the replay, [r2d2] warmup_episodes)`` (reads the device)."""
        return int(self.replay.size), self.r2d2.warmup_episodes

    def _draw_epsilons(self) -> torch.Tensor:
        q = self.r2d2
        B, P = self.num_envs, self.num_players
        index = torch.randint(q.eps_count, (B, P), generator=self.explore_generator, device=self.device)
        return ape_x_epsilons(index, q.eps_base, q.eps_alpha, q.eps_count)

    @torch.no_grad()
    def act(self) -> None:
        """One move in every game (see the module docstring, steps 1 and 2)."""
        B, P = self.num_envs, self.num_players
        obs, legal, current, acting = self.games.player_views(self._obs, self._legal)
        labels = own_hand_labels(self.games.env) if self.aux_weight else None
        score_before = self.games.env.score
        q, state = self.agent.step(obs.reshape(B * P, -1), legal.reshape(B * P, -1), self.lstm_state)
        self.lstm_state = as_lstm_state(state)
        q = q.view(B, P, -1)
        actions = self.explore(q, legal, self.epsilons)  # the waiting players' only move is the no-op
        greedy = q.argmax(-1)[self.games.rows, current] if self.spec.game.uses_sad else None
        step = self.games.step(actions[self.games.rows, current], acting, greedy, shaping=self.shaping)
        reward, ended = step.reward, step.ended
        capped = self.recording & ~ended & (self.move + 1 >= self.r2d2.max_moves)
        reward = torch.where(capped, -score_before.to(reward.dtype), reward)
        self.replay.record(self.move, self.recording, obs, legal, actions, reward, labels)
        self.replay.finish(self.recording & (ended | capped), self.move + 1)
        self.move = torch.where(ended, 0, self.move + 1)
        self.recording = ended | (self.recording & ~capped)
        keep = (~ended).repeat_interleave(P).view(1, B * P, 1).to(q.dtype)
        self.lstm_state = (self.lstm_state[0] * keep, self.lstm_state[1] * keep)
        self.epsilons = torch.where(ended.view(B, 1), self._draw_epsilons(), self.epsilons)
        self.moves_played += B

    # ---------------------------------------------------------------- learning
    def iteration(self) -> dict[str, torch.Tensor | float]:
        """One step and the updates it earned; ``loss`` (the last update's) only once an update was made since the
        replay warmed up (the warm-up makes none)."""
        self.act()
        episodes = self.replay.size
        if not self.warm:
            self.warm = int(episodes) >= self.r2d2.warmup_episodes  # reads the device only while warming up
        if self.warm:
            self.update_credit += self.r2d2.updates_per_step
            while self.update_credit >= 1:
                self.update_credit -= 1
                self.last_loss = self.update()
        stats: dict[str, torch.Tensor | float] = {"epsilon": self.epsilons.mean(), "replay_episodes": episodes}
        if self.last_loss is not None:
            stats["loss"] = self.last_loss
        return stats

    def _online(self, obs: torch.Tensor, legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Online Q ``[T, N*P, A]`` and, with SAD-AUX, own-hand logits, from one pass of the (symmetrized) agent."""
        q, aux, _ = self.agent.sequence_with_aux(obs, legal)
        return q, (aux if self.aux_weight else None)

    def update(self) -> torch.Tensor:
        """One learner update on a prioritized batch of episodes; returns the loss (a device scalar)."""
        r = self.r2d2
        batch = self.replay.sample(r.batch_size, check=False)  # warm: the replay holds finished episodes
        T, N, P, D = batch.obs.shape
        pad = ~batch.mask.view(T, N, 1, 1)
        legal = torch.where(pad, self._only_no_op, batch.legal)  # padding: the no-op only, so Q stays finite
        batch = dataclasses.replace(batch, legal=legal, action=batch.action.masked_fill(pad.squeeze(-1), self.num_moves))
        obs, legal_flat = batch.obs.reshape(T, N * P, D), legal.reshape(T, N * P, -1)
        q, aux_logits = self._online(obs, legal_flat)
        with torch.no_grad():
            q_target, _ = self.target_agent.sequence(obs, legal_flat)
        loss, td = q_learning_loss(q.view(T, N, P, -1), q_target.view(T, N, P, -1), batch, vdn=r.vdn, n_step=r.n_step, gamma=r.gamma)
        if aux_logits is not None:
            assert batch.aux is not None  # the replay records own-hand labels exactly when aux_weight > 0, as _online gives logits
            logits = aux_logits.view(T, N, P, -1, AUX_CLASSES)
            xent = F.cross_entropy(logits.flatten(0, -2), batch.aux.flatten(), ignore_index=-1, reduction="none").view(batch.aux.shape)
            cards = (batch.aux >= 0).sum((2, 3)).clamp(min=1)
            loss = loss + self.aux_weight * (xent.sum((2, 3)) / cards).sum(0)
        loss = (batch.weights * loss).mean()
        self.optimize(loss)
        self.replay.update_priorities(batch.indices, sequence_priority(td, batch.mask, r.priority_max_weight))
        if self.updates % r.target_update == 0:
            self.target_network.load_state_dict(self.network.state_dict())
        return loss.detach()

    # ---------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["counters"]["update_credit"] = self.update_credit
        return state

    def load_state_dict(self, state: dict[str, Any]) -> str | None:
        """Restore as :class:`Learner` does; the replay starts empty and refills (the note for the run log says so)."""
        note = super().load_state_dict(state)
        self.update_credit = float(state["counters"].get("update_credit", 0.0))
        self._reset_acting()
        refill = (f"the replay buffer is not saved: warming up again for {self.r2d2.warmup_episodes:,} episodes (new games "
                  "are dealt) before learning resumes")
        return f"{note} {refill}" if note else refill


R2D2 = Algorithm("r2d2", "episode replay", "r2d2", R2D2Config, R2D2Learner, forms=(True,), aux=True, policy=False,
                 check_keys=_check_r2d2, check_use=lambda q, c: None)
