"""Mean ± standard error, Clopper-Pearson intervals, and Monte Carlo permutation tests.

The permutation test compares the means of two samples ``x`` and ``y``. Its exact p-value is
the fraction of all relabellings of the pooled values (``len(x)`` of them called "x") whose
statistic is at least as extreme as the observed one. The Monte Carlo test draws ``resamples``
uniform relabellings with a seeded ``torch.Generator``; the number of extreme draws is
Binomial(resamples, exact p), so the estimate ``hits / resamples`` comes with an exact
(Clopper-Pearson) binomial confidence interval for the exact p-value, the paper's
"p in (0, 0.00028]" (99%, no extreme draw in the resamples).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from eqc._checks import check_int
from eqc.io import JsonRecord

__all__ = [
    "Alternative",
    "MeanSEM",
    "PermutationTest",
    "as_sample",
    "clopper_pearson",
    "mean_sem",
    "permutation_test",
]

Alternative = Literal["greater", "less", "two-sided"]
_ALTERNATIVES = ("greater", "less", "two-sided")


def as_sample(values: object, name: str) -> torch.Tensor:
    """``values`` (a 1-D tensor or a sequence of real numbers) as a float64 tensor; errors name ``name``."""
    if isinstance(values, torch.Tensor):
        if values.dtype == torch.bool or values.dtype.is_complex:
            raise TypeError(f"{name} must hold real numbers, got dtype {values.dtype}")
        t = values.detach().to("cpu", torch.float64)
    elif isinstance(values, Sequence) and not isinstance(values, (str, bytes)):
        for k, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"{name}[{k}] must be a real number, got {type(v).__name__}")
        t = torch.tensor(list(values), dtype=torch.float64)
    else:
        raise TypeError(f"{name} must be a 1-D tensor or a sequence of numbers, got {type(values).__name__}")
    if t.dim() != 1:
        raise ValueError(f"{name} must be 1-D, got shape {tuple(t.shape)}")
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} must hold finite values")
    return t


@dataclass(frozen=True)
class MeanSEM(JsonRecord):
    """A sample mean and its standard error ``std(ddof=1) / sqrt(n)``."""

    mean: float
    sem: float
    n: int

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.sem:.2f}"


def mean_sem(values: object, name: str = "values") -> MeanSEM:
    """Mean and standard error of the mean of ``values`` (at least 2 of them)."""
    t = as_sample(values, name)
    if t.numel() < 2:
        raise ValueError(f"{name} needs at least 2 values for a standard error, got {t.numel()}")
    return MeanSEM(float(t.mean()), float(t.std(unbiased=True)) / math.sqrt(t.numel()), t.numel())


def _binomial_log_terms(n: int) -> torch.Tensor:
    """``log C(n, i)`` for i = 0..n, float64."""
    i = torch.arange(n + 1, dtype=torch.float64)
    return math.lgamma(n + 1) - torch.lgamma(i + 1) - torch.lgamma(n - i + 1)


def _binomial_cdf(k: int, n: int, p: float, log_choose: torch.Tensor) -> float:
    """P(X <= k) for X ~ Binomial(n, p), 0 < p < 1."""
    i = torch.arange(k + 1, dtype=torch.float64)
    log_terms = log_choose[: k + 1] + i * math.log(p) + (n - i) * math.log1p(-p)
    return float(torch.logsumexp(log_terms, 0).exp())


def _solve_decreasing(f: Callable[[float], float], target: float) -> float:
    """The p in (0, 1) with ``f(p) = target`` for ``f`` decreasing in p (bisection to float precision)."""
    low, high = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if f(mid) > target:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def clopper_pearson(successes: int, trials: int, confidence: float = 0.99) -> tuple[float, float]:
    """Exact two-sided binomial confidence interval ``(low, high)`` for a success probability.

    ``low`` solves P(X >= successes | low) = (1 - confidence)/2 (0 when successes = 0) and
    ``high`` solves P(X <= successes | high) = (1 - confidence)/2 (1 when successes = trials),
    the quantiles of Beta(k, n-k+1) and Beta(k+1, n-k).
    """
    check_int(trials, "trials", low=1)
    check_int(successes, "successes", low=0, high=trials)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    tail = (1.0 - confidence) / 2
    log_choose = _binomial_log_terms(trials)
    low = 0.0
    if successes > 0:
        low = _solve_decreasing(lambda p: _binomial_cdf(successes - 1, trials, p, log_choose), 1.0 - tail)
    high = 1.0
    if successes < trials:
        high = _solve_decreasing(lambda p: _binomial_cdf(successes, trials, p, log_choose), tail)
    return low, high


def _random_subset_sums(pooled: torch.Tensor, size: int, draws: int, generator: torch.Generator | None) -> torch.Tensor:
    """``[draws]`` sums of uniformly random ``size``-subsets of ``pooled``: the ``size`` smallest of uniform keys."""
    keys = torch.rand(draws, pooled.numel(), generator=generator, dtype=torch.float64)
    chosen = keys <= keys.kthvalue(size, dim=1, keepdim=True).values
    if bool((chosen.sum(dim=1) != size).any()):  # tied keys (probability ~ n^2 / 2^53): fall back to sorting
        chosen = torch.zeros_like(chosen).scatter_(1, keys.argsort(dim=1)[:, :size], True)
    return chosen.double() @ pooled


@dataclass(frozen=True)
class PermutationTest(JsonRecord):
    """Result of :func:`permutation_test`.

    ``p_value = hits / resamples`` estimates the exact permutation p-value, which lies in
    ``[ci_low, ci_high]`` with probability ``confidence`` (Clopper-Pearson). ``difference`` is
    the observed ``mean(x) - mean(y)``.
    """

    difference: float
    p_value: float
    ci_low: float
    ci_high: float
    hits: int
    resamples: int
    alternative: str
    confidence: float

    def interval(self, digits: int = 5) -> str:
        """The interval as in the paper: ``"(0, 0.00028]"`` when no draw was extreme, else ``"[a, b]"``."""
        high = f"{self.ci_high:.{digits}f}"
        return f"(0, {high}]" if self.hits == 0 else f"[{self.ci_low:.{digits}f}, {high}]"


def permutation_test(
    x: object,
    y: object,
    *,
    alternative: Alternative = "two-sided",
    resamples: int = 10_000,
    generator: torch.Generator | None = None,
    confidence: float = 0.99,
    chunk_elements: int = 1 << 22,
) -> PermutationTest:
    """Monte Carlo permutation test for a difference in means of samples ``x`` and ``y``.

    ``alternative``: "greater" (H1: mean x > mean y; large differences are extreme), "less", or
    "two-sided" (large ``|difference|``). A draw counts as extreme when its statistic is at least
    the observed one (ties included, up to rounding). ``generator`` (CPU) makes the draws
    reproducible; ``chunk_elements`` bounds the memory of one batch of relabellings.
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    if xs.numel() == 0 or ys.numel() == 0:
        raise ValueError(f"x and y must both be non-empty, got {xs.numel()} and {ys.numel()} values")
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    check_int(resamples, "resamples", low=1)
    check_int(chunk_elements, "chunk_elements", low=1)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    pooled = torch.cat([xs, ys])
    n, n_x = pooled.numel(), xs.numel()
    # mean(x) - mean(y) is increasing in sum(x) for fixed sizes: compare sums centred on their mean
    centre = float(pooled.sum()) * n_x / n
    observed = float(xs.sum()) - centre
    tolerance = 1e-9 * max(1.0, float(pooled.abs().sum()))
    hits, done = 0, 0
    per_chunk = max(1, chunk_elements // n)
    while done < resamples:
        k = min(per_chunk, resamples - done)
        stat = _random_subset_sums(pooled, n_x, k, generator) - centre
        if alternative == "greater":
            extreme = stat >= observed - tolerance
        elif alternative == "less":
            extreme = stat <= observed + tolerance
        else:
            extreme = stat.abs() >= abs(observed) - tolerance
        hits += int(extreme.sum())
        done += k
    low, high = clopper_pearson(hits, resamples, confidence)
    difference = float(xs.mean() - ys.mean())
    return PermutationTest(difference, hits / resamples, low, high, hits, resamples, alternative, float(confidence))
