"""The training config: every key written once, with its default and meaning.

A config is a TOML file with the sections below (the shipped ones: ``configs/hanabi/*.toml``, read
by :mod:`eqc.domains.hanabi.config.files`, which also resolves ``base`` and ``--set`` overrides); a key left out
takes the default written here. Unknown sections or keys, wrong types and impossible values are refused with a
message naming the key (:class:`~eqc.domains.hanabi.config.schema.ConfigError`, a ``ValueError``). Each field's
``help`` is the one-line documentation of the key (``eqc hanabi config`` prints them all).

It lives with training, beside the table of algorithms it reads; :mod:`eqc.domains.hanabi.config` keeps what an agent
needs. The agent's sections (``[game]`` and ``[network]``) are defined and validated in
:mod:`eqc.domains.hanabi.config.agent`; ``config.agent`` is the :class:`~eqc.domains.hanabi.config.agent.AgentSpec` a
trained policy carries, and a policy's training record (``TrainedPolicy.trained_with``) reads back as a config with
:meth:`TrainConfig.from_dict`. Each learning algorithm's own section (``[pqn]``, ``[r2d2]``, ``[ppo]``) is declared,
with its rules and its learner, by the algorithm's module, and comes from the table
:data:`~eqc.domains.hanabi.training.algorithms.ALGORITHMS` (which this module imports; those modules name
``TrainConfig`` for types alone); :meth:`TrainConfig.settings` reads one. A config holds the chosen algorithm's
section alone: another's (inherited through ``base``, say) is checked, then not kept, and a run records none.

``[network] head`` (what the agent's outputs are, :data:`~eqc.domains.hanabi.config.agent.HEADS`) follows
``[run] algorithm`` (:func:`algorithm_head`): left out, it is the algorithm's; given, it must be.
:meth:`TrainConfig.replace` and :func:`with_overrides` derive it again unless the change names it, so a change of
algorithm carries its head along.

``[network] precision`` is a requested precision (:data:`~eqc.domains.hanabi.config.agent.REQUESTED_PRECISIONS`);
"auto" is resolved on the device that trains (:func:`~eqc.domains.hanabi.agent.precision.resolve_precision`), and the
config a run stores holds the precision it used.

Counting convention: a *move* is one action in one game; a *step* is one batched step, a move in
each of the ``num_envs`` games at once. Keys ending in ``_moves`` count moves (summed over games),
``rollout_steps`` and ``updates_per_step`` count steps.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

from eqc.dec_pomdp.candidate_set import NOT_A_GROUP, is_candidate_set_file
from eqc.domains.hanabi.config.agent import REQUESTED_PRECISIONS, AgentSpec, GameConfig, NetworkConfig, check_agent_sections
from eqc.domains.hanabi.config.files import apply_overrides, read_config_file
from eqc.domains.hanabi.config.schema import (
    ConfigError,
    check_section,
    config_field,
    read_section,
    require,
    require_at_least,
    section_dict,
    toml_value,
)
from eqc.domains.hanabi.config.upgrade import MOVED_KEYS
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import COLOUR_GROUP_NAMES, colour_group_names, learned_candidates, learned_symmetry
from eqc.domains.hanabi.training.algorithms import ALGORITHMS

if TYPE_CHECKING:
    from eqc.domains.hanabi.training.learner import Algorithm

__all__ = [
    "BootstrapConfig",
    "OptimConfig",
    "RuleConfig",
    "RunConfig",
    "TrainConfig",
    "algorithm_head",
    "config_sections",
    "describe_config",
    "load_config",
    "with_overrides",
]

RULES = ("sp", "op", "gop")
OPTIMIZERS = ("adam", "radam")
CONVENTIONS = ("none", "colour_to_slot", "colour_to_touched_slot")
#: An algorithm's own section (``Algorithm.settings``).
S = TypeVar("S")


@dataclass(frozen=True)
class RunConfig:
    algorithm: str = config_field("learner: " + ", ".join(f"{a.name!r} ({a.summary})" for a in ALGORITHMS.values()), "pqn")
    num_envs: int = config_field("games played in lockstep on the device", 1024)
    total_moves: int = config_field("stop after this many moves, summed over games", 200_000_000)
    eval_every_moves: int = config_field("greedy evaluation every this many moves", 2_000_000)
    eval_games: int = config_field("games per greedy evaluation, on fixed seeded decks", 1000)
    deck_seed: int = config_field("seed of the decks every evaluation during training plays, the same decks each time", 1)
    checkpoint_minutes: float = config_field("write a checkpoint at least this often (wall-clock minutes)", 5.0)
    compile: bool = config_field("torch.compile the acting step (CUDA graphs on cuda, C++ on a cpu; the same games; see the guide)", False)
    threads: int = config_field("torch CPU threads (1 is fastest for eqc's small networks on a busy machine; benchmarks/RESULTS.md)", 1)
    tensorboard: bool = config_field("also write TensorBoard scalars to DIR/tensorboard (needs the tensorboard package)", False)


@dataclass(frozen=True)
class RuleConfig:
    objective: str = config_field("'sp' self-play, 'op' Other-Play over S5, 'gop' G-OP over `group`", "sp")
    group: str | None = config_field("colour group of G-OP on the game's c colours: Cc, D(2c), Sc or Ac, e.g. C5, D10, S5, A5 or "
                                     "C3, D6; read by objective 'gop' alone (required there, refused elsewhere)", None)
    symmetries: str | None = config_field("an expected-return group file (`eqc hanabi symmetries learn`): Other-Play over its group "
                                          "instead of every colour permutation; or a candidate set of learned neural maps (`eqc hanabi "
                                          "symmetries neural`, not a group): Other-Play over identity + its maps; read by objective "
                                          "'op' alone; the run keeps a copy (symmetries.json, and a candidate set's weights "
                                          "symmetries.safetensors) and so does the exported agent", None)


@dataclass(frozen=True)
class OptimConfig:
    optimizer: str = config_field("'adam' or 'radam'", "radam")
    lr: float = config_field("learning rate", 3e-4)
    adam_eps: float = config_field("Adam epsilon", 1e-8)
    grad_clip: float = config_field("clip the gradient norm to this (0 = no clipping)", 0.5)


@dataclass(frozen=True)
class BootstrapConfig:
    convention: str = config_field("'none'; 'colour_to_slot': induce the convention 'a colour hint c means play slot pi(c)' by a "
                                   "shaping reward; 'colour_to_touched_slot': the same, paid only when the hint touched slot "
                                   "pi(c) (eqc.domains.hanabi.training.bootstrap)", "none")
    slots: tuple[int, ...] = config_field("pi: the hand slot a hint of colour c asks to play, slots[c], one distinct slot per "
                                          "colour (e.g. [2, 0, 1]); required by a convention, empty without one", ())
    bonus: float = config_field("shaping reward of a scoring play of slot pi(c) right after the partner revealed colour c", 1.0)
    moves: int = config_field("moves (summed over games) the shaping lasts; then the game's reward alone trains", 0)


def algorithm_head(algorithm: Algorithm[Any]) -> str:
    """``[network] head`` of the agents ``algorithm`` trains: "policy" where its logits are a policy, else "q"."""
    return "policy" if algorithm.policy else "q"


def _default_settings() -> tuple[Any, ...]:
    return tuple(a.settings() for a in ALGORITHMS.values())


@dataclass(frozen=True)
class TrainConfig:
    """A validated training config: its sections, and its algorithm's own section in ``algorithm_settings``.

    ``algorithm_settings`` has one entry per algorithm of :data:`~eqc.domains.hanabi.training.algorithms.ALGORITHMS`, in
    its order (read one with :meth:`settings`), but the config holds the chosen algorithm's section alone: another
    algorithm's section given (inherited through ``base``, or left from a change of algorithm) is checked, then reset
    to its defaults, and :meth:`sections` and :meth:`to_dict` (what a run records) leave it out.
    """

    run: RunConfig = field(default_factory=RunConfig)
    game: GameConfig = field(default_factory=GameConfig)
    rule: RuleConfig = field(default_factory=RuleConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    algorithm_settings: tuple[Any, ...] = field(default_factory=_default_settings)
    bootstrap: BootstrapConfig = field(default_factory=BootstrapConfig)

    def __post_init__(self) -> None:
        run, network = self.run, self.network
        if isinstance(run, RunConfig) and isinstance(network, NetworkConfig) and network.head is None and run.algorithm in ALGORITHMS:
            object.__setattr__(self, "network", dataclasses.replace(network, head=algorithm_head(ALGORITHMS[run.algorithm])))
        _validate(self)
        pairs = zip(ALGORITHMS.values(), self.algorithm_settings, strict=True)
        object.__setattr__(self, "algorithm_settings", tuple(s if a.name == self.run.algorithm else a.settings() for a, s in pairs))

    @property
    def algorithm(self) -> Algorithm[Any]:
        """The algorithm ``[run] algorithm`` names (:data:`ALGORITHMS`): its section, learner, forms and what its agents are."""
        return ALGORITHMS[self.run.algorithm]

    def settings(self, algorithm: Algorithm[S]) -> S:
        """``algorithm``'s own section (e.g. ``config.settings(PQN)``, the ``[pqn]`` keys)."""
        return self.algorithm_settings[list(ALGORITHMS).index(algorithm.name)]

    def sections(self) -> dict[str, Any]:
        """The sections it holds by name, in the order of :func:`config_sections`: the common ones and its algorithm's."""
        others = {a.section for a in ALGORITHMS.values() if a.name != self.run.algorithm}
        return {name: section for name, section in _every_section(self).items() if name not in others}

    @property
    def agent(self) -> AgentSpec:
        """The spec of the agent this config trains: ``[game]`` and ``[network]`` (validated by ``AgentSpec``). A
        ``[network] precision`` of "auto" is refused: resolve it on the training device first (``make_learner``
        and ``train`` do)."""
        require(self.network.precision != "auto", "[network] precision",
                "is 'auto', which is resolved on the device that trains: replace it by the precision used "
                "(eqc.domains.hanabi.agent.precision.resolve_precision) before asking for the agent's spec")
        return AgentSpec(self.game, self.network)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Plain nested dict (TOML/JSON-able) holding every key that is set (optional keys that are None left out)."""
        return {name: section_dict(section) for name, section in self.sections().items()}

    @classmethod
    def from_dict(cls, data: object, source: str = "config") -> TrainConfig:
        """Build from nested dicts; a missing key takes its default, anything unknown is an error."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a table of sections, got {type(data).__name__}")
        sections = config_sections()
        built = {}
        for name, value in data.items():
            if name not in sections:
                raise ConfigError(f"{source}: unknown section [{name}]; allowed: {sorted(sections)}")
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: [{name}] must be a table of keys, got {type(value).__name__}")
            for key in value:
                if (name, key) in MOVED_KEYS:
                    raise ConfigError(f"{source}: [{name}] {key} is now [{MOVED_KEYS[name, key]}] {key} (the agent's own keys are "
                                      f"all in [network]); move it there")
            built[name] = read_section(sections[name], value, f"{source}: [{name}]")
        own = tuple(built.pop(a.section) if a.section in built else a.settings() for a in ALGORITHMS.values())
        try:
            return cls(**built, algorithm_settings=own)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    def _without_derived(self) -> dict[str, dict[str, Any]]:
        """:meth:`to_dict` without what follows from other keys (``[network] head``): what a change or a file starts from,
        so that the key is derived again."""
        data = self.to_dict()
        data["network"].pop("head", None)
        return data

    def to_toml(self) -> str:
        """The config as TOML text, readable by :func:`load_config`: every key but the derived ``[network] head``, so that
        a file edited or ``--set`` to another algorithm takes that algorithm's head."""
        lines = []
        for section, values in self._without_derived().items():
            lines.append(f"[{section}]")
            lines += [f"{key} = {toml_value(value)}" for key, value in values.items()]
            lines.append("")
        return "\n".join(lines)

    def replace(self, **sections: dict[str, Any]) -> TrainConfig:
        """A copy with some keys changed: ``config.replace(run={"num_envs": 64})``."""
        data = self._without_derived()
        for name, changes in sections.items():
            data.setdefault(name, {}).update(changes)
        return TrainConfig.from_dict(data, "replace()")


