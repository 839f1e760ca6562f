"""Rows of information sets in arrays: an open-addressing hash table from information key
to row, used by the compiled searches over information sets (OOS, IS-SM-MCTS).

A search keeps one row per information set in its tree (the kernel's information keys
include the player, so both players share one table) in arrays of its own
(``regrets[row, a]``, ...); ``hash_keys`` / ``hash_nodes`` map a key to its row. The table
is kept at most half full (:func:`capacity_for`), so :func:`find` ends at an empty slot.
:class:`KeyedRows` owns these arrays and grows them between chunks of iterations;
compiled code adds a row with :func:`add`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numba
import numpy as np

from smmcts_spiel import checks

_CHECK_EVERY = 0.002  # seconds between clock checks under a time limit

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
def add(key, n, hash_keys, hash_nodes, node_keys, num_actions, counters):
    """The row of a new ``key`` (one :func:`find` did not find): row ``counters[0]``, with
    ``n`` actions. Rows past ``counters[0]`` are all zero (:class:`KeyedRows`), so its
    statistics start at zero; the caller has reserved room for it."""
    row = counters[0]
    counters[0] += 1
    node_keys[row] = key
    num_actions[row] = n
    insert(key, row, hash_keys, hash_nodes)
    return row


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


class KeyedRows:
    """The tables of a compiled search over information sets: one row per information set
    in arrays that grow between chunks of iterations, never during one.

    A subclass names its per-row statistics in ``ROW_TABLES`` (``(name, dtype)``, each
    ``rows x width``); beside them every search has ``num_actions[row]``, ``node_keys[row]``,
    ``counters[0]`` (the rows in use) and the hash table ``hash_keys`` / ``hash_nodes``.
    Rows past ``counters[0]`` stay all zero (new arrays are zero, :func:`enlarged` zeroes
    what it adds), which is what :func:`add` relies on.
    """

    ROW_TABLES: tuple[tuple[str, type], ...] = ()
    _FIRST_ROWS = 1024

    def _new_tables(self, width: int) -> None:
        """Empty tables: a fresh search."""
        rows = self._FIRST_ROWS
        for name, dtype in self.ROW_TABLES:
            setattr(self, name, np.zeros((rows, width), dtype))
        self.num_actions = np.zeros(rows, np.int64)
        self.node_keys = np.zeros(rows, np.int64)
        self.counters = np.zeros(1, np.int64)
        self.hash_keys, self.hash_nodes = empty_table()

    def _load_table_code(self) -> None:
        """Load (or compile) the table functions called from Python (:func:`find`, and
        :func:`rehash` when the table grows), so that this happens when the search is
        built rather than inside a timed search; changes nothing."""
        find(0, self.hash_keys, self.hash_nodes)
        rehash(self.node_keys, 0, self.hash_keys.shape[0])

    def _table_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.ROW_TABLES) + ("num_actions", "node_keys")

    @property
    def num_nodes(self) -> int:
        """Information sets in the tables (both players)."""
        return int(self.counters[0])

    def _reserve(self, new_rows: int) -> None:
        """Room for ``new_rows`` more rows, the hash table at most half full."""
        need = self.num_nodes + new_rows
        rows = self.node_keys.shape[0]
        if need > rows:
            rows, used = max(need, 2 * rows), self.num_nodes
            for name in self._table_names():
                setattr(self, name, enlarged(getattr(self, name), rows, used))
        capacity = capacity_for(need, self.hash_keys.shape[0])
        if capacity > self.hash_keys.shape[0]:
            self.hash_keys, self.hash_nodes = rehash(self.node_keys, self.num_nodes, capacity)

    @staticmethod
    def _run_chunks(iterate: Callable[[int], None], iterations: int | None,
                    time_limit: float | None, first_chunk: int, untimed_chunk: int) -> int:
        """Calls ``iterate(n)`` (``n`` compiled iterations, the tables reserved for them)
        until ``iterations`` or ``time_limit`` seconds (whichever first); returns the count.
        Under a time limit the chunks are sized so that the clock is read about every 2 ms
        and the last one ends near the deadline."""
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        done = 0
        if time_limit is None:
            assert iterations is not None  # check_budget: no time limit, so a count
            while done < iterations:
                n = min(untimed_chunk, iterations - done)
                iterate(n)
                done += n
            return done
        deadline = time.perf_counter() + time_limit
        chunk = first_chunk
        while iterations is None or done < iterations:
            now = time.perf_counter()
            if now >= deadline:
                break
            n = chunk if iterations is None else min(chunk, iterations - done)
            iterate(n)
            done += n
            rate = n / max(time.perf_counter() - now, 1e-9)
            chunk = int(max(1, min(rate * _CHECK_EVERY, 4 * chunk,
                                   rate * max(deadline - time.perf_counter(), 0.0))))
        return done

    def _copy_tables_to(self, other: KeyedRows) -> None:
        """Give ``other`` copies of these tables."""
        for name in self._table_names() + ("counters", "hash_keys", "hash_nodes"):
            setattr(other, name, getattr(self, name).copy())
