"""An explicit tree of matrix stages as a pyspiel game: written, shared and loaded by name.

``smmcts_matrix_tree(file=<path>)`` loads a tree in the JSON format of
:mod:`smmcts_spiel.trees.json_format` (``{"format": "smmcts_matrix_tree", "version": 1,
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
the path and the SHA-256 of the file's bytes (``sha256=``) in its game string, so a
serialised state reads the file again on deserialisation and refuses it if it changed;
the path must not contain ``,`` ``(`` ``)`` or ``=``.

Conventions (row = player 1's action, column = player 2's, chance outcome ``k`` =
``outcomes[k]``, returns ``(u, -u)``, ``game.tree`` and ``state.node``) are those of
:mod:`smmcts_spiel.games.explicit_tree`.
"""

from __future__ import annotations

import hashlib

import pyspiel

from smmcts_spiel import trees as mt
from smmcts_spiel.games import explicit_tree

SHORT_NAME = "smmcts_matrix_tree"
_DEFAULT_PARAMS = {"file": "", "tree": "", "sha256": ""}
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


def tree_from_params(params: dict) -> tuple[mt.MatrixTree, str]:
    """The tree named by ``file`` or given inline by ``tree``, and the file's SHA-256.

    Exactly one of ``file`` and ``tree`` is given; a non-empty ``sha256`` must be the hash
    of the file's bytes (the file changed since the game string was written otherwise).
    """
    path, inline = params.get("file", ""), params.get("tree", "")
    if bool(path) == bool(inline):
        raise ValueError(
            f"{SHORT_NAME}: give exactly one of file=<path to a JSON matrix tree> or "
            f"tree=<compact tree, e.g. [[1 0] [0 1]]>; got file={path!r}, tree={inline!r}")
    if inline:
        if params.get("sha256"):
            raise ValueError(f"{SHORT_NAME}: sha256= goes with file=, not with tree=")
        try:
            return mt.parse_compact(inline), ""
        except mt.MatrixTreeError as e:
            raise ValueError(f"{SHORT_NAME}: tree: {e}") from None
    try:
        with open(path, "rb") as f:
            data = f.read(mt.MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ValueError(f"{SHORT_NAME}: file: cannot read matrix tree file {path!r}: "
                         f"{e.strerror}") from None
    if len(data) > mt.MAX_FILE_BYTES:
        raise ValueError(f"{SHORT_NAME}: file: {path} is larger than "
                         f"{mt.MAX_FILE_BYTES} bytes; refusing to load it")
    digest = hashlib.sha256(data).hexdigest()
    if params.get("sha256") and params["sha256"] != digest:
        raise ValueError(
            f"{SHORT_NAME}: file: {path} changed since this game string was written "
            f"(sha256 {digest[:12]}... instead of {params['sha256'][:12]}...); restore the "
            f"file, or load the game again without sha256= to accept the new contents")
    try:
        return mt.loads(data.decode("utf-8", errors="replace")), digest
    except mt.MatrixTreeError as e:
        raise ValueError(f"{SHORT_NAME}: file: {path}: {e}") from None


class MatrixTreeGame(explicit_tree.ExplicitTreeGame):
    """The game over the tree given by the ``file`` or ``tree`` parameter."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        tree, params["sha256"] = tree_from_params(params)
        super().__init__(_GAME_TYPE, tree, params)


pyspiel.register_game(_GAME_TYPE, MatrixTreeGame)
