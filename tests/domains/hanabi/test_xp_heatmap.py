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
