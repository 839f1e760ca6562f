"""Explicit trees of matrix stages: the paper's random and worst-case games as plain data.

One representation serves the registered pyspiel games (``smmcts_random_stacked_matrix``,
``smmcts_matrix_tree``), the exact solver and the SM-MCTS engine for explicit trees, so a
game found by one experiment can be written to JSON (:mod:`.json_format`), shared, and
loaded by all of them.

A node is one of:

* a leaf: a ``float``, player 1's utility (player 2 gets its negation);
* a :class:`MatrixStage`: both players choose simultaneously, ``children[i][j]`` is the
  subgame after player 1 plays row ``i`` and player 2 plays column ``j``;
* a :class:`ChanceStage`: nature picks ``outcomes[k] = (probability, child)``.

A node's :data:`Path` is one step per stage above it: ``(i, j)`` for a joint action,
``(k,)`` for a chance outcome. :func:`iter_nodes` and :func:`iter_paths` walk the tree in
one fixed pre-order, the node numbering that the solver and the engines share.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeGuard

import numpy as np

#: Limits on explicit trees, checked before building or reading one: nodes (a node is a
#: Python object of ~100 bytes), stages from the root to a leaf (the tree functions recurse
#: once per stage) and the bytes of a tree file.
MAX_NODES = 5_000_000
MAX_STAGES = 200
MAX_FILE_BYTES = 200_000_000


@dataclass(frozen=True)
class MatrixStage:
    """A simultaneous-move stage; ``children[i][j]`` follows row ``i`` and column ``j``."""

    children: tuple[tuple[Node, ...], ...]

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.children), len(self.children[0])


@dataclass(frozen=True)
class ChanceStage:
    """A chance stage; ``outcomes[k] = (probability, child)``."""

    outcomes: tuple[tuple[float, Node], ...]


Node = float | MatrixStage | ChanceStage


@dataclass(frozen=True)
class MatrixTree:
    """A whole game: its root node plus free-form metadata (name, provenance)."""

    root: Node
    metadata: dict = field(default_factory=dict, compare=False)


class MatrixTreeError(ValueError):
    """A matrix tree (or its JSON) is malformed; the message says where and why."""


#: Where a node sits in a tree: one step per stage above it, ``(i, j)`` for the joint
#: action taken at a matrix stage and ``(k,)`` for the outcome of a chance stage.
Path = tuple[tuple[int, ...], ...]


def matrix_game(payoffs) -> MatrixStage:
    """A one-stage game from a 2-D array of player 1's utilities."""
    rows = np.asarray(payoffs, dtype=float)
    if rows.ndim != 2 or rows.size == 0:
        raise MatrixTreeError(f"payoffs must be a non-empty 2-D array, got shape {rows.shape}")
    return MatrixStage(tuple(tuple(float(v) for v in row) for row in rows))


# ----------------------------------------------------------------------------------------
# Queries


def is_leaf(node: Node) -> TypeGuard[float]:
    return not isinstance(node, (MatrixStage, ChanceStage))


def depth(node: Node) -> int:
    """Number of matrix stages on the longest path (chance stages do not count)."""
    if isinstance(node, MatrixStage):
        return 1 + max(depth(c) for row in node.children for c in row)
    if isinstance(node, ChanceStage):
        return max(depth(c) for _, c in node.outcomes)
    return 0


def max_game_length(node: Node) -> int:
    """Longest path in moves, one per matrix stage and one per chance stage."""
    if isinstance(node, MatrixStage):
        return 1 + max(max_game_length(c) for row in node.children for c in row)
    if isinstance(node, ChanceStage):
        return 1 + max(max_game_length(c) for _, c in node.outcomes)
    return 0


def iter_nodes(node: Node) -> Iterator[Node]:
    """All nodes, depth first, parents before children."""
    yield node
    if isinstance(node, MatrixStage):
        for row in node.children:
            for c in row:
                yield from iter_nodes(c)
    elif isinstance(node, ChanceStage):
        for _, c in node.outcomes:
            yield from iter_nodes(c)


def max_actions(node: Node) -> int:
    """Largest number of actions any player has at any stage."""
    return max((max(n.shape) for n in iter_nodes(node) if isinstance(n, MatrixStage)), default=1)


def max_chance_outcomes(node: Node) -> int:
    return max((len(n.outcomes) for n in iter_nodes(node) if isinstance(n, ChanceStage)),
               default=0)


def utility_range(node: Node) -> tuple[float, float]:
    leaves = [float(n) for n in iter_nodes(node) if is_leaf(n)]
    return min(leaves), max(leaves)


def iter_paths(node: Node, path: Path = ()) -> Iterator[tuple[Path, Node]]:
    """``(path, node)`` for every node, in :func:`iter_nodes` order."""
    yield path, node
    if isinstance(node, MatrixStage):
        for i, row in enumerate(node.children):
            for j, child in enumerate(row):
                yield from iter_paths(child, path + ((i, j),))
    elif isinstance(node, ChanceStage):
        for k, (_, child) in enumerate(node.outcomes):
            yield from iter_paths(child, path + ((k,),))


def leaf_value(node) -> float:
    """A leaf's utility; a clear error for anything that is not a tree node."""
    if isinstance(node, (bool, str)) or not isinstance(node, (int, float, np.floating, np.integer)):
        raise MatrixTreeError(f"not a matrix tree node: {node!r} (expected a number, "
                              "MatrixStage or ChanceStage; build trees with smmcts_spiel.trees)")
    return float(node)
