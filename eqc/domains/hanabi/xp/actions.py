"""Conditional action matrices ``P(a_t | partner's a_(t-1))`` of one agent in greedy self-play, plain and symmetrized.

As in the paper's figures: 1000 self-play games on ``HanabiBatch``, moves ordered C1-5 (hint a
colour), R1-5 (hint a rank), P1-5 (play slot), D1-5 (discard slot), the agent unsymmetrized and
symmetrized at test time over C5 and D10, side by side. An agent trained symmetrized over a group is
that symmetrized network: its one panel is the agent as trained (the bare network inside it is not
the agent, and another group would replace its own, so both are refused, as ``eval`` and ``xp`` do).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from eqc._checks import check_choice, check_int, check_list
from eqc.domains.hanabi.agent.network import make_agent
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.config.agent import HIDDEN_SCHEMES
from eqc.domains.hanabi.play.hle import action_labels, common_decks
from eqc.domains.hanabi.play.self_play import greedy_games
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import COLOUR_GROUP_NAMES, colour_group, colour_group_names
from eqc.evaluation import action_pair_counts, conditional_action_matrix, plot_action_matrix
from eqc.io import atomic_write

__all__ = ["ActionMatrices", "action_matrices", "paper_order", "plot_action_matrices"]


def paper_order(rules: HanabiRules) -> tuple[int, ...]:
    """Two-player move uids in the paper's order: hint colour, hint rank, play, discard (C1-5, R1-5, P1-5, D1-5
    in the standard game, where the uids are D 0-4, P 5-9, C 10-14, R 15-19)."""
    h, hints = rules.hand_size, 2 * rules.hand_size
    return (*range(hints, rules.num_moves), *range(h, hints), *range(h))


@dataclass(frozen=True)
class ActionMatrices:
    """Per variant (``"none"``, ``"C5"``, ``"D10"``): counts (long) and ``P(response | previous)`` (float64)
    ``[M, M]`` in the paper's order (``labels``, :func:`paper_order`), and the self-play mean score; ``games`` per variant.
    ``trained``: the variant that is the agent as trained (``"none"`` for a plain agent, else its training group)."""

    labels: tuple[str, ...]
    counts: dict[str, torch.Tensor]
    matrices: dict[str, torch.Tensor]
    scores: dict[str, float]
    games: int
    deck_seed: int
    trained: str = "none"

    def caption(self, name: str) -> str:
        """What the panel of variant ``name`` shows."""
        shown = "unsymmetrized" if name == "none" else f"{name}-symmetrized"
        return f"{shown} (as trained)" if name == self.trained != "none" else shown

    def as_dict(self) -> dict[str, object]:
        return {
            "labels": list(self.labels), "games": self.games, "deck_seed": self.deck_seed, "trained": self.trained,
            "scores": dict(self.scores),
            "counts": {k: v.tolist() for k, v in self.counts.items()},
            "matrices": {k: [[None if x != x else x for x in row] for row in v.tolist()] for k, v in self.matrices.items()},
        }


@torch.no_grad()
def action_matrices(
    policy: TrainedPolicy, games: int = 1000, *, deck_seed: int = 1, groups: Sequence[str] | None = None, hidden_scheme: str | None = None
) -> ActionMatrices:
    """Greedy self-play of ``policy``'s network, bare and symmetrized over each of ``groups`` at test time,
    on the same ``games`` decks; counts of (partner's previous move, this move) in every game. ``groups``:
    colour group names of the policy's game (default the first two of ``colour_group_names``: C5 and D10
    in the standard game). An agent trained symmetrized over a group plays as trained only: ``groups``
    defaults to that group, and any other is refused. ``hidden_scheme``: the recurrent symmetrizer's scheme
    (default: the agent's training scheme)."""
    if not isinstance(policy, TrainedPolicy):
        raise TypeError(f"policy must be a TrainedPolicy (from load_policy), got {type(policy).__name__}")
    if policy.spec.game.num_players != 2:
        raise ValueError(f"action matrices are two-player; the policy was trained for {policy.spec.game.num_players} players")
    check_int(games, "games", low=1)
    check_int(deck_seed, "deck_seed", low=0, high=2**63 - 1)
    trained = policy.spec.network.symmetrize
    default = [trained] if trained is not None else colour_group_names(policy.rules.num_colours)[:2]
    groups = default if groups is None else check_list(groups, "groups", item="group names")
    for group in groups:
        check_choice(group, "groups[...]", COLOUR_GROUP_NAMES)
        if trained is not None and group != trained:
            raise ValueError(f"groups: the agent was trained symmetrized over {trained} and stays so; symmetrizing over {group} "
                             f"would replace its group: leave groups unset or pass [{trained!r}]")
    if hidden_scheme is None:
        hidden_scheme = policy.spec.network.hidden_scheme
    check_choice(hidden_scheme, "hidden_scheme", HIDDEN_SCHEMES)
    network = policy.agent.network
    variants = {"none": make_agent(network, policy.rules)} if trained is None else {}
    for name in groups:
        variants[name] = make_agent(network, policy.rules, colour_group(name, policy.rules.num_colours), hidden_scheme=hidden_scheme)
    rules = policy.rules
    decks = torch.tensor(common_decks(games, rules, deck_seed), dtype=torch.long)
    order = paper_order(rules)
    uid_labels = action_labels(rules.hand_size, rules.num_colours, rules.num_ranks)
    counts, matrices, scores = {}, {}, {}
    for name, agent in variants.items():
        played = greedy_games(agent, policy.rules, policy.device, decks=decks)
        sequences = [[m for m in column if m >= 0] for column in played.moves.T.tolist()]
        c = action_pair_counts(sequences, len(uid_labels))[list(order)][:, list(order)]  # in self-play every move answers the partner's
        counts[name], matrices[name] = c, conditional_action_matrix(c)
        scores[name] = float(played.scores.double().mean())
    return ActionMatrices(tuple(uid_labels[u] for u in order), counts, matrices, scores, games, deck_seed, trained or "none")


def plot_action_matrices(result: ActionMatrices, path: str | Path | None = None, *, title: str | None = None) -> object:
    """The matrices side by side (unsymmetrized first), as in the paper's figures; a PNG written atomically to ``path`` when given."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not isinstance(result, ActionMatrices):
        raise TypeError(f"result must be ActionMatrices (from action_matrices), got {type(result).__name__}")
    n = len(result.matrices)
    figure = Figure(figsize=(8.0 * n, 7.0), layout="constrained")
    FigureCanvasAgg(figure)
    for ax, (name, matrix) in zip(figure.subplots(1, n, squeeze=False)[0], result.matrices.items(), strict=True):
        plot_action_matrix(matrix, result.labels, title=f"{result.caption(name)} (self-play {result.scores[name]:.2f})", ax=ax)
    if title:
        figure.suptitle(title)
    if path is not None:
        image = io.BytesIO()
        figure.savefig(image, format="png", dpi=100)
        atomic_write(Path(path), lambda f: f.write(image.getvalue()))
    return figure
