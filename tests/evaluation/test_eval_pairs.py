"""Agent-level pool comparisons: hand-computed and brute-force exact p-values, jackknife intervals, Holm, bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from scipy import stats

from eqc.evaluation import compare_pools, holm, pool_summary, verdict

#: Agents 0, 1 play each other 12 and 8 (mean 10), agents 2, 3 play 5 and 3 (mean 4); every cross pair 6.
HAND = np.array([[0, 12, 6, 6], [8, 0, 6, 6], [6, 6, 0, 5], [6, 6, 3, 0]], dtype=np.float64)


def _random_xp(agents: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    u = rng.normal(size=agents)
    xp = 10 + u[:, None] + u[None, :] + rng.normal(size=(agents, agents))
    np.fill_diagonal(xp, np.nan)  # self-play is ignored, whatever it holds
    return xp


def _xp_of(xp: np.ndarray, pool: tuple[int, ...]) -> float:
    return sum(xp[i, j] for i in pool for j in pool if i != j) / (len(pool) * (len(pool) - 1))


def _brute(xp: np.ndarray, a: list[int], b: list[int], paired: bool) -> tuple[float, int]:
    """Share of arrangements (splits of a + b; or swaps of a[k] with b[k]) whose statistic is >= the observed one."""
    if paired:
        arrangements = [tuple(zip(*(((y, x) if s else (x, y)) for s, x, y in zip(swaps, a, b, strict=True)), strict=True))
                        for swaps in itertools.product((0, 1), repeat=len(a))]
    else:
        union = a + b
        arrangements = [(chosen, tuple(k for k in union if k not in chosen)) for chosen in itertools.combinations(union, len(a))]
    observed = _xp_of(xp, tuple(a)) - _xp_of(xp, tuple(b))
    hits = sum(_xp_of(xp, p) - _xp_of(xp, q) >= observed - 1e-12 for p, q in arrangements)
    return hits / len(arrangements), len(arrangements)


def test_two_plus_two_agents_by_hand() -> None:
    """6 splits: {0,1}|{2,3} gives 10 - 4 = +6, its mirror -6, the four mixed splits 6 - 6 = 0."""
    result = compare_pools(HAND, [0, 1], [2, 3])
    assert result.difference == pytest.approx(6.0) and result.means == pytest.approx((10.0, 4.0))
    assert result.exact and result.arrangements == 6 and result.resamples == 0 and result.agents == (2, 2)
    assert result.p_value == pytest.approx(1 / 6) and result.min_p == pytest.approx(1 / 6)
    assert compare_pools(HAND, [0, 1], [2, 3], alternative="less").p_value == pytest.approx(1.0)
    two = compare_pools(HAND, [0, 1], [2, 3], alternative="two-sided")
    assert two.p_value == pytest.approx(1 / 3) and two.min_p == pytest.approx(1 / 3)
    assert compare_pools(HAND, [2, 3], [0, 1], alternative="less").p_value == pytest.approx(1 / 6)
    assert math.isnan(result.se) and all(math.isnan(v) for v in result.interval)  # 2 agents per pool: no jackknife


def test_the_cross_pool_pairs_enter_the_null() -> None:
    """Agents 0 and 2 playing each other 20 (other cross pairs 0) make the split {0,2}|{1,3} score 20 - 0, more
    extreme than the observed +6: p = 2/6."""
    xp = HAND.copy()
    xp[0, 2:] = xp[1, 2:] = xp[2:, 0] = xp[2:, 1] = 0.0
    xp[0, 2] = xp[2, 0] = 20.0
    result = compare_pools(xp, [0, 1], [2, 3])
    assert result.difference == pytest.approx(6.0) and result.p_value == pytest.approx(2 / 6)


def test_paired_two_agents_by_hand() -> None:
    """Agent k's forms are rows a[k] = k and b[k] = 2 + k: 4 swaps, +6 (none), 0 (one), 0 (other), -6 (both)."""
    result = compare_pools(HAND, [0, 1], [2, 3], paired=True)
    assert result.paired and result.exact and result.arrangements == 4 and result.agents == (2, 2)
    assert result.p_value == pytest.approx(1 / 4) and result.min_p == pytest.approx(1 / 4)
    assert compare_pools(HAND, [0, 1], [2, 3], paired=True, alternative="two-sided").p_value == pytest.approx(1 / 2)


