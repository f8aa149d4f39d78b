"""The agent's sections of a config, and :class:`AgentSpec`: everything playing a trained agent needs.

An :class:`AgentSpec` is the game an agent plays (``[game]``: the rules and the observation variant) and
its network (``[network]``: its shape, what its outputs are (``head``, one of :data:`HEADS`), the colour group it
was trained symmetrized over, the recurrent symmetrizer's hidden-state scheme and the precision it runs in, one of
:data:`PRECISIONS`). It is what a loaded policy carries; the training config
(:mod:`eqc.domains.hanabi.training.config`) holds the same two sections beside those that only training reads, and
gives its spec as ``config.agent``. The sections are validated here, once (:mod:`.schema`); the training config's
validation calls the same checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from eqc.domains.hanabi.config.schema import ConfigError, check_section, config_field, read_section, require
from eqc.domains.hanabi.rules import KNOWLEDGE, PRESETS, SAD_VARIANTS, SHAPE_FIELDS, HanabiRules
from eqc.domains.hanabi.symmetry import colour_group, colour_group_names
from eqc.groups import PermutationGroup
from eqc.symmetrize.recurrent import DEFAULT_HIDDEN_SCHEME, HIDDEN_SCHEMES

__all__ = [
    "DEFAULT_HIDDEN_SCHEME",
    "HEADS",
    "HIDDEN_SCHEMES",
    "PRECISIONS",
    "REQUESTED_PRECISIONS",
    "AgentSpec",
    "GameConfig",
    "NetworkConfig",
    "check_agent_sections",
]

#: What an agent's network runs in (``[network] precision``).
PRECISIONS = ("fp32", "bf16")
#: What a training config's ``[network] precision`` may request: a precision, or "auto" (chosen on the device that
#: trains, when the run starts; the run records the precision used).
REQUESTED_PRECISIONS = ("auto", *PRECISIONS)
DUELING_CENTRES = ("legal", "all")
#: What an agent's outputs are (``[network] head``): "q", Q-values (it acts greedily on them), or "policy", the logits
#: of a stochastic policy (it may also play by sampling them).
HEADS = ("q", "policy")


@dataclass(frozen=True)
class GameConfig:
    """The game as an agent sees it; :meth:`rules` turns it into the one validated ``HanabiRules``.

    The shape keys (``num_colours`` ... ``max_lives``, named as in ``HanabiRules``) are optional: a key
    left out is the ``preset``'s value, a key given replaces it. The keys it shares with ``HanabiRules``
    take its defaults, so ``GameConfig().rules() == HanabiRules()``.
    """

    num_players: int = config_field("players (2-5)", HanabiRules.num_players)
    preset: str = config_field("the game: 'full' (HLE's 5 colours x 5 ranks), 'small' (HLE's Hanabi-Small: 2 x 5, hand 2, "
                               "3 information tokens, 1 life) or 'mini' (jax-aht's Mini-Hanabi: 3 x 3, hand 3, 5 tokens, 3 lives)",
                               "full")
    num_colours: int | None = config_field("colours, 1-5 (left out: the preset's)", None)
    num_ranks: int | None = config_field("ranks, 1-5 (left out: the preset's)", None)
    hand_size: int | None = config_field("cards per hand, 1-8 (left out: the preset's; full: 5 for 2-3 players, 4 for 4-5)", None)
    max_info_tokens: int | None = config_field("information tokens at the start and at most, 1-100 (left out: the preset's)", None)
    max_lives: int | None = config_field("life tokens, 1-100 (left out: the preset's)", None)
    knowledge: str = config_field("card-knowledge encoding: 'canonical' (HLE's bits) or 'v0_belief' (SAD/OBL/JaxMARL's; what the "
                                  "shipped configs train on)", HanabiRules.knowledge)
    sad: str = config_field("SAD block appended to observations: 'off', 'greedy_last_action' (hanabi_SAD's) or 'greedy_onehot'",
                            HanabiRules.sad)

    @property
    def uses_sad(self) -> bool:
        """Whether observations carry a SAD block (then ``step`` needs the actors' greedy moves)."""
        return self.sad != "off"

    def rules(self) -> HanabiRules:
        """The validated ``HanabiRules``: the preset, the shape keys given, the observation variant."""
        shape = {key: getattr(self, key) for key in SHAPE_FIELDS if getattr(self, key) is not None}
        return HanabiRules.preset(self.preset, num_players=self.num_players, knowledge=self.knowledge, sad=self.sad, **shape)


@dataclass(frozen=True)
class NetworkConfig:
    hidden_size: int = config_field("width of every hidden layer", 512)
    mlp_layers: int = config_field("Linear+ReLU layers before the recurrent core (or the whole trunk when lstm_layers = 0)", 3)
    lstm_layers: int = config_field("LSTM layers (0 = feed-forward)", 0)
    layer_norm: bool = config_field("LayerNorm after every Linear of the trunk (PQN)", True)
    dueling: bool = config_field("dueling heads: Q = V + A - mean of A (see dueling_centre)", True)
    dueling_centre: str = config_field("dueling mean: 'legal' (over legal moves) or 'all' (hanabi_SAD/OBL: A*legal over all actions)",
                                       "legal")
    head: str | None = config_field("what the outputs are: 'q' (Q-values, acted on greedily) or 'policy' (the logits of a "
                                    "stochastic policy); a training config leaves it out: its algorithm's ('policy' for "
                                    "ippo, 'q' for pqn and r2d2)", None)
    aux_weight: float = config_field("weight of the SAD-AUX own-hand head (playable/dead/later per slot); 0 = no aux head", 0.0)
    symmetrize: str | None = config_field("train the network symmetrized over this colour group of the game's colours, e.g. C5, "
                                          "D10, S5 (left out: a plain network)", None)
    hidden_scheme: str = config_field("recurrent symmetrizer's hidden-state scheme: 'average' or 'identity'", DEFAULT_HIDDEN_SCHEME)
    precision: str = config_field("'fp32' or 'bf16' ('auto' in a training config): 'bf16' runs the network's matrix products in "
                                  "bfloat16 autocast (acting, learning, evaluation; heads, Q-values, losses, targets and optimizer "
                                  "state stay float32); 'auto' trains in bf16 where it is faster than fp32 (x86 AMX, aarch64 "
                                  "bf16, CUDA capability >= 8.0; with avx512_bf16 alone a timed training step decides), else "
                                  "fp32. The run records the precision used and why, and keeps it on resume", "auto")


def _check_game(g: GameConfig) -> HanabiRules:
    check_section("game", g)
    require(2 <= g.num_players <= 5, "[game] num_players", f"must be in 2..5, got {g.num_players}")
    require(g.knowledge in KNOWLEDGE, "[game] knowledge", f"must be one of {KNOWLEDGE}, got {g.knowledge!r}")
    require(g.sad in SAD_VARIANTS, "[game] sad", f"must be one of {SAD_VARIANTS}, got {g.sad!r}")
    require(g.preset in PRESETS, "[game] preset", f"must be one of {list(PRESETS)}, got {g.preset!r}")
    for key, high in (("num_colours", 5), ("num_ranks", 5), ("hand_size", 8), ("max_info_tokens", 100), ("max_lives", 100)):
        value = getattr(g, key)
        require(value is None or 1 <= value <= high, f"[game] {key}", f"must be in 1..{high} (leave it out for the preset's), got {value}")
    try:
        return g.rules()
    except ValueError as exc:
        raise ConfigError(f"[game] (preset {g.preset!r} with num_players, num_colours, num_ranks, hand_size) {exc}") from None


def _check_network(n: NetworkConfig) -> None:
    check_section("network", n)
    require(n.hidden_size >= 1, "[network] hidden_size", f"must be >= 1, got {n.hidden_size}")
    require(n.mlp_layers >= 1, "[network] mlp_layers", f"must be >= 1, got {n.mlp_layers}")
    require(n.lstm_layers >= 0, "[network] lstm_layers", f"must be >= 0, got {n.lstm_layers}")
    require(n.aux_weight >= 0, "[network] aux_weight", f"must be >= 0, got {n.aux_weight}")
    centres = f"must be one of {DUELING_CENTRES}, got {n.dueling_centre!r}"
    require(n.dueling_centre in DUELING_CENTRES, "[network] dueling_centre", centres)


def check_agent_sections(game: GameConfig, network: NetworkConfig, precisions: tuple[str, ...]) -> HanabiRules:
    """Validate the agent's sections, ``[game]`` and ``[network]``, its precision one of ``precisions``
    (:data:`PRECISIONS` for an agent, :data:`REQUESTED_PRECISIONS` for a training config) and its head one of
    :data:`HEADS` (a training config's is its algorithm's by then); the game's rules."""
    require(isinstance(game, GameConfig), "[game]", f"must be a GameConfig, got {type(game).__name__}")
    require(isinstance(network, NetworkConfig), "[network]", f"must be a NetworkConfig, got {type(network).__name__}")
    rules = _check_game(game)
    _check_network(network)
    groups = colour_group_names(rules.num_colours)
    require(network.symmetrize is None or network.symmetrize in groups, "[network] symmetrize",
            f"must be one of {groups} (the game has {rules.num_colours} colours; left out: a plain network), got {network.symmetrize!r}")
    require(network.hidden_scheme in HIDDEN_SCHEMES, "[network] hidden_scheme",
            f"must be one of {HIDDEN_SCHEMES}, got {network.hidden_scheme!r}")
    require(network.precision in precisions, "[network] precision", f"must be one of {precisions}, got {network.precision!r}")
    require(network.head in HEADS, "[network] head", f"must be one of {HEADS}, got {network.head!r}")
    return rules


@dataclass(frozen=True)
class AgentSpec:
    """What playing a trained agent needs (see the module docstring); validated on construction.

    Attributes:
        game: the game and observation variant (``[game]``).
        network: the network (``[network]``): its shape, ``head`` (one of :data:`HEADS`), ``symmetrize`` (the colour group, a name of
            ``colour_group_names`` of the game's colours, it was trained symmetrized over; None: plain),
            ``hidden_scheme`` and ``precision`` (one of :data:`PRECISIONS`: a training config's "auto" is
            resolved when it trains, and its run records the precision used).
    """

    game: GameConfig = field(default_factory=GameConfig)
    network: NetworkConfig = field(default_factory=lambda: NetworkConfig(head="q", precision="fp32"))

    def __post_init__(self) -> None:
        check_agent_sections(self.game, self.network, PRECISIONS)

    def rules(self) -> HanabiRules:
        """The game and observation variant the agent plays (``game.rules()``)."""
        return self.game.rules()

    def group(self) -> PermutationGroup | None:
        """The colour group ``network.symmetrize`` names, on the game's colours; None for a plain network."""
        symmetrize = self.network.symmetrize
        return None if symmetrize is None else colour_group(symmetrize, self.rules().num_colours)

    @classmethod
    def from_config(cls, data: object, where: str = "config") -> AgentSpec:
        """The spec of a recorded config's nested dict (a checkpoint's or ``policy.json``'s ``config``, as today's
        eqc writes it: :func:`~.upgrade.upgrade_config` reads older ones): ``[game]`` and ``[network]`` read
        strictly (unknown keys and wrong types refused; a missing key takes its default), the sections only
        training reads left to the training config."""
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise ConfigError(f"{where}: expected a table of sections, got {type(data).__name__}")
        game = read_section(GameConfig, data.get("game", {}), f"{where}: [game]")
        network = read_section(NetworkConfig, data.get("network", {}), f"{where}: [network]")
        try:
            return cls(game, network)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