def config_sections() -> dict[str, type]:
    """Every section's name and dataclass, in the order a config is written: the algorithms' (:data:`ALGORITHMS`, in its
    order) where ``TrainConfig`` holds ``algorithm_settings``."""
    hints = get_type_hints(TrainConfig)
    sections: dict[str, type] = {}
    for f in dataclasses.fields(TrainConfig):
        if f.name == "algorithm_settings":
            sections.update({a.section: a.settings for a in ALGORITHMS.values()})
        else:
            sections[f.name] = hints[f.name]
    return sections


def _every_section(c: TrainConfig) -> dict[str, Any]:
    """Every section by name, every algorithm's included, in the order of :func:`config_sections`."""
    own = dict(zip((a.section for a in ALGORITHMS.values()), c.algorithm_settings, strict=True))
    return {name: own[name] if name in own else getattr(c, name) for name in config_sections()}


def _validate(c: TrainConfig) -> None:
    """The rules of the common sections, then every algorithm's section, then what the chosen algorithm needs."""
    r, g, ru, n, o, b = c.run, c.game, c.rule, c.network, c.optim, c.bootstrap
    expected = tuple(a.settings for a in ALGORITHMS.values())
    held = f"must hold one section per algorithm, {[t.__name__ for t in expected]}, got {c.algorithm_settings}"
    require(tuple(map(type, c.algorithm_settings)) == expected, "TrainConfig.algorithm_settings", held)
    for sec, obj in _every_section(c).items():
        if sec not in ("game", "network"):  # the agent's sections: check_agent_sections
            check_section(sec, obj)
    require(r.algorithm in ALGORITHMS, "[run] algorithm", f"must be one of {tuple(ALGORITHMS)}, got {r.algorithm!r}")
    require_at_least("run", r, ("num_envs", "total_moves", "eval_every_moves", "eval_games", "threads"), 1)
    require(r.eval_games >= 2, "[run] eval_games", f"must be >= 2 (a standard error needs 2 games), got {r.eval_games}")
    require(r.num_envs <= 2**20, "[run] num_envs", f"must be <= {2**20}, got {r.num_envs}")
    require(0 <= r.deck_seed < 2**63, "[run] deck_seed", f"must be in [0, 2**63), got {r.deck_seed}")
    require(r.checkpoint_minutes > 0, "[run] checkpoint_minutes", f"must be > 0, got {r.checkpoint_minutes}")
    rules = check_agent_sections(g, n, REQUESTED_PRECISIONS)
    _check_rule(ru, rules)
    _check_algorithm(c, c.algorithm)
    require(o.optimizer in OPTIMIZERS, "[optim] optimizer", f"must be one of {OPTIMIZERS}, got {o.optimizer!r}")
    require(o.lr > 0, "[optim] lr", f"must be > 0, got {o.lr}")
    require(o.adam_eps > 0, "[optim] adam_eps", f"must be > 0, got {o.adam_eps}")
    require(o.grad_clip >= 0, "[optim] grad_clip", f"must be >= 0, got {o.grad_clip}")
    for algorithm in ALGORITHMS.values():
        algorithm.check_keys(c.settings(algorithm), c)
    _check_bootstrap(b, rules, g.num_players)
    c.algorithm.check_use(c.settings(c.algorithm), c)


