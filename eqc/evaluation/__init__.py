"""Evaluation for any domain: cross-play, statistics (mean ± SEM, pair-level pool comparisons, permutation tests), action matrices."""

from eqc.evaluation.action_matrix import (
    action_pair_counts,
    conditional_action_matrix,
    plot_action_matrix,
)
from eqc.evaluation.cross_play import CrossPlayResult, GameResults, cross_play
from eqc.evaluation.pairs import VERDICTS, PairSummary, PoolComparison, compare_pools, pair_summary, unordered_pair_means, verdict
from eqc.evaluation.stats import (
    MeanSEM,
    PermutationTest,
    clopper_pearson,
    mean_sem,
    permutation_test,
)

__all__ = [
    "VERDICTS",
    "CrossPlayResult",
    "GameResults",
    "MeanSEM",
    "PairSummary",
    "PermutationTest",
    "PoolComparison",
    "action_pair_counts",
    "clopper_pearson",
    "compare_pools",
    "conditional_action_matrix",
    "cross_play",
    "mean_sem",
    "pair_summary",
    "permutation_test",
    "plot_action_matrix",
    "unordered_pair_means",
    "verdict",
]
