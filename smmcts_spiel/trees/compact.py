"""The compact one-line form of a matrix tree, which fits in a pyspiel game string.

pyspiel's game-string parser splits on ``,`` ``(`` ``)`` and ``=``, so JSON cannot go
inline; this form uses none of those characters::

    node   := number                      leaf: player 1's utility (player 2 gets -u)
            | [ row row ... ]             matrix stage, one row per player-1 action
            | { p:node p:node ... }       chance stage; p a number or a fraction like 1/3
    row    := [ node node ... ]           one entry per player-2 action

Items are separated by spaces or ``;``. Matching pennies with utilities in {0, 1} is
``[[1 0] [0 1]]``; a coin flip before it is ``{1/2:[[1 0] [0 1]] 1/2:[[0 1] [1 0]]}``.
:func:`format_compact` writes any tree so that :func:`parse_compact` reads it back exactly.
"""

from __future__ import annotations

import fractions
import re
from typing import NoReturn

from smmcts_spiel.trees.json_format import FORMAT_NAME, FORMAT_VERSION, from_json
from smmcts_spiel.trees.nodes import (
    MAX_STAGES,
    ChanceStage,
    MatrixStage,
    MatrixTree,
    MatrixTreeError,
    Node,
)

_TOKEN = re.compile(r"[\[\]{}:]|[^\s\[\]{}:;]+")


def parse_compact(text: str) -> MatrixTree:
    """The tree written in the compact form; raises MatrixTreeError naming the problem."""
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text)]
    pos = 0

    def fail(message: str) -> NoReturn:
        where = tokens[pos][1] if pos < len(tokens) else len(text)
        shown = text if len(text) <= 120 else f"{text[:100]}...({len(text)} characters)"
        raise MatrixTreeError(f"{message} at character {where} of {shown!r}; "
                              "expected the compact form, e.g. [[1 0] [0 1]]")

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
            raise MatrixTreeError(f"{kind} {tok!r} at character "
                                  f"{tokens[pos_back][1]} is not a number") from None

    def node(stages: int = 0):
        tok = peek()
        if tok in ("[", "{") and stages >= MAX_STAGES:
            fail(f"the tree is deeper than {MAX_STAGES} stages, the limit")
        if tok == "[":
            take("[")
            rows = []
            while peek() == "[":
                take("[")
                row = []
                while peek() not in ("]", None):
                    row.append(node(stages + 1))
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
                outcomes.append([p, node(stages + 1)])
            take("}")
            return {"chance": outcomes}
        if tok in (None, "]", "}", ":"):
            fail(f"expected a number, '[' or '{{', found {tok!r}")
        return number("leaf utility")

    root = node()
    if pos != len(tokens):
        fail(f"unexpected {peek()!r} after the tree")
    return from_json({"format": FORMAT_NAME, "version": FORMAT_VERSION, "root": root})


def format_compact(tree: MatrixTree | Node) -> str:
    """The compact form of a tree; ``parse_compact`` reads it back exactly."""
    node = tree.root if isinstance(tree, MatrixTree) else tree
    if isinstance(node, MatrixStage):
        return "[" + " ".join("[" + " ".join(format_compact(c) for c in row) + "]"
                              for row in node.children) + "]"
    if isinstance(node, ChanceStage):
        return "{" + " ".join(f"{_number(p)}:{format_compact(c)}"
                              for p, c in node.outcomes) + "}"
    return _number(node)


def _number(x: float) -> str:
    text = repr(float(x))  # Shortest string that reads back as the same float.
    return text[:-2] if text.endswith(".0") else text