def _check_rule(ru: RuleConfig, rules: HanabiRules) -> None:
    require(ru.objective in RULES, "[rule] objective", f"must be one of {RULES}, got {ru.objective!r}")
    colours = rules.num_colours
    groups = colour_group_names(colours)
    if ru.objective == "gop":
        on_colours = f"must be a colour group of the game's {colours} colours, one of {groups}, got {ru.group!r}"
        require(ru.group in COLOUR_GROUP_NAMES and ru.group in groups, "[rule] group", on_colours)
    else:
        unused = f"is read by objective 'gop' alone; leave it out for objective {ru.objective!r}, got {ru.group!r}"
        require(ru.group is None, "[rule] group", unused)
    if isinstance(ru.symmetries, str) and is_candidate_set_file(ru.symmetries):
        _check_candidate_set(ru, ru.symmetries, rules)
    elif ru.symmetries is not None:
        require(ru.objective == "op", "[rule] symmetries",
                f"is read by objective 'op' alone (Other-Play over the file's group); got objective {ru.objective!r}")
        require(isinstance(ru.symmetries, str) and bool(ru.symmetries), "[rule] symmetries",
                f"must be the path of an expected-return group file, got {ru.symmetries!r}")
        try:
            learned_symmetry(ru.symmetries, rules)
        except (OSError, ValueError) as exc:
            require(False, "[rule] symmetries", f"must name a readable expected-return group file (or a candidate set of "
                                                f"learned neural maps) of this game: {exc}")


