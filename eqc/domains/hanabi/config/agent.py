"""The agent's sections of a config, and :class:`AgentSpec`: everything playing a trained agent needs.

An :class:`AgentSpec` is the game an agent plays (``[game]``: the rules and the observation
variant), its network (``[network]``), the colour group it was trained symmetrized over and the
recurrent symmetrizer's hidden-state scheme (``[rule] symmetrize``, ``[rule] hidden_scheme``) and
the precision its network runs in (``[run] precision``, one of :data:`PRECISIONS`). It is what a
loaded policy carries; the training config (:mod:`.train`) holds the same sections beside those that
only training reads, and gives its spec as ``config.agent``. The sections are validated here, once
(:mod:`.schema`); the training config's validation calls the same checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from eqc.domains.hanabi.config.schema import ConfigError, check_section, config_field, read_section, require
from eqc.domains.hanabi.rules import KNOWLEDGE, PRESETS, SAD_VARIANTS, SHAPE_FIELDS, HanabiRules
from eqc.domains.hanabi.symmetry import colour_group, colour_group_names
from eqc.groups import PermutationGroup
from eqc.symmetrize.recurrent import DEFAULT_HIDDEN_SCHEME, HIDDEN_SCHEMES

__all__ = ["DEFAULT_HIDDEN_SCHEME", "HIDDEN_SCHEMES", "PRECISIONS", "AgentSpec", "GameConfig", "NetworkConfig", "check_agent_sections"]

#: What a network runs in (``[run] precision`` of an agent; a training config may also request "auto").
PRECISIONS = ("fp32", "bf16")
DUELING_CENTRES = ("legal", "all")


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
    aux_weight: float = config_field("weight of the SAD-AUX own-hand head (playable/dead/later per slot); 0 = no aux head", 0.0)


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


def check_agent_sections(game: GameConfig, network: NetworkConfig, symmetrize: str | None, hidden_scheme: str) -> HanabiRules:
    """Validate the agent's sections but its precision (``[game]``, ``[network]``, ``[rule] symmetrize`` and
    ``hidden_scheme``, as :class:`AgentSpec` holds them); the game's rules."""
    require(isinstance(game, GameConfig), "[game]", f"must be a GameConfig, got {type(game).__name__}")
    require(isinstance(network, NetworkConfig), "[network]", f"must be a NetworkConfig, got {type(network).__name__}")
    rules = _check_game(game)
    _check_network(network)
    groups = colour_group_names(rules.num_colours)
    require(symmetrize is None or symmetrize in groups, "[rule] symmetrize",
            f"must be one of {groups} (the game has {rules.num_colours} colours; left out: a plain network), got {symmetrize!r}")
    require(hidden_scheme in HIDDEN_SCHEMES, "[rule] hidden_scheme", f"must be one of {HIDDEN_SCHEMES}, got {hidden_scheme!r}")
    return rules


@dataclass(frozen=True)
class AgentSpec:
    """What playing a trained agent needs (see the module docstring); validated on construction.

    Attributes:
        game: the game and observation variant (``[game]``).
        network: the Q-network's shape (``[network]``).
        symmetrize: the colour group (a name of ``colour_group_names`` of the game's colours) the network
            was trained symmetrized over, or None for a plain network (``[rule] symmetrize``).
        hidden_scheme: the recurrent symmetrizer's hidden-state scheme, one of :data:`HIDDEN_SCHEMES`.
        precision: what the network runs in, one of :data:`PRECISIONS` (``[run] precision``; a
            training config's "auto" is resolved when it trains, and its run records the precision used).
    """

    game: GameConfig = field(default_factory=GameConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    symmetrize: str | None = None
    hidden_scheme: str = DEFAULT_HIDDEN_SCHEME
    precision: str = "fp32"

    def __post_init__(self) -> None:
        check_agent_sections(self.game, self.network, self.symmetrize, self.hidden_scheme)
        require(self.precision in PRECISIONS, "[run] precision", f"must be one of {PRECISIONS}, got {self.precision!r}")

    def rules(self) -> HanabiRules:
        """The game and observation variant the agent plays (``game.rules()``)."""
        return self.game.rules()

    def group(self) -> PermutationGroup | None:
        """The colour group ``symmetrize`` names, on the game's colours; None for a plain network."""
        return None if self.symmetrize is None else colour_group(self.symmetrize, self.rules().num_colours)

    @classmethod
    def from_config(cls, data: object, where: str = "config") -> AgentSpec:
        """The spec of a recorded config's nested dict (a checkpoint's or ``policy.json``'s ``config``, as today's
        eqc writes it: :func:`~.upgrade.upgrade_config` reads older ones): ``[game]`` and ``[network]`` read
        strictly (unknown keys and wrong types refused), ``[rule] symmetrize`` and ``hidden_scheme`` and ``[run]
        precision``; a missing key takes its default, the keys only training reads are left to the training config."""
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise ConfigError(f"{where}: expected a table of sections, got {type(data).__name__}")
        game = read_section(GameConfig, data.get("game", {}), f"{where}: [game]")
        network = read_section(NetworkConfig, data.get("network", {}), f"{where}: [network]")
        rule, run = data.get("rule", {}), data.get("run", {})
        try:
            return cls(game, network, rule.get("symmetrize"), rule.get("hidden_scheme", DEFAULT_HIDDEN_SCHEME),
                       run.get("precision", "fp32"))
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
