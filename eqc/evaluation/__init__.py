"""Evaluation for any domain: cross-play, statistics (mean ± SEM, agent-level pool comparisons, Holm adjustment, permutation tests),
action matrices."""

from eqc.evaluation.action_matrix import (
    action_pair_counts,
    conditional_action_matrix,
    plot_action_matrix,
)
from eqc.evaluation.cross_play import CrossPlayResult, GameResults, cross_play
from eqc.evaluation.multiplicity import holm
from eqc.evaluation.pairs import VERDICTS, PoolComparison, PoolSummary, compare_pools, pool_summary, verdict
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
    "PermutationTest",
    "PoolComparison",
    "PoolSummary",
    "action_pair_counts",
    "clopper_pearson",
    "compare_pools",
    "conditional_action_matrix",
    "cross_play",
    "holm",
    "mean_sem",
    "permutation_test",
    "plot_action_matrix",
    "pool_summary",
    "verdict",
]
