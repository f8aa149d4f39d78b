"""The whole game tree of a small Dec-POMDP, and the exact expected return of tabular policies on it.

A *tabular policy* acts on the ``O`` observations at which an agent acts (:attr:`GameTree.observations`, the distinct
observation vectors the game shows an acting agent), in one of two forms, always named by the argument: a **table**
``float [O, A]``, one distribution over the game's ``A`` actions per observation, or, for a deterministic policy, its
**choices** ``long [O]``, one action per observation. :func:`game_tree` plays every history through the
:class:`~eqc.dec_pomdp.DecPOMDP` protocol, replaying from the start: each initial chance outcome the game lists
(``game.initial_outcomes()``), then every joint choice of legal actions, step by step. Steps must have no chance of
their own (``last_outcome_probability`` 1 after every step), as in the toy games of :mod:`.iterated` and :mod:`.cat_dog`.

The tree is kept by depth (:class:`TreeLevel`); :func:`expected_return` carries each history's probability down it
for tables, and follows the one path per chance outcome for choices: exact either way (no sampling).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from eqc._checks import check_tensor
from eqc.dec_pomdp import DecPOMDP

__all__ = ["MAX_NODES", "GameTree", "TreeLevel", "check_choices", "check_tables", "choice_return", "expected_return", "game_tree"]

#: :func:`game_tree` refuses a game with more histories than this (it is for toy games).
MAX_NODES = 100_000


class EnumerableGame(DecPOMDP, Protocol):
    """A :class:`~eqc.dec_pomdp.DecPOMDP` that lists its initial chance outcomes (``[None]`` when there is no chance)."""

    def initial_outcomes(self) -> Sequence[Any]: ...


@dataclass(frozen=True)
class TreeLevel:
    """The histories of one depth. ``observation [N, agents]``: each acting agent's observation (a row of
    :attr:`GameTree.observations`), -1 for an agent that does not act; ``reward [N, J]`` and ``child [N, J]`` (the next
    level's history, -1 when the game ends or the joint action is illegal) for each joint action ``j`` (agent 0's action
    the most significant digit, base ``A``; an agent that does not act plays 0)."""

    observation: torch.Tensor
    reward: torch.Tensor
    child: torch.Tensor


@dataclass(frozen=True)
class GameTree:
    """Every history of a small game. ``observations [O, d]`` and their ``legal [O, A]`` actions; ``initial [N0]``: the
    probability of each first-level history (one per initial chance outcome); ``levels``: the histories by depth."""

    num_agents: int
    observations: torch.Tensor
    legal: torch.Tensor
    initial: torch.Tensor
    levels: tuple[TreeLevel, ...]

    @property
    def num_actions(self) -> int:
        """``A``, the length of the game's action vector."""
        return self.legal.shape[1]


def _replay(game: EnumerableGame, outcome: Any, history: tuple[tuple[int, ...], ...]) -> None:
    game.reset(outcome)
    for joint in history:
        game.step(list(joint))


def game_tree(game: EnumerableGame) -> GameTree:
    """The tree of ``game`` (module docstring); ValueError naming what the game does that a tree cannot hold."""
    outcomes = list(game.initial_outcomes())
    if not outcomes:
        raise ValueError("game.initial_outcomes() listed no outcome (a game with no chance lists [None])")
    n = game.num_agents
    seen: dict[tuple[float, ...], int] = {}
    rows: list[torch.Tensor] = []
    legal_rows: list[torch.Tensor] = []
    frontier: list[tuple[Any, tuple[tuple[int, ...], ...]]] = []
    initial = []
    for outcome in outcomes:
        game.reset(outcome)
        initial.append(float(game.last_outcome_probability))
        frontier.append((outcome, ()))
    if not math.isclose(sum(initial), 1.0, abs_tol=1e-9):
        raise ValueError(f"the initial outcomes {outcomes} have probabilities {initial}, which do not sum to 1")
    levels, nodes = [], len(frontier)
    while frontier:
        following: list[tuple[Any, tuple[tuple[int, ...], ...]]] = []
        observed, rewards, children = [], [], []
        for outcome, history in frontier:
            _replay(game, outcome, history)
            legal, obs = game.legal_actions().bool(), game.observations().float()
            acting = [i for i in range(n) if bool(legal[i].any())]
            if not acting:
                raise ValueError(f"after actions {list(history)} the game has not ended yet no agent has a legal action")
            num_actions = legal.shape[1]
            observed.append([_observation_index(seen, rows, legal_rows, obs[i], legal[i]) if i in acting else -1 for i in range(n)])
            reward = torch.zeros(num_actions**n, dtype=torch.float64)
            child = torch.full((num_actions**n,), -1, dtype=torch.long)
            choices = [legal[i].nonzero().flatten().tolist() if i in acting else [0] for i in range(n)]
            for joint in itertools.product(*choices):
                _replay(game, outcome, history)
                j = sum(a * num_actions ** (n - 1 - i) for i, a in enumerate(joint))
                reward[j] = float(game.step(list(joint)))
                if game.last_outcome_probability != 1.0:
                    raise ValueError(f"step {list(joint)} after {list(history)} has a chance outcome; only reset may have chance")
                if not game.terminal:
                    child[j] = len(following)
                    following.append((outcome, (*history, joint)))
            rewards.append(reward)
            children.append(child)
        levels.append(TreeLevel(torch.tensor(observed, dtype=torch.long), torch.stack(rewards), torch.stack(children)))
        nodes += len(following)
        if nodes > MAX_NODES:
            raise ValueError(f"the game has more than {MAX_NODES:,} histories: too many to enumerate")
        frontier = following
    return GameTree(n, torch.stack(rows), torch.stack(legal_rows), torch.tensor(initial, dtype=torch.float64), tuple(levels))


