"""Prioritized replay of whole episodes, preallocated on the learner's device (R2D2, hanabi_SAD/OBL).

Memory is bounded and allocated once: ``capacity`` episodes of at most ``max_len`` moves. Each of
the ``num_envs`` games played in lockstep owns ``capacity // num_envs`` slots used as a ring (its
oldest episode is overwritten first), so every game writes its move of the current step straight
into its episode's slot, without gathering finished games (no host-device synchronisation while
playing). A slot becomes sampleable when its episode is finished.

Per move of an episode the buffer keeps every player's observation in **float16** (the inputs
are 0/1 bits and V0-belief probabilities; float16 keeps them to ~1e-3 relative), legal moves as
bools, chosen actions as uint8, the shared reward as float32 and, with an auxiliary task,
per-slot labels as int8. :meth:`EpisodeReplay.bytes_per_episode` gives the exact size; a buffer
that would need more than half of the device's memory is refused with the estimate.

Priorities (Schaul et al. 2016): an episode's priority is
``eta * max_t |TD_t| + (1 - eta) * mean_t |TD_t|`` (:func:`sequence_priority`, ``eta`` =
``priority_max_weight``); it is drawn with probability ``P_i = p_i^alpha / sum_j p_j^alpha``
(``alpha`` = ``priority_exponent``) and weighted by ``(N P_i)^-beta`` normalised by the batch's
largest weight (``beta`` = ``importance_exponent``, ``N`` the finished episodes held). New
episodes enter with the largest priority seen so far (1 at the start), as in Schaul et al.'s
prioritized replay; that running maximum never decays. **This differs from hanabi_SAD**, whose
actors compute each episode's priority from its TD errors when they add it (``compute_priority``
in its ``r2d2.py``), so a new episode there is not automatically the likeliest to be drawn.
Sampling uses the seeded ``generator`` only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

__all__ = ["EpisodeBatch", "EpisodeReplay", "ReplayMemoryError", "sequence_priority"]

#: Priorities never fall below this, so an episode with zero TD error stays sampleable.
MIN_PRIORITY = 1e-6
#: torch.multinomial's limit on the number of categories.
_MAX_SLOTS = 2**24


class ReplayMemoryError(ValueError):
    """A replay buffer that would not fit sensibly in the device's memory (states the estimate)."""


@dataclass(frozen=True)
class EpisodeBatch:
    """Sampled episodes, time-major; ``T`` is the longest sampled episode.

    indices [N] slots; obs float [T, N, P, D]; legal bool [T, N, P, A]; action long [T, N, P];
    reward float [T, N] (0 after an episode's end); mask bool [T, N] (``t < length``);
    length long [N]; aux long [T, N, P, h] (-1: no label, also after the end) or None;
    weights float [N] importance weights (largest 1).
    """

    indices: torch.Tensor
    obs: torch.Tensor
    legal: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    mask: torch.Tensor
    length: torch.Tensor
    aux: torch.Tensor | None
    weights: torch.Tensor


def sequence_priority(td_abs: torch.Tensor, mask: torch.Tensor, max_weight: float) -> torch.Tensor:
    """Priorities ``[N]``: ``max_weight * max |TD| + (1 - max_weight) * mean |TD|`` over valid entries.

    ``td_abs [T, N, ...]`` (extra dims, e.g. players under IQL, count as more entries of the
    episode); ``mask [T, N]`` marks the moves of each episode.
    """
    valid = mask.reshape(*mask.shape, *([1] * (td_abs.dim() - 2))).expand_as(td_abs)
    td = td_abs.masked_fill(~valid, 0.0).transpose(0, 1).flatten(1)
    count = valid.transpose(0, 1).flatten(1).sum(1).clamp(min=1)
    return max_weight * td.max(1).values + (1 - max_weight) * td.sum(1) / count