def _check_candidate_set(ru: RuleConfig, path: str, rules: HanabiRules) -> None:
    """``[rule] symmetries`` naming a candidate set (``eqc hanabi symmetries neural``): Other-Play alone draws from it;
    its maps must fit this game's observation encoding and moves."""
    why = {"gop": f": G-OP needs a group (it draws from a subgroup and deploys the policy symmetrized over it), and a "
                  f"candidate set is not a group: {NOT_A_GROUP}"}.get(ru.objective, "")
    require(ru.objective == "op", "[rule] symmetries", f"names a candidate set of learned neural maps ({path}), which "
                                                      f"only Other-Play (objective 'op') draws from; got objective {ru.objective!r}{why}")
    try:
        learned_candidates(path, rules)
    except (OSError, ValueError) as exc:
        require(False, "[rule] symmetries", f"must name a readable candidate set of learned neural maps for this game's encoding: {exc}")


def _check_algorithm(c: TrainConfig, algorithm: Algorithm[Any]) -> None:
    """The network forms and heads the chosen algorithm trains (``Algorithm.forms``, ``policy``, ``aux``)."""
    n = c.network
    recurrent = algorithm.forms == (True,)
    kind = "recurrent" if recurrent else "feed-forward"
    form = f"must be {'>= 1' if recurrent else '0'} for algorithm {algorithm.name!r} (a {kind} agent)"
    require((n.lstm_layers >= 1) in algorithm.forms, "[network] lstm_layers", f"{form}, got {n.lstm_layers}")
    head = algorithm_head(algorithm)
    outputs = "the logits of its policy" if algorithm.policy else "Q-values"
    require(n.head == head, "[network] head", f"must be {head!r} for algorithm {algorithm.name!r} (its agents output {outputs}; "
                                              f"leave the key out to take the algorithm's), got {n.head!r}")
    with_aux = " or ".join(repr(a.name) for a in ALGORITHMS.values() if a.aux)
    require(n.aux_weight == 0 or algorithm.aux, "[network] aux_weight", f"is only supported by algorithm {with_aux}")


