"""How equivariant a trained policy is: greedy moves at relabelled observations against relabelled greedy moves.

A policy pi is equivariant under the colour group G when pi(rho_obs(g) x) = rho_move(g) pi(x) for every g.
Measured on the states an agent visits in its own greedy self-play (the acting player's observation
and legal moves at every move of ``games`` games on common decks), for every element ``g`` of the
group: the **greedy disagreement** is the share of those states where the agent playing in the world
relabelled by ``g`` (:class:`~eqc.domains.hanabi.xp.relabelled.RelabelledAgent`, whose move is mapped
back to the real game) picks another move than the agent itself. 0 for an agent symmetrized over a
group containing ``g`` (up to ties between equal Q-values); an agent whose convention depends on colour
names disagrees wherever the convention decides the move. A recurrent agent's move depends on its history, so
each seat's whole history is replayed in the relabelled world from a fresh state. Beside the relabelled-partner loss
(:mod:`.relabelled`), which measures what the disagreement costs in play.

An agent whose logits are a policy (trained by IPPO: the softmax of its legal logits, as
:class:`~eqc.domains.hanabi.agent.sampled.SampledAgent` plays it) is also measured as sampled: the **policy
distance** is the total-variation distance between its move distribution in the relabelled world (mapped
back) and its move distribution, averaged over the same states and elements; 0 for an equivariant policy,
1 when the two never share a move. Forkel et al. (2025) prove that enough entropy regularisation drives it
to 0 for tabular policies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch

from eqc._checks import check_int
from eqc.domains.hanabi.agent.network import ActingAgent, AgentWrapper, State
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.play.batched import play_seats
from eqc.domains.hanabi.play.hle import common_decks
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.xp.relabelled import RelabelledAgent
from eqc.groups import PermutationGroup
from eqc.io import JsonRecord

__all__ = ["GreedyEquivariance", "SampledEquivariance", "greedy_equivariance", "sampled_equivariance"]


@dataclass(frozen=True)
class GreedyEquivariance(JsonRecord):
    """Greedy disagreement of one agent (see the module docstring).

    Attributes:
        disagreement: share of visited states, mean over the group's non-identity elements.
        per_element: the share for each non-identity element, in the order of ``group``'s rows 1..order-1.
        group: the colour group's name; ``states``: visited states measured; ``games``: self-play games played.
    """

    disagreement: float
    per_element: tuple[float, ...]
    group: str
    states: int
    games: int


@dataclass(frozen=True)
class SampledEquivariance(JsonRecord):
    """Policy distance of one agent that plays as sampled (see the module docstring).

    Attributes:
        distance: mean total-variation distance over visited states and the group's non-identity elements.
        per_element: the mean distance for each non-identity element, in the order of ``group``'s rows 1..order-1.
        entropy: the policy's mean entropy (nats) over the visited states: how far from greedy it plays.
        group, states, games: as in :class:`GreedyEquivariance`.
    """

    distance: float
    per_element: tuple[float, ...]
    entropy: float
    group: str
    states: int
    games: int


class _Recording(AgentWrapper):
    """An agent that keeps the observations and legal moves it is asked about (for ``play_seats``): the acting seats'
    of a feed-forward agent, every seat's at every move of a recurrent one (its rows in the same order each move)."""

    def __init__(self, agent: ActingAgent) -> None:
        super().__init__(agent)
        self.seen: list[tuple[torch.Tensor, torch.Tensor]] = []

    def step(self, obs: torch.Tensor, legal: torch.Tensor | None, state: State = None) -> tuple[torch.Tensor, State]:
        if legal is not None:
            self.seen.append((obs, legal))
        return self.agent.step(obs, legal, state)


def _self_play(policy: TrainedPolicy, group: str | None, games: int, deck_seed: int,
               max_states: int) -> tuple[str, PermutationGroup, list[tuple[torch.Tensor, torch.Tensor]]]:
    """The colour group ``group`` names (default every permutation of the game's colours), checked before any game is
    played, and what ``policy`` was asked at each move of its greedy self-play on ``games`` common decks
    (:class:`_Recording`)."""
    if not isinstance(policy, TrainedPolicy):
        raise TypeError(f"policy must be a TrainedPolicy (from load_policy), got {type(policy).__name__}")
    check_int(games, "games", low=1)
    check_int(max_states, "max_states", low=1)
    rules = policy.rules
    name = f"S{rules.num_colours}" if group is None else group
    g = colour_group(name, rules.num_colours)
    recording = _Recording(policy.agent)
    decks = torch.tensor(common_decks(games, rules, deck_seed), dtype=torch.long, device=policy.device)
    seats = torch.zeros(games, rules.num_players, dtype=torch.long, device=policy.device)
    play_seats([recording], [rules], seats, decks, policy.device)
    return name, g, recording.seen