class EpisodeReplay:
    """The buffer (see the module docstring).

    Args:
        capacity: episodes held (rounded down to a multiple of ``num_envs``, at least 2 per game).
        num_envs: games writing in lockstep (``record``/``finish`` take one row per game).
        max_len: moves per episode at most.
        num_players, obs_dim, num_actions: shapes of a move's observations and legal moves.
        aux_slots: labels per player per move (0 = none).
        priority_exponent, importance_exponent, priority_max_weight: alpha, beta, eta above.
        generator: the seeded generator of ``sample`` (on ``device``).
        device: where every tensor lives.
        memory_limit: bytes allowed (default: half of the device's memory).
    """

    def __init__(
        self,
        capacity: int,
        num_envs: int,
        max_len: int,
        num_players: int,
        obs_dim: int,
        num_actions: int,
        *,
        aux_slots: int = 0,
        priority_exponent: float = 0.9,
        importance_exponent: float = 0.6,
        priority_max_weight: float = 0.9,
        generator: torch.Generator,
        device: torch.device | str = "cpu",
        memory_limit: int | None = None,
    ) -> None:
        self.device = torch.device(device)
        per = capacity // num_envs
        if per < 2:
            raise ValueError(
                f"capacity (= [r2d2] buffer_episodes) must be at least 2 x [run] num_envs = {2 * num_envs}, got {capacity}"
            )
        if num_envs * per > _MAX_SLOTS:
            raise ValueError(f"capacity (= [r2d2] buffer_episodes) must be at most {_MAX_SLOTS}, got {capacity}")
        if not 1 <= num_actions <= 256:
            raise ValueError(f"num_actions must be in 1..256 (stored as uint8), got {num_actions}")
        self.per_game, self.slots = per, num_envs * per
        self.max_len, self.num_players, self.obs_dim = max_len, num_players, obs_dim
        self.num_actions, self.aux_slots = num_actions, aux_slots
        self.alpha, self.beta, self.eta = priority_exponent, importance_exponent, priority_max_weight
        self.generator = generator
        per_episode = self.bytes_per_episode(max_len, num_players, obs_dim, num_actions, aux_slots)
        need = (self.slots + 1) * per_episode
        limit = _half_device_memory(self.device) if memory_limit is None else memory_limit
        if limit is not None and need > limit:
            raise ReplayMemoryError(
                f"a replay of {self.slots:,} episodes (= [r2d2] buffer_episodes) of up to {max_len} moves needs about "
                f"{need / 2**30:,.2f} GiB ({per_episode / 2**10:,.1f} KiB "
                f"per episode: {max_len} moves x {num_players} players x {obs_dim} float16 observations, plus moves), more than "
                f"the {limit / 2**30:,.2f} GiB allowed on {self.device} (half its memory); lower [r2d2] buffer_episodes"
            )
        rows, T, P, dev = self.slots + 1, max_len, num_players, self.device  # row `slots` absorbs writes of games not recording
        self.obs = torch.zeros(rows, T, P, obs_dim, dtype=torch.float16, device=dev)
        self.legal = torch.zeros(rows, T, P, num_actions, dtype=torch.bool, device=dev)
        self.action = torch.zeros(rows, T, P, dtype=torch.uint8, device=dev)
        self.reward = torch.zeros(rows, T, dtype=torch.float32, device=dev)
        self.aux = torch.full((rows, T, P, aux_slots), -1, dtype=torch.int8, device=dev) if aux_slots else None
        self.length = torch.zeros(self.slots, dtype=torch.long, device=dev)
        self.priority = torch.zeros(self.slots, dtype=torch.float32, device=dev)
        self.complete = torch.zeros(self.slots, dtype=torch.bool, device=dev)
        self.max_priority = torch.ones((), dtype=torch.float32, device=dev)
        self._base = torch.arange(num_envs, device=dev) * per
        self._head = torch.zeros(num_envs, dtype=torch.long, device=dev)

    @staticmethod
    def bytes_per_episode(max_len: int, num_players: int, obs_dim: int, num_actions: int, aux_slots: int = 0) -> int:
        """Bytes one episode slot takes."""
        per_move = num_players * (2 * obs_dim + num_actions + 1 + aux_slots) + 4
        return max_len * per_move + 8 + 4 + 1

    # ---------------------------------------------------------------- writing
    def current_slots(self) -> torch.Tensor:
        """Each game's slot of its episode in progress ``[num_envs]``."""
        return self._base + self._head

    def record(
        self,
        step: torch.Tensor,
        recording: torch.Tensor,
        obs: torch.Tensor,
        legal: torch.Tensor,
        action: torch.Tensor,
        reward: torch.Tensor,
        aux: torch.Tensor | None = None,
    ) -> None:
        """Write move ``step [B]`` of every recording game's episode (the others' rows are discarded).

        obs [B, P, D], legal [B, P, A], action [B, P], reward [B], aux [B, P, aux_slots].
        """
        slot = torch.where(recording, self.current_slots(), self.slots)
        t = step.clamp(max=self.max_len - 1)
        self.obs[slot, t] = obs.to(torch.float16)
        self.legal[slot, t] = legal
        self.action[slot, t] = action.to(torch.uint8)
        self.reward[slot, t] = reward.float()
        if self.aux is not None and aux is not None:
            self.aux[slot, t] = aux.to(torch.int8)

    def finish(self, finished: torch.Tensor, length: torch.Tensor) -> None:
        """Close the episodes of the games where ``finished [B]`` (with ``length [B]`` moves) and open their next slots."""
        slot = self.current_slots()
        self.length[slot] = torch.where(finished, length, self.length[slot])
        self.priority[slot] = torch.where(finished, self.max_priority, self.priority[slot])
        self.complete[slot] = self.complete[slot] | finished
        self._head = torch.where(finished, (self._head + 1) % self.per_game, self._head)
        nxt = self.current_slots()  # the game's oldest episode, about to be overwritten
        self.complete[nxt] = self.complete[nxt] & ~finished
        self.priority[nxt] = torch.where(finished, 0.0, self.priority[nxt])

    def clear(self) -> None:
        """Forget every episode (the storage stays allocated)."""
        self.complete.zero_()
        self.priority.zero_()
        self.max_priority.fill_(1.0)
        self._head.zero_()

    @property
    def size(self) -> torch.Tensor:
        """Finished episodes held (a 0-dim device tensor)."""
        return self.complete.sum()

    @property
    def max_size(self) -> int:
        """Most finished episodes the buffer can hold (one slot per game is always in progress)."""
        return self.slots - self.slots // self.per_game

    # ---------------------------------------------------------------- sampling
    def probabilities(self) -> torch.Tensor:
        """Sampling probabilities ``[slots]`` (0 for slots without a finished episode)."""
        weight = torch.where(self.complete, self.priority.pow(self.alpha), 0.0)
        return weight / weight.sum()

    def sample(self, batch_size: int, *, check: bool = True) -> EpisodeBatch:
        """``batch_size`` episodes drawn with replacement by priority.

        ``check`` refuses an empty replay (a read from the device); a caller that knows the replay holds a
        finished episode (R2D2 once warm: the count of finished episodes never falls until :meth:`clear`)
        passes False. The batch's longest length is read back once (see below).
        """
        prob = self.probabilities()
        if check and not bool(self.complete.any()):
            raise RuntimeError("the replay holds no finished episode to sample")
        idx = torch.multinomial(prob, batch_size, replacement=True, generator=self.generator)
        weights = (self.size * prob[idx]).pow(-self.beta)
        weights = weights / weights.max()
        length = self.length[idx]
        # The one read from the device per update, kept on purpose: the batch is cut to its longest episode,
        # so the LSTM runs max_len / T times fewer steps on short batches (the shapes must be known on the host).
        T = int(length.max())
        mask = torch.arange(T, device=self.device).view(T, 1) < length.view(1, -1)
        aux = None
        if self.aux is not None:
            aux = self.aux[idx, :T].transpose(0, 1).long().masked_fill(~mask.view(T, -1, 1, 1), -1)
        return EpisodeBatch(
            indices=idx,
            obs=self.obs[idx, :T].transpose(0, 1).float(),
            legal=self.legal[idx, :T].transpose(0, 1),
            action=self.action[idx, :T].transpose(0, 1).long(),
            reward=self.reward[idx, :T].transpose(0, 1).masked_fill(~mask, 0.0),
            mask=mask,
            length=length,
            aux=aux,
            weights=weights,
        )

    def update_priorities(self, indices: torch.Tensor, priorities: torch.Tensor) -> None:
        """Set the priorities of sampled slots (e.g. from :func:`sequence_priority`) and track the largest. A non-finite
        priority (the TD errors of a diverged update) leaves its slot at the largest priority so far, so that sampling
        goes on until the run loop finds the divergence (:mod:`~eqc.domains.hanabi.training.run`) instead of failing
        in ``torch.multinomial`` on NaN probabilities."""
        priorities = priorities.detach().float()
        priorities = torch.where(torch.isfinite(priorities), priorities.clamp(min=MIN_PRIORITY), self.max_priority)
        self.priority[indices] = priorities
        torch.maximum(self.max_priority, priorities.max(), out=self.max_priority)


def _half_device_memory(device: torch.device) -> int | None:
    """Half the memory of ``device`` in bytes (None when unknown)."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory // 2
    if device.type == "cpu":
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
        except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
            return None
    return None
