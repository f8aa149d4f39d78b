"""Pools of agents compared on cross-play, with the agent (one training run) as the unit of evidence.

Conventions, stated once:

- ``xp [N, N]`` holds one mean score per ordered pair of agents: row ``i`` is the agent in seat 0 (or
  seats alternating, as the caller played them), column ``j`` its partner. The diagonal (self-play)
  is ignored; every off-diagonal cell must be finite. A pool is a set of row indices; its XP is the
  mean of ``xp[i, j]`` over its ordered pairs ``i != j``.
- Pairs that share an agent share its conventions: cross-play is dyadic data, not independent pairs
  (Aronow, Samii & Assenova 2015, "Cluster-robust variance estimation for dyadic data"). Thousands
  of games make a pair's mean precise; only more agents make a pool's mean precise. So the tests
  permute the labels of agents over the matrix (node-label permutations, as the QAP of Mantel 1967
  and Krackhardt 1988), never pair means, and standard errors are jackknifes over agents.
- In a paired comparison an agent appears in two forms (plain and symmetrized): ``a[k]`` and ``b[k]``
  are rows of the same trained agent, and ``xp`` holds the mixed pairs (form a of one agent with
  form b of another) too.

With few agents the smallest attainable p-value is fixed by their number, whatever the games per
pair: :class:`PoolComparison` reports it as ``min_p``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy import stats

from eqc._checks import check_bool, check_float, check_int
from eqc.evaluation.stats import _ALTERNATIVES, Alternative
from eqc.io import JsonRecord

__all__ = ["VERDICTS", "PoolComparison", "PoolSummary", "compare_pools", "pool_summary", "verdict"]

#: The elements of one gathered batch of within-pool cells (bounds the memory of a batch of arrangements).
_BATCH_ELEMENTS = 1 << 22


def _as_matrix(xp: object) -> np.ndarray:
    """``xp`` as a float64 ``[N, N]`` array, N >= 2, finite off the diagonal, diagonal set to 0."""
    if isinstance(xp, torch.Tensor):
        if xp.dtype == torch.bool or xp.dtype.is_complex:
            raise TypeError(f"xp must hold real numbers, got dtype {xp.dtype}")
        x = xp.detach().to("cpu", torch.float64).numpy().copy()
    else:
        try:
            x = np.array(xp, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"xp must be a square matrix of pair means (tensor, array or nested lists), got {type(xp).__name__}: "
                            f"{exc}") from None
    if x.ndim != 2 or x.shape[0] != x.shape[1]:
        raise ValueError(f"xp must be a square [agents, agents] matrix of pair means, got shape {tuple(x.shape)}")
    if x.shape[0] < 2:
        raise ValueError(f"xp needs at least 2 agents (one pair of distinct agents), got {x.shape[0]}")
    off = ~np.eye(x.shape[0], dtype=bool)
    if not np.isfinite(x[off]).all():
        bad = [(int(i), int(j)) for i, j in np.argwhere(~np.isfinite(x) & off)[:3]]
        raise ValueError(f"xp must be finite off the diagonal (every ordered pair played); not finite at {bad}")
    np.fill_diagonal(x, 0.0)
    with np.errstate(over="ignore"):
        total = float(np.abs(x).sum())
    if not math.isfinite(total):
        raise ValueError(f"xp's scores are too large to average in float64 (largest |score| {float(np.abs(x).max()):.3g}); "
                         "rescale the scores")
    return x


def _as_agents(values: object, name: str, agents: int) -> np.ndarray:
    """``values`` as distinct agent indices into an ``[agents, agents]`` matrix, at least 2; errors name ``name``."""
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of agent indices (ints), got {type(values).__name__}")
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of agent indices, got shape {tuple(array.shape)}")
    if len(array) < 2:
        raise ValueError(f"{name} must hold at least 2 agents (a pool's XP needs a pair of distinct agents), got {len(array)}")
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold agent indices (ints), got {array.tolist()!r:.80}")
    outside = array[(array < 0) | (array >= agents)]
    if outside.size:
        raise ValueError(f"{name} holds agent {int(outside[0])}, outside 0..{agents - 1} (xp has {agents} agents)")
    unique, counts = np.unique(array, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"{name} lists agent {int(unique[counts > 1][0])} more than once")
    return array.astype(np.int64)


def _pool_means(x: np.ndarray, pools: np.ndarray) -> np.ndarray:
    """Mean over ordered pairs ``i != j`` within each pool: ``pools [..., n]`` rows of ``x`` (zero diagonal) -> ``[...]``.

    One set of agents gives the same bits whatever its order and however ``pools`` lies in memory (scipy hands
    over strided views): the indices are sorted into a contiguous copy and summed row by row, so the observed
    arrangement and its copy in the null distribution tie exactly."""
    pools = np.ascontiguousarray(np.sort(pools, axis=-1))
    n = pools.shape[-1]
    block = np.ascontiguousarray(x[pools[..., :, None], pools[..., None, :]])
    means: np.ndarray = block.sum(axis=-1).sum(axis=-1) / (n * (n - 1))
    return means


def _leave_one_out(x: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """``[n]`` pool means with agent ``k`` of ``pool`` left out, for each ``k``."""
    n = len(pool)
    return _pool_means(x, np.stack([np.delete(pool, k) for k in range(n)]))


def _jackknife_variance(values: np.ndarray) -> float:
    """``(n - 1) / n * sum (theta_k - mean theta)^2`` over the ``n`` leave-one-out values."""
    n = len(values)
    return float((n - 1) / n * ((values - values.mean()) ** 2).sum())


@dataclass(frozen=True)
class PoolSummary(JsonRecord):
    """A pool's XP: the mean over its ordered pairs and its jackknife standard error over agents (NaN with fewer than 3)."""

    mean: float
    sem: float
    agents: int
    ordered_pairs: int

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.sem:.2f} (jackknife over {self.agents} agents, {self.ordered_pairs} ordered pairs)"


