"""The ERS paper's neural maps on the toy games, exactly: a frozen pool of small networks, exact returns.

:func:`fit_policies` turns deterministic tabular policies (e.g. :func:`~eqc.domains.lever.ers.self_play_optima`) into
differentiable ones: one small MLP each (:class:`~eqc.domains.lever.policy.EnsembleMLP` of one member, float64)
fitted by cross-entropy on the game tree's observation vectors to put almost all probability on the chosen move.
:func:`exact_returns` is the return estimate :func:`eqc.dec_pomdp.train_candidate_map` takes: each seat's policy is
evaluated on every observation vector of the tree, its softmax is the seat's table, and the value is
:func:`~eqc.domains.lever.game_tree.expected_return` of the tables, exact and differentiable in float64.
:func:`learn_toy_maps` learns one map per move permutation (each later one composed with the earlier ones as the
options say) and returns the :class:`~eqc.dec_pomdp.CandidateSet`.

Other-Play over a candidate set: each seat draws an index over identity + maps (:meth:`CandidateSet.draw`) and plays
the policy transformed by it. :func:`other_play_value` is its exact expectation (every tuple of draws, averaged);
:func:`train_other_play` trains a new policy on it by gradient ascent.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch
from torch import nn

from eqc._checks import check_float, check_int
from eqc.dec_pomdp import CandidateSet, NeuralMapOptions, train_candidate_map
from eqc.dec_pomdp.neural_maps import LearnedMap, ReturnEstimate, SeatPolicy
from eqc.domains.lever.ers import ToyGame, _tree
from eqc.domains.lever.game_tree import GameTree, check_choices, expected_return
from eqc.domains.lever.policy import EnsembleMLP

__all__ = ["exact_returns", "fit_policies", "learn_toy_maps", "other_play_value", "train_other_play"]


def _policy(tree: GameTree, hidden: int, seed: int) -> EnsembleMLP:
    return EnsembleMLP([seed], tree.observations.shape[1], hidden, tree.num_actions).double()


def fit_policies(tree: GameTree, choices: torch.Tensor, *, hidden: int = 16, steps: int = 300, lr: float = 0.05,
                 smoothing: float = 0.0, seed: int = 0) -> list[nn.Module]:
    """One float64 MLP per row of ``choices [M, O]`` (initialised from seed ``seed + k``), fitted by Adam on the
    cross-entropy of every observation's chosen move over all ``A`` moves (illegal ones pushed down too), with label
    ``smoothing`` (in [0, 1)): above 0 the fit stops short of certainty, so a map's gradient through the policy does
    not vanish (a saturated softmax passes almost none)."""
    c = check_choices(tree, choices, "choices")
    if c.dim() != 2 or not len(c):
        raise ValueError(f"choices must be a non-empty [policies, {len(tree.observations)}] tensor, got {tuple(c.shape)}")
    check_int(hidden, "hidden", low=1)
    check_int(steps, "steps", low=0)
    check_float(lr, "lr", low=0.0, low_open=True)
    check_float(smoothing, "smoothing", low=0.0, high=1.0, high_open=True)
    check_int(seed, "seed", low=0)
    obs = tree.observations.double()
    fitted: list[nn.Module] = []
    for k, row in enumerate(c):
        policy = _policy(tree, hidden, seed + k)
        optimiser = torch.optim.Adam(policy.parameters(), lr=lr)
        for _ in range(steps):
            loss = nn.functional.cross_entropy(policy(obs), row, label_smoothing=smoothing)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        fitted.append(policy.requires_grad_(False))
    return fitted


def exact_returns(tree: GameTree) -> ReturnEstimate:
    """``returns(policies)``: the exact expected return when seat ``k`` plays ``policies[k]`` (module docstring)."""
    if not isinstance(tree, GameTree):
        raise TypeError(f"tree must be a GameTree (game.tree), got {type(tree).__name__}")
    obs = tree.observations.double()

    def returns(policies: Sequence[SeatPolicy]) -> torch.Tensor:
        if len(policies) != tree.num_agents:
            raise ValueError(f"returns needs one policy per seat ({tree.num_agents}), got {len(policies)}")
        tables = torch.stack([torch.softmax(p(obs, tree.legal), dim=-1) for p in policies])
        return expected_return(tree, tables=tables)

    return returns


def learn_toy_maps(game: ToyGame, pool: Sequence[nn.Module], move_permutations: Sequence[Sequence[int]], *,
                   options: NeuralMapOptions | None = None) -> CandidateSet:
    """A :class:`~eqc.dec_pomdp.CandidateSet` of one map per move permutation, learned in order against ``pool``
    (float64 policies on ``game.tree``'s observations) with :func:`exact_returns`; map ``k`` is composed with maps
    ``0..k-1`` as ``options.composition_probability`` says. Every loss is exact."""
    tree = _tree(game)
    options = NeuralMapOptions() if options is None else options
    if not move_permutations:
        raise ValueError("move_permutations must list at least one permutation of the game's moves")
    learned: list[LearnedMap] = []
    for sigma in move_permutations:
        learned.append(train_candidate_map(pool, sigma, exact_returns(tree), observation_size=tree.observations.shape[1],
                                           options=options, seats=tree.num_agents, earlier=[m.map for m in learned],
                                           dtype=torch.float64))
    return CandidateSet(tuple(learned), options, {"game": repr(game)})


def other_play_value(tree: GameTree, policy: nn.Module, candidates: CandidateSet) -> torch.Tensor:
    """The exact Other-Play objective of ``policy`` over ``candidates``: the mean over every tuple of draws (one index
    per seat, ``candidates.size ** seats`` tuples) of the expected return with each seat transformed by its draw."""
    if not isinstance(candidates, CandidateSet):
        raise TypeError(f"candidates must be a CandidateSet, got {type(candidates).__name__}")
    returns = exact_returns(tree)
    seats = [candidates.seat_policy(policy, k) for k in range(candidates.size)]
    values = [returns([seats[k] for k in draw]) for draw in itertools.product(range(candidates.size), repeat=tree.num_agents)]
    return torch.stack(values).mean()


def train_other_play(tree: GameTree, candidates: CandidateSet, *, hidden: int = 16, steps: int = 300, lr: float = 0.05,
                     seed: int = 0) -> tuple[nn.Module, float]:
    """A new float64 MLP policy trained by Adam on :func:`other_play_value` from seed ``seed``, and its final value."""
    check_int(hidden, "hidden", low=1)
    check_int(steps, "steps", low=0)
    check_float(lr, "lr", low=0.0, low_open=True)
    check_int(seed, "seed", low=0)
    policy = _policy(tree, hidden, seed)
    optimiser = torch.optim.Adam(policy.parameters(), lr=lr)
    for _ in range(steps):
        loss = -other_play_value(tree, policy, candidates)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    policy.requires_grad_(False)
    with torch.no_grad():
        return policy, float(other_play_value(tree, policy, candidates))
