"""Expected-return symmetries of a pool of Hanabi agents (``eqc hanabi symmetries learn``).

:func:`learn_label_group` runs :func:`eqc.dec_pomdp.search_label_permutations` with Hanabi's measurements: an
element's return for a pool member is the member's greedy self-play score with both seats relabelled by the element
(:class:`~eqc.domains.hanabi.xp.relabelled.RelabelledAgent`), on common decks (``deck_seed`` for the search,
``deck_seed + 1`` for the re-measurement); the XP variant plays member i against member j relabelled by the element.
The candidate group is the direct product of the symmetric groups on the named label sets
(:func:`~eqc.domains.hanabi.symmetry.label_relabelling`: colours, hand slots, ranks).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from eqc._checks import check_int
from eqc.dec_pomdp import ElementLoss, ExpectedReturnGroup, Symmetry, search_label_permutations
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.symmetry import LABEL_SETS, label_relabelling
from eqc.domains.hanabi.xp.play import play_pairs
from eqc.domains.hanabi.xp.relabelled import RelabelledAgent
from eqc.groups import symmetric

__all__ = ["candidate_relabelling", "learn_label_group"]


def candidate_relabelling(policy: TrainedPolicy, labels: Sequence[str]) -> Symmetry:
    """Every permutation of each named label set (``labels`` from ``LABEL_SETS``) of ``policy``'s game, as one group."""
    r = policy.rules
    sizes = {"colour": r.num_colours, "slot": r.hand_size, "rank": r.num_ranks}
    if not labels or len(set(labels)) != len(labels) or any(name not in LABEL_SETS for name in labels):
        raise ValueError(f"labels must name distinct label sets of {list(LABEL_SETS)}, got {list(labels)}")
    return label_relabelling({name: symmetric(sizes[name]) for name in labels}, r)


def _relabelled(policy: TrainedPolicy, symmetry: Symmetry, element: int) -> TrainedPolicy:
    agent = RelabelledAgent(policy.agent, symmetry, element)
    return TrainedPolicy(agent, policy.spec, policy.trained_moves, policy.device, policy.trained_with)


def learn_label_group(
    policies: Sequence[TrainedPolicy],
    labels: Sequence[str],
    *,
    tolerance: float,
    games: int = 1000,
    deck_seed: int = 0,
    cross_play_games: int = 0,
    measured: Sequence[ElementLoss] | None = None,
) -> ExpectedReturnGroup:
    """The expected-return group of ``policies`` (one game) within the permutations of ``labels``: the module docstring.

    ``games`` greedy self-play games per (member, element) on common decks; ``cross_play_games`` > 0 also measures the
    XP variant with that many games per ordered pair (n (n - 1) pairs per element: costly, exploratory). ``measured``:
    a previous search's candidate measurements of the same pool, labels, games and ``deck_seed`` (another tolerance,
    without measuring again)."""
    pool = list(policies)
    if len(pool) < 1 or not all(isinstance(p, TrainedPolicy) for p in pool):
        raise TypeError("policies must be a non-empty list of TrainedPolicy (load_policy)")
    if len({p.rules for p in pool}) != 1:
        raise ValueError("policies must all play one game (the same HanabiRules)")
    check_int(games, "games", low=2)
    check_int(deck_seed, "deck_seed", low=0, high=2**62)
    check_int(cross_play_games, "cross_play_games", low=0)
    candidate = candidate_relabelling(pool[0], labels)
    n = len(pool)

    def returns(permutation: torch.Tensor, measurement: int) -> torch.Tensor:
        element = int(candidate.group.permutation_to_index(permutation))
        copies = [_relabelled(p, candidate, element) for p in pool]
        scores = play_pairs(copies, [(k, k) for k in range(n)], games, deck_seed=deck_seed + measurement)[0]
        return scores.double().mean(1)

    def cross_play(permutation: torch.Tensor, measurement: int) -> torch.Tensor:
        element = int(candidate.group.permutation_to_index(permutation))
        copies = [_relabelled(p, candidate, element) for p in pool]
        pairs = [(i, n + j) for i in range(n) for j in range(n) if i != j]
        scores = play_pairs([*pool, *copies], pairs, cross_play_games, deck_seed=deck_seed + measurement)[0].double().mean(1)
        matrix = torch.full((n, n), float("nan"), dtype=torch.float64)
        for (i, j), s in zip(pairs, scores.tolist(), strict=True):
            matrix[i, j - n] = s
        return matrix

    return search_label_permutations(candidate, returns, tolerance=tolerance,
                                     cross_play=cross_play if cross_play_games else None, measured=measured)