def _check_bootstrap(b: BootstrapConfig, rules: HanabiRules, players: int) -> None:
    require(b.convention in CONVENTIONS, "[bootstrap] convention", f"must be one of {CONVENTIONS}, got {b.convention!r}")
    require(b.bonus >= 0, "[bootstrap] bonus", f"must be >= 0, got {b.bonus}")
    require(b.moves >= 0, "[bootstrap] moves", f"must be >= 0, got {b.moves}")
    two = f"{b.convention!r} needs 2 players (the hint's receiver moves next), got [game] num_players = {players}"
    require(b.convention == "none" or players == 2, "[bootstrap] convention", two)
    if b.convention == "none":
        empty = f"must be empty without a convention ([bootstrap] convention = 'none'), got {list(b.slots)}"
        require(b.slots == (), "[bootstrap] slots", empty)
    else:
        allowed = (f"one distinct hand slot in 0..{rules.hand_size - 1} per colour ({rules.num_colours} colours), "
                   f"e.g. {list(range(rules.num_colours))[::-1]}")
        require(len(b.slots) == rules.num_colours and len(set(b.slots)) == len(b.slots)
                and all(0 <= s < rules.hand_size for s in b.slots), "[bootstrap] slots", f"must hold {allowed}, got {list(b.slots)}")


def load_config(source: str | Path, overrides: tuple[str, ...] | list[str] = ()) -> TrainConfig:
    """The validated config of ``source`` (a TOML file or a shipped name, :mod:`eqc.domains.hanabi.config.files`) with
    ``overrides`` applied."""
    data = apply_overrides(read_config_file(source), overrides)
    where = str(source) + (f" with --set {' '.join(overrides)}" if overrides else "")
    return TrainConfig.from_dict(data, where)


def with_overrides(config: TrainConfig, overrides: tuple[str, ...] | list[str]) -> TrainConfig:
    """``config`` with ``overrides`` applied and validated (the identity without overrides)."""
    if not overrides:
        return config
    return TrainConfig.from_dict(apply_overrides(config._without_derived(), overrides), f"--set {' '.join(overrides)}")


def describe_config() -> str:
    """Every section and key with its default and meaning, as TOML comments."""
    lines = []
    for name, section in config_sections().items():
        lines.append(f"[{name}]")
        for f in dataclasses.fields(section):
            shown = f"{f.name} = {toml_value(f.default)}" if f.default is not None else f"# {f.name} ="
            lines.append(f"{shown}  # {f.metadata['help']}")
    return "\n".join(lines).rstrip("\n")