@pytest.mark.parametrize(("n_a", "n_b", "seed"), [(3, 3, 0), (3, 4, 1), (4, 3, 2), (2, 5, 3)])
def test_unpaired_exact_p_equals_brute_force(n_a: int, n_b: int, seed: int) -> None:
    xp = _random_xp(n_a + n_b + 1, seed)  # an agent in neither pool is read by no arrangement
    a, b = list(range(1, 1 + n_a)), list(range(1 + n_a, 1 + n_a + n_b))
    expected, total = _brute(xp, a, b, paired=False)
    result = compare_pools(xp, a, b)
    assert result.exact and result.arrangements == total == math.comb(n_a + n_b, n_a)
    assert result.p_value == pytest.approx(expected, abs=1e-12) and result.min_p == pytest.approx(1 / total)


@pytest.mark.parametrize("agents", [3, 4, 5])
def test_paired_exact_p_equals_brute_force(agents: int) -> None:
    xp = _random_xp(2 * agents, 10 + agents)
    a, b = list(range(agents)), list(range(2 * agents - 1, agents - 1, -1))  # form b of agent k is row 2A - 1 - k
    expected, total = _brute(xp, a, b, paired=True)
    result = compare_pools(xp, a, b, paired=True)
    assert result.exact and result.arrangements == total == 2**agents and result.p_value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("paired", [True, False])
