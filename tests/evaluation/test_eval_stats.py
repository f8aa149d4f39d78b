"""Mean ± SEM, Clopper-Pearson intervals and the Monte Carlo permutation test."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from eqc.evaluation import clopper_pearson, mean_sem, permutation_test


def test_mean_sem_by_hand() -> None:
    result = mean_sem([1.0, 2.0, 3.0, 4.0])
    # deviations -1.5, -0.5, 0.5, 1.5: sum of squares 5, sample variance 5/3
    assert result.mean == 2.5
    assert result.sem == pytest.approx(math.sqrt(5 / 3) / 2)
    assert result.n == 4
    assert str(result) == "2.50 ± 0.65"
    assert mean_sem(torch.tensor([7, 7, 7])).sem == 0.0


@pytest.mark.parametrize(
    ("values", "error", "match"),
    [([], ValueError, "at least 2"), ([3.0], ValueError, "at least 2"), ([1, True], TypeError, r"values\[1\]"),
     ("12", TypeError, "values"), (torch.zeros(2, 2), ValueError, "1-D"), ([1.0, float("nan")], ValueError, "finite")],
)
def test_mean_sem_rejects_bad_input(values: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        mean_sem(values)


def _exact_binomial_tail(k: int, n: int, p: float, upper: bool) -> float:
    """P(X >= k) (upper) or P(X <= k) for X ~ Binomial(n, p), by direct summation."""
    terms = range(k, n + 1) if upper else range(k + 1)
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in terms)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (0, 18_922), (7, 100), (450, 5000)])
def test_clopper_pearson_solves_its_defining_equations(k: int, n: int) -> None:
    low, high = clopper_pearson(k, n, 0.99)
    if k == 0:
        assert low == 0.0
        assert high == pytest.approx(1 - 0.005 ** (1 / n), rel=1e-9)  # closed form for no successes
    else:
        assert 0 < low < k / n
        if n <= 100:
            assert _exact_binomial_tail(k, n, low, upper=True) == pytest.approx(0.005, rel=1e-6)
    if k == n:
        assert high == 1.0
    elif n <= 100:
        assert _exact_binomial_tail(k, n, high, upper=False) == pytest.approx(0.005, rel=1e-6)


def test_clopper_pearson_matches_scipy_beta_quantiles() -> None:
    beta = pytest.importorskip("scipy.stats").beta
    for k, n in [(1, 20), (5, 40), (450, 5000), (9990, 10000)]:
        low, high = clopper_pearson(k, n, 0.99)
        assert low == pytest.approx(beta.ppf(0.005, k, n - k + 1), rel=1e-7)
        assert high == pytest.approx(beta.ppf(0.995, k + 1, n - k), rel=1e-7)


def test_clopper_pearson_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="successes"):
        clopper_pearson(11, 10)
    with pytest.raises(ValueError, match="trials"):
        clopper_pearson(0, 0)
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson(1, 10, 1.5)


def test_clearly_different_samples_give_small_p() -> None:
    x, y = torch.arange(20.0) + 15, torch.arange(20.0)
    g = torch.Generator().manual_seed(0)
    result = permutation_test(x, y, alternative="greater", resamples=5000, generator=g)
    assert result.difference == 15.0
    assert result.hits == 0 and result.p_value == 0.0
    assert result.ci_low == 0.0 and result.ci_high < 0.0011
    assert result.interval().startswith("(0, ") and result.interval().endswith("]")
    assert permutation_test(x, y, alternative="two-sided", resamples=2000, generator=g).p_value == 0.0
    assert permutation_test(x, y, alternative="less", resamples=2000, generator=g).p_value == 1.0


def test_identical_distributions_give_large_p() -> None:
    g = torch.Generator().manual_seed(1)
    same = torch.randint(0, 26, (200,), generator=g).double()
    assert permutation_test(same, same.flip(0), resamples=500, generator=g).p_value == 1.0  # observed difference 0
    x, y = torch.randn(300, generator=g), torch.randn(300, generator=g)
    for alternative in ("two-sided", "greater", "less"):
        assert permutation_test(x, y, alternative=alternative, resamples=2000, generator=g).ci_high > 0.05


def _exact_p(x: list[float], y: list[float], alternative: str) -> float:
    pooled, n_x = x + y, len(x)
    observed = sum(x) / n_x - sum(y) / len(y)
    hits = total = 0
    for chosen in itertools.combinations(range(len(pooled)), n_x):
        xs = [pooled[i] for i in chosen]
        ys = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        d = sum(xs) / n_x - sum(ys) / len(ys)
        extreme = {"greater": d >= observed - 1e-12, "less": d <= observed + 1e-12, "two-sided": abs(d) >= abs(observed) - 1e-12}
        hits += extreme[alternative]
        total += 1
    return hits / total


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_interval_contains_the_enumerated_exact_p_value(alternative: str) -> None:
    x, y = [4.0, 6.0, 3.0, 5.0], [1.0, 4.0, 2.0, 0.0, 3.0]  # 126 relabellings, with ties
    exact = _exact_p(x, y, alternative)
    assert 0 < exact < 1
    result = permutation_test(x, y, alternative=alternative, resamples=4000, generator=torch.Generator().manual_seed(2))
    assert result.ci_low <= exact <= result.ci_high
    assert abs(result.p_value - exact) < 0.03
    again = permutation_test(x, y, alternative=alternative, resamples=4000, generator=torch.Generator().manual_seed(2))
    assert again == result  # seeded: reproducible


def test_chunking_does_not_change_the_draws_count() -> None:
    x, y = [4.0, 6.0, 3.0, 5.0], [1.0, 4.0, 2.0, 0.0, 3.0]
    result = permutation_test(x, y, resamples=1001, generator=torch.Generator().manual_seed(3), chunk_elements=50)
    assert result.resamples == 1001 and 0 <= result.hits <= 1001


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [({"alternative": "bigger"}, ValueError, "alternative"), ({"resamples": 0}, ValueError, "resamples"),
     ({"resamples": 10.0}, TypeError, "resamples"), ({"generator": 3}, TypeError, "generator")],
)
def test_permutation_test_rejects_bad_arguments(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        permutation_test([1.0, 2.0], [3.0, 4.0], **kwargs)


def test_permutation_test_rejects_bad_samples() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        permutation_test([], [1.0])
    with pytest.raises(TypeError, match="y"):
        permutation_test([1.0], torch.tensor([True]))


def test_relabellings_are_uniform_subsets_of_the_right_size() -> None:
    from eqc.evaluation.stats import _random_subset_sums

    weights = 2.0 ** torch.arange(5, dtype=torch.float64)  # a subset's sum names the subset
    sums = _random_subset_sums(weights, 2, 20_000, torch.Generator().manual_seed(4)).long()
    assert all(bin(s).count("1") == 2 for s in sums.tolist())
    frequency = torch.bincount(sums, minlength=32)[[s for s in range(32) if bin(s).count("1") == 2]].double() / 20_000
    assert frequency.numel() == 10 and bool(((frequency - 0.1).abs() < 0.015).all())  # C(5, 2) = 10 equally likely
