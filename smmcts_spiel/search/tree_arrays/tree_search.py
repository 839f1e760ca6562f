"""What the compiled engines share on the Python side (:class:`ArrayTreeSearch`): options,
the arrays and their growth within ``max_memory``, re-rooting by copying the kept subtree,
node lookup and the budgeted loop."""

from __future__ import annotations

import abc
import math
import time
from collections.abc import Callable

import numpy as np
import pyspiel
from absl import logging

from smmcts_spiel import checks
from smmcts_spiel.search.smmcts import TreeSearch
from smmcts_spiel.search.tree_arrays.layout import (
    CHANCE,
    CHILD,
    DEFAULT_MAX_MEMORY,
    KIND,
    N2,
    NUM_NODES,
    POOL_USED,
    SELECTOR_CODES,
    SLOTS_USED,
    TERMINAL,
    capacity_bytes,
    minimum_memory,
)
from smmcts_spiel.search.tree_arrays.memory import lazy_zeros
from smmcts_spiel.search.tree_arrays.nodes import ArrayNode
from smmcts_spiel.search.tree_arrays.operations import copy_subtree

CHECK_EVERY = 0.002  # seconds between clock checks under a time limit
#: Seconds between two returns to Python under an iteration budget, where a Ctrl-C
#: (KeyboardInterrupt) or a stop request is seen: compiled iterations hold them off.
INTERRUPT_EVERY = 0.05
#: Seconds of search the arrays are sized for before a timed run starts; a longer run grows
#: them as it goes (4x at a time), so a long time limit allocates nothing up front.
PLAN_SECONDS = 1.0


