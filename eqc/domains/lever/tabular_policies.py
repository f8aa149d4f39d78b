"""Deterministic tabular policies of a small game: relabelled by a group element, enumerated, and scored exactly.

A deterministic policy is given by its **choices** ``long [..., O]``, one action for each observation of a
:class:`~eqc.domains.lever.game_tree.GameTree` (the game tree's module names the two forms of a tabular policy). An
agent plays every seat with its one policy, as the lever domain's agents share one network. Relabelled by an element
``g`` of a :class:`~eqc.dec_pomdp.Symmetry` it plays as :class:`eqc.symmetrize.OtherPlay` makes it play: it sees
``rho_obs(g) o`` and its choice ``a'`` there is played as ``g^-1(a')``.

Scores, all exact: :func:`self_play` (an agent with itself), :func:`cross_play_matrix` (seat 1 of agent ``i`` with
seat 2 of agent ``j``), and :func:`other_play_values`, the Other-Play objective: the mean over independent elements
``g_1, ..., g_n``, one per seat, of the return of the seats relabelled by them (the group listed, every tuple counted).
:func:`every_choice` lists every deterministic policy, so an objective's optimum over them is found by enumeration
(:func:`best`). :func:`pool_returns` and :func:`pool_cross_play` are the measurements
:func:`eqc.dec_pomdp.search_label_permutations` takes.
"""

from __future__ import annotations

import itertools
import math

import torch

from eqc.dec_pomdp import Symmetry
from eqc.dec_pomdp.expected_return import CrossPlay, Returns
from eqc.domains.lever.game_tree import GameTree, check_choices, choice_return
from eqc.groups import inverse_permutations
from eqc.groups.permutations import PermutationLike

__all__ = [
    "MAX_POLICIES",
    "best",
    "cross_play_matrix",
    "every_choice",
    "other_play_values",
    "pool_cross_play",
    "pool_returns",
    "relabel_choices",
    "self_play",
]

#: :func:`every_choice` refuses to list more policies than this.
MAX_POLICIES = 1_000_000


def _maps(tree: GameTree, symmetry: Symmetry, permutation: PermutationLike) -> tuple[torch.Tensor, torch.Tensor]:
    """``(rows [O], played [A])``: the row of ``rho_obs(g) o`` for each observation, and ``g^-1(a')`` for each ``a'``."""
    if not isinstance(symmetry, Symmetry):
        raise TypeError(f"symmetry must be an eqc Symmetry, got {type(symmetry).__name__}")
    if symmetry.observation_layout.dim != tree.observations.shape[1] or symmetry.action_layout.dim != tree.num_actions:
        raise ValueError(f"the symmetry is declared for {symmetry.observation_layout.dim} observation and "
                         f"{symmetry.action_layout.dim} action coordinates; the game has {tree.observations.shape[1]} "
                         f"and {tree.num_actions}")
    perm = symmetry.group.check_elements(permutations=permutation, name="permutation", batch_dims=0)
    seen = symmetry.observation_rep.act_permutations(tree.observations, perm.expand(len(tree.observations), -1))
    index = {tuple(o.tolist()): k for k, o in enumerate(tree.observations)}
    missing = [k for k, o in enumerate(seen) if tuple(o.tolist()) not in index]
    if missing:
        raise ValueError(f"element {perm.tolist()} relabels observation {missing[0]} into one the game never shows an "
                         "acting agent; the candidate group must map the game's observations to its observations")
    rows = torch.tensor([index[tuple(o.tolist())] for o in seen])
    return rows, inverse_permutations(symmetry.action_rep.coordinate_map(perm))


def relabel_choices(tree: GameTree, symmetry: Symmetry, permutation: PermutationLike, choices: torch.Tensor) -> torch.Tensor:
    """``choices [..., O]`` as they play relabelled by ``permutation`` (an element of ``symmetry.group``, an image
    array); ValueError when they would then play an illegal action (the element does not keep the legal actions)."""
    return _relabel(tree, check_choices(tree, choices), _maps(tree, symmetry, permutation), permutation)


def _relabel(tree: GameTree, choices: torch.Tensor, maps: tuple[torch.Tensor, torch.Tensor],
             permutation: PermutationLike) -> torch.Tensor:
    rows, played = maps
    out = played.take(choices.index_select(-1, rows))
    if not bool(tree.legal.flatten().take(out + tree.num_actions * torch.arange(len(rows))).all()):
        raise ValueError(f"relabelled by {torch.as_tensor(permutation).tolist()} the policies play illegal actions: the "
                         "element does not keep each observation's legal actions")
    return out


def _seats(choices: torch.Tensor, n: int) -> torch.Tensor:
    return choices.unsqueeze(-2).expand(*choices.shape[:-1], n, choices.shape[-1])


