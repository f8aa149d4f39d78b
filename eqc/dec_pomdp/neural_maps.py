"""The ERS paper's neural family of candidate maps, trained against a frozen pool of policies.

Muglich, Forkel, van der Pol and Foerster ("Expected Return Symmetries", ICLR 2025) search a continuous family of
policy maps where :func:`~eqc.dec_pomdp.search_label_permutations` lists label permutations. A **candidate map**
phi = (f, sigma) is an observation map f (a network) and a fixed move permutation sigma (an image array). The
transformed policy phi(pi) sees the observation o, feeds f(o) to the frozen pi, and plays sigma(a) for pi's move a:

    logits'(o)[sigma(a)] = logits(f(o))[a],   then every move that is illegal at the *real* o gets -inf.

That is the one masking convention: pi's raw logits at f(o) are permuted, and the legal moves of the game as it is
mask them (f(o) need not be an observation the game shows, so it has no legal moves of its own). A composition is
a tuple of maps, outermost first: ``(phi_1, phi_2)`` is phi_1(phi_2(pi)), which feeds f_2(f_1(o)) to pi and plays
sigma_1(sigma_2(a)); ``(phi, phi)`` is phi o phi, f applied twice and sigma squared.

:func:`train_candidate_map` fits f (Adam on f's parameters only; the pool is frozen in place) to maximise the
pool's return under phi, as estimated by a callable the domain supplies (exact in the toy games, a policy-gradient
surrogate in Hanabi): the options are :class:`NeuralMapOptions`. The maps it learns are a candidate *set*
(:class:`~eqc.dec_pomdp.CandidateSet`), not a group: see that class for what follows from it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import torch
from torch import nn

from eqc._checks import check_bool, check_float, check_int, check_list, check_tensor
from eqc.groups.permutations import as_permutations, compose_permutations, inverse_permutations

__all__ = [
    "CandidateMap",
    "LearnedMap",
    "NeuralMapOptions",
    "ReturnEstimate",
    "SeatPolicy",
    "invertibility_penalty",
    "train_candidate_map",
    "transform_logits",
]

SeatPolicy = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
"""``policy(obs [..., d], legal bool [..., A]) -> logits [..., A]``, illegal moves at -inf: one seat's policy."""
ReturnEstimate = Callable[[Sequence[SeatPolicy]], torch.Tensor]
"""``returns(policies) -> scalar tensor``: the team's expected return (an estimate, differentiable in the logits the
policies give) when seat ``k`` plays ``policies[k]``."""


class CandidateMap(nn.Module):
    """phi = (f, sigma): an observation map f and a move permutation sigma (the module docstring's convention).

    f(o) = o + g(o), g a 3-layer MLP ``d -> h -> h -> d`` (ReLU between layers) whose last layer starts at zero, so f
    is exactly the identity at initialisation for every o and every width h. (The paper's code starts from identity
    weight matrices instead; that needs h = d and inputs the ReLUs pass unchanged. The residual form keeps the first
    two layers random, so the last layer's gradient is non-zero from the first step.)

    Args:
        observation_size: ``d``, the length of an observation vector.
        hidden_size: ``h``, the width of g's two hidden layers.
        move_permutation: sigma, an image array on the ``A`` moves (``sigma[a]`` is played for pi's ``a``).
        generator: the seeded ``torch.Generator`` that draws g's first two layers (never the global RNG).
        dtype: the parameters' dtype (float64 for exact games).
    """

    move_permutation: torch.Tensor

    def __init__(self, observation_size: int, hidden_size: int, move_permutation: Sequence[int] | torch.Tensor, *,
                 generator: torch.Generator, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.observation_size = check_int(observation_size, "observation_size", low=1)
        self.hidden_size = check_int(hidden_size, "hidden_size", low=1)
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"generator must be a seeded torch.Generator (never the global RNG), got {type(generator).__name__}")
        if dtype not in (torch.float32, torch.float64):
            raise TypeError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
        sigma = as_permutations(move_permutation, name="move_permutation", batch_dims=0)
        if sigma.numel() < 1:
            raise ValueError("move_permutation must be a permutation of 0..A-1 with A >= 1 moves, got []")
        self.register_buffer("move_permutation", sigma)
        sizes = [(observation_size, hidden_size), (hidden_size, hidden_size), (hidden_size, observation_size)]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for k, (fan_in, fan_out) in enumerate(sizes):
            bound = 0.0 if k == len(sizes) - 1 else 1.0 / math.sqrt(fan_in)  # nn.Linear's bound; the last layer zero
            self.weights.append(nn.Parameter((torch.rand(fan_out, fan_in, generator=generator, dtype=dtype) * 2 - 1) * bound))
            self.biases.append(nn.Parameter((torch.rand(fan_out, generator=generator, dtype=dtype) * 2 - 1) * bound))

    @property
    def num_moves(self) -> int:
        """``A``, the number of moves sigma permutes."""
        return int(self.move_permutation.numel())

    @property
    def is_involution(self) -> bool:
        """Whether sigma o sigma is the identity (the invertibility term applies only then)."""
        sigma = self.move_permutation
        return bool(torch.equal(sigma[sigma], torch.arange(sigma.numel())))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """f(obs) = obs + g(obs) for ``obs [..., d]``."""
        h = obs
        for k, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = nn.functional.linear(h, w, b)
            if k < len(self.weights) - 1:
                h = torch.relu(h)
        return obs + h