def test_the_observed_arrangement_ties_with_itself_in_the_null(paired: bool) -> None:
    """The observed split is one of the arrangements, so an exact p is at least 1 / arrangements. Scipy hands the
    statistic strided views; summed in another order, a small difference between large XP values lost the tie
    with itself by rounding, and a table once printed p = 0 (IPPO pools of scores near 8.3 differing by 0.05)."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        x = 8.3 + rng.random((8, 8)) * 0.01
        x[:4, :4] += 0.05  # the observed split is the most extreme one
        result = compare_pools(x, [0, 1, 2, 3], [4, 5, 6, 7], paired=paired, generator=0)
        assert result.p_value == result.min_p == (1 / 16 if paired else 1 / 70)


def test_relabelling_the_matrix_changes_nothing() -> None:
    xp = _random_xp(7, 4)
    order = np.array([3, 6, 0, 5, 1, 4, 2])  # new row r is old agent order[r]
    moved = xp[np.ix_(order, order)]
    new = {int(old): r for r, old in enumerate(order)}
    first = compare_pools(xp, [0, 1, 2], [3, 4, 5, 6])
    again = compare_pools(moved, [new[k] for k in (2, 0, 1)], [new[k] for k in (6, 3, 5, 4)])
    assert first.p_value == pytest.approx(again.p_value, abs=1e-12) and first.difference == pytest.approx(again.difference)
    assert first.se == pytest.approx(again.se)


def test_monte_carlo_is_seeded_and_agrees_with_exact() -> None:
    xp = _random_xp(12, 5)
    xp[:6, :6] += 1.0
    a, b = list(range(6)), list(range(6, 12))
    exact = compare_pools(xp, a, b)
    assert exact.exact and exact.arrangements == 924
    drawn = compare_pools(xp, a, b, resamples=500, generator=0)
    assert not drawn.exact and drawn.resamples == 500 and drawn.arrangements == 924
    assert drawn.min_p == pytest.approx(1 / 501)
    assert compare_pools(xp, a, b, resamples=500, generator=np.random.default_rng(0)).p_value == drawn.p_value
    hits = round(drawn.p_value * 501) - 1  # scipy: (hits + 1) / (resamples + 1)
    low, high = stats.binom.ppf([1e-6, 1 - 1e-6], 500, exact.p_value)
    assert low <= hits <= high
    assert compare_pools(xp, a, b, resamples=100, alternative="two-sided", generator=1).min_p == pytest.approx(2 / 101)
    paired = compare_pools(xp, a, b, paired=True, resamples=10, generator=0)
    assert not paired.exact and paired.arrangements == 64 and paired.min_p == pytest.approx(1 / 11)


def test_a_pool_summary_is_the_mean_over_ordered_pairs_with_the_agent_jackknife() -> None:
    xp = np.array([[0, 1, 2, 4], [3, 0, 4, 0], [6, 8, 0, 2], [1, 5, 7, 0]], dtype=np.float64)
    s = pool_summary(torch.tensor(xp))
    assert s.mean == pytest.approx(43 / 12) and (s.agents, s.ordered_pairs) == (4, 12)
    left_out = [_xp_of(xp, tuple(k for k in range(4) if k != d)) for d in range(4)]
    jackknife = math.sqrt(3 / 4 * sum((v - sum(left_out) / 4) ** 2 for v in left_out))
    assert s.sem == pytest.approx(jackknife)
    assert math.isnan(pool_summary(xp[:2, :2]).sem) and s.as_dict()["sem"] == s.sem


def test_the_interval_is_a_t_interval_on_the_agent_jackknife() -> None:
    xp = _random_xp(9, 6)
    a, b = [0, 1, 2, 3], [4, 5, 6, 7, 8]
    result = compare_pools(xp, a, b, confidence=0.9)
    v_a, v_b = (pool_summary(xp[np.ix_(p, p)]).sem ** 2 for p in (a, b))  # unpaired: each pool's own jackknife
    df = (v_a + v_b) ** 2 / (v_a**2 / 3 + v_b**2 / 4)
    assert result.se == pytest.approx(math.sqrt(v_a + v_b)) and result.df == pytest.approx(df)
    half = stats.t.ppf(0.95, df) * result.se
    assert result.interval == pytest.approx((result.difference - half, result.difference + half))
    paired = compare_pools(xp, [0, 1, 2, 3], [8, 7, 6, 5], paired=True)  # delete agent k's both forms
    thetas = [_xp_of(xp, tuple(x for x in (0, 1, 2, 3) if x != k)) - _xp_of(xp, tuple(x for x in (8, 7, 6, 5) if x != 8 - k))
              for k in range(4)]
    assert paired.se == pytest.approx(math.sqrt(3 / 4 * sum((t - sum(thetas) / 4) ** 2 for t in thetas))) and paired.df == 3


def test_a_comparison_reports_and_gives_its_verdict() -> None:
    xp = _random_xp(12, 7)
    xp[:6, :6] += 5
    result = compare_pools(xp, range(6), range(6, 12))
    assert result.verdict() == "holds" and result.p_value == pytest.approx(1 / 924)
    reversed_ = compare_pools(xp, list(range(6, 12)), list(range(6)))
    assert reversed_.interval[1] < 0 and reversed_.verdict() == "reversed"  # the other direction is shown
    assert result.verdict(alpha=result.p_value) == "cannot tell"
    record = result.as_dict()
    assert record["agents"] == [6, 6] and record["arrangements"] == 924 and len(record["interval"]) == 2
    assert "6 vs 6 agents" in str(result) and "exact over 924 splits" in str(result)
    assert "6 agents x 2 forms" in str(compare_pools(xp, range(6), range(6, 12), paired=True))


def test_verdicts_follow_direction_then_p() -> None:
    assert verdict(0.3, 0.01, "greater") == "holds" and verdict(0.3, 0.2, "greater") == "cannot tell"
    assert verdict(-0.3, 0.99, "greater") == "does not hold" and verdict(0.0, 0.5, "greater") == "does not hold"
    assert verdict(-0.1, 0.001, "less") == "holds" and verdict(0.1, 0.001, "less") == "does not hold"
    assert verdict(0.3, 0.05, "greater") == "cannot tell"  # strictly below alpha
    with pytest.raises(ValueError, match="alternative"):
        verdict(0.3, 0.01, "sideways")
    with pytest.raises(ValueError, match="alpha"):
        verdict(0.3, 0.01, "greater", alpha=1.5)


def test_verdicts_read_the_interval_too_so_the_two_cannot_disagree() -> None:
    assert verdict(0.3, 0.01, "greater", interval=(-0.1, 0.7)) == "cannot tell"  # p small, interval holds 0
    assert verdict(0.3, 0.01, "greater", interval=(0.05, 0.55)) == "holds"
    assert verdict(-0.8, 0.99, "greater", interval=(-1.2, -0.4)) == "reversed"  # wholly on the other side
    assert verdict(-0.1, 0.6, "greater", interval=(-0.5, 0.3)) == "does not hold"
    assert verdict(-0.3, 0.01, "less", interval=(-0.6, -0.1)) == "holds" and verdict(0.5, 0.9, "less", interval=(0.1, 0.9)) == "reversed"
    assert verdict(0.3, 0.01, "greater", interval=(float("nan"), float("nan"))) == "holds"  # no interval: the p decides
    assert verdict(0.4, 0.01, "two-sided", interval=(0.1, 0.7)) == "differs"
    assert verdict(-0.4, 0.01, "two-sided", interval=(-0.7, -0.1)) == "differs"
    assert verdict(0.4, 0.01, "two-sided", interval=(-0.1, 0.9)) == "cannot tell"
    with pytest.raises(ValueError, match="low <= high"):
        verdict(0.3, 0.01, "greater", interval=(1.0, 0.0))


def test_holm_adjusts_a_family_step_down() -> None:
    assert holm({"x": 0.01, "y": 0.04, "z": 0.03}) == pytest.approx({"x": 0.03, "y": 0.06, "z": 0.06})
    adjusted = holm({"x": 0.6, "y": 0.7})
    assert adjusted == {"x": 1.0, "y": 1.0} and list(adjusted) == ["x", "y"]  # capped at 1, monotone, same order
    assert holm({"only": 0.02}) == {"only": 0.02} and holm({}) == {}
    with pytest.raises(ValueError, match=r"p_values\['y'\] must be in \[0, 1\]"):
        holm({"x": 0.1, "y": 1.5})
    with pytest.raises(TypeError, match="p_values must be a mapping"):
        holm([0.1, 0.2])


@pytest.mark.parametrize(
    ("xp", "a", "b", "kwargs", "error", "message"),
    [
        (np.zeros((4, 3)), [0, 1], [2, 3], {}, ValueError, "xp must be a square"),
        ("abc", [0, 1], [2, 3], {}, TypeError, "xp must be a square matrix"),
        (np.where(np.eye(4, k=1) > 0, np.nan, 1.0), [0, 1], [2, 3], {}, ValueError, r"xp must be finite off the diagonal.*\(0, 1\)"),
        (np.full((4, 4), 1e308), [0, 1], [2, 3], {}, ValueError, "xp's scores are too large"),
        (np.ones((4, 4)), [0, 1], [1, 2], {}, ValueError, r"a and b must be disjoint.*\[1\]"),
        (np.ones((4, 4)), [0, 4], [2, 3], {}, ValueError, "a holds agent 4, outside 0..3"),
        (np.ones((4, 4)), [0, 1], [-1, 3], {}, ValueError, "b holds agent -1"),
        (np.ones((4, 4)), [0], [2, 3], {}, ValueError, "a must hold at least 2 agents"),
        (np.ones((4, 4)), [0, 1], [3], {}, ValueError, "b must hold at least 2 agents"),
        (np.ones((4, 4)), [0, 0], [2, 3], {}, ValueError, "a lists agent 0 more than once"),
        (np.ones((4, 4)), [0.0, 1.0], [2, 3], {}, TypeError, "a must hold agent indices"),
        (np.ones((4, 4)), [True, False], [2, 3], {}, TypeError, "a must hold agent indices"),
        (np.ones((4, 4)), 3, [2, 3], {}, TypeError, "a must be a sequence of agent indices"),
        (np.ones((5, 5)), [0, 1], [2, 3, 4], {"paired": True}, ValueError, "paired=True: a and b must have the same length"),
        (np.ones((4, 4)), [0, 1], [2, 3], {"paired": 1}, TypeError, "paired must be a bool"),
        (np.ones((4, 4)), [0, 1], [2, 3], {"alternative": "bigger"}, ValueError, "alternative must be one of"),
        (np.ones((4, 4)), [0, 1], [2, 3], {"resamples": 0}, ValueError, "resamples must be in"),
        (np.ones((4, 4)), [0, 1], [2, 3], {"generator": torch.Generator()}, TypeError, "generator must be a numpy.random.Generator"),
        (np.ones((4, 4)), [0, 1], [2, 3], {"generator": -1}, TypeError, "an int seed >= 0"),
        (np.ones((4, 4)), [0, 1], [2, 3], {"confidence": 1.0}, ValueError, r"confidence must be in \(0, 1\)"),
    ],
)
def test_bad_input_is_a_clear_error(xp, a, b, kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        compare_pools(xp, a, b, **kwargs)
