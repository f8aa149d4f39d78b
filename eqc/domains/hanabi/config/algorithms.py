"""The table of learning algorithms: what ``[run] algorithm`` may name, each algorithm's section and its rules.

An :class:`Algorithm` is what the configuration knows of a learner: its name (the value of ``[run] algorithm``),
the section of its own keys (a dataclass of :func:`~.schema.config_field` s, one field of the training config),
the rules of those keys, the rules it sets on the other sections when it is the one chosen, the forms it has
(feed-forward, recurrent: ``[network] lstm_layers``) and what its agents are (an auxiliary head, logits that
are a policy). :data:`ALGORITHMS` maps names to them; the learners themselves (the code that trains) are
``eqc.domains.hanabi.training``'s, one module each, found by name and form in its ``LEARNERS`` table.

Adding an algorithm: its section, its :class:`Algorithm` and a line of :data:`ALGORITHMS` here, its section as a field
of ``TrainConfig`` (:mod:`.train`); its learner module and a line of ``LEARNERS`` (``training/learners.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eqc.domains.hanabi.config.schema import config_field, require

if TYPE_CHECKING:
    from eqc.domains.hanabi.config.train import TrainConfig

__all__ = ["ALGORITHMS", "IPPO", "PQN", "R2D2", "Algorithm", "PPOConfig", "PQNConfig", "R2D2Config"]

EXPLORATIONS = ("decay", "ladder")


@dataclass(frozen=True)
class Algorithm:
    """One learning algorithm as the configuration sees it (see the module docstring).

    Attributes:
        name: the value of ``[run] algorithm`` that chooses it.
        section: its section of the training config (``[pqn]``, ``[r2d2]``, ``[ppo]``: a field of ``TrainConfig``).
        settings: that section's dataclass.
        forms: the network forms it trains: ``False`` feed-forward, ``True`` recurrent (``[network] lstm_layers >= 1``).
        aux: whether it trains the SAD-AUX own-hand head (``[network] aux_weight > 0``).
        policy: whether its agents' logits are a stochastic policy (they can play as sampled; a learner of Q-values
            acts greedily).
        check_keys: the rules of its section's keys (every config holds every section: checked whatever is chosen).
        check_use: the rules it sets on the other sections when ``[run] algorithm`` chooses it.
    """

    name: str
    section: str
    settings: type
    forms: tuple[bool, ...]
    aux: bool
    policy: bool
    check_keys: Callable[[TrainConfig], None]
    check_use: Callable[[TrainConfig], None]


def _at_least_one(section: str, settings: Any, keys: tuple[str, ...]) -> None:
    for key in keys:
        require(getattr(settings, key) >= 1, f"[{section}] {key}", f"must be >= 1, got {getattr(settings, key)}")


def _in_unit(section: str, settings: Any, keys: tuple[str, ...]) -> None:
    for key in keys:
        require(0 <= getattr(settings, key) <= 1, f"[{section}] {key}", f"must be in [0, 1], got {getattr(settings, key)}")


def _rollout_split(c: TrainConfig, section: str, rollout_steps: int, minibatches: int) -> None:
    """A rollout learner's minibatches: at most its decisions, and with an LSTM (minibatches split the games) at most
    the games."""
    require(c.run.num_envs * rollout_steps >= minibatches, f"[{section}] minibatches", "must not exceed num_envs * rollout_steps")


def _recurrent_split(c: TrainConfig, section: str, minibatches: int) -> None:
    split = f"must not exceed num_envs ({c.run.num_envs}) with an LSTM (minibatches split the games), got {minibatches}"
    require(c.network.lstm_layers == 0 or minibatches <= c.run.num_envs, f"[{section}] minibatches", split)


# ---------------------------------------------------------------- PQN (training/pqn.py)
@dataclass(frozen=True)
class PQNConfig:
    rollout_steps: int = config_field("batched steps (a move in every game) collected between learning phases", 8)
    epochs: int = config_field("passes over each rollout", 2)
    minibatches: int = config_field("minibatches per pass", 4)
    gamma: float = config_field("discount", 0.99)
    td_lambda: float = config_field("lambda of the Q(lambda) returns (0 = one-step)", 0.7)
    eps_start: float = config_field("epsilon-greedy exploration at the start", 0.1)
    eps_end: float = config_field("epsilon after decay", 0.01)
    eps_decay_moves: int = config_field("moves (summed over games) of the linear epsilon decay", 20_000_000)
    exploration: str = config_field("'decay': every game explores with one epsilon, eps_start -> eps_end over eps_decay_moves; "
                             "'ladder': hanabi_SAD's per-actor epsilons, fixed: game b explores with eps_start * "
                             "(eps_end / eps_start) ** (k / (ladder_rungs - 1)), k = b mod ladder_rungs "
                             "(eps_start 0.1, eps_end 1e-8 is hanabi_SAD's 0.1 ** (1 + 7 k / (N - 1)))", "decay")
    ladder_rungs: int = config_field("number of distinct epsilons of exploration = 'ladder' (hanabi_SAD: 80)", 80)


def _check_pqn(c: TrainConfig) -> None:
    p = c.pqn
    require(p.exploration in EXPLORATIONS, "[pqn] exploration", f"must be one of {EXPLORATIONS}, got {p.exploration!r}")
    require(p.ladder_rungs >= 2, "[pqn] ladder_rungs", f"must be >= 2, got {p.ladder_rungs}")
    ladder_ends = f"must be > 0 with exploration 'ladder' (a geometric ladder), got {min(p.eps_start, p.eps_end)}"
    require(p.exploration != "ladder" or min(p.eps_start, p.eps_end) > 0, "[pqn] eps_end", ladder_ends)
    _at_least_one("pqn", p, ("rollout_steps", "epochs", "minibatches", "eps_decay_moves"))
    _rollout_split(c, "pqn", p.rollout_steps, p.minibatches)
    _in_unit("pqn", p, ("gamma", "td_lambda", "eps_start", "eps_end"))


PQN = Algorithm("pqn", "pqn", PQNConfig, forms=(False, True), aux=False, policy=False, check_keys=_check_pqn,
                check_use=lambda c: _recurrent_split(c, "pqn", c.pqn.minibatches))


# ---------------------------------------------------------------- R2D2 (training/r2d2.py)
@dataclass(frozen=True)
class R2D2Config:
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


def _check_r2d2(c: TrainConfig) -> None:
    q = c.r2d2
    _at_least_one("r2d2", q, ("batch_size", "buffer_episodes", "n_step", "target_update", "eps_count", "max_moves"))
    warmup = f"must be >= batch_size ({q.batch_size}), got {q.warmup_episodes}"
    require(q.warmup_episodes >= q.batch_size, "[r2d2] warmup_episodes", warmup)
    require(q.buffer_episodes >= q.warmup_episodes, "[r2d2] buffer_episodes", f"must be >= warmup_episodes ({q.warmup_episodes})")
    require(q.updates_per_step > 0, "[r2d2] updates_per_step", f"must be > 0, got {q.updates_per_step}")
    _in_unit("r2d2", q, ("gamma", "priority_exponent", "importance_exponent", "priority_max_weight", "eps_base"))
    require(q.eps_alpha >= 0, "[r2d2] eps_alpha", f"must be >= 0, got {q.eps_alpha}")


R2D2 = Algorithm("r2d2", "r2d2", R2D2Config, forms=(True,), aux=True, policy=False, check_keys=_check_r2d2,
                 check_use=lambda c: None)


# ---------------------------------------------------------------- IPPO (training/ippo.py)
@dataclass(frozen=True)
class PPOConfig:
    rollout_steps: int = config_field("batched steps (a move in every game) collected between learning phases", 16)
    epochs: int = config_field("passes over each rollout", 4)
    minibatches: int = config_field("minibatches per pass", 4)
    gamma: float = config_field("discount", 0.99)
    gae_lambda: float = config_field("lambda of generalised advantage estimation (Forkel et al.: about 0.9)", 0.9)
    clip: float = config_field("PPO's ratio clip epsilon", 0.2)
    entropy_coef: float = config_field("weight of the policy's entropy bonus (the usual 0.01; Forkel et al.'s high "
                                       "entropy: about 0.05)", 0.01)
    value_coef: float = config_field("weight of the value loss", 0.5)


def _check_ppo(c: TrainConfig) -> None:
    pp = c.ppo
    _at_least_one("ppo", pp, ("rollout_steps", "epochs", "minibatches"))
    _rollout_split(c, "ppo", pp.rollout_steps, pp.minibatches)
    _in_unit("ppo", pp, ("gamma", "gae_lambda"))
    require(0 < pp.clip < 1, "[ppo] clip", f"must be in (0, 1), got {pp.clip}")
    for key in ("entropy_coef", "value_coef"):
        require(getattr(pp, key) >= 0, f"[ppo] {key}", f"must be >= 0, got {getattr(pp, key)}")


def _use_ippo(c: TrainConfig) -> None:
    require(c.network.dueling, "[network] dueling", "must be true for 'ippo': the advantage head holds the policy's logits "
            "and the value head is the critic")
    _recurrent_split(c, "ppo", c.ppo.minibatches)


IPPO = Algorithm("ippo", "ppo", PPOConfig, forms=(False, True), aux=False, policy=True, check_keys=_check_ppo, check_use=_use_ippo)


#: The table of algorithms: what ``[run] algorithm`` may name; each one's section is a field of ``TrainConfig``.
ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in (PQN, R2D2, IPPO)}
