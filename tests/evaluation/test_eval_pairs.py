"""Pair-level pool comparisons: exact against brute-force enumeration, Monte Carlo against exact, bad input."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from eqc.evaluation import compare_pools, pair_summary, unordered_pair_means


def _random_xp(agents: int, seed: int, shift: float = 0.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    xp = 10 + shift + 3 * torch.rand(agents, agents, generator=g, dtype=torch.float64)
    xp.fill_diagonal_(float("nan"))  # self-play is ignored, whatever it holds
    return xp


def _brute_unpaired(a: list[float], b: list[float]) -> float:
    """Share of splits of a + b into groups of the two sizes with mean difference >= the observed one."""
    pooled, n_a = a + b, len(a)
    observed = sum(a) / n_a - sum(b) / len(b)
    hits = total = 0
    for subset in itertools.combinations(range(len(pooled)), n_a):
        x = [pooled[k] for k in subset]
        y = [pooled[k] for k in range(len(pooled)) if k not in subset]
        total += 1
        hits += sum(x) / len(x) - sum(y) / len(y) >= observed - 1e-12
    return hits / total


def _brute_paired(d: list[float]) -> float:
    observed = sum(d) / len(d)
    flips = list(itertools.product((1, -1), repeat=len(d)))
    return sum(sum(s * x for s, x in zip(signs, d, strict=True)) / len(d) >= observed - 1e-12 for signs in flips) / len(flips)


def test_unordered_pair_means_average_both_seatings_and_ignore_the_diagonal():
    xp = torch.tensor([[99.0, 1.0, 2.0], [3.0, -5.0, 4.0], [6.0, 8.0, float("nan")]])
    assert unordered_pair_means(xp).tolist() == [2.0, 4.0, 6.0]  # (0,1), (0,2), (1,2)


def test_pair_summary_reports_both_standard_errors():
    xp = torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 4.0], [6.0, 8.0, 0.0]], dtype=torch.float64)
    s = pair_summary(xp)
    ordered = torch.tensor([1.0, 2.0, 3.0, 4.0, 6.0, 8.0], dtype=torch.float64)
    unordered = torch.tensor([2.0, 4.0, 6.0], dtype=torch.float64)
    assert s.ordered.mean == pytest.approx(4.0) and s.unordered.mean == pytest.approx(4.0)
    assert s.ordered.sem == pytest.approx(float(ordered.std() / math.sqrt(6)))
    assert s.unordered.sem == pytest.approx(float(unordered.std() / math.sqrt(3)))
    assert (s.ordered.n, s.unordered.n) == (6, 3)


@pytest.mark.parametrize(("agents_a", "agents_b", "seed"), [(3, 3, 0), (3, 4, 1), (4, 3, 2), (2, 4, 3)])
def test_unpaired_exact_p_equals_brute_force(agents_a, agents_b, seed):
    xa, xb = _random_xp(agents_a, seed, shift=0.5), _random_xp(agents_b, seed + 100)
    result = compare_pools(xa, xb)
    expected = _brute_unpaired(unordered_pair_means(xa).tolist(), unordered_pair_means(xb).tolist())
    assert result.exact and result.p_value == pytest.approx(expected, abs=1e-12)
    assert result.interval == (result.p_value, result.p_value)
    n_a, n_b = agents_a * (agents_a - 1) // 2, agents_b * (agents_b - 1) // 2
    assert result.units == (n_a, n_b)
    assert result.arrangements == math.comb(n_a + n_b, n_a) and result.min_p == pytest.approx(1 / math.comb(n_a + n_b, n_a))


@pytest.mark.parametrize("agents", [3, 4])
def test_paired_exact_p_equals_brute_force(agents):
    xa, xb = _random_xp(agents, 7, shift=0.3), _random_xp(agents, 8)
    result = compare_pools(xa, xb, paired=True)
    d = (unordered_pair_means(xa) - unordered_pair_means(xb)).tolist()
    assert result.exact and result.p_value == pytest.approx(_brute_paired(d), abs=1e-12)
    assert result.difference == pytest.approx(sum(d) / len(d))


def test_smallest_attainable_p_follows_the_number_of_pairs():
    three, five = _random_xp(3, 0), _random_xp(5, 0)
    assert compare_pools(three + 5, three, paired=True).p_value == pytest.approx(1 / 8)  # the floor with 3 agents
    paired = compare_pools(five + 5, five, paired=True)
    assert paired.exact and paired.p_value == pytest.approx(1 / 1024) and paired.min_p == pytest.approx(1 / 1024)
    generator = torch.Generator().manual_seed(0)  # each draw is the observed split with probability 1/184,756
    unpaired = compare_pools(_random_xp(5, 1, shift=20), five, generator=generator)  # 10 vs 10 pairs: C(20, 10) arrangements
    assert unpaired.arrangements == 184_756 and unpaired.min_p == pytest.approx(1 / 184_756)
    assert not unpaired.exact and unpaired.resamples == 10_000
    assert 1 / 10_001 <= unpaired.p_value <= 3 / 10_001  # Monte Carlo: the observed one counts, few draws as extreme
    assert unpaired.interval[0] == 0.0 and unpaired.interval[1] < 6e-4


def test_monte_carlo_interval_covers_the_exact_p():
    xa, xb = _random_xp(4, 11, shift=0.2), _random_xp(4, 12)
    exact = compare_pools(xa, xb)
    assert exact.exact  # C(12, 6) = 924 arrangements <= 10,000
    drawn = compare_pools(xa, xb, resamples=500, generator=torch.Generator().manual_seed(0))
    assert not drawn.exact and drawn.resamples == 500
    assert drawn.interval[0] <= exact.p_value <= drawn.interval[1]
    again = compare_pools(xa, xb, resamples=500, generator=torch.Generator().manual_seed(0))
    assert again.p_value == drawn.p_value  # seeded draws are reproducible


def test_alternatives_are_mirror_images_and_no_difference_gives_p_one():
    xa, xb = _random_xp(4, 21, shift=0.4), _random_xp(4, 22)
    assert compare_pools(xa, xb, alternative="greater").p_value == pytest.approx(compare_pools(xb, xa, alternative="less").p_value)
    two = compare_pools(xa, xb, alternative="two-sided")
    assert two.p_value >= compare_pools(xa, xb).p_value
    same = compare_pools(xa, xa.clone(), paired=True)
    assert same.difference == 0.0 and same.p_value == 1.0
    assert compare_pools(xa, xa.clone(), paired=True, alternative="two-sided").min_p == pytest.approx(2 / 2**6)


@pytest.mark.parametrize(
    ("xp_a", "xp_b", "kwargs", "message"),
    [
        (torch.zeros(3, 2), torch.zeros(3, 3), {}, "xp_a must be a square"),
        (torch.zeros(3, 3), torch.zeros(1, 1), {}, "xp_b needs at least 2 agents"),
        (torch.tensor([[0.0, float("nan")], [1.0, 0.0]]), torch.zeros(2, 2), {}, "finite off the diagonal"),
        (torch.zeros(3, 3), torch.zeros(4, 4), {"paired": True}, "same size; got 3 and 4 agents"),
        (torch.zeros(3, 3), torch.zeros(3, 3), {"alternative": "bigger"}, "alternative must be one of"),
        (torch.zeros(3, 3), torch.zeros(3, 3), {"resamples": 0}, "resamples"),
        ("abc", torch.zeros(3, 3), {}, "xp_a must be a square matrix"),
        (torch.zeros(3, 3), torch.zeros(3, 3), {"confidence": 1.5}, r"confidence must be in \(0, 1\), got 1.5"),  # exact path
        (torch.zeros(3, 3), torch.zeros(3, 3), {"confidence": float("nan")}, "confidence must be a finite number"),
        (torch.zeros(3, 3), torch.zeros(3, 3), {"confidence": 0}, "confidence must be in"),
        (torch.zeros(3, 3), torch.zeros(3, 3), {"chunk_elements": 0}, "chunk_elements"),
        (torch.full((3, 3), 1e308, dtype=torch.float64), torch.zeros(3, 3), {}, "xp_a's scores are too large to average in float64"),
        (torch.zeros(3, 3), torch.full((3, 3), -1.5e308, dtype=torch.float64), {"paired": True}, "xp_b's scores are too large"),
    ],
)
def test_bad_input_is_a_clear_error(xp_a, xp_b, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        compare_pools(xp_a, xp_b, **kwargs)


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("resamples", [50, 5_000])  # Monte Carlo and exact
def test_arrangements_are_counted_in_chunks_with_the_same_answer(paired: bool, resamples: int) -> None:
    """A chunk of one arrangement at a time gives the p of one batch: memory is bounded, nothing else changes."""
    xa, xb = _random_xp(4, 31, shift=0.3), _random_xp(4, 32)
    whole, chunked = (compare_pools(xa, xb, paired=paired, resamples=resamples, generator=torch.Generator().manual_seed(0),
                                    chunk_elements=c) for c in (1 << 22, 1))
    assert chunked.exact == whole.exact == (resamples == 5_000)
    if whole.exact:
        assert chunked.p_value == whole.p_value
    else:
        assert chunked.interval[0] <= whole.p_value <= chunked.interval[1]



def test_verdicts_follow_direction_then_p() -> None:
    from eqc.evaluation import verdict

    assert verdict(0.3, 0.01, "greater") == "holds" and verdict(0.3, 0.2, "greater") == "cannot tell"
    assert verdict(-0.3, 0.99, "greater") == "does not hold" and verdict(0.0, 0.5, "greater") == "does not hold"
    assert verdict(-0.1, 0.001, "less") == "holds" and verdict(0.1, 0.001, "less") == "does not hold"
    assert verdict(0.3, 0.05, "greater") == "cannot tell"  # strictly below alpha
    with pytest.raises(ValueError, match="two-sided"):
        verdict(0.3, 0.01, "two-sided")
    with pytest.raises(ValueError, match="alpha"):
        verdict(0.3, 0.01, "greater", alpha=1.5)


def test_a_comparison_gives_its_own_verdict() -> None:
    better = torch.full((6, 6), 10.0) + torch.arange(36, dtype=torch.float64).view(6, 6) / 100
    worse = better - 1
    result = compare_pools(better, worse, paired=True)
    assert result.verdict() == "holds" and compare_pools(worse, better, paired=True).verdict() == "does not hold"
    assert result.verdict(alpha=result.p_value) == "cannot tell"
