"""Training pools of lever-game agents under five rules (three objectives, two uses of the symmetrizer).

An *agent* is one small MLP policy (payoff vector -> 10 logits) that both players use
(parameter sharing, as for the paper's Hanabi agents); cross-play pairs player 1 of agent
``i`` with player 2 of agent ``j``. Rules (Muglich et al., 2022, sec. 3.2):

- ``sp``: self-play; both players of an agent train together.
- ``op``: Other-Play over the full symmetry group (symmetric(9) for the default game): each
  player plays each episode in its own relabelled game, one group element per player per
  episode, sampled by :class:`eqc.symmetrize.OtherPlay` from a seeded generator.
- ``gop``: G-OP: Other-Play over a subgroup G (cyclic(9) on the nine 1.0 levers), then the
  policy is symmetrized over G at test time (:class:`eqc.symmetrize.Symmetrizer`).
- ``eq``: the "naive approach": the symmetrized network S(psi) over G, trained by self-play.
- ``sp+sym``: the ``sp`` agents, symmetrized over G at test time (a coordination-improvement operator).

Training method: gradient ascent (Adam) on the exact expected return (plus ``LeverConfig.entropy``
times the policies' entropy: the entropy-regularised policy gradient of :mod:`.entropy`). The game is one-shot
and its payoffs are known, so an episode's expected reward given the two players' action
distributions is ``sum_a payoffs[a] pi_1(a) pi_2(a)``, exact over actions; Other-Play
episodes are Monte Carlo over the sampled relabellings (``episodes`` per update). In its
relabelled game a player's real-game probability of lever ``a`` is its policy's probability
of ``g(a)`` (the action that ``g^-1`` maps back to ``a``).

Multi-start: the Other-Play and symmetrized objectives have a second local optimum, the
uniform policy over the nine 1.0 levers (worth 1/9), and the uniform policy lies in its
basin (at uniform play the 0.9 lever's gradient is 0.9 * 0.1 - 0.9 / 9 < 0). Each agent
therefore trains ``restarts`` independently initialised candidates (all in one batch) and
keeps the one with the highest training objective, the same procedure for every rule. A
self-play candidate always reaches 1.0 on some 1.0 lever, so this does not change ``sp``.
``LeverPool.candidate_returns`` shows how many candidates reached the 0.9 lever.

Seeds: candidate ``r`` of agent ``k`` in a pool with seed ``s`` initialises from a seed
derived from ``(s, k, r)`` only; Other-Play draws come from one
``torch.Generator`` per pool seeded with ``s``. No global RNG is used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from eqc._checks import check_device, check_float, check_int
from eqc.domains.lever.game import LeverGame
from eqc.domains.lever.policy import EnsembleMLP, LogSoftmax
from eqc.symmetrize import OtherPlay, Symmetrizer

__all__ = [
    "RULES",
    "LeverConfig",
    "LeverPool",
    "check_seeds",
    "member_seeds",
    "symmetrize_pool",
    "train_pool",
    "train_pools",
    "training_steps",
]

RULES: tuple[str, ...] = ("sp", "op", "gop", "eq", "sp+sym")
_TRAINED_AS = {"sp": "sp", "op": "op", "gop": "gop", "eq": "eq", "sp+sym": "sp"}
_SYMMETRIZED_AT_TEST = {"gop", "eq", "sp+sym"}


@dataclass(frozen=True)
class LeverConfig:
    """Hyperparameters of lever-game training (defaults train a pool in about a second on CPU)."""

    steps: int = 100
    lr: float = 0.05
    hidden: int = 32
    episodes: int = 4  # Other-Play relabellings per candidate per update
    restarts: int = 16  # independently initialised candidates per agent; the best is kept
    eval_episodes: int = 256  # relabellings for the final Other-Play objective that picks the best candidate
    entropy: float = 0.0  # entropy bonus: the objective adds entropy x the mean entropy of the players' distributions
    device: str = "cpu"

    def __post_init__(self) -> None:
        for name in ("steps", "hidden", "episodes", "restarts", "eval_episodes"):
            check_int(getattr(self, name), f"LeverConfig.{name}", low=1)
        check_float(self.lr, "LeverConfig.lr", low=0.0, low_open=True)
        check_float(self.entropy, "LeverConfig.entropy", low=0.0)
        object.__setattr__(self, "device", str(check_device(self.device, "LeverConfig.device")))


@dataclass(frozen=True)
class LeverPool:
    """A trained pool: each agent's test-time action distributions and how its candidates fared.

    ``probabilities [agents, n]``: each agent's action distribution on the game's observation (both players).
    ``candidate_returns [agents, restarts]``: each candidate's final training objective;
    ``selected [agents]``: the kept candidate.
    """

    rule: str
    probabilities: torch.Tensor
    candidate_returns: torch.Tensor
    selected: torch.Tensor
    policy: nn.Module  # test-time policy of all candidates (member-major): obs [agents * restarts, ..., n] -> log-probs
    network: EnsembleMLP  # the trained networks psi of all candidates (before any test-time symmetrization)

    @property
    def num_agents(self) -> int:
        return self.probabilities.shape[0]


def member_seeds(seeds: Sequence[int], restarts: int) -> list[int]:
    """Initialisation seed of every candidate, ordered (agent, restart), each in ``[0, 2**63)``."""
    return [(seed * 10_007 + restart) % 2**63 for seed in seeds for restart in range(restarts)]


def check_seeds(seeds: Sequence[int], low: int = 1) -> list[int]:
    """``seeds`` as a list: at least ``low`` distinct integers in ``[0, 2**63 - 1]`` (one per agent)."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
        raise TypeError(f"seeds must be a sequence of integers (one per agent), got {type(seeds).__name__}")
    for value in seeds:
        check_int(value, "each seed", low=0, high=2**63 - 1)
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct (one per agent), got {list(seeds)}")
    if len(seeds) < low:
        raise ValueError(f"seeds must name at least {low} agents, got {len(seeds)}")
    return [int(value) for value in seeds]


