"""The agent-level tests keep their level on dyadic cross-play with agent effects, and find real differences.

Cross-play is simulated as ``score[i, j] = 10 + u_i + u_j + e_ij``: an agent effect ``u`` shared by every
pair of the agent, and pair noise ``e`` (the model under which tests on pair means as independent units
reject a true null far too often: ``benchmarks/xp_inference.py``). Every generator is seeded and every
bound is a binomial quantile at 1e-6, so the assertions hold for any seed of a valid test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from eqc.evaluation import compare_pools

DATASETS = 200
ALPHA = 0.05


def _unpaired(rng: np.random.Generator, agents: int, u_sd: float, e_sd: float, shift: float = 0.0) -> np.ndarray:
    """Two pools of ``agents`` (rows ``0..agents-1`` and the rest); pool a's agent effects raised by ``shift``."""
    u = rng.normal(0, u_sd, 2 * agents)
    u[:agents] += shift
    return 10 + u[:, None] + u[None, :] + rng.normal(0, e_sd, (2 * agents, 2 * agents))


def _paired(rng: np.random.Generator, agents: int, u_sd: float, e_sd: float, effect: float = 0.0) -> np.ndarray:
    """Agent ``k``'s forms are rows ``k`` (transformed) and ``agents + k`` (plain); each form adds its own deviation
    (sd ``u_sd``) to the agent's effect; the transform adds a per-agent effect of mean ``effect`` (sd ``effect / 2``)."""
    u = rng.normal(0, u_sd, agents)
    transformed = u + rng.normal(0, u_sd, agents) + rng.normal(effect, abs(effect) / 2, agents)
    node = np.concatenate([transformed, u + rng.normal(0, u_sd, agents)])
    return 10 + node[:, None] + node[None, :] + rng.normal(0, e_sd, (2 * agents, 2 * agents))


def _run(make, agents: int, paired: bool, seed: int, truth: float, **kwargs) -> tuple[int, int]:
    """Rejections at ``ALPHA`` and intervals covering ``truth`` over ``DATASETS`` datasets."""
    rng = np.random.default_rng(seed)
    rejected = covered = 0
    for _ in range(DATASETS):
        result = compare_pools(make(rng, agents, **kwargs), range(agents), range(agents, 2 * agents), paired=paired)
        assert result.exact
        rejected += result.p_value <= ALPHA
        covered += result.interval[0] <= truth <= result.interval[1]
    return rejected, covered


@pytest.mark.parametrize(("u_sd", "e_sd"), [(1.0, 2.0), (1.5, 0.5)])
def test_unpaired_keeps_its_level_under_agent_effects(u_sd: float, e_sd: float) -> None:
    """6 + 6 agents, exact over the 924 splits: at most 5% of true nulls rejected, and the 95% interval covers 0."""
    rejected, covered = _run(_unpaired, 6, False, seed=1, truth=0.0, u_sd=u_sd, e_sd=e_sd)
    assert rejected <= stats.binom.ppf(1 - 1e-6, DATASETS, ALPHA)
    assert covered >= stats.binom.ppf(1e-6, DATASETS, 0.9)


@pytest.mark.parametrize(("u_sd", "e_sd"), [(1.0, 2.0), (1.5, 0.5)])
def test_paired_keeps_its_level_under_agent_effects(u_sd: float, e_sd: float) -> None:
    """8 agents in two exchangeable forms, exact over the 256 swaps."""
    rejected, covered = _run(_paired, 8, True, seed=2, truth=0.0, u_sd=u_sd, e_sd=e_sd)
    assert rejected <= stats.binom.ppf(1 - 1e-6, DATASETS, ALPHA)
    assert covered >= stats.binom.ppf(1e-6, DATASETS, 0.9)


def test_a_real_pool_difference_is_found_most_of_the_time() -> None:
    """Pool a's agents 2 points better each (its XP 4 points higher), u sd 1, e sd 2."""
    rejected, covered = _run(_unpaired, 6, False, seed=3, truth=4.0, u_sd=1.0, e_sd=2.0, shift=2.0)
    assert rejected >= stats.binom.ppf(1e-6, DATASETS, 0.75)
    assert covered >= stats.binom.ppf(1e-6, DATASETS, 0.9)


def test_a_real_transform_effect_is_found_most_of_the_time() -> None:
    """The transform adds 2 points to each agent on average (the transformed pool's XP 4 points higher)."""
    rejected, covered = _run(_paired, 8, True, seed=4, truth=4.0, u_sd=1.0, e_sd=2.0, effect=2.0)
    assert rejected >= stats.binom.ppf(1e-6, DATASETS, 0.75)
    assert covered >= stats.binom.ppf(1e-6, DATASETS, 0.9)
