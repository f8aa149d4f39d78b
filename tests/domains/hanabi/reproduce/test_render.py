"""The tables' verdict on colour symmetry breaking follows the relabelled-partner losses it is given."""

from __future__ import annotations

from eqc.domains.hanabi.reproduce.render import BREAKING_LOSS, _breaking_verdict


def _pool(*losses: float) -> dict:
    return {"agents": [{"loss": loss} for loss in losses]}


def test_no_agent_over_the_threshold_says_no_breaking() -> None:
    text = _breaking_verdict({"sp": _pool(0.1, -0.2), "op": _pool(0.05, BREAKING_LOSS - 0.01)})
    assert text.startswith("No agent loses 2 points") and "`sp` +0.10" in text and "`op` +1.99" in text


def test_pools_with_a_breaking_agent_are_named() -> None:
    text = _breaking_verdict({"sp": _pool(0.1, 3.5), "op": _pool(0.0, 0.2)})
    assert text.startswith("Pools with an agent that breaks") and "`sp` (largest" in text and "`op`" not in text.split("(")[0]