def _composed(maps: Sequence[CandidateMap]) -> torch.Tensor:
    sigma = maps[0].move_permutation
    for m in maps[1:]:
        sigma = compose_permutations(sigma, m.move_permutation)
    return sigma


def transform_logits(logits: Callable[[torch.Tensor], torch.Tensor], maps: Sequence[CandidateMap], obs: torch.Tensor,
                     legal: torch.Tensor) -> torch.Tensor:
    """The logits of ``maps[0](maps[1](...(pi)))`` at ``obs [..., d]`` (``legal`` bool ``[..., A]``, the real game's legal
    moves), pi given by ``logits(obs) -> [..., A]``: the module docstring's formula; ``maps=()`` is pi itself, masked."""
    check_tensor(obs, "obs")
    check_tensor(legal, "legal", dtypes=[torch.bool])
    seen = obs
    for m in maps:
        seen = m(seen)
    out = logits(seen)
    if not isinstance(out, torch.Tensor) or out.shape != legal.shape:
        raise ValueError(f"the policy's logits must have the legal moves' shape {tuple(legal.shape)}, got "
                         f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}")
    if maps:
        sigma = _composed(maps).to(out.device)
        out = out.index_select(-1, inverse_permutations(sigma))  # out'[b] = out[sigma^-1(b)]
    return out.masked_fill(~legal, float("-inf"))


def invertibility_penalty(phi: CandidateMap, obs: torch.Tensor) -> torch.Tensor:
    """The invertibility term: the mean over the rows of ``obs [N, d]`` of the L1 norm of f(f(o)) - o."""
    check_tensor(obs, "obs", dim=2, last=phi.observation_size)
    twice: torch.Tensor = phi(phi(obs))
    return (twice - obs).abs().sum(-1).mean()


@dataclass(frozen=True)
class NeuralMapOptions:
    """Hyperparameters of :func:`train_candidate_map`, each with its default."""

    hidden_size: int = 64  # width h of the observation map's hidden layers
    steps: int = 200  # Adam steps
    lr: float = 1e-3  # Adam's learning rate
    closure_probability: float = 0.5  # per step, train phi o phi instead of phi
    composition_probability: float = 0.35  # per step (when not phi o phi), train phi o psi, psi an earlier map
    invertibility: float = 0.0  # weight of the L1 term |f(f(o)) - o| (sigma must be an involution when > 0)
    cross_play: bool = False  # the XP variant: maximise XP(pi_i, phi(pi_j)) over ordered pairs of distinct members
    seed: int = 0  # seeds the initialisation and every draw

    def __post_init__(self) -> None:
        check_int(self.hidden_size, "hidden_size", low=1)
        check_int(self.steps, "steps", low=0)
        check_float(self.lr, "lr", low=0.0, low_open=True)
        check_float(self.closure_probability, "closure_probability", low=0.0, high=1.0)
        check_float(self.composition_probability, "composition_probability", low=0.0, high=1.0)
        if self.closure_probability + self.composition_probability > 1.0:
            raise ValueError(f"closure_probability + composition_probability must be at most 1 (one draw picks one), got "
                             f"{self.closure_probability} + {self.composition_probability}")
        check_float(self.invertibility, "invertibility", low=0.0)
        check_bool(self.cross_play, "cross_play")
        check_int(self.seed, "seed", low=0, high=2**63 - 1)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class LearnedMap:
    """One trained map and its final measurement (``measure``, not the training estimate).

    Attributes:
        map: the trained :class:`CandidateMap`.
        loss: the return loss, the pool's mean self-play return minus its mean self-play return under the map.
        self_play: the pool's mean self-play return under the map.
        cross_play: the mean of XP(pi_i, phi(pi_j)) over ordered pairs of distinct members (NaN unless the XP variant).
        objective: the training objective at each step (the return estimate, minus the weighted invertibility term).
    """

    map: CandidateMap
    loss: float
    self_play: float
    cross_play: float = math.nan
    objective: tuple[float, ...] = field(default=())


def _frozen_pool(pool: object) -> list[nn.Module]:
    members = check_list(pool, "pool", item="frozen policy modules (obs [..., d] -> logits [..., A])")
    if not members or not all(isinstance(m, nn.Module) for m in members):
        raise TypeError("pool must be a non-empty list of nn.Module policies (obs [..., d] -> logits [..., A])")
    for m in members:
        m.requires_grad_(False)
    return members


