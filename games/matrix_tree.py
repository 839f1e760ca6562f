"""An explicit tree of matrix stages as a pyspiel game: written, shared and loaded by name.

``smmcts_matrix_tree(file=<path>)`` loads a tree in the JSON format of
:mod:`smmcts_spiel.matrix_tree` (``{"format": "smmcts_matrix_tree", "version": 1,
"root": ...}``). ``smmcts_matrix_tree(tree=<compact tree>)`` takes the tree inline.

Exactly one of the two parameters must be given. pyspiel's game-string parser splits on
``,`` ``(`` ``)`` and ``=``, so JSON cannot go inline; the compact form uses none of those
characters::

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

import fractions
import re

import pyspiel

from smmcts_spiel import matrix_tree as mt
from smmcts_spiel.games import explicit_tree

SHORT_NAME = "smmcts_matrix_tree"
_DEFAULT_PARAMS = {"file": "", "tree": ""}
_GAME_TYPE = explicit_tree.game_type(SHORT_NAME, "SM-MCTS Explicit Matrix Tree Game",
                                     _DEFAULT_PARAMS)
_TOKEN = re.compile(r"[\[\]{}:]|[^\s\[\]{}:;]+")


def parse_compact(text: str) -> mt.MatrixTree:
    """The tree written in the compact form above; raises ValueError naming the problem."""
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text)]
    pos = 0

    def fail(message: str):
        where = tokens[pos][1] if pos < len(tokens) else len(text)
        raise ValueError(f"{SHORT_NAME}: tree: {message} at character {where} of {text!r}; "
                         "expected the compact form, e.g. tree=[[1 0] [0 1]]")

    def peek() -> str | None:
        return tokens[pos][0] if pos < len(tokens) else None

    def take(expected: str | None = None) -> str:
        nonlocal pos
        tok = peek()
        if tok is None or (expected is not None and tok != expected):
            fail(f"expected {expected or 'more input'!r}, found {tok!r}")
        pos += 1
        return tok

    def number(kind: str) -> float:
        tok = take()
        try:
            return float(fractions.Fraction(tok)) if "/" in tok else float(tok)
        except (ValueError, ZeroDivisionError):
            pos_back = pos - 1
            raise ValueError(f"{SHORT_NAME}: tree: {kind} {tok!r} at character "
                             f"{tokens[pos_back][1]} is not a number") from None

    def node():
        tok = peek()
        if tok == "[":
            take("[")
            rows = []
            while peek() == "[":
                take("[")
                row = []
                while peek() not in ("]", None):
                    row.append(node())
                take("]")
                rows.append(row)
            take("]")
            return {"matrix": rows}
        if tok == "{":
            take("{")
            outcomes = []
            while peek() not in ("}", None):
                p = number("probability")
                take(":")
                outcomes.append([p, node()])
            take("}")
            return {"chance": outcomes}
        if tok in (None, "]", "}", ":"):
            fail(f"expected a number, '[' or '{{', found {tok!r}")
        return number("leaf utility")

    root = node()
    if pos != len(tokens):
        fail(f"unexpected {peek()!r} after the tree")
    try:
        return mt.from_json({"format": mt.FORMAT_NAME, "version": mt.FORMAT_VERSION,
                             "root": root})
    except mt.MatrixTreeError as e:
        raise ValueError(f"{SHORT_NAME}: tree: {e}") from None


def format_compact(tree: mt.MatrixTree | mt.Node) -> str:
    """The compact form of a tree; ``parse_compact`` reads it back exactly."""
    node = tree.root if isinstance(tree, mt.MatrixTree) else tree
    if isinstance(node, mt.MatrixStage):
        return "[" + " ".join("[" + " ".join(format_compact(c) for c in row) + "]"
                              for row in node.children) + "]"
    if isinstance(node, mt.ChanceStage):
        return "{" + " ".join(f"{_number(p)}:{format_compact(c)}"
                              for p, c in node.outcomes) + "}"
    return _number(node)


def _number(x: float) -> str:
    text = repr(float(x))  # Shortest string that reads back as the same float.
    return text[:-2] if text.endswith(".0") else text


def game_string(tree: mt.MatrixTree | mt.Node) -> str:
    """The ``pyspiel.load_game`` string of the game over ``tree`` (inline form)."""
    return f"{SHORT_NAME}(tree={format_compact(tree)})"


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
    if inline:
        return parse_compact(inline)
    try:
        return mt.load(path)
    except mt.MatrixTreeError as e:
        raise ValueError(f"{SHORT_NAME}: file: {e}") from None


class MatrixTreeGame(explicit_tree.ExplicitTreeGame):
    """The game over the tree given by the ``file`` or ``tree`` parameter."""

    def __init__(self, params: dict | None = None):
        params = {**_DEFAULT_PARAMS, **(params or {})}
        super().__init__(_GAME_TYPE, tree_from_params(params), params)


pyspiel.register_game(_GAME_TYPE, MatrixTreeGame)
