"""The lever game: environment and symmetry, training under SP / OP / G-OP / EQ / SP+symmetrizer, cross-play; and the
ERS paper's toy games (iterated three-lever, Cat/Dog), where expected-return symmetries exceed the game's."""

from eqc.domains.lever.cat_dog import CatDogGame
from eqc.domains.lever.ers import OtherPlayOptima, learn_toy_group, other_play_optima, self_play_optima
from eqc.domains.lever.evaluate import cross_play_matrix, lever_cross_play
from eqc.domains.lever.experiment import lever_experiment
from eqc.domains.lever.game import (
    DEFAULT_PAYOFFS,
    LeverGame,
    equal_payoff_classes,
    lever_cyclic_subgroup,
    lever_game,
    lever_group,
)
from eqc.domains.lever.game_tree import GameTree, expected_return, game_tree
from eqc.domains.lever.iterated import IteratedLeverGame
from eqc.domains.lever.neural_maps import exact_returns, fit_policies, learn_toy_maps, other_play_value, train_other_play
from eqc.domains.lever.plots import plot_cross_play
from eqc.domains.lever.train import RULES, LeverConfig, LeverPool, train_pool, train_pools

__all__ = [
    "DEFAULT_PAYOFFS",
    "RULES",
    "CatDogGame",
    "GameTree",
    "IteratedLeverGame",
    "LeverConfig",
    "LeverGame",
    "LeverPool",
    "OtherPlayOptima",
    "cross_play_matrix",
    "equal_payoff_classes",
    "exact_returns",
    "expected_return",
    "fit_policies",
    "game_tree",
    "learn_toy_group",
    "learn_toy_maps",
    "lever_cross_play",
    "lever_cyclic_subgroup",
    "lever_experiment",
    "lever_game",
    "lever_group",
    "other_play_optima",
    "other_play_value",
    "plot_cross_play",
    "self_play_optima",
    "train_other_play",
    "train_pool",
    "train_pools",
]