def _observation_index(seen: dict[tuple[float, ...], int], rows: list[torch.Tensor], legal_rows: list[torch.Tensor],
                       obs: torch.Tensor, legal: torch.Tensor) -> int:
    key = tuple(obs.tolist())
    if key not in seen:
        seen[key] = len(rows)
        rows.append(obs.clone())
        legal_rows.append(legal.clone())
    elif not torch.equal(legal_rows[seen[key]], legal):
        raise ValueError("one observation comes with two sets of legal actions; a tabular policy cannot tell them apart")
    return seen[key]


def check_tables(tree: GameTree, tables: torch.Tensor, name: str = "tables") -> torch.Tensor:
    """``tables [..., O, A]`` as float64, checked: distributions over each observation's legal actions."""
    check_tensor(tables, name)
    shape = (len(tree.observations), tree.num_actions)
    if tables.dim() < 2 or tuple(tables.shape[-2:]) != shape:
        raise ValueError(f"{name} must have shape [..., {shape[0]}, {shape[1]}] (observations, actions), got {tuple(tables.shape)}")
    t = tables.double()
    if bool((t < 0).any()) or bool(((t.sum(-1) - 1).abs() > 1e-6).any()):
        raise ValueError(f"{name}: every row must be a probability distribution over the actions")
    if bool(t.masked_select(~tree.legal).any()):
        raise ValueError(f"{name} put probability on an action that is illegal at its observation")
    return t


def check_choices(tree: GameTree, choices: torch.Tensor, name: str = "choices") -> torch.Tensor:
    """``choices [..., O]`` (integer actions), checked: each a legal action at its observation."""
    check_tensor(choices, name)
    if choices.dtype.is_floating_point or choices.dtype.is_complex or choices.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer actions (one per observation), got dtype {choices.dtype}")
    count = len(tree.observations)
    if choices.dim() < 1 or choices.shape[-1] != count:
        raise ValueError(f"{name} must have shape [..., {count}] (one action per observation), got {tuple(choices.shape)}")
    c = choices.long()
    if bool(((c < 0) | (c >= tree.num_actions)).any()):
        raise ValueError(f"{name} must be actions in 0..{tree.num_actions - 1}")
    if not bool(tree.legal.flatten().take(c + tree.num_actions * torch.arange(count)).all()):
        raise ValueError(f"{name} choose an action that is illegal at its observation")
    return c


def expected_return(tree: GameTree, *, tables: torch.Tensor | None = None, choices: torch.Tensor | None = None) -> torch.Tensor:
    """``float64 [...]``: the exact expected return when agent ``i`` plays ``tables[..., i, :, :]`` (``[..., agents, O,
    A]``) or ``choices[..., i, :]`` (``[..., agents, O]``); exactly one of the two forms."""
    if tables is not None and choices is not None:
        raise TypeError("expected_return takes the policies in one form, tables= or choices=, got both")
    if tables is not None:
        policies, lead = check_tables(tree, tables, "tables"), 3
    elif choices is not None:
        policies, lead = check_choices(tree, choices, "choices"), 2
    else:
        raise TypeError("expected_return takes the policies in one form, tables= or choices=, got neither")
    if policies.dim() < lead or policies.shape[-lead] != tree.num_agents:
        raise ValueError(f"the policies need one per agent ({tree.num_agents}) before the observation axis, got shape "
                         f"{tuple(policies.shape)}")
    return _stochastic_return(tree, policies) if tables is not None else choice_return(tree, policies)


def choice_return(tree: GameTree, choices: torch.Tensor) -> torch.Tensor:
    """:func:`expected_return` of checked ``choices [..., agents, O]``, unchecked (for loops that checked them once)."""
    n0 = tree.initial.numel()
    node = torch.arange(n0).expand(*choices.shape[:-2], n0)
    value = torch.zeros(node.shape, dtype=torch.float64)
    for level in tree.levels:
        alive = node >= 0
        here = node.clamp(min=0)
        seen = level.observation[here]
        joint = torch.zeros_like(here)
        for i in range(tree.num_agents):
            chosen = torch.gather(choices[..., i, :], -1, seen[..., i].clamp(min=0))
            joint = joint * tree.num_actions + torch.where(seen[..., i] >= 0, chosen, 0)
        value += torch.where(alive, level.reward[here, joint], 0.0)
        node = torch.where(alive, level.child[here, joint], -1)
    return (value * tree.initial).sum(-1)


def _stochastic_return(tree: GameTree, p: torch.Tensor) -> torch.Tensor:
    batch = p.shape[:-3]
    reach = tree.initial.expand(*batch, -1)
    value = torch.zeros(batch, dtype=torch.float64)
    first = torch.zeros(tree.num_actions, dtype=torch.float64)
    first[0] = 1.0  # an agent that does not act plays 0
    for level in tree.levels:
        joint = torch.ones(*batch, level.observation.shape[0], 1, dtype=torch.float64)
        for i in range(tree.num_agents):
            index = level.observation[:, i]
            chosen = torch.where((index >= 0)[:, None], p[..., i, index.clamp(min=0), :], first)
            joint = (joint[..., :, :, None] * chosen[..., :, None, :]).flatten(-2)
        flow = reach[..., :, None] * joint
        value = value + (flow * level.reward).sum((-2, -1))
        alive = level.child >= 0
        reach = torch.zeros(*batch, int(level.child.max()) + 1, dtype=torch.float64)
        reach.index_add_(-1, level.child[alive], flow[..., alive])
    return value
