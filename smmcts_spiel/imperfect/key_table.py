"""Rows of information sets in arrays: an open-addressing hash table from information key
to row, used by the compiled searches over information sets (OOS, IS-SM-MCTS).

A search keeps one row per information set in its tree (the kernel's information keys
include the player, so both players share one table) in arrays of its own
(``regrets[row, a]``, ...); ``hash_keys`` / ``hash_nodes`` map a key to its row. The table
is kept at most half full (:func:`capacity_for`), so :func:`find` ends at an empty slot.
"""

from __future__ import annotations

import numba
import numpy as np

EMPTY = -1  # an unused hash slot (information keys are >= 0)


@numba.njit(inline="always")
def _slot(key, mask):
    h = np.uint64(key) * np.uint64(11400714819323198485)
    return np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))


@numba.njit(cache=True)
def find(key, hash_keys, hash_nodes):
    """The row of ``key``, or -1."""
    mask = hash_keys.shape[0] - 1
    s = _slot(key, mask)
    while hash_keys[s] != EMPTY:
        if hash_keys[s] == key:
            return hash_nodes[s]
        s = (s + 1) & mask
    return -1


@numba.njit(cache=True)
def insert(key, node, hash_keys, hash_nodes):
    mask = hash_keys.shape[0] - 1
    s = _slot(key, mask)
    while hash_keys[s] != EMPTY:
        s = (s + 1) & mask
    hash_keys[s] = key
    hash_nodes[s] = node


@numba.njit(cache=True)
def rehash(node_keys, num_nodes, capacity):
    """A table of ``capacity`` slots (a power of 2) holding the first ``num_nodes`` keys."""
    hash_keys = np.full(capacity, EMPTY, np.int64)
    hash_nodes = np.zeros(capacity, np.int64)
    for node in range(num_nodes):
        insert(node_keys[node], node, hash_keys, hash_nodes)
    return hash_keys, hash_nodes


def empty_table(capacity: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """(hash_keys, hash_nodes) of an empty table."""
    return np.full(capacity, EMPTY, np.int64), np.zeros(capacity, np.int64)


def capacity_for(rows: int, capacity: int) -> int:
    """The table size (a power of 2, at least ``capacity``) that keeps ``rows`` keys at most
    half full."""
    while 2 * rows > capacity:
        capacity *= 2
    return capacity


def enlarged(array: np.ndarray, rows: int, used: int) -> np.ndarray:
    """``array`` with ``rows`` rows, the first ``used`` copied, the others zero."""
    bigger = np.zeros((rows,) + array.shape[1:], array.dtype)
    bigger[:used] = array[:used]
    return bigger
