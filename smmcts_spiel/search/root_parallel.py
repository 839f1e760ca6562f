"""Root-parallel SM-MCTS: independent trees searched at once, their statistics merged.

Each of ``threads`` trees is a search of its own (own arrays, own seed) from the same
state; a move runs them all at once, one per thread, and the final strategy is read from
the sums of their statistics (per-action visit counts, and the sums of sampling
distributions for the average strategy), node by node (:class:`MergedNode`). Root
parallelism shares nothing while searching, so it needs no locks, stays deterministic for
a given seed and number of trees under an iteration budget (the budget is split evenly,
tree ``k`` taking ``iterations // threads`` plus one for ``k < iterations % threads``),
and each tree keeps its own subtree between moves.

Threads run in parallel only where the search releases Python's global interpreter lock:
the kernel engine's compiled iterations do (``nogil``); the generic engine spends its time
in pyspiel and Python, which hold it (docs/search_and_bots.md).

Each extra tree has a thread of its own, which a move wakes on another core than the one
the calling thread (which searches the first tree) runs on: left to itself, Linux may wake
it on the caller's core when no core is idle, where the two trees then take turns (on a
machine whose every core ran other work, a second thread added nothing, 26 Nov 2026).
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.search.smmcts import SearchPolicy, final_probabilities, strategy_at


def check_threads(threads) -> int:
    """A number of trees this process can run at once: 1 .. the cores it may use."""
    cores = len(os.sched_getaffinity(0))
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1 (the number of trees searched at "
                         f"once), got {checks.shown(threads)!r}")
    if threads > cores:
        raise ValueError(f"threads={threads} is more than the {cores} core(s) this process "
                         f"may run on (os.sched_getaffinity); use threads <= {cores}: more "
                         "trees than cores only take turns")
    return threads


def split_budget(iterations: int | None, trees: int) -> list[int | None]:
    """Each tree's share of an iteration budget (None: no iteration budget)."""
    if iterations is None:
        return [None] * trees
    return [iterations // trees + (k < iterations % trees) for k in range(trees)]


class MergedNode:
    """One state's node in every tree that has it, read as one: the interface of
    ``SearchNode`` / ``ArrayNode`` with each player's counts and sums of sampling
    distributions added over the trees."""

    __slots__ = ("_nodes",)

    def __init__(self, nodes: Sequence):
        self._nodes = list(nodes)  # at least one; the trees' nodes of this state

    @property
    def is_terminal(self) -> bool:
        return self._nodes[0].is_terminal

    @property
    def is_chance(self) -> bool:
        return self._nodes[0].is_chance

    @property
    def is_open(self) -> bool:
        return any(n.is_open for n in self._nodes)

    def _open_nodes(self) -> list:
        return [n for n in self._nodes if n.is_open]

    @property
    def visits(self) -> int:
        return sum(n.visits for n in self._nodes)

    @property
    def total(self) -> float:
        return sum(n.total for n in self._nodes)

    def mean(self) -> float:
        return self.total / self.visits

    @property
    def actions(self):
        return self._open_nodes()[0].actions

    @property
    def mover(self) -> int | None:
        return self._open_nodes()[0].mover

    @property
    def counts(self) -> tuple[list[int], list[int]]:
        nodes = self._open_nodes()
        return _summed(n.counts[0] for n in nodes), _summed(n.counts[1] for n in nodes)

    @property
    def strategy_sums(self) -> tuple[list[float], list[float]]:
        nodes = self._open_nodes()
        return (_summed(n.strategy_sums[0] for n in nodes),
                _summed(n.strategy_sums[1] for n in nodes))

    def strategy(self, player: int, final_strategy: str = "empirical",
                 exploration: float = 0.0, threshold: float = 0.0) -> list[float]:
        """The final strategy from the merged statistics (``smmcts.final_probabilities``)."""
        if not self.is_open or self.is_chance:
            raise ValueError("only decision nodes the search has opened have strategies")
        return final_probabilities(self.counts[player], self.strategy_sums[player],
                                   final_strategy, exploration, threshold)

    def child(self, player_actions) -> MergedNode | None:
        children = [c for c in (n.child(player_actions) for n in self._open_nodes())
                    if c is not None]
        return MergedNode(children) if children else None


def _summed(rows) -> list:
    rows = list(rows)
    return [sum(column) for column in zip(*rows)]


def _started_thread() -> tuple[ThreadPoolExecutor, int]:
    """A pool of one thread, started now, and the thread's id (for its core): a pool starts
    its thread at the first task, and starting one waits until the new thread runs, which
    on a busy machine took tens to hundreds of milliseconds (25 Nov 2026), time a move
    would lose."""
    pool = ThreadPoolExecutor(1, "smmcts-tree")
    return pool, pool.submit(threading.get_native_id).result()


def _load_sched_getcpu():
    try:
        sched_getcpu = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):  # not glibc / Linux: threads are placed by the system
        return None
    sched_getcpu.restype = ctypes.c_int
    sched_getcpu.argtypes = []
    return sched_getcpu


