"""The cross-play heatmap's colour scale is the game's: 0 to its perfect score, not the standard game's 25."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi import HanabiRules
from eqc.domains.hanabi.xp import XPGames, plot_xp, report, write_xp


def _colour_range(figure) -> tuple[float, float]:
    (image,) = figure.axes[0].get_images()
    return image.get_clim()


@pytest.mark.parametrize("preset", [HanabiRules(), HanabiRules.preset("mini")])
def test_the_colour_scale_runs_to_the_games_perfect_score(preset: HanabiRules) -> None:
    matrix = torch.tensor([[8.0, 1.0], [2.0, 7.5]])
    assert _colour_range(plot_xp(matrix, ["a", "b"], max_score=preset.max_score)) == (0.0, float(preset.max_score))


@pytest.mark.parametrize("bad", [0, -3, 9.0, True, None])
def test_a_max_score_that_is_no_perfect_score_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="max_score must be a positive int"):
        plot_xp(torch.zeros(2, 2), ["a", "b"], max_score=bad)  # type: ignore[arg-type]


def test_write_xp_draws_on_the_scale_of_the_game_played(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mini-Hanabi's games (perfect score 9) are drawn from 0 to 9."""
    pairs = tuple(itertools.product(range(2), repeat=2))
    scores = torch.tensor([[9, 8, 7], [1, 0, 2], [3, 1, 0], [9, 9, 8]])
    games = XPGames(num_agents=2, pairs=pairs, scores=scores, bombed_out=scores == 0,
                    moves=torch.full((4, 1, 1), -1), decks=torch.zeros(3, 18, dtype=torch.long), deck_seed=0, max_score=9)
    drawn = []
    real = report.plot_xp

    def spy(*args, **kwargs):
        figure = real(*args, **kwargs)
        drawn.append(_colour_range(figure))
        return figure

    monkeypatch.setattr(report, "plot_xp", spy)
    write_xp(tmp_path, games, [{"name": "a"}, {"name": "b"}])
    assert drawn == [(0.0, 9.0)]


def test_a_heatmap_is_drawn_again_from_its_xp_json(tmp_path) -> None:
    """``redraw_xp`` draws xp.png from xp.json alone (what ``reproduce --reuse`` does for cells it does not play again),
    on the scale it is given; a file that is not an eqc xp.json is refused by name."""
    import json

    from eqc.domains.hanabi.xp.report import FORMAT, redraw_xp

    record = {"format": FORMAT, "games_per_pair": 10, "agents": [{"name": "a"}, {"name": "b"}],
              "summary": {"xp_mean": 4.0, "xp_sem": 0.5, "xp_pairs": 2}, "matrix": {"mean": [[8.0, 4.0], [4.0, 8.0]]}}
    (tmp_path / "xp.json").write_text(json.dumps(record))
    png = redraw_xp(tmp_path, max_score=9)
    assert png == tmp_path / "xp.png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "xp.json").write_text(json.dumps({**record, "format": "something else"}))
    with pytest.raises(ValueError, match=r"xp.json is not an xp.json written by eqc \(format 'something else'"):
        redraw_xp(tmp_path, max_score=9)
    (tmp_path / "xp.json").write_text("{")
    with pytest.raises(ValueError, match=r"is not an xp\.json written by eqc"):
        redraw_xp(tmp_path, max_score=9)


def test_the_heading_gives_the_jackknife_se_over_agents_not_the_sem_over_pairs() -> None:
    """The unit is the agent: the heading's ± is pool_summary's jackknife SE (the touched EQC cell: 0.42, where the SEM
    over its 132 ordered pairs is 0.15); with fewer than 3 agents there is none."""
    import json

    from eqc.domains.hanabi.xp.report import heatmap_title
    from eqc.evaluation import pool_summary

    root = Path(__file__).resolve().parents[3]
    record = json.loads((root / "results/touched/xp/table1/eqc/xp.json").read_text())
    mean = torch.tensor(record["matrix"]["mean"], dtype=torch.float64)
    title = heatmap_title(mean, record["games_per_pair"])
    assert title.startswith("XP 6.25 ± 0.42 (jackknife over 12 agents; 132 ordered pairs)\n1000 games per pair")
    assert f"{pool_summary(mean).sem:.2f}" == "0.42" and f"{record['summary']['xp_sem']:.2f}" == "0.15"
    assert heatmap_title(torch.tensor([[8.0, 4.0], [4.0, 8.0]]), 10).startswith("XP 4.00 SE n/a (jackknife over 2 agents")
    assert heatmap_title(torch.tensor([[8.0]]), 10).startswith("one agent")