def pool_summary(xp: object) -> PoolSummary:
    """The XP of the pool of every agent of ``xp``: its mean over ordered pairs and the jackknife SE over agents
    (delete one agent, recompute the mean; ``SE = sqrt((n - 1) / n * sum (theta_k - mean theta)^2)``)."""
    x = _as_matrix(xp)
    pool = np.arange(x.shape[0])
    sem = math.sqrt(_jackknife_variance(_leave_one_out(x, pool))) if len(pool) >= 3 else float("nan")
    return PoolSummary(float(_pool_means(x, pool)), sem, len(pool), len(pool) * (len(pool) - 1))


@dataclass(frozen=True)
class PoolComparison(JsonRecord):
    """Result of :func:`compare_pools`.

    Attributes:
        difference: XP of pool a minus XP of pool b (``means[0] - means[1]``).
        means: each pool's XP.
        p_value: scipy's: the share of arrangements at least as extreme as the observed one, the observed one
            included (exact), or ``(hits + 1) / (resamples + 1)`` (Monte Carlo); two-sided: twice the smaller
            one-sided p, capped at 1.
        min_p: the smallest p-value this test can return: ``1 / arrangements`` (exact) or ``1 / (resamples + 1)``
            (Monte Carlo), doubled (capped at 1) when two-sided.
        exact: whether every arrangement was enumerated.
        arrangements: how many the test ranges over (splits of the agents, or swaps of each agent's forms).
        resamples: arrangements drawn (0 when exact).
        agents: agents in pool a and in pool b.
        paired, alternative: as asked.
        se: the jackknife standard error of ``difference`` over agents (NaN with fewer than 3 agents in a pool).
        df: degrees of freedom of its t interval.
        interval: the ``confidence`` t interval ``difference ± t(df) * se``.
    """

    difference: float
    means: tuple[float, float]
    p_value: float
    min_p: float
    exact: bool
    arrangements: int
    resamples: int
    agents: tuple[int, int]
    paired: bool
    alternative: str
    se: float
    df: float
    interval: tuple[float, float]
    confidence: float

    def __str__(self) -> str:
        kind = "swaps of each agent's two forms" if self.paired else "splits of the agents"
        drawn = f"Monte Carlo, {self.resamples:,} of {self.arrangements:,} {kind}"
        how = f"exact over {self.arrangements:,} {kind}" if self.exact else drawn
        sizes = f"{self.agents[0]} agents x 2 forms" if self.paired else f"{self.agents[0]} vs {self.agents[1]} agents"
        return (f"difference {self.difference:+.3f} ({self.confidence:.0%} interval [{self.interval[0]:.3f}, {self.interval[1]:.3f}], "
                f"jackknife SE {self.se:.3f}), p = {self.p_value:.4g} ({how}; {sizes}, "
                f"smallest attainable p {self.min_p:.3g})")

    def verdict(self, alpha: float = 0.05) -> str:
        """What the test says at level ``alpha`` from its own p and its own interval: see :func:`verdict`."""
        return verdict(self.difference, self.p_value, self.alternative, alpha, interval=self.interval)