_sched_getcpu = _load_sched_getcpu()


def _current_core() -> int | None:
    """The core the calling thread runs on, or None if unknown."""
    core = -1 if _sched_getcpu is None else _sched_getcpu()
    return None if core < 0 else core


def place_threads(thread_ids: Sequence[int], cores: Sequence[int]) -> None:
    """Bind each thread to one of ``cores`` other than the calling thread's current core,
    a different one each while they last (so that waking them does not put them behind
    the caller); nothing where the system cannot say or do it."""
    here = _current_core()
    if here is None or not hasattr(os, "sched_setaffinity"):
        return
    others = [c for c in cores if c != here] or list(cores)
    for k, thread_id in enumerate(thread_ids):
        try:
            os.sched_setaffinity(thread_id, {others[k % len(others)]})
        except OSError:  # e.g. the core was taken from this process since
            pass


class RootParallelSearch:
    """``len(searches)`` independent searches of one game run at once, read as one; the
    interface of :class:`.smmcts.SMMCTS` (``run``, ``set_root``, ``find``, ``strategy``,
    ``policy``, ``reset``, ``root``, ``last_iterations``).

    Args:
      searches: the trees, each a search with ``run(state, iterations, time_limit,
        started)`` (an :class:`.tree_arrays.ArrayTreeSearch`); the first runs on the
        calling thread, the others on a pool of threads kept from move to move.
    """

    def __init__(self, searches: Sequence):
        if not searches:
            raise ValueError("a root-parallel search needs at least one tree")
        self.searches = list(searches)
        first = self.searches[0]
        self.game = first.game
        self.final_strategy = first.final_strategy
        self.exploration = first.exploration
        self.threshold = first.threshold
        self.last_iterations = 0
        # One thread of its own per tree after the first (which the caller searches).
        self._threads = [_started_thread() for _ in self.searches[1:]]

    @property
    def root(self) -> MergedNode | None:
        roots = [s.root for s in self.searches]
        return None if any(r is None for r in roots) else MergedNode(roots)

    def run(self, state: pyspiel.State, iterations: int | None = 1000,
            time_limit: float | None = None) -> MergedNode:
        """Every tree searches from ``state`` at once; ``iterations`` is split over the
        trees, ``time_limit`` is every tree's (all stop at the same deadline)."""
        started = time.perf_counter()
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        shares = split_budget(iterations, len(self.searches))
        # Trees without a share of a small budget only move their root.
        busy = [k for k, n in enumerate(shares) if n is None or n > 0]
        threads = [self._threads[k - 1] for k in busy[1:]]
        place_threads([thread_id for _, thread_id in threads],
                      sorted(os.sched_getaffinity(0)))
        futures = [pool.submit(self.searches[k].run, state, shares[k], time_limit, started)
                   for k, (pool, _) in zip(busy[1:], threads)]
        self.searches[busy[0]].run(state, shares[busy[0]], time_limit, started)
        for future in futures:
            future.result()
        for k, search in enumerate(self.searches):
            if k not in busy:
                search.set_root(state)
        self.last_iterations = sum(s.last_iterations for k, s in enumerate(self.searches)
                                   if k in busy)
        return self._searched_root()

    def set_root(self, state: pyspiel.State) -> MergedNode:
        for search in self.searches:
            search.set_root(state)
        return self._searched_root()

    def _searched_root(self) -> MergedNode:
        root = self.root
        assert root is not None, "every tree has a root after run / set_root"
        return root

    def reset(self) -> None:
        for search in self.searches:
            search.reset()

    def find(self, state: pyspiel.State) -> MergedNode | None:
        """The merged node of ``state`` in the trees that have it, or None."""
        nodes = [n for n in (s.find(state) for s in self.searches) if n is not None]
        return MergedNode(nodes) if nodes else None

    def strategy(self, state: pyspiel.State, player: int) -> dict[int, float]:
        """``player``'s final strategy at ``state`` from the merged statistics; uniform
        where no tree went. Turn-based states are answered, other games' refused."""
        return strategy_at(self, state, player)

    def policy(self) -> SearchPolicy:
        return SearchPolicy(self)