def self_play(tree: GameTree, choices: torch.Tensor) -> torch.Tensor:
    """``float64 [...]``: each policy of ``choices [..., O]`` playing every seat."""
    return choice_return(tree, _seats(check_choices(tree, choices), tree.num_agents))


def cross_play_matrix(tree: GameTree, first: torch.Tensor, second: torch.Tensor | None = None) -> torch.Tensor:
    """``float64 [M, K]`` for two-seat games: seat 1 played by ``first[i]``, seat 2 by ``second[j]`` (``[M, O]`` and
    ``[K, O]``; ``second`` defaults to ``first``)."""
    if tree.num_agents != 2:
        raise ValueError(f"cross_play_matrix pairs two seats; this game has {tree.num_agents}")
    a = check_choices(tree, first, "first")
    b = a if second is None else check_choices(tree, second, "second")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"first and second must be [policies, O], got {tuple(a.shape)} and {tuple(b.shape)}")
    return choice_return(tree, torch.stack(torch.broadcast_tensors(a[:, None], b[None, :]), dim=-2))


def every_choice(tree: GameTree, *, limit: int = MAX_POLICIES) -> torch.Tensor:
    """``long [P, O]``: every deterministic policy (one legal action per observation), the first observation's action
    varying fastest; ValueError when there are more than ``limit``."""
    legal = [row.nonzero().flatten() for row in tree.legal]
    count = math.prod(len(actions) for actions in legal)
    if count > limit:
        raise ValueError(f"the game has {count:,} deterministic policies, more than limit={limit:,}")
    index, columns = torch.arange(count), []
    for actions in legal:
        columns.append(actions[index % len(actions)])
        index = index.div(len(actions), rounding_mode="floor")
    return torch.stack(columns, dim=-1)


def other_play_values(tree: GameTree, symmetry: Symmetry, choices: torch.Tensor) -> torch.Tensor:
    """``float64 [...]``: the Other-Play objective of each policy of ``choices [..., O]`` over ``symmetry.group``
    (module docstring; ``order ** agents`` returns per policy).

    The objective is the same for a policy and its relabellings by the group (relabelling by ``g`` turns each seat's
    uniform element into another uniform element), so it is computed once per orbit: on the orbit's smallest member
    (choices read as a number, the last observation's the most significant digit)."""
    c = check_choices(tree, choices)
    flat = c.reshape(-1, c.shape[-1])
    group = symmetry.group
    group.require_enumerable("Other-Play's exact objective")
    maps = [_maps(tree, symmetry, g) for g in group.elements]
    if math.log2(tree.num_actions) * flat.shape[-1] < 62:  # the codes fit in int64: one representative per orbit
        images = torch.stack([_relabel(tree, flat, m, g) for m, g in zip(maps, group.elements, strict=True)])
        codes = (images * tree.num_actions ** torch.arange(flat.shape[-1])).sum(-1)
        smallest, which = codes.min(0)
        unique, inverse = torch.unique(smallest, return_inverse=True)
        first = torch.full((len(unique),), len(flat)).scatter_reduce(0, inverse, torch.arange(len(flat)), "amin")
        flat, spread = images[which[first], first], inverse
    else:
        spread = torch.arange(len(flat))
    copies = [_relabel(tree, flat, m, g) for m, g in zip(maps, group.elements, strict=True)]
    total = torch.zeros(len(flat), dtype=torch.float64)
    for seats in itertools.product(range(group.order), repeat=tree.num_agents):
        total += choice_return(tree, torch.stack([copies[g] for g in seats], dim=-2))
    return (total / group.order**tree.num_agents)[spread].reshape(c.shape[:-1])


def best(values: torch.Tensor, *, atol: float = 1e-9) -> torch.Tensor:
    """The indices of ``values [P]`` within ``atol`` of their maximum (ties broken by none)."""
    return (values >= values.max() - atol).nonzero().flatten()


def pool_returns(tree: GameTree, candidate: Symmetry, pool: torch.Tensor) -> Returns:
    """``returns(permutation, measurement) -> [M]`` for the search: each policy of ``pool [M, O]`` in self-play,
    relabelled by the element. Exact, so both measurements are the same."""
    c = check_choices(tree, pool, "pool")
    return lambda permutation, measurement: self_play(tree, relabel_choices(tree, candidate, permutation, c))


def pool_cross_play(tree: GameTree, candidate: Symmetry, pool: torch.Tensor) -> CrossPlay:
    """``cross_play(permutation, measurement) -> [M, M]`` for the search's XP variant: ``[i, j]`` is seat 1 of policy
    ``i`` with seat 2 of policy ``j`` relabelled by the element."""
    c = check_choices(tree, pool, "pool")
    return lambda permutation, measurement: cross_play_matrix(tree, c, relabel_choices(tree, candidate, permutation, c))