VERDICTS = ("holds", "reversed", "does not hold", "differs", "cannot tell")


def verdict(difference: float, p_value: float, alternative: str, alpha: float = 0.05,
            interval: tuple[float, float] | None = None) -> str:
    """What a test says, from its p-value and, when given, its interval for the difference (so the two cannot disagree).

    One-sided (``alternative`` "greater": H1 is difference > 0; "less": < 0):

    - "reversed": the interval lies wholly on the other side of 0 (the opposite direction is shown);
    - "does not hold": the observed ``difference`` is 0 or on the other side (and not reversed);
    - "holds": ``p_value < alpha`` and the interval (when given) excludes 0 on H1's side;
    - "cannot tell": otherwise.

    Two-sided: "differs" when ``p_value < alpha`` and the interval (when given) excludes 0, else "cannot tell".
    An interval with a NaN end (too few agents for one) counts as not given.
    """
    if alternative not in ("greater", "less", "two-sided"):
        raise ValueError(f"alternative must be 'greater', 'less' or 'two-sided', got {alternative!r}")
    check_float(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    given = interval is not None and not any(math.isnan(v) for v in interval)
    low, high = interval if given and interval is not None else (0.0, 0.0)
    if low > high:
        raise ValueError(f"interval must be (low, high) with low <= high, got {interval}")
    if alternative == "two-sided":
        return "differs" if p_value < alpha and (not given or low > 0 or high < 0) else "cannot tell"
    sign = 1.0 if alternative == "greater" else -1.0
    toward, away = (low, high) if sign > 0 else (-high, -low)  # the interval as seen along H1's direction
    if not given:
        toward, away = math.inf, math.inf
    if away < 0:
        return "reversed"
    if sign * difference <= 0:
        return "does not hold"
    return "holds" if p_value < alpha and toward > 0 else "cannot tell"


def compare_pools(
    xp: object,
    a: Sequence[int],
    b: Sequence[int],
    *,
    paired: bool = False,
    alternative: Alternative = "greater",
    resamples: int = 200_000,
    generator: np.random.Generator | int | None = None,
    confidence: float = 0.95,
) -> PoolComparison:
    """Test whether the agents ``a`` cross-play with each other better than the agents ``b`` do.

    ``xp``: the ``[N, N]`` matrix over every agent involved, cross-pool pairs included (module docstring);
    ``a``, ``b``: disjoint agent indices into it, at least 2 each. The statistic is the XP of ``a`` minus
    that of ``b``. Unpaired, the arrangements are the ``C(n_a + n_b, n_a)`` splits of the agents of
    ``a`` and ``b`` into pools of their sizes, each read off ``xp`` (node-label permutation: valid when the
    agents are exchangeable under H0). ``paired=True``: ``a[k]`` and ``b[k]`` are one agent's two forms
    (equal lengths), and the arrangements are the ``2^n`` ways to swap the forms of each agent. The test
    (:func:`scipy.stats.permutation_test`) enumerates them when they number at most ``resamples`` (exact),
    else draws ``resamples`` with ``generator`` (a ``numpy.random.Generator`` or an int seed; None: fresh
    entropy, not reproducible). ``alternative``: "greater" (H1: a > b), "less" or "two-sided". An arrangement
    counts as extreme when its statistic is at least the observed one up to scipy's relative tolerance
    (``100 eps |observed|``), so ties count.

    The interval for the difference is a t interval at ``confidence`` on a jackknife SE over agents:
    paired, delete agent ``k`` (both its forms), recompute the difference, ``SE^2 = (n - 1) / n * sum
    (theta_k - mean theta)^2`` with ``n - 1`` degrees of freedom; unpaired, the pools are independent
    samples of agents, so ``SE^2`` is the sum of each pool's own jackknife variance (delete one agent of
    that pool) with Welch-Satterthwaite degrees of freedom. Either needs 3 agents per pool (NaN otherwise).
    """
    x = _as_matrix(xp)
    pool_a, pool_b = _as_agents(a, "a", x.shape[0]), _as_agents(b, "b", x.shape[0])
    if common := sorted(set(pool_a.tolist()) & set(pool_b.tolist())):
        raise ValueError(f"a and b must be disjoint (each agent in one pool), agents {common} are in both")
    paired = check_bool(paired, "paired")
    if paired and len(pool_a) != len(pool_b):
        raise ValueError("paired=True: a and b must have the same length (a[k] and b[k] are agent k's two forms), "
                         f"got {len(pool_a)} and {len(pool_b)}")
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    check_int(resamples, "resamples", low=1)
    seed = isinstance(generator, int) and not isinstance(generator, bool) and generator >= 0
    if not (generator is None or seed or isinstance(generator, np.random.Generator)):
        raise TypeError(f"generator must be a numpy.random.Generator, an int seed >= 0 or None, got {type(generator).__name__} "
                        f"{generator!r:.60}")
    confidence = check_float(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)

    def statistic(pool_x: np.ndarray, pool_y: np.ndarray, axis: int = -1) -> np.ndarray:
        value: np.ndarray = _pool_means(x, pool_x) - _pool_means(x, pool_y)
        return value

    n_a, n_b = len(pool_a), len(pool_b)
    arrangements = 2**n_a if paired else math.comb(n_a + n_b, n_a)
    result = stats.permutation_test((pool_a, pool_b), statistic, permutation_type="samples" if paired else "independent",
                                    vectorized=True, n_resamples=resamples, batch=max(1, _BATCH_ELEMENTS // (n_a**2 + n_b**2)),
                                    alternative=alternative, rng=generator)
    exact = arrangements <= resamples
    floor = 1 / arrangements if exact else 1 / (resamples + 1)
    min_p = min(1.0, 2 * floor) if alternative == "two-sided" else floor
    means = (float(_pool_means(x, pool_a)), float(_pool_means(x, pool_b)))
    difference = float(result.statistic)
    se, df = _difference_se(x, pool_a, pool_b, paired)
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se if math.isfinite(se) else float("nan")
    return PoolComparison(
        difference=difference, means=means, p_value=float(result.pvalue), min_p=min_p, exact=exact, arrangements=arrangements,
        resamples=0 if exact else resamples, agents=(n_a, n_b), paired=paired,
        alternative=alternative, se=se, df=df, interval=(difference - half, difference + half), confidence=confidence)


def _difference_se(x: np.ndarray, pool_a: np.ndarray, pool_b: np.ndarray, paired: bool) -> tuple[float, float]:
    """The jackknife SE of the difference over agents and its degrees of freedom (see :func:`compare_pools`)."""
    if min(len(pool_a), len(pool_b)) < 3:
        return float("nan"), float("nan")
    if paired:
        n = len(pool_a)
        rest = [np.delete(np.arange(n), k) for k in range(n)]
        thetas = _pool_means(x, np.stack([pool_a[r] for r in rest])) - _pool_means(x, np.stack([pool_b[r] for r in rest]))
        return math.sqrt(_jackknife_variance(thetas)), float(n - 1)
    v_a, v_b = (_jackknife_variance(_leave_one_out(x, pool)) for pool in (pool_a, pool_b))
    if v_a + v_b == 0:
        return 0.0, float(len(pool_a) + len(pool_b) - 2)
    df = (v_a + v_b) ** 2 / (v_a**2 / (len(pool_a) - 1) + v_b**2 / (len(pool_b) - 1))
    return math.sqrt(v_a + v_b), float(df)
