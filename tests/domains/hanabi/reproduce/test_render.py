"""The tables' verdict on colour symmetry breaking follows the relabelled-partner losses it is given."""

from __future__ import annotations

from eqc.domains.hanabi.reproduce.render import _breaking_verdict
from eqc.domains.hanabi.xp.relabelled import BREAKING_LOSS, breaks_colour_symmetry


def _pool(*losses: float, self_play: float = 20.0, max_score: int = 25) -> dict:
    return {"agents": [{"loss": loss, "self_play": self_play, "max_score": max_score} for loss in losses]}


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
