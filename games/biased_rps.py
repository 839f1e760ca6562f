"""Biased Rock, Paper, Scissors, the first game of the AIJ 2016 study (Section 6.1).

A one-shot simultaneous game (Shafiei, Sturtevant and Schaeffer 2009) whose payoffs to
player 0 (rows: its rock, paper, scissors, actions 0, 1, 2; columns the same for player
1) are the paper's Figure::

            r     p     s
      R     0   -25    50
      P    25     0    -5
      S   -50     5     0

times ``scale``. The matrix is skew-symmetric, so the value is 0 and the unique
equilibrium has both players play (1/16, 10/16, 5/16); UCT's visit counts are known not
to converge to it. The paper defines no repeated or stacked variant;
``repeated_game(stage_game=smmcts_biased_rps(),num_repetitions=k)`` plays it ``k`` times.

Parameters:
  scale   a positive factor on every payoff                                       [1.0]

The paper prints the integers; GTLibrary's code (``domain/rps``) plays the same matrix
divided by 100, the units of the paper's exploitability figures for this game
(``scale=0.01``). OpenSpiel's ``matrix_brps`` is the same game at ``scale=1``; this one is
an explicit tree (``game.tree``, :mod:`smmcts_spiel.games.explicit_tree`), so the exact
solver and the explicit-tree engines read it directly.
"""

from __future__ import annotations

import math

import pyspiel

from smmcts_spiel import trees as mt
from smmcts_spiel.games import explicit_tree

SHORT_NAME = "smmcts_biased_rps"
PAYOFFS = ((0, -25, 50),
           (25, 0, -5),
           (-50, 5, 0))
#: The unique equilibrium strategy of both players (rock, paper, scissors).
EQUILIBRIUM = (1 / 16, 10 / 16, 5 / 16)
_DEFAULT_PARAMS = {"scale": 1.0}
_GAME_TYPE = explicit_tree.game_type(SHORT_NAME, "SM-MCTS Biased Rock, Paper, Scissors",
                                     _DEFAULT_PARAMS)


def tree_from_params(params: dict) -> mt.MatrixTree:
    """The one-stage tree of the scaled payoff matrix."""
    scale = params["scale"]
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"{SHORT_NAME}: scale must be a positive finite number, got {scale}")
    root = mt.MatrixStage(tuple(tuple(float(u * scale) for u in row) for row in PAYOFFS))
    return mt.MatrixTree(root, {"name": SHORT_NAME, "generator_parameters": dict(params)})


class BiasedRPSGame(explicit_tree.ExplicitTreeGame):
    """Biased Rock, Paper, Scissors with payoffs times ``scale``."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        super().__init__(_GAME_TYPE, tree_from_params(params), params)


pyspiel.register_game(_GAME_TYPE, BiasedRPSGame)
