"""Pair-level statistics of cross-play: the unit of evidence is the unordered pair of agents.

An XP matrix ``xp [A, A]`` holds one mean score per ordered pair: row ``i`` is the agent in seat
0 (or alternating seats, as the caller played them), column ``j`` its partner; the diagonal
(self-play) is ignored. The games of one pair share that pair's conventions, so they are not
independent draws: thousands of games make a pair's mean precise, only more agents make a pool's
mean precise. Every test here therefore runs on the ``A (A - 1) / 2`` *unordered pair means*
``(xp[i, j] + xp[j, i]) / 2`` for ``i < j``:

- unpaired (two pools of different agents): a permutation test of the pair means between pools;
- paired (the same agents, e.g. plain against symmetrized): sign flips of per-pair differences.

With few units the smallest attainable p-value is fixed by their number, whatever the games per
pair: :class:`PoolComparison` reports it as ``min_p``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch

from eqc._checks import check_float, check_int
from eqc.evaluation.stats import _ALTERNATIVES, Alternative, MeanSEM, clopper_pearson

__all__ = ["VERDICTS", "PairSummary", "PoolComparison", "compare_pools", "pair_summary", "unordered_pair_means", "verdict"]


def _as_xp_matrix(xp: object, name: str) -> torch.Tensor:
    """``xp`` as a float64 ``[A, A]`` tensor, A >= 2, finite off the diagonal; errors name ``name``."""
    if isinstance(xp, torch.Tensor):
        if xp.dtype == torch.bool or xp.dtype.is_complex:
            raise TypeError(f"{name} must hold real numbers, got dtype {xp.dtype}")
        t = xp.detach().to("cpu", torch.float64)
    else:
        try:
            t = torch.as_tensor(xp, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError) as exc:
            what = f"{name} must be a square matrix of pair means (tensor, array or nested lists)"
            raise TypeError(f"{what}, got {type(xp).__name__}: {exc}") from None
    if t.dim() != 2 or t.shape[0] != t.shape[1]:
        raise ValueError(f"{name} must be a square [agents, agents] matrix of pair means, got shape {tuple(t.shape)}")
    if t.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 agents (one pair of distinct agents), got {t.shape[0]}")
    off = ~torch.eye(t.shape[0], dtype=torch.bool)
    if not bool(torch.isfinite(t[off]).all()):
        bad = [(int(i), int(j)) for i, j in torch.nonzero(~torch.isfinite(t) & off)[:3]]
        raise ValueError(f"{name} must be finite off the diagonal (every ordered pair played); not finite at {bad}")
    return t


def unordered_pair_means(xp: object, name: str = "xp") -> torch.Tensor:
    """``[A (A - 1) / 2]`` means ``(xp[i, j] + xp[j, i]) / 2`` for ``i < j``, in row-major order of ``(i, j)``."""
    t = _as_xp_matrix(xp, name)
    i, j = torch.triu_indices(t.shape[0], t.shape[0], offset=1)
    return (t[i, j] + t[j, i]) / 2


@dataclass(frozen=True)
class PairSummary:
    """A pool's cross-play mean with its standard error over both units.

    ``ordered`` is over the ``A (A - 1)`` ordered pairs (the paper's convention, kept for
    comparison: it treats (i, j) and (j, i) as independent); ``unordered`` is over the
    ``A (A - 1) / 2`` unordered pair means, the honest unit. Both have the same mean.
    """

    ordered: MeanSEM
    unordered: MeanSEM

    def as_dict(self) -> dict[str, float | int]:
        return {"mean": self.ordered.mean, "sem_ordered": self.ordered.sem, "ordered_pairs": self.ordered.n,
                "sem_unordered": self.unordered.sem, "unordered_pairs": self.unordered.n}


def _mean_sem(values: torch.Tensor) -> MeanSEM:
    sem = float(values.std(unbiased=True)) / math.sqrt(values.numel()) if values.numel() > 1 else float("nan")
    return MeanSEM(float(values.mean()), sem, values.numel())


def pair_summary(xp: object, name: str = "xp") -> PairSummary:
    """Mean XP of a pool and its SEM over ordered and over unordered pairs (NaN SEM for a single pair)."""
    t = _as_xp_matrix(xp, name)
    off = ~torch.eye(t.shape[0], dtype=torch.bool)
    return PairSummary(_mean_sem(t[off]), _mean_sem(unordered_pair_means(t, name)))


@dataclass(frozen=True)
class PoolComparison:
    """Result of :func:`compare_pools`.

    Attributes:
        difference: mean over unordered pairs of pool a minus that of pool b (paired: mean of the
            per-pair differences, the same number).
        p_value: share of arrangements whose statistic is at least as extreme as the observed one,
            the observed arrangement included (exact), or ``(hits + 1) / (resamples + 1)`` (Monte Carlo).
        interval: ``(p, p)`` when exact; else a Clopper-Pearson interval (``confidence``) on the exact p.
        exact: whether every arrangement was enumerated.
        min_p: the smallest p-value any data of these sizes can give (``1 / arrangements`` one-sided).
        units: unordered pairs in pool a and in pool b.
        arrangements: how many arrangements the test ranges over (relabellings or sign flips).
        paired, alternative, resamples (drawn; 0 when exact), confidence.
    """

    difference: float
    p_value: float
    interval: tuple[float, float]
    exact: bool
    min_p: float
    units: tuple[int, int]
    arrangements: int
    paired: bool
    alternative: str
    resamples: int
    confidence: float

    def __str__(self) -> str:
        kind = "paired sign flips" if self.paired else "permutation"
        how = "exact" if self.exact else f"Monte Carlo, {self.confidence:.0%} interval [{self.interval[0]:.4g}, {self.interval[1]:.4g}]"
        return (f"difference {self.difference:+.3f}, p = {self.p_value:.4g} ({kind}, {how}; "
                f"{self.units[0]} vs {self.units[1]} unordered pairs, smallest attainable p {self.min_p:.3g})")

    def as_dict(self) -> dict[str, object]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}

    def verdict(self, alpha: float = 0.05) -> str:
        """What the test says of its one-sided H1 at level ``alpha``: see :func:`verdict`."""
        return verdict(self.difference, self.p_value, self.alternative, alpha)


VERDICTS = ("holds", "does not hold", "cannot tell")


def verdict(difference: float, p_value: float, alternative: str, alpha: float = 0.05) -> str:
    """"does not hold" when the observed ``difference`` lies on the wrong side of H1 (or is 0), "holds" when
    ``p_value < alpha``, else "cannot tell". ``alternative``: "greater" or "less" (a two-sided test has no direction)."""
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less' for a verdict on a direction, got {alternative!r}")
    check_float(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    if (difference <= 0) if alternative == "greater" else (difference >= 0):
        return "does not hold"
    return "holds" if p_value < alpha else "cannot tell"


def _extreme(stats: torch.Tensor, observed: float, alternative: str, tolerance: float) -> torch.Tensor:
    if alternative == "greater":
        return stats >= observed - tolerance
    if alternative == "less":
        return stats <= observed + tolerance
    return stats.abs() >= abs(observed) - tolerance


def compare_pools(
    xp_a: object,
    xp_b: object,
    *,
    paired: bool = False,
    alternative: Alternative = "greater",
    resamples: int = 10_000,
    generator: torch.Generator | None = None,
    confidence: float = 0.99,
    chunk_elements: int = 1 << 22,
) -> PoolComparison:
    """Test whether pool a cross-plays better than pool b, with the unordered pair as the unit.

    ``xp_a``, ``xp_b``: square XP matrices (see the module docstring). Unpaired: the statistic is
    the difference of the mean pair means, over all ways to split the pooled pair means into groups
    of the two sizes. ``paired=True`` (the same agents in both, so equal sizes): the mean of per-pair
    differences, over all ``2^pairs`` sign flips. When the arrangements number at most ``resamples``
    the test enumerates them (exact); otherwise it draws ``resamples`` of them with ``generator``.
    ``alternative``: "greater" (H1: a > b), "less" or "two-sided". ``confidence`` in (0, 1): of the
    Monte Carlo interval. ``chunk_elements`` bounds the memory of one batch of arrangements (as in
    :func:`~eqc.evaluation.permutation_test`), exact or drawn.
    """
    matrix_a, matrix_b = _as_xp_matrix(xp_a, "xp_a"), _as_xp_matrix(xp_b, "xp_b")
    a, b = unordered_pair_means(matrix_a, "xp_a"), unordered_pair_means(matrix_b, "xp_b")
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    check_int(resamples, "resamples", low=1)
    check_int(chunk_elements, "chunk_elements", low=1)
    check_float(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    if not isinstance(paired, bool):
        raise TypeError(f"paired must be True or False, got {paired!r}")
    for name, matrix, means in (("xp_a", matrix_a, a), ("xp_b", matrix_b, b)):
        if not math.isfinite(float(means.abs().sum())):
            raise ValueError(f"{name}'s scores are too large to average in float64: pair means or their sum overflow to "
                             f"infinity (largest |score| {float(matrix.abs().max()):.3g}); rescale the scores")
    if paired:
        if a.numel() != b.numel():
            raise ValueError("paired=True compares the same agents, so xp_a and xp_b must be the same size; "
                             f"got {matrix_a.shape[0]} and {matrix_b.shape[0]} agents")
        return _sign_flip_test(a - b, alternative, resamples, generator, confidence, chunk_elements)
    return _permutation_test(a, b, alternative, resamples, generator, confidence, chunk_elements)


def _result(observed: float, stats_hits: int, drawn: int, total: int, exact: bool, units: tuple[int, int], paired: bool,
            alternative: str, confidence: float, symmetric: bool) -> PoolComparison:
    if exact:
        p = stats_hits / total
        interval = (p, p)
    else:
        p = (stats_hits + 1) / (drawn + 1)
        interval = clopper_pearson(stats_hits, drawn, confidence)
    min_p = (2.0 if alternative == "two-sided" and symmetric else 1.0) / total
    return PoolComparison(observed, p, interval, exact, min_p, units, total, paired, alternative, 0 if exact else drawn, float(confidence))


def _blocks(rows: int, n: int, chunk_elements: int) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges covering ``rows`` arrangements, each at most ``chunk_elements / n`` long."""
    per_chunk = max(1, chunk_elements // n)
    return [(start, min(rows, start + per_chunk)) for start in range(0, rows, per_chunk)]


def _sign_flip_test(
    d: torch.Tensor, alternative: str, resamples: int, generator: torch.Generator | None, confidence: float, chunk_elements: int
) -> PoolComparison:
    n = d.numel()
    observed = float(d.mean())
    tolerance = 1e-9 * max(1.0, float(d.abs().sum()))
    total = 2**n
    exact = total <= resamples
    hits = 0
    for start, stop in _blocks(total if exact else resamples, n, chunk_elements):
        if exact:
            bits = (torch.arange(start, stop).unsqueeze(1) >> torch.arange(n)) & 1
        else:
            bits = torch.randint(0, 2, (stop - start, n), generator=generator)
        signs = 1.0 - 2.0 * bits.double()
        hits += int(_extreme(signs @ d / n, observed, alternative, tolerance).sum())
    return _result(observed, hits, resamples, total, exact, (n, n), True, alternative, confidence, symmetric=True)


def _permutation_test(
    a: torch.Tensor, b: torch.Tensor, alternative: str, resamples: int, generator: torch.Generator | None, confidence: float,
    chunk_elements: int,
) -> PoolComparison:
    pooled = torch.cat([a, b])
    n, n_a = pooled.numel(), a.numel()
    total_sum = float(pooled.sum())
    observed = float(a.mean() - b.mean())
    tolerance = 1e-9 * max(1.0, float(pooled.abs().sum()))
    total = math.comb(n, n_a)
    exact = total <= resamples
    subsets = itertools.combinations(range(n), n_a)
    hits = 0
    for start, stop in _blocks(total if exact else resamples, n, chunk_elements):
        if exact:
            chosen = torch.zeros(stop - start, n, dtype=torch.float64)
            for row, subset in enumerate(itertools.islice(subsets, stop - start)):
                chosen[row, list(subset)] = 1.0
        else:
            keys = torch.rand(stop - start, n, generator=generator, dtype=torch.float64)
            chosen = torch.zeros_like(keys).scatter_(1, keys.argsort(dim=1)[:, :n_a], 1.0)
        sums_a = chosen @ pooled
        stats = sums_a / n_a - (total_sum - sums_a) / (n - n_a)
        hits += int(_extreme(stats, observed, alternative, tolerance).sum())
    return _result(observed, hits, resamples, total, exact, (n_a, n - n_a), False, alternative, confidence, symmetric=n_a == n - n_a)
