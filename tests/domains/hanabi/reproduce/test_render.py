"""The tables' verdict on colour symmetry breaking follows the relabelled-partner losses it is given."""

from __future__ import annotations

from dataclasses import replace

from eqc.domains.hanabi.reproduce.record import RelabelledAgent, RelabelledPool, TableTest
from eqc.domains.hanabi.reproduce.render import _breaking_verdict
from eqc.domains.hanabi.xp.relabelled import BREAKING_LOSS, breaks_colour_symmetry


def _pool(*losses: float, self_play: float = 20.0, max_score: int = 25) -> RelabelledPool:
    agents = tuple(RelabelledAgent("a", self_play, (), loss, 0.0, (), 0, 0.0, max_score, None) for loss in losses)
    return RelabelledPool(0, 0, agents, 0.0, 0.0, None, 0)


def test_no_agent_over_the_threshold_says_no_breaking() -> None:
    text = _breaking_verdict({"sp": _pool(0.1, -0.2), "op": _pool(0.05, BREAKING_LOSS - 0.01)})
    assert text.startswith("No agent breaks the colour symmetry (a loss of 2 points") and "`sp` +0.10" in text and "`op` +1.99" in text


def test_pools_with_a_breaking_agent_are_named() -> None:
    text = _breaking_verdict({"sp": _pool(0.1, 3.5), "op": _pool(0.0, 0.2)})
    assert text.startswith("Pools with an agent that breaks") and "`sp` (largest" in text and "`op`" not in text.split("(")[0]


def test_a_share_of_self_play_breaks_it_only_in_a_smaller_game() -> None:
    """Mini-Hanabi (maximum 9): 1.3 of 8 points is 16% of self-play, breaking; in the full game it is not."""
    assert breaks_colour_symmetry(1.3, 8.0, 9) and not breaks_colour_symmetry(1.3, 8.0, 25)
    assert not breaks_colour_symmetry(1.1, 8.0, 9) and breaks_colour_symmetry(2.0, 20.0, 25)
    text = _breaking_verdict({"sp": _pool(1.3, self_play=8.0, max_score=9)})
    assert text.startswith("Pools with an agent that breaks") and "`sp`" in text


def _test(paired: bool, p: float, adjusted: float | None, agents: int = 3, interval: tuple[float, float] | None = None,
          kind: str | None = None) -> TableTest:
    """A test of two cells of ``agents`` agents with p-value ``p`` (Holm-adjusted to ``adjusted`` for a primary one), its
    verdict read as the table reads it from its (adjusted) p and interval."""
    import numpy as np

    from eqc.evaluation import compare_pools, verdict

    rng = np.random.default_rng(0)
    xp = rng.normal(10, 1, (2 * agents, 2 * agents))
    xp[:agents, :agents] += 1
    result = compare_pools(xp, range(agents), range(agents, 2 * agents), paired=paired)
    result = replace(result, p_value=p, interval=result.interval if interval is None else interval)
    said = verdict(result.difference, p if adjusted is None else adjusted, result.alternative, interval=result.interval)
    return TableTest(("A", "B"), "exploratory" if adjusted is None else "primary", kind or ("paired" if paired else "unpaired"),
                     adjusted, result, None, said)


def test_the_tests_say_their_role_sizes_interval_and_a_verdict_that_reads_p_and_interval() -> None:
    from eqc.domains.hanabi.reproduce.render import _test_table

    tests = {"X sym > X": _test(True, 0.03, 0.06), "X > Y": _test(False, 0.03, None), "Z > Y": _test(False, 0.03, 0.03, agents=2),
             "W > Y": _test(False, 0.03, None, interval=(0.2, 1.4))}
    rows = {line.split(" | ")[0].lstrip("| "): line for line in _test_table(tests, lambda d: f"{d:+.2f}")[2:]}
    paired, unpaired, small, clear = rows["X sym > X"], rows["X > Y"], rows["Z > Y"], rows["W > Y"]
    assert "| primary | paired | 3 x 2 forms |" in paired and "| 0.0600 |" in paired and "exact, 8 swaps" in paired
    assert paired.endswith("| 0.1250 | cannot tell |")  # raw p 0.03, Holm-adjusted 0.06: not below 0.05
    # p = 0.03 but a 95% interval that contains 0: the verdict reads both, so it cannot say 'holds'
    assert "| exploratory | unpaired | 3 vs 3 |" in unpaired and "| - |" in unpaired and unpaired.endswith("| cannot tell |")
    assert "exact, 20 splits" in unpaired and "[" in unpaired.split(" | ")[4] and "| 95% |" in unpaired
    assert clear.endswith("| holds |")  # the same p with an interval above 0
    assert "| 2 vs 2 |" in small and " n/a | 95% | n/a |" in small  # 2 agents per pool: no jackknife interval or SE


def test_matched_tests_name_their_sets_and_simultaneous_intervals_their_confidence() -> None:
    from eqc.domains.hanabi.reproduce.render import _test_table

    test = _test(True, 0.01, 0.02, kind="matched")
    test = replace(test, comparison=replace(test.comparison, confidence=1 - 0.05 / 3), interval_kind="simultaneous (Bonferroni)",
                   verdict="holds")
    row = _test_table({"A > B": test}, lambda d: f"{d:+.2f}")[2]
    assert "| primary | matched | 3 matched sets |" in row and "| 98.3% simultaneous |" in row and row.endswith("| holds |")
