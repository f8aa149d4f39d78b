"""Fixtures for the reproduce tests: a scratch copy of the claim-1 experiment's registered design, scaled down to seconds."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from eqc.domains.hanabi.reproduce import SCALES
from eqc.domains.hanabi.reproduce.run import REPOSITORY

#: The pi of the scratch design: two of the six, on both streams (4 agents per pool).
TOUCHED_AGENTS = ("slots_012", "slots_021")


@pytest.fixture
def touched_pools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``<tmp>/results/touched/agents``: copies of the shipped agents of the claim-1 experiment for the pi of
    :data:`TOUCHED_AGENTS` on both streams, laid out as shipped (stream 0 of ``sp`` under ``<tmp>/results/colour/agents``),
    with scale ``touched`` patched to that design, 4 games per pair and 1 x 4 relabelled games."""
    scale = SCALES["touched"]
    assert scale.design is not None
    shipped, agents = REPOSITORY / "results" / "touched" / "agents", tmp_path / "results" / "touched" / "agents"
    for folders in scale.pool_folders.values():
        for folder in folders:
            for agent in TOUCHED_AGENTS:
                shutil.copytree(shipped / folder / agent, agents / folder / agent)
    monkeypatch.setitem(SCALES, "touched", dataclasses.replace(scale, games=4, relabel_elements=1, relabel_games=4,
                                                               design=dataclasses.replace(scale.design, agents=TOUCHED_AGENTS)))
    return agents