# nodes_i, nodes_f, pool, slots
_TreeArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class ArrayTreeSearch(TreeSearch):
    """What the compiled engines share on the Python side: options, arrays, re-rooting by
    copying the kept subtree, node lookup and the budgeted loop.

    A subclass provides ``node_actions``, ``_new_tree``, ``_kept`` and ``_iterate``.

    Memory: the arrays are sized for at most :data:`PLAN_SECONDS` of search before a run
    and grow 4x when full, never beyond ``max_memory`` bytes (default
    :data:`DEFAULT_MAX_MEMORY`: 4 GiB, at most half the machine's memory), counting the
    spare arrays re-rooting copies into and, for the generic engine, an estimate of the
    Python objects per node. A run that fills the tree stops there (one warning in the log,
    ``full`` set) and the move is played from the tree it has; the next move re-roots,
    which frees the other branches.
    """

    #: Estimated bytes per node kept outside the arrays (in Python objects), counted
    #: against ``max_memory``.
    python_bytes_per_node = 0

    def __init__(self, game: pyspiel.Game, selector: str, gamma: float | None,
                 c: float | None, final_strategy: str, node_room: int, pool_room: int,
                 initial_nodes: int, assumed_rate: float, threshold: float = 0.0,
                 max_memory: int = DEFAULT_MAX_MEMORY,
                 iteration_room: tuple[int, int] | None = None, tie_tolerance: float = 0.0):
        super().__init__(game, selector, gamma, c, final_strategy, threshold, tie_tolerance)
        self._node_room = node_room  # most nodes one iteration adds
        self._pool_room = pool_room  # most pool (and slot) entries one iteration adds
        # At least room for a few iterations, twice (re-rooting copies the kept subtree):
        # below that the root cannot even be opened (a 10-byte limit used to fail inside
        # the search with "only opened decision nodes list actions"). ``iteration_room``
        # (nodes, pool entries): what the iterations running at once may add, where that is
        # less than the room kept free before a run (tree-parallel threads' blocks).
        nodes_once, pool_once = iteration_room or (node_room, pool_room)
        self.max_memory = checks.check_count(
            max_memory, "max_memory (bytes)",
            minimum=minimum_memory(nodes_once, pool_once, self.python_bytes_per_node))
        self._selector_code = SELECTOR_CODES[self.base_selector]
        self._config = np.array([self.gamma, self.c, self._inv_scale, self._utility_sum,
                                 self._reward_low, self._inv_reward_range, 0.0,
                                 self.tie_tolerance])
        # The first arrays within max_memory too (a small limit gets small arrays).
        unit = self._bytes((1, 32, 8))
        initial_nodes = max(1, min(initial_nodes, max_memory // unit))
        self.full = False  # whether the last run stopped because the tree hit max_memory
        self.nodes_i = lazy_zeros((7, initial_nodes), np.int64)
        self.nodes_f = lazy_zeros((4, initial_nodes))
        self.pool = lazy_zeros(max(32 * initial_nodes, 2 * pool_room), np.int64)
        self.slots = lazy_zeros((4, max(8 * initial_nodes, 2 * pool_room)))
        self.counters = np.zeros(3, np.int64)
        # arrays to copy the kept subtree into when re-rooting
        self._spare: _TreeArrays | None = None
        self._scratch = np.zeros(0, np.int64)  # node renumbering when re-rooting
        # For sizing the arrays before a run (see _make_room): the fastest rate seen
        # (iterations/s; assumed_rate until measured) and the most nodes, pool and slot
        # entries one iteration added on average in a run (a guess until the first run:
        # a guess kept as a floor would spend max_memory on room no game needs).
        self._rate = float(assumed_rate)
        self._growth = np.array([1.0, 32.0, 8.0])
        self._growth_measured = False
        #: Another search of the same game and state searched with this one (a root-parallel
        #: sibling, set by ``RootParallelSearch``) whose work an engine may reuse: the
        #: kernel engine copies its root state instead of replaying the history.
        self.sibling: ArrayTreeSearch | None = None
        #: The count of calls into this search's compiled iterations on the calling thread,
        #: incremented once they have released the interpreter lock (``KernelSMMCTS``), or
        #: None where the iterations hold it (the generic engine): another thread of a
        #: root-parallel search (:class:`smmcts_spiel.search.root_parallel.ThreadTeam`)
        #: starts its tree once this count has gone up, or at once where it is None.
        self.entered: np.ndarray | None = None
        self._stop_requested = False  # set by stop(): the run ends after its chunk

    # -- tree management ---------------------------------------------------------------

    @property
    def root(self) -> ArrayNode | None:
        """The root's view, made on demand: a view kept here would point back at the search,
        and a search in a reference cycle is freed only by a full garbage collection (see
        :func:`freeze_loaded_objects`)."""
        return None if self._root_index is None else ArrayNode(self, self._root_index)

    @root.setter
    def root(self, node: ArrayNode | None) -> None:
        self._root_index = None if node is None else node.index

    def _new_root(self, state: pyspiel.State) -> ArrayNode:
        self.counters[:] = 0
        return ArrayNode(self, self._new_tree(state))

    @abc.abstractmethod
    def node_actions(self, index: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """Each player's pyspiel actions at node ``index`` (chance: its outcomes, ()), or
        None if not known."""

    @abc.abstractmethod
    def _new_tree(self, state: pyspiel.State) -> int:
        """A tree whose root is ``state`` (the counters were reset); the root's index."""

    @abc.abstractmethod
    def _kept(self, order: np.ndarray) -> None:
        """Re-rooting kept the nodes ``order`` (old numbers in their new order)."""

    @abc.abstractmethod
    def _iterate(self, root: int, iterations: int) -> int:
        """Up to ``iterations`` iterations from ``root`` (fewer only when the arrays need to
        grow); how many were done."""

    def _reroot(self, node: ArrayNode) -> ArrayNode:
        return ArrayNode(self, self._keep_only_subtree(node.index) if node.index > 0 else 0)

    def _keep_only_subtree(self, index: int) -> int:
        """Copy the subtree of node ``index`` into the spare arrays (it becomes node 0) and
        swap them in, so the memory of a game-long search stays that of the kept subtree;
        returns 0. The two sets of arrays are reused: allocating and freeing arrays of
        hundreds of megabytes inside a timed move would take tens of milliseconds."""
        arrays = (self.nodes_i, self.nodes_f, self.pool, self.slots)
        spare = self._spare
        if spare is None or any(s.shape[-1] < a.shape[-1] for s, a in zip(spare, arrays)):
            nodes_i, nodes_f, pool, slots = (lazy_zeros(a.shape, a.dtype) for a in arrays)
            spare = nodes_i, nodes_f, pool, slots
        counters = np.zeros(3, np.int64)
        n = int(self.counters[NUM_NODES])
        if len(self._scratch) < 2 * n:  # reused from move to move, as the spare arrays
            self._scratch = lazy_zeros(4 * n, np.int64)
        new_index, queue = self._scratch[:n], self._scratch[n:2 * n]
        new_index.fill(-1)
        copy_subtree(index, *arrays, self.counters, *spare, counters, new_index, queue)
        self._spare = arrays
        self.nodes_i, self.nodes_f, self.pool, self.slots = spare
        self.counters[:] = counters
        self._kept(queue[:counters[NUM_NODES]])
        return 0

    def _copy_to_scratch(self) -> None:
        """Copy the tree into scratch arrays of its size (loads ``copy_subtree``)."""
        nodes, pool, slots = (int(x) + 1 for x in self.counters)
        copy_subtree(0, self.nodes_i, self.nodes_f, self.pool, self.slots, self.counters,
                     np.zeros((self.nodes_i.shape[0], nodes), np.int64),
                     np.zeros((self.nodes_f.shape[0], nodes)), np.zeros(pool, np.int64),
                     np.zeros((self.slots.shape[0], slots)), np.zeros(3, np.int64),
                     np.full(nodes, -1, np.int64), np.zeros(nodes, np.int64))

    def reset(self) -> None:
        super().reset()
        self.counters[:] = 0

    def child_index(self, node: int, player_actions) -> int:
        """The child of ``node`` after the given actions (chance: one outcome), or -1."""
        nodes_i, pool = self.nodes_i, self.pool
        if nodes_i[CHILD, node] < 0 or nodes_i[KIND, node] == TERMINAL:
            return -1
        actions = self.node_actions(node)
        if actions is None:
            return -1
        first, second = actions
        try:
            i = first.index(player_actions[0])
            j = 0 if nodes_i[KIND, node] == CHANCE else second.index(player_actions[1])
        except ValueError:
            return -1
        return int(pool[nodes_i[CHILD, node] + i * int(nodes_i[N2, node]) + j])

    def _grow(self) -> bool:
        """Enlarge (4x) the arrays that may overflow in the next iteration (the fallback
        when a run outgrows what :meth:`_make_room` planned for), within ``max_memory``.

        Returns whether the next iteration fits; if not, the tree is full: ``full`` is set
        and the run stops (the search then plays from the tree it has)."""
        rooms = (self._node_room, self._pool_room, self._pool_room)
        wanted = [4 * n if used + room > n else n
                  for used, room, n in zip(self.counters, rooms, self._capacity())]
        if self._bytes(wanted) <= self.max_memory:
            self._resize(wanted[0], wanted[1], wanted[2])
            return True
        if self._fill_limit():
            return True
        return self._stop_full()

    def _stop_full(self) -> bool:
        """The tree reached ``max_memory``: set ``full`` (the run stops), warn once; False."""
        if not self.full:
            logging.warning(
                "%s: the search tree reached max_memory=%d bytes (%d nodes); this move "
                "stops searching and plays from the tree it has (raise max_memory to search "
                "longer)", type(self).__name__, self.max_memory, int(self.counters[NUM_NODES]))
        self.full = True
        return False

    def _capacity(self) -> tuple[int, int, int]:
        return self.nodes_i.shape[1], len(self.pool), self.slots.shape[1]

    def _bytes(self, capacity) -> int:
        """The memory the arrays of this capacity (nodes, pool, slots) count for."""
        return capacity_bytes(capacity, self.python_bytes_per_node)

    def _fill_limit(self) -> bool:
        """The last growth: arrays of ``max_memory`` bytes in all, each the share the tree's
        own use calls for (room was planned at guessed ratios of pool and slot entries per
        node), if that makes room for at least 10% more nodes; returns whether it did.
        (Growing by small steps instead would copy the whole tree for each step.)"""
        used = [int(x) for x in self.counters]
        rooms = (self._node_room, self._pool_room, self._pool_room)
        if used[0] == 0:
            return False
        per_node = (1.0, used[1] / used[0], used[2] / used[0])
        nodes = (self.max_memory - self._bytes(rooms)) / self._bytes(per_node)
        if nodes < 1.1 * used[0] + rooms[0]:
            return False
        capacity = [max(u + r, int(nodes * k) + r) for u, k, r in zip(used, per_node, rooms)]
        self._resize(capacity[0], capacity[1], capacity[2], exact=True)
        self._spare = None  # re-rooting makes a spare set of the new shapes
        return self.has_room()

    def _within_limit(self, wanted) -> tuple[int, int, int]:
        """``wanted`` capacities (each at least the current one), with the increases
        shrunk alike so that the arrays stay within ``max_memory``."""
        current = self._capacity()
        extra = self._bytes(wanted) - self._bytes(current)
        free = self.max_memory - self._bytes(current)
        share = 1.0 if extra <= free else max(free, 0) / extra
        nodes, pool, slots = (n + int((w - n) * share) for w, n in zip(wanted, current))
        return nodes, pool, slots

    def _resize(self, nodes: int, pool: int, slots: int, exact: bool = False) -> None:
        """Give the arrays these capacities (at least; ``exact``: these, smaller ones
        too); only the used part is copied.

        Capacity costs address space, not time (:func:`lazy_zeros`); copying a big tree
        into fresh memory does cost time (each new page is a page fault: on the shared
        machine about a millisecond per megabyte), which is why runs plan their room
        before they start.
        """
        def resized(array, used, capacity):
            if capacity == array.shape[-1] or (capacity < array.shape[-1] and not exact):
                return array
            bigger = lazy_zeros(array.shape[:-1] + (capacity,), array.dtype)
            bigger[..., :used] = array[..., :used]
            return bigger
        used_nodes, used_pool, used_slots = (int(x) for x in self.counters)
        self.nodes_i = resized(self.nodes_i, used_nodes, nodes)
        self.nodes_f = resized(self.nodes_f, used_nodes, nodes)
        self.pool = resized(self.pool, used_pool, pool)
        self.slots = resized(self.slots, used_slots, slots)

    def _make_room(self, iterations: float) -> None:
        """Make room, before a run starts, for what ``iterations`` iterations may add (at
        the largest growth per iteration seen), so that the run itself does not stop to
        grow the arrays: right after re-rooting the tree to copy is small."""
        wanted = [int(used + iterations * growth) + room for used, growth, room in zip(
            self.counters, self._growth, (self._node_room, self._pool_room, self._pool_room))]
        if any(w > n for w, n in zip(wanted, self._capacity())):
            self._resize(*self._within_limit(
                [max(n, w + w // 4) for w, n in zip(wanted, self._capacity())]))

    def _learn(self, iterations: int, seconds: float, added: np.ndarray) -> None:
        """Remember the rate and the growth per iteration of a finished run."""
        if iterations > 0:
            if seconds > 0:
                self._rate = max(self._rate, iterations / seconds)
            growth = added / iterations
            self._growth = (np.maximum(self._growth, growth) if self._growth_measured
                            else growth)
            self._growth_measured = True

    def has_room(self) -> bool:
        """Whether the arrays hold what one more iteration may add."""
        return (self.counters[NUM_NODES] + self._node_room <= self.nodes_i.shape[1]
                and self.counters[POOL_USED] + self._pool_room <= len(self.pool)
                and self.counters[SLOTS_USED] + self._pool_room <= self.slots.shape[1])

    # -- running -----------------------------------------------------------------------

    def stop(self) -> None:
        """End the run in progress (on another thread) after its current chunk of
        iterations: a root-parallel search interrupted on the calling thread stops the
        other trees so."""
        self._stop_requested = True

    def run(self, state: pyspiel.State, iterations: int | None = 1000,
            time_limit: float | None = None, started: float | None = None) -> ArrayNode:
        """Search from ``state`` until ``iterations`` are done or ``time_limit`` seconds pass.

        Pass ``iterations=None`` to search by time alone. ``started``: when the move began
        (``time.perf_counter()``; default now), which the time limit counts from. Returns the
        root node.
        """
        return self.prepared_run(state, iterations, time_limit, started)()

    def prepared_run(self, state: pyspiel.State, iterations: int | None = 1000,
                     time_limit: float | None = None, started: float | None = None
                     ) -> Callable[[], ArrayNode]:
        """What :meth:`run` does before the iterations (the root, room for the run), now;
        the rest as a function that returns the root. Root parallelism prepares every tree
        on the calling thread, so that a tree's thread, once woken, goes straight into the
        compiled iterations instead of waiting for Python's global interpreter lock."""
        start = time.perf_counter() if started is None else started
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        if state.is_terminal():
            raise ValueError("cannot search from a terminal state: the game is over")
        root = self.set_root(state).index
        self.full = self._stop_requested = False
        if time_limit is not None:
            self._make_room(min(iterations or np.inf,
                                1.25 * self._rate * min(time_limit, PLAN_SECONDS)))
        deadline = None if time_limit is None else start + time_limit

        def search() -> ArrayNode:
            before = self.counters.copy()
            searching = time.perf_counter()
            done = self._search(root, iterations, deadline)
            self._learn(done, time.perf_counter() - searching, self.counters - before)
            self.last_iterations = done
            return ArrayNode(self, root)
        return search

    def _search(self, root: int, iterations: int | None, deadline: float | None) -> int:
        """Iterations until the budget runs out (or :meth:`stop`); returns how many were
        done. They run in chunks: under a time limit of about :data:`CHECK_EVERY` seconds,
        under an iteration budget alone of about :data:`INTERRUPT_EVERY` (the same
        iterations, so the same tree, as one call: a chunk ends between iterations)."""
        done = 0
        chunk = 16
        searching = time.perf_counter()
        while iterations is None or done < iterations:
            todo = chunk if iterations is None else min(chunk, iterations - done)
            done += self._iterate(root, todo)
            now = time.perf_counter()
            if self.full or self._stop_requested or (deadline is not None and now >= deadline):
                break
            rate = done / max(now - searching, 1e-6)
            chunk = (next_chunk(chunk, rate, math.inf, INTERRUPT_EVERY) if deadline is None
                     else next_chunk(chunk, rate, deadline - now))
        return done


def next_chunk(chunk: int, rate: float, left: float, every: float = CHECK_EVERY) -> int:
    """The iterations of the next chunk of a run: about ``every`` seconds at ``rate``, the
    average rate so far (a single chunk's rate swings with the tree and with the machine's
    load), at most twice the last ``chunk``; with ``left`` seconds to the deadline, half of
    that, so that a chunk slower than planned overruns by a fraction of a chunk."""
    return int(max(1, min(2 * chunk, rate * min(every, left / 2))))

