"""The explicit-tree games (``smmcts_random_stacked_matrix``, ``smmcts_matrix_tree``,
``smmcts_biased_rps``) as a numba game kernel.

The state is the node number in :func:`smmcts_spiel.trees.flatten`'s order; the tree's
arrays are the kernel's parameters: ints ``[num_nodes, kind, rows, cols, child_start,
children]`` and floats ``[value, probs]``, concatenated. Actions follow
:mod:`smmcts_spiel.games.explicit_tree`: row ``i`` is player 1's action ``i``, column ``j``
player 2's action ``j``, chance outcome ``k`` is action ``k``; a leaf ``u`` returns
``(u, -u)``. The "heuristic" evaluator of these games is the random rollout (they have no
game-specific knowledge to use).
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel import trees
from smmcts_spiel.games import explicit_tree
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL
from smmcts_spiel.trees.flat import LEAF, MATRIX

SHORT_NAMES = ("smmcts_random_stacked_matrix", "smmcts_matrix_tree", "smmcts_biased_rps")
#: The leaf evaluator SMMCTSBot uses by default (no heuristic: leaves are arbitrary).
DEFAULT_EVALUATOR = "random_rollout"
STATE_SIZE = 1
_KIND, _ROWS, _COLS, _START, _CHILDREN = range(5)  # int blocks after the header


def parameters(game) -> tuple[np.ndarray, np.ndarray]:
    """The flattened tree of ``game`` as the kernel's (int, float) parameter arrays."""
    flat = trees.flatten(explicit_tree.tree_of(game))
    ints = np.concatenate([[flat.num_nodes], flat.kind, flat.rows, flat.cols,
                           flat.child_start, flat.children]).astype(np.int64)
    floats = np.concatenate([flat.value, flat.probs]).astype(np.float64)
    return ints, floats


def limits(params: np.ndarray) -> tuple[int, int, int]:
    """(most actions of a player, most chance outcomes, most nodes on a root-leaf path)."""
    n = int(params[0])
    kind = params[1:1 + n]
    rows = params[1 + n:1 + 2 * n]
    cols = params[1 + 2 * n:1 + 3 * n]
    matrix = kind == MATRIX
    actions = int(max(rows[matrix].max(initial=1), cols[matrix].max(initial=1)))
    outcomes = int(rows[~matrix & (kind != LEAF)].max(initial=1))
    return actions, outcomes, _depth(params) + 1


def _depth(params) -> int:
    """Nodes on the longest root-to-leaf path (nodes are numbered parents first)."""
    n = int(params[0])
    depth = np.ones(n, np.int64)
    for h in range(n - 1, -1, -1):
        if params[1 + h] != LEAF:
            width = params[1 + n + h] * (params[1 + 2 * n + h] if params[1 + h] == MATRIX else 1)
            start = params[1 + 3 * n + h]
            kids = params[1 + 4 * n + start:1 + 4 * n + start + width]
            depth[h] = 1 + depth[kids].max()
    return int(depth[0])


@numba.njit(cache=True)
def _field(params, block, node):
    return params[1 + block * params[0] + node]


@numba.njit(cache=True)
def initial_state(params):
    return np.zeros(STATE_SIZE, np.int64)


@numba.njit(cache=True)
def status(state, params, data):
    kind = _field(params, _KIND, state[0])
    if kind == LEAF:
        return TERMINAL
    return DECISION if kind == MATRIX else CHANCE


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if _field(params, _KIND, state[0]) != MATRIX:  # a leaf or a chance node
        return 0
    k = _field(params, _ROWS if player == 0 else _COLS, state[0])
    for a in range(k):
        out[a] = a
    return k


@numba.njit(cache=True)
def chance_outcomes(state, params, data, outcomes, probs):
    node = state[0]
    k = _field(params, _ROWS, node)
    start = _field(params, _START, node)
    for o in range(k):
        outcomes[o] = o
        probs[o] = data[params[0] + start + o]
    return k


@numba.njit(cache=True)
def _child(params, node, index):
    return params[1 + 4 * params[0] + _field(params, _START, node) + index]


@numba.njit(cache=True)
def apply_chance(state, params, data, outcome):
    state[0] = _child(params, state[0], outcome)


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    node = state[0]
    state[0] = _child(params, node, action0 * _field(params, _COLS, node) + action1)


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 1's utility at a leaf (0 elsewhere)."""
    if _field(params, _KIND, state[0]) != LEAF:
        return 0.0
    return data[state[0]]


@numba.njit(cache=True)
def rewards(state, params, data):
    """Player 1's reward: the leaf's utility, paid at the end."""
    return returns(state, params, data)


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """Player 1's utility after uniformly random joint actions (chance by its odds)."""
    while True:
        node = state[0]
        kind = _field(params, _KIND, node)
        if kind == LEAF:
            return data[node]
        k = _field(params, _ROWS, node)
        if kind == MATRIX:
            k *= _field(params, _COLS, node)
            state[0] = _child(params, node, min(int(rng.random() * k), k - 1))
        else:
            u = rng.random()
            start = params[0] + _field(params, _START, node)
            o = 0
            acc = data[start]
            while o < k - 1 and u >= acc:
                o += 1
                acc += data[start + o]
            state[0] = _child(params, node, o)
