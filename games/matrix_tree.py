"""An explicit tree of matrix stages as a pyspiel game: written, shared and loaded by name.

``smmcts_matrix_tree(file=<path>)`` loads a tree in the JSON format of
:mod:`smmcts_spiel.matrix_tree` (``{"format": "smmcts_matrix_tree", "version": 1,
"root": ...}``). ``smmcts_matrix_tree(tree=<compact tree>)`` takes the tree inline.

Exactly one of the two parameters must be given. JSON cannot go inline in a game string;
the compact form of :mod:`smmcts_spiel.trees.compact` can::

    node   := number                      leaf: player 1's utility (player 2 gets -u)
            | [ row row ... ]             matrix stage, one row per player-1 action
            | { p:node p:node ... }       chance stage; p a number or a fraction like 1/3
    row    := [ node node ... ]           one entry per player-2 action

Items are separated by spaces or ``;``. Matching pennies with utilities in {0, 1} is
``smmcts_matrix_tree(tree=[[1 0] [0 1]])``; a coin flip before it is
``tree={1/2:[[1 0] [0 1]] 1/2:[[0 1] [1 0]]}``. :func:`game_string` writes the compact
form of any tree and :func:`load_tree_game` loads it. A game loaded from ``file=`` stores
the path in its game string, so a serialised state reads the file again on
deserialisation; the path must not contain ``,`` ``(`` ``)`` or ``=``.

Conventions (row = player 1's action, column = player 2's, chance outcome ``k`` =
``outcomes[k]``, returns ``(u, -u)``, ``game.tree`` and ``state.node``) are those of
:mod:`smmcts_spiel.games.explicit_tree`.
"""

from __future__ import annotations

import pyspiel

from smmcts_spiel import trees as mt
from smmcts_spiel.games import explicit_tree

SHORT_NAME = "smmcts_matrix_tree"
_DEFAULT_PARAMS = {"file": "", "tree": ""}
_GAME_TYPE = explicit_tree.game_type(SHORT_NAME, "SM-MCTS Explicit Matrix Tree Game",
                                     _DEFAULT_PARAMS)


def game_string(tree: mt.MatrixTree | mt.Node) -> str:
    """The ``pyspiel.load_game`` string of the game over ``tree`` (inline form)."""
    return f"{SHORT_NAME}(tree={mt.format_compact(tree)})"


def load_tree_game(tree: mt.MatrixTree | mt.Node) -> pyspiel.Game:
    """The registered game over ``tree``; its metadata is kept in ``game.tree``."""
    game = pyspiel.load_game(game_string(tree))
    if isinstance(tree, mt.MatrixTree):
        game.tree = mt.MatrixTree(game.tree.root, dict(tree.metadata))
    return game


def tree_from_params(params: dict) -> mt.MatrixTree:
    """The tree named by ``file`` or given inline by ``tree`` (exactly one of them)."""
    path, inline = params.get("file", ""), params.get("tree", "")
    if bool(path) == bool(inline):
        raise ValueError(
            f"{SHORT_NAME}: give exactly one of file=<path to a JSON matrix tree> or "
            f"tree=<compact tree, e.g. [[1 0] [0 1]]>; got file={path!r}, tree={inline!r}")
    try:
        return mt.parse_compact(inline) if inline else mt.load(path)
    except mt.MatrixTreeError as e:
        raise ValueError(f"{SHORT_NAME}: {'tree' if inline else 'file'}: {e}") from None


class MatrixTreeGame(explicit_tree.ExplicitTreeGame):
    """The game over the tree given by the ``file`` or ``tree`` parameter."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        super().__init__(_GAME_TYPE, tree_from_params(params), params)


pyspiel.register_game(_GAME_TYPE, MatrixTreeGame)