def _check_rule(rule: str) -> None:
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; choose from {RULES}")


def _real_game_probabilities(
    policy: nn.Module, other_play: OtherPlay | None, observation: torch.Tensor, members: int, episodes: int
) -> torch.Tensor:
    """``[members, episodes, 2, n]``: each member's action distribution in the real game, per episode and player."""
    obs = observation.expand(members, episodes, 2, observation.shape[-1])
    if other_play is None:
        return policy(obs[:, :, :1]).exp().expand(members, episodes, 2, observation.shape[-1])
    relabelling = other_play.sample(members, episodes, 2)  # one element per player per episode
    relabelled = policy(relabelling.relabel_observations(obs)).exp()
    return torch.gather(relabelled, -1, relabelling.action_coordinates)


def _objective(game: LeverGame, probabilities: torch.Tensor, entropy: float = 0.0) -> torch.Tensor:
    """``[members]``: mean over episodes of the exact expected payoff of player 1 with player 2, plus ``entropy`` times
    the mean entropy of the players' action distributions (an entropy-regularised objective when ``entropy > 0``)."""
    payoff = game.expected_reward(probabilities[:, :, 0], probabilities[:, :, 1]).mean(-1)
    if entropy == 0:
        return payoff
    spread = -(probabilities * probabilities.clamp_min(1e-30).log()).sum(-1)  # [members, episodes, 2]
    return payoff + entropy * spread.mean((-2, -1))


