"""Training configuration: every key written once, with its default and meaning.

A config is a TOML file with the sections below (the shipped ones: ``configs/hanabi/*.toml``, read
by :mod:`.files`, which also resolves ``base`` and ``--set`` overrides); a key left out takes the
default written here. Unknown sections or keys, wrong types and impossible values are refused with a
message naming the key (:class:`~.schema.ConfigError`, a ``ValueError``). Each field's ``help`` is the
one-line documentation of the key (``eqc hanabi config`` prints them all).

The agent's sections (``[game]``, ``[network]``, and ``[rule] symmetrize``/``hidden_scheme``, ``[run]
precision``) are defined and validated in :mod:`.agent`; ``config.agent`` is the :class:`~.agent.AgentSpec`
a trained policy carries. ``[run] precision`` is a requested precision (:data:`REQUESTED_PRECISIONS`);
"auto" is resolved on the device that trains (:func:`~eqc.domains.hanabi.agent.precision.resolve_precision`),
and the config a run stores holds the precision it used.

Counting convention: a *move* is one action in one game; a *step* is one batched step, a move in
each of the ``num_envs`` games at once. Keys ending in ``_moves`` count moves (summed over games),
``rollout_steps`` and ``updates_per_step`` count steps.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from eqc.domains.hanabi.config.agent import PRECISIONS, AgentSpec, GameConfig, NetworkConfig, check_agent_sections
from eqc.domains.hanabi.config.files import apply_overrides, read_config_file
from eqc.domains.hanabi.config.schema import (
    ConfigError,
    check_section,
    config_field,
    read_section,
    require,
    section_dict,
    toml_value,
)
from eqc.domains.hanabi.symmetry import COLOUR_GROUP_NAMES, colour_group_names

__all__ = [
    "REQUESTED_PRECISIONS",
    "BootstrapConfig",
    "OptimConfig",
    "PPOConfig",
    "PQNConfig",
    "R2D2Config",
    "RuleConfig",
    "RunConfig",
    "TrainConfig",
    "describe_config",
    "load_config",
    "with_overrides",
]

#: What ``[run] precision`` may request: a precision, or "auto" (chosen from the hardware when the run starts).
REQUESTED_PRECISIONS = ("auto", *PRECISIONS)
ALGORITHMS = ("pqn", "r2d2", "ippo")
RULES = ("sp", "op", "gop")
OPTIMIZERS = ("adam", "radam")
EXPLORATIONS = ("decay", "ladder")
CONVENTIONS = ("none", "colour_to_slot", "colour_to_touched_slot")


@dataclass(frozen=True)
class RunConfig:
    algorithm: str = config_field("learner: 'pqn' (parallel games, no replay; an LSTM if lstm_layers >= 1), 'r2d2' "
                                  "(episode replay) or 'ippo' (independent PPO with parameter sharing; an LSTM if lstm_layers >= 1)", "pqn")
    num_envs: int = config_field("games played in lockstep on the device", 1024)
    total_moves: int = config_field("stop after this many moves, summed over games", 200_000_000)
    eval_every_moves: int = config_field("greedy evaluation every this many moves", 2_000_000)
    eval_games: int = config_field("games per greedy evaluation, on fixed seeded decks", 1000)
    deck_seed: int = config_field("seed of the decks every evaluation during training plays, the same decks each time", 1)
    checkpoint_minutes: float = config_field("write a checkpoint at least this often (wall-clock minutes)", 5.0)
    precision: str = config_field("'auto', 'fp32' or 'bf16': 'bf16' runs the networks' matrix products in bfloat16 autocast "
                                  "(acting, learning, evaluation; heads, Q-values, losses, targets and optimizer state stay "
                                  "float32); 'auto' trains in bf16 where it is faster than fp32 (x86 AMX, aarch64 bf16, "
                                  "CUDA capability >= 8.0; with avx512_bf16 alone a timed training step decides), "
                                  "else fp32. The run records the "
                                  "precision used and why, and keeps it on resume", "auto")
    threads: int = config_field("torch CPU threads (1 is fastest for eqc's small networks on a busy machine; benchmarks/RESULTS.md)", 1)
    tensorboard: bool = config_field("also write TensorBoard scalars to DIR/tensorboard (needs the tensorboard package)", False)


@dataclass(frozen=True)
class RuleConfig:
    objective: str = config_field("'sp' self-play, 'op' Other-Play over S5, 'gop' G-OP over `group`", "sp")
    group: str | None = config_field("colour group of G-OP on the game's c colours: Cc, D(2c), Sc or Ac, e.g. C5, D10, S5, A5 or "
                                     "C3, D6; read by objective 'gop' alone (required there, refused elsewhere)", None)
    symmetrize: str | None = config_field("train the network symmetrized over this colour group of the game's colours "
                                          "(left out: a plain network)", None)
    hidden_scheme: str = config_field("recurrent symmetrizer's hidden-state scheme: 'average' or 'identity'", "average")


@dataclass(frozen=True)
class OptimConfig:
    optimizer: str = config_field("'adam' or 'radam'", "radam")
    lr: float = config_field("learning rate", 3e-4)
    adam_eps: float = config_field("Adam epsilon", 1e-8)
    grad_clip: float = config_field("clip the gradient norm to this (0 = no clipping)", 0.5)


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


@dataclass(frozen=True)
class BootstrapConfig:
    convention: str = config_field("'none'; 'colour_to_slot': induce the convention 'a colour hint c means play slot pi(c)' by a "
                                   "shaping reward; 'colour_to_touched_slot': the same, paid only when the hint touched slot "
                                   "pi(c) (eqc.domains.hanabi.training.bootstrap)", "none")
    slots: tuple[int, ...] = config_field("pi: the hand slot a hint of colour c asks to play, slots[c], one distinct slot per "
                                          "colour (e.g. [2, 0, 1]); required by a convention, empty without one", ())
    bonus: float = config_field("shaping reward of a scoring play of slot pi(c) right after the partner revealed colour c", 1.0)
    moves: int = config_field("moves (summed over games) the shaping lasts; then the game's reward alone trains", 0)


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


@dataclass(frozen=True)
class TrainConfig:
    run: RunConfig = field(default_factory=RunConfig)
    game: GameConfig = field(default_factory=GameConfig)
    rule: RuleConfig = field(default_factory=RuleConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    pqn: PQNConfig = field(default_factory=PQNConfig)
    r2d2: R2D2Config = field(default_factory=R2D2Config)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    bootstrap: BootstrapConfig = field(default_factory=BootstrapConfig)

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def agent(self) -> AgentSpec:
        """The spec of the agent this config trains: ``[game]``, ``[network]``, ``[rule] symmetrize`` and
        ``hidden_scheme``, ``[run] precision`` (validated by ``AgentSpec``). A ``[run] precision`` of "auto" is
        refused: resolve it on the training device first (``make_learner`` and ``train`` do)."""
        require(self.run.precision != "auto", "[run] precision",
                "is 'auto', which is resolved on the device that trains: replace it by the precision used "
                "(eqc.domains.hanabi.agent.precision.resolve_precision) before asking for the agent's spec")
        return AgentSpec(self.game, self.network, self.rule.symmetrize, self.rule.hidden_scheme, self.run.precision)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Plain nested dict (TOML/JSON-able) holding every key that is set (optional keys that are None left out)."""
        return {f.name: section_dict(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: object, source: str = "config") -> TrainConfig:
        """Build from nested dicts; a missing key takes its default, anything unknown is an error."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a table of sections, got {type(data).__name__}")
        sections = get_type_hints(cls)  # section name -> its dataclass
        built = {}
        for name, value in data.items():
            if name not in sections:
                raise ConfigError(f"{source}: unknown section [{name}]; allowed: {sorted(sections)}")
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: [{name}] must be a table of keys, got {type(value).__name__}")
            built[name] = read_section(sections[name], value, f"{source}: [{name}]")
        try:
            return cls(**built)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    def to_toml(self) -> str:
        """The config as TOML text (every key), readable by :func:`load_config`."""
        lines = []
        for section, values in self.to_dict().items():
            lines.append(f"[{section}]")
            lines += [f"{key} = {toml_value(value)}" for key, value in values.items()]
            lines.append("")
        return "\n".join(lines)

    def replace(self, **sections: dict[str, Any]) -> TrainConfig:
        """A copy with some keys changed: ``config.replace(run={"num_envs": 64})``."""
        data = self.to_dict()
        for name, changes in sections.items():
            data.setdefault(name, {}).update(changes)
        return TrainConfig.from_dict(data, "replace()")


def _validate(c: TrainConfig) -> None:
    r, g, ru, n, o, p, q, b = c.run, c.game, c.rule, c.network, c.optim, c.pqn, c.r2d2, c.bootstrap
    for sec, obj in (("run", r), ("rule", ru), ("optim", o), ("pqn", p), ("r2d2", q), ("ppo", c.ppo), ("bootstrap", b)):
        check_section(sec, obj)
    require(r.algorithm in ALGORITHMS, "[run] algorithm", f"must be one of {ALGORITHMS}, got {r.algorithm!r}")
    for key in ("num_envs", "total_moves", "eval_every_moves", "eval_games", "threads"):
        require(getattr(r, key) >= 1, f"[run] {key}", f"must be >= 1, got {getattr(r, key)}")
    require(r.eval_games >= 2, "[run] eval_games", f"must be >= 2 (a standard error needs 2 games), got {r.eval_games}")
    require(r.num_envs <= 2**20, "[run] num_envs", f"must be <= {2**20}, got {r.num_envs}")
    require(0 <= r.deck_seed < 2**63, "[run] deck_seed", f"must be in [0, 2**63), got {r.deck_seed}")
    require(r.checkpoint_minutes > 0, "[run] checkpoint_minutes", f"must be > 0, got {r.checkpoint_minutes}")
    rules = check_agent_sections(g, n, ru.symmetrize, ru.hidden_scheme)  # [game], [network], [rule] symmetrize/hidden_scheme
    require(r.precision in REQUESTED_PRECISIONS, "[run] precision", f"must be one of {REQUESTED_PRECISIONS}, got {r.precision!r}")
    colours = rules.num_colours
    require(ru.objective in RULES, "[rule] objective", f"must be one of {RULES}, got {ru.objective!r}")
    groups = colour_group_names(colours)
    if ru.objective == "gop":
        on_colours = f"must be a colour group of the game's {colours} colours, one of {groups}, got {ru.group!r}"
        require(ru.group in COLOUR_GROUP_NAMES and ru.group in groups, "[rule] group", on_colours)
    else:
        unused = f"is read by objective 'gop' alone; leave it out for objective {ru.objective!r}, got {ru.group!r}"
        require(ru.group is None, "[rule] group", unused)
    r2d2_lstm = f"must be >= 1 for algorithm 'r2d2' (a recurrent agent), got {n.lstm_layers}"
    require(r.algorithm != "r2d2" or n.lstm_layers >= 1, "[network] lstm_layers", r2d2_lstm)
    require(n.aux_weight == 0 or r.algorithm == "r2d2", "[network] aux_weight", "is only supported by algorithm 'r2d2'")
    require(o.optimizer in OPTIMIZERS, "[optim] optimizer", f"must be one of {OPTIMIZERS}, got {o.optimizer!r}")
    require(o.lr > 0, "[optim] lr", f"must be > 0, got {o.lr}")
    require(o.adam_eps > 0, "[optim] adam_eps", f"must be > 0, got {o.adam_eps}")
    require(o.grad_clip >= 0, "[optim] grad_clip", f"must be >= 0, got {o.grad_clip}")
    require(p.exploration in EXPLORATIONS, "[pqn] exploration", f"must be one of {EXPLORATIONS}, got {p.exploration!r}")
    require(p.ladder_rungs >= 2, "[pqn] ladder_rungs", f"must be >= 2, got {p.ladder_rungs}")
    ladder_ends = f"must be > 0 with exploration 'ladder' (a geometric ladder), got {min(p.eps_start, p.eps_end)}"
    require(p.exploration != "ladder" or min(p.eps_start, p.eps_end) > 0, "[pqn] eps_end", ladder_ends)
    for key in ("rollout_steps", "epochs", "minibatches", "eps_decay_moves"):
        require(getattr(p, key) >= 1, f"[pqn] {key}", f"must be >= 1, got {getattr(p, key)}")
    require(r.num_envs * p.rollout_steps >= p.minibatches, "[pqn] minibatches", "must not exceed num_envs * rollout_steps")
    recurrent_split = f"must not exceed num_envs ({r.num_envs}) with an LSTM (minibatches split the games), got {p.minibatches}"
    require(n.lstm_layers == 0 or r.algorithm != "pqn" or p.minibatches <= r.num_envs, "[pqn] minibatches", recurrent_split)
    require(0 <= p.gamma <= 1, "[pqn] gamma", f"must be in [0, 1], got {p.gamma}")
    require(0 <= p.td_lambda <= 1, "[pqn] td_lambda", f"must be in [0, 1], got {p.td_lambda}")
    for key in ("eps_start", "eps_end"):
        require(0 <= getattr(p, key) <= 1, f"[pqn] {key}", f"must be in [0, 1], got {getattr(p, key)}")
    for key in ("batch_size", "buffer_episodes", "n_step", "target_update", "eps_count", "max_moves"):
        require(getattr(q, key) >= 1, f"[r2d2] {key}", f"must be >= 1, got {getattr(q, key)}")
    warmup = f"must be >= batch_size ({q.batch_size}), got {q.warmup_episodes}"
    require(q.warmup_episodes >= q.batch_size, "[r2d2] warmup_episodes", warmup)
    require(q.buffer_episodes >= q.warmup_episodes, "[r2d2] buffer_episodes", f"must be >= warmup_episodes ({q.warmup_episodes})")
    require(q.updates_per_step > 0, "[r2d2] updates_per_step", f"must be > 0, got {q.updates_per_step}")
    require(0 <= q.gamma <= 1, "[r2d2] gamma", f"must be in [0, 1], got {q.gamma}")
    for key in ("priority_exponent", "importance_exponent", "priority_max_weight", "eps_base"):
        require(0 <= getattr(q, key) <= 1, f"[r2d2] {key}", f"must be in [0, 1], got {getattr(q, key)}")
    require(q.eps_alpha >= 0, "[r2d2] eps_alpha", f"must be >= 0, got {q.eps_alpha}")
    require(b.convention in CONVENTIONS, "[bootstrap] convention", f"must be one of {CONVENTIONS}, got {b.convention!r}")
    require(b.bonus >= 0, "[bootstrap] bonus", f"must be >= 0, got {b.bonus}")
    require(b.moves >= 0, "[bootstrap] moves", f"must be >= 0, got {b.moves}")
    two = f"{b.convention!r} needs 2 players (the hint's receiver moves next), got [game] num_players = {g.num_players}"
    require(b.convention == "none" or g.num_players == 2, "[bootstrap] convention", two)
    if b.convention == "none":
        empty = f"must be empty without a convention ([bootstrap] convention = 'none'), got {list(b.slots)}"
        require(b.slots == (), "[bootstrap] slots", empty)
    else:
        allowed = (f"one distinct hand slot in 0..{rules.hand_size - 1} per colour ({rules.num_colours} colours), "
                   f"e.g. {list(range(rules.num_colours))[::-1]}")
        require(len(b.slots) == rules.num_colours and len(set(b.slots)) == len(b.slots)
                and all(0 <= s < rules.hand_size for s in b.slots), "[bootstrap] slots", f"must hold {allowed}, got {list(b.slots)}")
    _validate_ppo(c)


def _validate_ppo(c: TrainConfig) -> None:
    """``[ppo]`` keys, and what the IPPO learner needs of the network (``[run] algorithm = "ippo"``)."""
    pp = c.ppo
    for key in ("rollout_steps", "epochs", "minibatches"):
        require(getattr(pp, key) >= 1, f"[ppo] {key}", f"must be >= 1, got {getattr(pp, key)}")
    require(c.run.num_envs * pp.rollout_steps >= pp.minibatches, "[ppo] minibatches", "must not exceed num_envs * rollout_steps")
    for key in ("gamma", "gae_lambda"):
        require(0 <= getattr(pp, key) <= 1, f"[ppo] {key}", f"must be in [0, 1], got {getattr(pp, key)}")
    require(0 < pp.clip < 1, "[ppo] clip", f"must be in (0, 1), got {pp.clip}")
    for key in ("entropy_coef", "value_coef"):
        require(getattr(pp, key) >= 0, f"[ppo] {key}", f"must be >= 0, got {getattr(pp, key)}")
    if c.run.algorithm == "ippo":
        require(c.network.dueling, "[network] dueling", "must be true for 'ippo': the advantage head holds the policy's logits "
                "and the value head is the critic")
        recurrent_split = f"must not exceed num_envs ({c.run.num_envs}) with an LSTM (minibatches split the games), got {pp.minibatches}"
        require(c.network.lstm_layers == 0 or pp.minibatches <= c.run.num_envs, "[ppo] minibatches", recurrent_split)
        require(c.network.aux_weight == 0, "[network] aux_weight", f"must be 0 for 'ippo' (no auxiliary task), got {c.network.aux_weight}")


def load_config(source: str | Path, overrides: tuple[str, ...] | list[str] = ()) -> TrainConfig:
    """The validated config of ``source`` (a TOML file or a shipped name, :mod:`.files`) with ``overrides`` applied."""
    data = apply_overrides(read_config_file(source), overrides)
    where = str(source) + (f" with --set {' '.join(overrides)}" if overrides else "")
    return TrainConfig.from_dict(data, where)


def with_overrides(config: TrainConfig, overrides: tuple[str, ...] | list[str]) -> TrainConfig:
    """``config`` with ``overrides`` applied and validated (the identity without overrides)."""
    if not overrides:
        return config
    return TrainConfig.from_dict(apply_overrides(config.to_dict(), overrides), f"--set {' '.join(overrides)}")


def describe_config() -> str:
    """Every section and key with its default and meaning, as TOML comments."""
    lines = []
    for name, section in get_type_hints(TrainConfig).items():
        lines.append(f"[{name}]")
        for f in dataclasses.fields(section):
            shown = f"{f.name} = {toml_value(f.default)}" if f.default is not None else f"# {f.name} ="
            lines.append(f"{shown}  # {f.metadata['help']}")
    return "\n".join(lines).rstrip("\n")
