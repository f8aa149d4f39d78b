"""The conventions report (``eqc hanabi reproduce conventions``) on shipped agents with induced conventions."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi.reproduce.conventions import convention_report, render_conventions
from eqc.domains.hanabi.reproduce.specs import ReproduceError

INDUCED = Path("results/induced/agents")


def test_report_on_shipped_induced_agents() -> None:
    torch.set_num_threads(1)
    runs = {"sp": [INDUCED / "sp" / f"seed_{s}" for s in (0, 1, 2)], "op": [INDUCED / "op" / f"seed_{s}" for s in (0, 1)]}
    report = convention_report("induced", runs, games=8, cell_xp={"SP": 3.0}, log=lambda _: None)
    agent = report.agents["sp"]["seed_1"]
    assert agent.pi == (1, 2, 0)  # the recorded [bootstrap] slots of seed 1
    assert len(agent.colour_hint_slot_counts) == 3 and len(agent.rank_hint_slot_counts) == 3
    assert set(report.alignment) == {"sp"} and set(report.ceiling["sp"]) == {"seed_0", "seed_1", "seed_2"}
    assert report.alignment["sp"].held_out_games == 4 and len(report.alignment["sp"].element) == 3
    shared = report.shared_factor["sp x op"]  # sp seeds 0-2 x op seeds 0-1, both seatings: 2 x 2 pairs share a seed
    assert (shared.shared_pairs, shared.other_pairs) == (4, 8)
    gap = report.gap_share
    assert gap is not None and (gap.plain_xp, gap.aligned_xp) == (report.alignment["sp"].plain_xp, report.alignment["sp"].aligned_xp)
    expected = (3.0 - gap.plain_xp) / (gap.aligned_xp - gap.plain_xp) if gap.aligned_xp > gap.plain_xp else math.nan
    assert gap.cells["SP"] == pytest.approx(expected, nan_ok=True)
    text = render_conventions(report)
    assert "## Share of the colour-alignable gap" in text and "| sp | seed_1 | [1, 2, 0] |" in text
    assert type(report).from_json(report.to_json()).to_json() == report.to_json()


def test_report_refuses_a_scale_without_induced_conventions() -> None:
    with pytest.raises(ReproduceError, match=r"induced conventions \['colour', 'induced', 'touched'\], not 'cpu'"):
        convention_report("cpu", {})
