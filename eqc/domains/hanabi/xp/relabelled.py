"""Relabelled self-play: does an agent's coordination depend on what the colours are called?

Other-Play's objective, measured directly. An agent plays with a copy of itself that lives in a
colour-relabelled world: the copy sees ``rho_obs(g)`` of its observation and its moves are mapped
back by ``g^-1`` (:class:`RelabelledAgent`). If the agent's conventions do not depend on colour
names (an Other-Play agent, or a self-play agent that never breaks the colour symmetry), it scores
as in plain self-play; an agent whose conventions are "red means play slot 1" loses. The
*relabelled-partner loss* is plain self-play minus the mean over elements ``g`` of the score with
the relabelled copy, on the same decks (seats alternating as in :mod:`.play`).

The share of colour hints among hints in plain self-play (for two players, HLE move uids 10-14 reveal
a colour and 15-19 a rank) says whether the agent uses colours at all.

An agent **breaks the colour symmetry** (:func:`breaks_colour_symmetry`) when its relabelled-partner loss is
at least 2 points, or at least 15% of its self-play in a game whose maximum score is below 25.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from eqc._checks import check_int
from eqc.dec_pomdp import Symmetry
from eqc.domains.hanabi.agent.network import ActingAgent, AgentWrapper, State, no_op_representation
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.xp.play import play_pairs
from eqc.evaluation import mean_sem
from eqc.groups import PermutationGroup
from eqc.io import JsonRecord

__all__ = ["BREAKING_LOSS", "BREAKING_SHARE", "AveragedAgent", "RelabelledAgent", "RelabelledSelfPlay", "breaks_colour_symmetry",
           "relabelled_self_play"]

#: A relabelled-partner loss of at least this many points breaks the colour symmetry ...
BREAKING_LOSS = 2.0
#: ... as does a loss of at least this share of self-play in a game whose maximum score is below 25.
BREAKING_SHARE = 0.15


def breaks_colour_symmetry(loss: float, self_play: float, max_score: int) -> bool:
    """Whether an agent with this relabelled-partner ``loss`` and ``self_play`` score breaks the colour symmetry
    of a game whose maximum score is ``max_score`` (the module docstring's definition)."""
    return loss >= BREAKING_LOSS or (max_score < 25 and self_play > 0 and loss >= BREAKING_SHARE * self_play)


class RelabelledAgent(AgentWrapper):
    """``agent`` in a world relabelled by element ``element`` (a row of ``symmetry.group.elements``) of ``symmetry``:
    any label sets (colours, the game's symmetry; slots or ranks, relabellings that are not symmetries).

    ``step`` relabels the observation by ``rho_obs(g)`` and the legal moves by ``rho_move(g)``, and
    maps the Q-values back, ``q[m] = q_g[rho_move(g) m]``: the move it returns is an HLE move of the
    real game. Everything else (``recurrent``, ``initial_state``, ``network``, ``precision``) is ``agent``'s.
    """

    def __init__(self, agent: ActingAgent, symmetry: Symmetry, element: int) -> None:
        super().__init__(agent)
        if not isinstance(symmetry, Symmetry):
            raise TypeError(f"symmetry must be an eqc Symmetry (e.g. colour_symmetry or label_relabelling), got {type(symmetry).__name__}")
        check_int(element, "element", low=0, high=symmetry.group.order - 1)
        self.element, self.group = element, symmetry.group
        self.obs_rep = symmetry.observation_rep
        self.move_rep = no_op_representation(symmetry.action_rep, agent.network.num_actions - symmetry.action_rep.dim)

    def step(self, obs: torch.Tensor, legal: torch.Tensor | None, state: State = None) -> tuple[torch.Tensor, State]:
        g = self.element  # one int: a row of each device-resident table, nothing read back from the device per move
        seen_legal = None if legal is None else self.move_rep.act(legal, g)
        q, state = self.agent.step(self.obs_rep.act(obs, g), seen_legal, state)
        return self.move_rep.act(q, g, inverse=True), state


class AveragedAgent(AgentWrapper):
    """``agent``'s scores averaged over its relabelled copies by ``elements`` (rows of ``symmetry.group.elements``):
    ``q(o) = 1/k sum_g rho_move(g)^-1 q_agent(rho_obs(g) o)``, the symmetrizer's formula over a fixed set of elements.

    Over a whole group it is the symmetrizer (equivariant to that group); over a subset that is not a group it is a
    control: as many forward passes, each a relabelled copy (a competent agent where the elements are symmetries of
    the game), and equivariant to no non-trivial group. Feed-forward agents only (a recurrent agent's copies would
    each need their own hidden state)."""

    def __init__(self, agent: ActingAgent, symmetry: Symmetry, elements: tuple[int, ...]) -> None:
        super().__init__(agent)
        if agent.recurrent:
            raise ValueError("AveragedAgent averages feed-forward agents; this agent is recurrent")
        if not elements or len(set(elements)) != len(elements):
            raise ValueError(f"elements must be distinct rows of the group, got {elements}")
        self.copies = [RelabelledAgent(agent, symmetry, e) for e in elements]
        self.elements = tuple(elements)

    def step(self, obs: torch.Tensor, legal: torch.Tensor | None, state: State = None) -> tuple[torch.Tensor, State]:
        outputs = [copy.step(obs, legal)[0] for copy in self.copies]
        return torch.stack(outputs).mean(0), None


@dataclass(frozen=True)
class RelabelledSelfPlay(JsonRecord):
    """One agent's plain and relabelled self-play on the same decks.

    Attributes:
        self_play: mean score of plain self-play.
        relabelled: mean score with the relabelled copy, one per element (in ``elements`` order).
        loss: ``self_play - mean(relabelled)``, with ``loss_sem`` its standard error over decks
            (per deck: plain score minus the mean over elements).
        elements: the group elements used (rows of S5's ``elements``), ``games`` per element.
        colour_hint_share: colour hints / all hints in plain self-play (NaN without hints).
    """

    self_play: float
    relabelled: tuple[float, ...]
    loss: float
    loss_sem: float
    elements: tuple[int, ...]
    games: int
    colour_hint_share: float

    def __str__(self) -> str:
        return (f"self-play {self.self_play:.2f}, relabelled partner {sum(self.relabelled) / len(self.relabelled):.2f} "
                f"(loss {self.loss:+.2f} ± {self.loss_sem:.2f} over {len(self.elements)} elements x {self.games} games), "
                f"colour hints {self.colour_hint_share:.1%} of hints")


def default_elements(group: PermutationGroup, count: int, seed: int = 0) -> list[int]:
    """``count`` distinct non-identity elements of ``group`` drawn with ``seed`` (rows of ``group.elements``;
    all of them when the group has fewer)."""
    check_int(count, "elements", low=1)
    order = torch.randperm(group.order - 1, generator=torch.Generator().manual_seed(seed)) + 1  # row 0 is the identity
    return sorted(order[:count].tolist())


def relabelled_self_play(
    policy: TrainedPolicy,
    *,
    elements: int | list[int] = 12,
    games: int = 500,
    deck_seed: int = 1,
    group: str | None = None,
) -> RelabelledSelfPlay:
    """Plain and relabelled self-play of ``policy`` (see the module docstring) on ``games`` common decks of
    ``deck_seed``. ``elements``: how many non-identity elements of ``group`` (a colour group name of the
    policy's game; default every permutation of its colours, S5 in the standard game) to draw (seeded), or their rows."""
    if not isinstance(policy, TrainedPolicy):
        raise TypeError(f"policy must be a TrainedPolicy (from load_policy), got {type(policy).__name__}")
    check_int(games, "games", low=2)
    group = f"S{policy.rules.num_colours}" if group is None else group
    g = colour_group(group, policy.rules.num_colours)
    if isinstance(elements, int):
        rows = default_elements(g, elements)
    elif isinstance(elements, (list, tuple)) and elements:
        rows = [check_int(e, f"elements[{k}]", low=1, high=g.order - 1) for k, e in enumerate(elements)]
    else:
        raise TypeError(f"elements must be a count or a non-empty list of non-identity rows of {group}, got {elements!r}")
    sym = colour_symmetry(g, policy.rules)
    copies = [TrainedPolicy(RelabelledAgent(policy.agent, sym, r), policy.spec, policy.trained_moves, policy.device,
                            policy.trained_with)
              for r in rows]
    pairs = [(0, 0)] + [(0, k + 1) for k in range(len(rows))]
    record = min(games, 200)
    scores, _, moves, _ = play_pairs([policy, *copies], pairs, games, deck_seed=deck_seed, record_moves=record)
    scores = scores.double()
    per_deck = scores[0] - scores[1:].mean(0)
    loss = mean_sem(per_deck, "per-deck loss")
    return RelabelledSelfPlay(
        float(scores[0].mean()), tuple(float(s) for s in scores[1:].mean(1)), loss.mean, loss.sem, tuple(rows), games,
        _colour_hint_share(moves[0], policy.rules),
    )


def _colour_hint_share(moves: torch.Tensor, rules) -> float:
    """Colour hints / hints among HLE move uids ``moves`` (-1 = no move)."""
    hand, colours, ranks = rules.hand_size, rules.num_colours, rules.num_ranks
    first_hint = 2 * hand
    hints_per_partner = colours + ranks
    offset = (moves - first_hint) % hints_per_partner
    is_hint = moves >= first_hint
    colour = int((is_hint & (offset < colours)).sum())
    total = int(is_hint.sum())
    return colour / total if total else math.nan
