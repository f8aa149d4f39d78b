"""Evaluation for any domain: cross-play, statistics (mean ± SEM, permutation tests), action matrices."""

from eqc.evaluation.action_matrix import (
    action_pair_counts,
    conditional_action_matrix,
    plot_action_matrix,
)
from eqc.evaluation.cross_play import CrossPlayResult, GameResults, cross_play
from eqc.evaluation.stats import (
    MeanSEM,
    PermutationTest,
    clopper_pearson,
    mean_sem,
    permutation_test,
)

__all__ = [
    "CrossPlayResult",
    "GameResults",
    "MeanSEM",
    "PermutationTest",
    "action_pair_counts",
    "clopper_pearson",
    "conditional_action_matrix",
    "cross_play",
    "mean_sem",
    "permutation_test",
    "plot_action_matrix",
]
