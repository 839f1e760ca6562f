"""A matrix tree as flat arrays: the node numbering shared by the solver and the engine.

Nodes are numbered in :func:`smmcts_spiel.trees.iter_nodes` order (depth first, parents
before children), so node ``h`` of a :class:`FlatTree` is the ``h``-th path of
:func:`smmcts_spiel.trees.iter_paths` and of :class:`smmcts_spiel.exact.solver.TreeSolution`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from smmcts_spiel.trees.nodes import ChanceStage, MatrixStage, MatrixTree, Node, is_leaf, iter_nodes

LEAF, MATRIX, CHANCE = 0, 1, 2


@dataclass(frozen=True)
class FlatTree:
    """A matrix tree as arrays, nodes numbered depth first (parents before children).

    Children of matrix node ``h`` are ``children[child_start[h] + i * cols[h] + j]``; of a
    chance node ``children[child_start[h] + k]`` with probability ``probs[...]``. Player 1's
    per-action statistics of ``h`` live at ``p1_offset[h] : p1_offset[h] + rows[h]``,
    player 2's at ``p2_offset[h] : p2_offset[h] + cols[h]``.
    """

    kind: np.ndarray
    value: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    child_start: np.ndarray
    children: np.ndarray
    probs: np.ndarray
    p1_offset: np.ndarray
    p2_offset: np.ndarray
    num_p1_slots: int
    num_p2_slots: int
    max_actions: int
    max_path: int
    scale: float

    @property
    def num_nodes(self) -> int:
        return len(self.kind)


def flatten(tree: MatrixTree | Node) -> FlatTree:
    """The arrays of ``tree`` (a MatrixTree or its root node)."""
    root = tree.root if isinstance(tree, MatrixTree) else tree
    if is_leaf(root):
        raise ValueError("the game tree is a bare leaf; SM-MCTS needs a matrix or chance stage")
    nodes = list(iter_nodes(root))
    num = len(nodes)
    kind = np.zeros(num, np.int8)
    value = np.zeros(num)
    rows = np.zeros(num, np.int32)
    cols = np.zeros(num, np.int32)
    child_start = np.zeros(num, np.int32)
    p1_offset = np.zeros(num, np.int32)
    p2_offset = np.zeros(num, np.int32)
    children: list[int] = []
    probs: list[float] = []
    slots1 = slots2 = 0
    # iter_nodes is a pre-order walk, so a node's subtree is the next size(node) entries.
    index = 0

    def visit(node, depth: int) -> int:
        nonlocal index, slots1, slots2
        h = index
        index += 1
        if isinstance(node, MatrixStage):
            m, n = node.shape
            kind[h], rows[h], cols[h] = MATRIX, m, n
            p1_offset[h], p2_offset[h] = slots1, slots2
            slots1 += m
            slots2 += n
            start = len(children)
            child_start[h] = start
            children.extend([0] * (m * n))
            probs.extend([0.0] * (m * n))
            longest = 0
            for i, row in enumerate(node.children):
                for j, child in enumerate(row):
                    children[start + i * n + j] = index
                    longest = max(longest, visit(child, depth + 1))
            return longest + 1
        if isinstance(node, ChanceStage):
            k = len(node.outcomes)
            kind[h], rows[h], cols[h] = CHANCE, k, 1
            start = len(children)
            child_start[h] = start
            children.extend([0] * k)
            probs.extend([p for p, _ in node.outcomes])
            longest = 0
            for o, (_, child) in enumerate(node.outcomes):
                children[start + o] = index
                longest = max(longest, visit(child, depth + 1))
            return longest + 1
        kind[h] = LEAF
        value[h] = float(node)
        return 0

    max_path = visit(root, 0)
    assert index == num
    scale = float(np.max(np.abs(value[kind == LEAF])))
    return FlatTree(
        kind=kind, value=value, rows=rows, cols=cols, child_start=child_start,
        children=np.asarray(children, np.int32), probs=np.asarray(probs, np.float64),
        p1_offset=p1_offset, p2_offset=p2_offset, num_p1_slots=slots1, num_p2_slots=slots2,
        max_actions=int(max(rows.max(), cols.max(), 1)), max_path=max_path + 1,
        scale=scale if scale > 0 else 1.0,
    )
