"""The random games of Lisy et al. (NIPS 2013): stacked simultaneous matrix stages.

``smmcts_random_stacked_matrix(depth=2,branching=2,seed=0,utilities=uniform)`` is a tree
of ``branching x branching`` simultaneous stages, ``depth`` stages deep, whose leaf
utilities for player 1 are drawn from U[0, 1] (``uniform``) or uniformly from
{0, 0.5, 1} (``grid3``) by a generator seeded with ``seed``: the same parameters always
give the same game, the tree of
``smmcts_spiel.trees.random_stacked_matrix(depth, branching_p1, branching_p2,
chance_branching=..., utilities=..., seed=...)``.

Parameters:
  depth             number of simultaneous stages (>= 1)                         [2]
  branching         actions per player at every stage (>= 1)                     [2]
  branching_p1      player 1's actions; 0 means "use branching"                  [0]
  branching_p2      player 2's actions; 0 means "use branching"                  [0]
  seed              seed of the leaf utilities (>= 0)                            [0]
  utilities         uniform (U[0, 1]), grid3 ({0, 0.5, 1}) or edge_sum (each joint
                    action worth -1, 0 or +1, a leaf the sum on its path: the AIJ
                    2016 study's correlated random games)                       [uniform]
  chance_branching  0 for none, else equally likely chance outcomes after every
                    joint action (>= 2)                                          [0]

Returns are (u, -u) with u the leaf utility in [0, 1], so exploitability and values are in
player 1's [0, 1] utility units, as in the paper. ``game.tree`` holds the explicit tree and
``state.node`` the current node (see :mod:`smmcts_spiel.games.explicit_tree`).
"""

from __future__ import annotations

import pyspiel

from smmcts_spiel import trees as mt
from smmcts_spiel.games import explicit_tree

SHORT_NAME = "smmcts_random_stacked_matrix"
_DEFAULT_PARAMS = {
    "depth": 2,
    "branching": 2,
    "branching_p1": 0,
    "branching_p2": 0,
    "seed": 0,
    "utilities": "uniform",
    "chance_branching": 0,
}
_GAME_TYPE = explicit_tree.game_type(SHORT_NAME, "SM-MCTS Random Stacked Matrix Game",
                                     _DEFAULT_PARAMS)


def tree_from_params(params: dict) -> mt.MatrixTree:
    """The game's tree for the given parameters (missing ones take their defaults)."""
    p = {**_DEFAULT_PARAMS, **params}
    unknown = set(p) - set(_DEFAULT_PARAMS)
    if unknown:
        raise ValueError(f"{SHORT_NAME}: unknown parameters {sorted(unknown)}; "
                         f"known: {', '.join(_DEFAULT_PARAMS)}")
    for name in ("branching", "branching_p1", "branching_p2", "seed"):
        minimum = 1 if name == "branching" else 0
        if p[name] < minimum:
            raise ValueError(f"{SHORT_NAME}: {name} must be an integer >= {minimum}, "
                             f"got {p[name]}")
    b1 = p["branching_p1"] or p["branching"]
    b2 = p["branching_p2"] or p["branching"]
    if b1 * b2 < 2:
        raise ValueError(
            f"{SHORT_NAME}: branching (or branching_p1 x branching_p2) must give at least 2 "
            f"joint actions per stage; got {b1} x {b2}. Use e.g. branching=2.")
    if p["utilities"] not in mt.UTILITY_DISTRIBUTIONS:
        raise ValueError(f"{SHORT_NAME}: utilities must be one of "
                         f"{', '.join(mt.UTILITY_DISTRIBUTIONS)}; got {p['utilities']!r}")
    try:
        root = mt.random_stacked_matrix(
            p["depth"], b1, b2, chance_branching=p["chance_branching"],
            utilities=p["utilities"], seed=p["seed"])
    except mt.MatrixTreeError as e:
        raise ValueError(f"{SHORT_NAME}: {e}") from None
    return mt.MatrixTree(root, {"name": SHORT_NAME, "generator_parameters": dict(p)})


class RandomStackedMatrixGame(explicit_tree.ExplicitTreeGame):
    """The paper's random game for the given parameters."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        super().__init__(_GAME_TYPE, tree_from_params(params), params)


pyspiel.register_game(_GAME_TYPE, RandomStackedMatrixGame)