def _acting_states(seen: list[tuple[torch.Tensor, torch.Tensor]], max_states: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The acting player's observations and legal moves (no-op column included) at the first ``max_states`` moves
    that a feed-forward agent was asked about in ``seen``."""
    obs = torch.cat([o for o, _ in seen])
    legal = torch.cat([m for _, m in seen])
    live = legal[:, :-1].any(-1)  # finished games are stepped too; their states have no legal move
    return obs[live][:max_states], legal[live][:max_states]


def _replayed_moves(agent: ActingAgent, seen: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """The greedy moves of a recurrent ``agent`` at every acting state of ``seen`` (every seat's observations and legal
    moves at each move of whole games), replaying each seat's history from a fresh state."""
    state = agent.initial_state(seen[0][0].shape[0], seen[0][0].device)
    moves = []
    for obs, legal in seen:
        q, state = agent.step(obs, legal, state)
        moves.append(q.argmax(-1)[legal[:, :-1].any(-1)])
    return torch.cat(moves)


def _relabelled_outputs(policy: TrainedPolicy, g: PermutationGroup, obs: torch.Tensor, legal: torch.Tensor) -> Iterator[torch.Tensor]:
    """The agent's outputs (mapped back to the real game's moves) in the world relabelled by each non-identity element
    of ``g``, one element at a time (all elements at once would hold ``order x states`` observations)."""
    for element in range(1, g.order):
        yield RelabelledAgent(policy.agent, colour_symmetry(g, policy.rules), element).step(obs, legal)[0]


@torch.no_grad()
def greedy_equivariance(policy: TrainedPolicy, *, group: str | None = None, games: int = 200, deck_seed: int = 1,
                        max_states: int = 20_000) -> GreedyEquivariance:
    """The greedy disagreement of ``policy`` over the colour group ``group`` (a colour group name of its game; default
    every permutation of its colours) on the states of ``games`` greedy self-play games on the common decks of
    ``deck_seed``: for a feed-forward agent at most ``max_states`` of them (the first ones); a recurrent one is
    measured on whole games, each seat's history replayed in the relabelled world from a fresh state."""
    name, g, seen = _self_play(policy, group, games, deck_seed, max_states)
    if policy.agent.recurrent:  # whole histories: each seat replayed in the relabelled world from a fresh state
        greedy = _replayed_moves(policy.agent, seen)
        sym = colour_symmetry(g, policy.rules)
        shares = [float((_replayed_moves(RelabelledAgent(policy.agent, sym, element), seen) != greedy).double().mean())
                  for element in range(1, g.order)]
        return GreedyEquivariance(sum(shares) / len(shares), tuple(shares), name, int(greedy.shape[0]), games)
    obs, legal = _acting_states(seen, max_states)
    greedy = policy.agent.step(obs, legal)[0].argmax(-1)
    shares = [float((q.argmax(-1) != greedy).double().mean()) for q in _relabelled_outputs(policy, g, obs, legal)]
    return GreedyEquivariance(sum(shares) / len(shares), tuple(shares), name, int(obs.shape[0]), games)


def _move_distribution(values: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The softmax over legal moves of an agent's outputs (float64). A dueling agent's ``Q = V + A - mean A`` differs
    from its advantage logits by one number per state, so this is the policy of its logits."""
    return torch.softmax(values.double().masked_fill(~legal, float("-inf")), dim=-1)


@torch.no_grad()
def sampled_equivariance(policy: TrainedPolicy, *, group: str | None = None, games: int = 200, deck_seed: int = 1,
                         max_states: int = 20_000) -> SampledEquivariance:
    """The policy distance of ``policy`` (an agent whose logits are a policy, ``[network] head = "policy"``: trained by
    IPPO) over the colour group ``group`` (default every permutation of its game's colours), on the states of
    its greedy self-play as in :func:`greedy_equivariance`."""
    if not isinstance(policy, TrainedPolicy):
        raise TypeError(f"policy must be a TrainedPolicy (from load_policy), got {type(policy).__name__}")
    head = policy.spec.network.head
    if head != "policy":
        raise ValueError(f"sampled_equivariance measures agents whose logits are a policy ([network] head 'policy', trained by IPPO); "
                         f"this one's head is {head!r}: Q-values it acts on greedily: measure it with greedy_equivariance")
    if policy.agent.recurrent:
        raise ValueError("the policy distance is measured on feed-forward agents: a recurrent agent's move depends on its "
                         "history (greedy_equivariance measures recurrent agents greedily)")
    name, g, seen = _self_play(policy, group, games, deck_seed, max_states)
    obs, legal = _acting_states(seen, max_states)
    own = _move_distribution(policy.agent.step(obs, legal)[0], legal)
    entropy = float(-(own * own.clamp_min(1e-300).log()).sum(-1).mean())
    distances = [float(0.5 * (_move_distribution(q, legal) - own).abs().sum(-1).mean())
                 for q in _relabelled_outputs(policy, g, obs, legal)]
    return SampledEquivariance(sum(distances) / len(distances), tuple(distances), entropy, name, int(obs.shape[0]), games)