def train_pool(
    game: LeverGame,
    rule: str,
    *,
    seeds: Sequence[int],
    config: LeverConfig | None = None,
    on_step: Callable[[], None] | None = None,
) -> LeverPool:
    """Train one agent per seed with ``rule`` (see the module docstring) and return their test-time policies.

    Agent ``k``'s candidates are initialised from :func:`member_seeds`; Other-Play's relabellings
    of the whole pool are drawn from one generator seeded with ``seeds[0]``.
    """
    _check_rule(rule)
    seeds = check_seeds(seeds)
    config = config or LeverConfig()
    device = torch.device(config.device)
    trained_as = _TRAINED_AS[rule]
    num_agents = len(seeds)
    n, members = game.num_levers, num_agents * config.restarts
    network = EnsembleMLP(member_seeds(seeds, config.restarts), n, config.hidden, n, device)
    raw_policy = LogSoftmax(network)
    subgroup = game.cyclic_symmetry
    symmetrized = Symmetrizer(network, subgroup.observation_rep, subgroup.action_rep, average="probabilities")
    train_policy = symmetrized if trained_as == "eq" else raw_policy
    generator = torch.Generator().manual_seed(seeds[0])
    other_play = None
    if trained_as == "op":
        other_play = OtherPlay.from_symmetry(game.symmetry, generator, device=device)
    elif trained_as == "gop":
        other_play = OtherPlay.from_symmetry(game.symmetry, generator, subgroup=subgroup.group, device=device)
    episodes = config.episodes if other_play is not None else 1
    observation = game.observation(device)

    optimizer = torch.optim.Adam(network.parameters(), lr=config.lr)
    for _ in range(config.steps):
        probabilities = _real_game_probabilities(train_policy, other_play, observation, members, episodes)
        loss = -_objective(game, probabilities, config.entropy).sum()  # candidates are independent: sum their losses
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if on_step is not None:
            on_step()

    with torch.no_grad():
        eval_episodes = config.eval_episodes if other_play is not None else 1
        final = _real_game_probabilities(train_policy, other_play, observation, members, eval_episodes)
        returns = _objective(game, final, config.entropy).reshape(num_agents, config.restarts)
    pool = LeverPool(rule, torch.empty(0), returns.cpu(), returns.argmax(dim=1).cpu(), raw_policy, network)
    return _deploy(game, pool, rule, symmetrized if rule in _SYMMETRIZED_AT_TEST else raw_policy)


def _deploy(game: LeverGame, pool: LeverPool, rule: str, policy: nn.Module) -> LeverPool:
    """``pool`` relabelled as ``rule`` with test-time ``policy``: the selected candidates' distributions on the observation."""
    agents, restarts = pool.candidate_returns.shape
    observation = game.observation(pool.network.w1.device)
    with torch.no_grad():
        test = policy(observation.expand(agents * restarts, 1, game.num_levers)).exp()
    test = test.reshape(agents, restarts, game.num_levers).cpu()
    probabilities = test[torch.arange(agents), pool.selected]
    return LeverPool(rule, probabilities, pool.candidate_returns, pool.selected, policy, pool.network)


def train_pools(
    game: LeverGame,
    rules: Sequence[str] = RULES,
    *,
    seeds: Sequence[int],
    config: LeverConfig | None = None,
    on_step: Callable[[], None] | None = None,
) -> dict[str, LeverPool]:
    """Train a pool per rule; ``sp+sym`` symmetrizes the ``sp`` pool's networks (trained once when both are asked for)."""
    for rule in rules:
        _check_rule(rule)
    pools: dict[str, LeverPool] = {}
    for rule in rules:
        if rule == "sp+sym" and "sp" in rules:
            if "sp" not in pools:
                pools["sp"] = train_pool(game, "sp", seeds=seeds, config=config, on_step=on_step)
            pools[rule] = symmetrize_pool(game, pools["sp"])
        elif rule not in pools:
            pools[rule] = train_pool(game, rule, seeds=seeds, config=config, on_step=on_step)
    return {rule: pools[rule] for rule in rules}


def symmetrize_pool(game: LeverGame, pool: LeverPool) -> LeverPool:
    """``sp+sym``: a trained pool's networks symmetrized over the cyclic subgroup at test time."""
    subgroup = game.cyclic_symmetry
    policy = Symmetrizer(pool.network, subgroup.observation_rep, subgroup.action_rep, average="probabilities")
    return _deploy(game, pool, "sp+sym", policy)


def training_steps(rules: Sequence[str], config: LeverConfig | None = None) -> int:
    """How many optimizer steps :func:`train_pools` takes (for a progress bar)."""
    config = config or LeverConfig()
    trained = {rule for rule in rules if rule != "sp+sym"} | ({"sp"} if "sp+sym" in rules else set())
    return len(trained) * config.steps