def _seat(pi: nn.Module, maps: Sequence[CandidateMap], seen: list[torch.Tensor] | None) -> SeatPolicy:
    def policy(obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        if seen is not None:
            seen.append(obs.detach().reshape(-1, obs.shape[-1]))
        return transform_logits(pi, maps, obs, legal)
    return policy


def _team_return(returns: ReturnEstimate, pool: list[nn.Module], maps: Sequence[CandidateMap], seats: int, cross_play: bool,
                 seen: list[torch.Tensor] | None = None) -> torch.Tensor:
    """Mean over members of self-play under ``maps`` (every seat), or over ordered pairs (i, j), i != j, of seat 0
    played by pi_i and the other seats by ``maps`` applied to pi_j."""
    if cross_play:
        teams = [[_seat(pool[i], (), None)] + [_seat(pool[j], maps, seen)] * (seats - 1)
                 for i in range(len(pool)) for j in range(len(pool)) if i != j]
    else:
        teams = [[_seat(pi, maps, seen)] * seats for pi in pool]
    values = [returns(team) for team in teams]
    if not all(isinstance(v, torch.Tensor) and v.numel() == 1 for v in values):
        raise ValueError("returns must give a scalar tensor (the team's expected return) for each team of seat policies")
    return torch.stack([v.reshape(()) for v in values]).mean()


def train_candidate_map(pool: Sequence[nn.Module], move_permutation: Sequence[int] | torch.Tensor, returns: ReturnEstimate, *,
                        observation_size: int, options: NeuralMapOptions | None = None, seats: int = 2,
                        earlier: Sequence[CandidateMap] = (), measure: ReturnEstimate | None = None,
                        dtype: torch.dtype = torch.float32) -> LearnedMap:
    """Train phi = (f, ``move_permutation``) against the frozen ``pool`` (each member ``obs [..., d] -> logits [..., A]``;
    its parameters get ``requires_grad`` off, in place).

    Each step draws, with the options' seeded generator, what to train: phi o phi with ``closure_probability``,
    else phi o psi (psi uniform over ``earlier``, maps learned before) with ``composition_probability``, else phi.
    The objective, maximised by Adam on f's parameters only, is ``returns`` (the domain's differentiable estimate)
    averaged over the pool's self-play with every seat transformed, or, with ``cross_play``, over ordered pairs of
    distinct members with seat 0 played by pi_i and the others by the transform of pi_j; minus ``invertibility``
    times :func:`invertibility_penalty` on the observations the transformed seats were shown. Finally ``measure``
    (default ``returns``; exact or on fresh chance) gives the :class:`LearnedMap`'s numbers, without gradients.
    """
    options = NeuralMapOptions() if options is None else options
    if not isinstance(options, NeuralMapOptions):
        raise TypeError(f"options must be NeuralMapOptions, got {type(options).__name__}")
    members = _frozen_pool(pool)
    check_int(seats, "seats", low=1)
    for name, fn in (("returns", returns), ("measure", measure if measure is not None else returns)):
        if not callable(fn):
            raise TypeError(f"{name} must be a callable (seat policies) -> scalar tensor, got {type(fn).__name__}")
    if options.cross_play and (len(members) < 2 or seats < 2):
        raise ValueError(f"the XP variant (options.cross_play) needs a pool of at least 2 members and at least 2 seats, "
                         f"got {len(members)} members and {seats} seats")
    generator = torch.Generator().manual_seed(options.seed)
    phi = CandidateMap(observation_size, options.hidden_size, move_permutation, generator=generator, dtype=dtype)
    previous = check_list(earlier, "earlier", item="CandidateMap")
    if not all(isinstance(m, CandidateMap) and (m.observation_size, m.num_moves) == (phi.observation_size, phi.num_moves)
               for m in previous):
        raise ValueError(f"earlier must hold CandidateMaps on {phi.observation_size} observation coordinates and "
                         f"{phi.num_moves} moves")
    if options.invertibility > 0 and not phi.is_involution:
        raise ValueError(f"invertibility > 0 asks f o f = identity, which fits only an involutive move permutation; "
                         f"{phi.move_permutation.tolist()} is not one (use invertibility=0)")
    for m in previous:
        m.requires_grad_(False)
    optimiser = torch.optim.Adam(phi.parameters(), lr=options.lr)
    history = []
    for _ in range(options.steps):
        draw = float(torch.rand((), generator=generator, dtype=torch.float64))
        maps: tuple[CandidateMap, ...] = (phi,)
        if draw < options.closure_probability:
            maps = (phi, phi)
        elif previous and draw < options.closure_probability + options.composition_probability:
            maps = (phi, previous[int(torch.randint(len(previous), (), generator=generator))])
        seen: list[torch.Tensor] = []
        objective = _team_return(returns, members, maps, seats, options.cross_play, seen)
        if options.invertibility > 0:
            if not seen:
                raise ValueError("returns never called the seat policies it was given, so no observation was seen")
            objective = objective - options.invertibility * invertibility_penalty(phi, torch.cat(seen).to(phi.biases[0].dtype))
        optimiser.zero_grad()
        (-objective).backward()
        optimiser.step()
        history.append(float(objective.detach()))
    phi.requires_grad_(False)
    final = returns if measure is None else measure
    with torch.no_grad():
        baseline = float(_team_return(final, members, (), seats, False))
        under = float(_team_return(final, members, (phi,), seats, False))
        xp = float(_team_return(final, members, (phi,), seats, True)) if options.cross_play else math.nan
    return LearnedMap(phi, baseline - under, under, xp, tuple(history))
