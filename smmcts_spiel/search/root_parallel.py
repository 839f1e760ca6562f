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
machine whose every core ran other work, a second thread added nothing).
"""

from __future__ import annotations

import ctypes
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable, Sequence

import numba
import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.search.smmcts import (
    COUNTS_ONLY,
    SearchPolicy,
    final_probabilities,
    strategy_at,
)
from smmcts_spiel.search.thread_counts import check_threads  # noqa: F401 (its old home)
from smmcts_spiel.search.tree_arrays import acquire_load, release_store


def split_budget(iterations: int | None, trees: int) -> list[int | None]:
    """Each tree's share of an iteration budget (None: no iteration budget)."""
    if iterations is None:
        return [None] * trees
    return [iterations // trees + (k < iterations % trees) for k in range(trees)]


class MergedNode:
    """One state's node in every tree that has it, read as one: the interface of
    ``SearchNode`` / ``ArrayNode`` with each player's counts and sums of sampling
    distributions added over the trees (read live, as ``ArrayNode``: each query reads the
    trees' statistics as they are then)."""

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
        return bool(self._open_nodes())

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

    def _summed(self, field: str, player: int) -> list:
        """``player``'s ``field`` ("counts" or "strategy_sums") added over the open nodes,
        in tree order (the same sums, bit for bit, as adding the lists one by one); one
        array sum per tree, not a Python sum per action."""
        rows = [n.player_row(field, player) for n in self._open_nodes()]
        total = rows[0] if rows else np.zeros(0)
        for row in rows[1:]:
            total += row
        return total.tolist()

    @property
    def counts(self) -> tuple[list[int], list[int]]:
        return self._summed("counts", 0), self._summed("counts", 1)

    @property
    def strategy_sums(self) -> tuple[list[float], list[float]]:
        return self._summed("strategy_sums", 0), self._summed("strategy_sums", 1)

    def strategy(self, player: int, final_strategy: str = "empirical",
                 exploration: float = 0.0, threshold: float = 0.0) -> list[float]:
        """The final strategy from the merged statistics (``smmcts.final_probabilities``)."""
        if not self.is_open or self.is_chance:
            raise ValueError("only decision nodes the search has opened have strategies")
        counts = self._summed("counts", player)  # this player's only
        # the sums of sampling distributions only where the final strategy reads them
        sums = (counts if final_strategy in COUNTS_ONLY
                else self._summed("strategy_sums", player))
        return final_probabilities(counts, sums, final_strategy, exploration, threshold)

    def child(self, player_actions) -> MergedNode | None:
        children = [c for c in (n.child(player_actions) for n in self._open_nodes())
                    if c is not None]
        return MergedNode(children) if children else None


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


def cores_for(threads: int, cores: Sequence[int], taken: Sequence[int] = ()) -> list:
    """A core for each of ``threads`` threads: of ``cores``, not the calling thread's
    current one, those not ``taken`` first, a different one each while they last (all
    None where the system cannot say which core the caller runs on)."""
    here = _current_core()
    if here is None or not hasattr(os, "sched_setaffinity"):
        return [None] * threads
    others = [c for c in cores if c != here] or list(cores)
    free = [c for c in others if c not in taken] or others
    return [free[k % len(free)] for k in range(threads)]


def _bind(thread_id: int, core: int | None) -> bool:
    """Bind a thread (native id, 0: the calling one) to ``core``; whether it is bound."""
    if core is None:
        return False
    try:
        os.sched_setaffinity(thread_id, {core})
    except OSError:  # e.g. the core was taken from this process since
        return False
    return True


@numba.njit(nogil=True, cache=True)
def _spin_until(counter, above, spins):
    """Whether ``counter[0]`` exceeded ``above`` within ``spins`` polls, without the
    interpreter lock."""
    for _ in range(spins):
        if acquire_load(counter, 0) > above:
            return True
    return False


@numba.njit(nogil=True, cache=True)
def _await_task(posted, taken, entered, moves, spins, finished):
    """A tree's thread waits, without the interpreter lock, for a task (``posted[0] >
    taken``) and then for the caller to be in its own compiled search (``entered[0] >=
    posted[1]``), which releases the lock the thread is about to take (a thread that has
    to wait for the lock sleeps, and is woken as slowly as below); at most ``spins`` polls
    each. It stops polling early when another search of the process starts a move
    (``moves[0]`` changes without a task of its own), whose cores it would take. Whether a
    task came. Sets ``posted[2]`` on entry (the thread is polling), and ``finished[0]``
    (the last task's ``done``): only now, without the interpreter lock, so that the caller
    waiting for it finds the lock free (``_Task.wait``)."""
    posted[2] = 1
    release_store(finished, 0, 1)
    seen: int = acquire_load(moves, 0)
    for _ in range(spins):
        if acquire_load(posted, 0) <= taken:
            if acquire_load(moves, 0) == seen:
                continue
            if acquire_load(posted, 0) <= taken:
                return False  # another search's move: sleep until a task comes
        for _ in range(spins):
            if acquire_load(entered, 0) >= acquire_load(posted, 1):
                break
        return True
    return False


#: Polls of ``_spin_until`` in about 0.1 ms (0.5 ns a poll, measured).
_SPINS = 1 << 18
#: About the longest a move polls for the other trees before it sleeps until they are
#: done (counted in polls, ``_SPINS`` per 0.1 ms).
MAX_SPIN_SECONDS = 0.01
#: Polls of a tree's thread for its next task, after it starts and after each task, before
#: it sleeps (about 8 ms): a sleeping thread, woken on a busy core, may wait for the
#: scheduler's next tick (4 ms), as long as a whole short search.
IDLE_SPINS = 1 << 24


class _Task:
    """One tree's search in one move, run once: by the tree's thread or, under an iteration
    budget, by the caller if that thread has not started it when the caller is free."""

    __slots__ = ("search", "claim", "done", "finished", "error")

    def __init__(self, search):
        self.search = search  # the prepared run (ArrayTreeSearch.prepared_run)
        self.claim = threading.Lock()  # held by whichever thread runs the search
        # Set by the tree's thread when done with the task (ran it, or found it taken):
        self.done = np.zeros(1, np.int64)  # for a polling wait
        self.finished = threading.Lock()  # released, for a sleeping wait
        self.finished.acquire()
        self.error: BaseException | None = None

    def run(self) -> bool:
        """Run the search unless another thread took it; whether this call ran it."""
        if not self.claim.acquire(blocking=False):
            return False
        try:
            self.search()
        except BaseException as e:  # re-raised on the calling thread (RootParallelSearch.run)
            self.error = e
        finally:
            self.search = None  # the thread keeps its last task: not the tree
        return True

    def wait(self, spin_seconds: float) -> None:
        """Until the tree's thread is done with the task: polling for about
        ``spin_seconds``, then asleep (a sleeping thread, woken on a busy core, may wait
        for the scheduler's next tick: up to 4 ms).

        The polls are one compiled call, which never takes the interpreter lock: the
        tree's thread needs the lock after its compiled search (its run's bookkeeping),
        and a thread that finds it held sleeps until it is free, then waits to be woken.
        Polling in Python between short compiled calls held the lock now and then, and in
        most fresh two-tree moves on a busy machine the tree's thread, or the caller after
        it, lost one to four scheduler ticks (4 ms each) there: 3-15 ms for a move whose
        trees were done after 2.4 ms. ``done`` is set
        once the thread has let the lock go (``_await_task``)."""
        _spin_until(self.done, 0, int(spin_seconds / 1e-4 * _SPINS))
        self.finished.acquire()
        self.finished.release()  # done for good: a second wait returns at once


#: Moves started by every root-parallel search of the process (idle tree threads stop
#: polling when another search's move starts, ``_await_task``).
_MOVES = np.zeros(1, np.int64)


def _serve(inbox: queue.SimpleQueue, posted: np.ndarray, entered: np.ndarray,
           core: int | None, ready: queue.SimpleQueue) -> None:
    """A tree's thread: binds itself to ``core``, then runs the tasks it is given until it
    gets None, polling for the next one (``IDLE_SPINS``) before it sleeps. It holds no
    reference to the search, so a dropped bot is freed (and its thread ends)."""
    bound = _bind(0, core)
    ready.put((threading.get_native_id(), bound))
    taken = 0
    finished = np.zeros(1, np.int64)  # the last task's ``done``, set by _await_task
    while True:
        _await_task(posted, taken, entered, _MOVES, IDLE_SPINS, finished)
        task = inbox.get()
        if task is None:
            return
        taken += 1
        task.run()
        task.finished.release()
        finished = task.done
        del task


class _TreeThread:
    """A thread of its own for one tree, started and bound to ``core`` now (None: where
    the system puts it), polling for its first task when this returns.

    Started now: starting a thread waits until the new thread runs, which on a busy
    machine took tens to hundreds of milliseconds, time a move would lose.
    Bound now, by the thread itself before it polls: binding it in a move moved a polling
    thread to the other core in the move, where it waited for the core's running task's
    time slice to end (milliseconds: the first tree's search of a fresh bot began up to
    3.5 ms late).

    ``entered``: the calling thread's tree's count of calls into its compiled iterations
    (``KernelSMMCTS.entered``); a posted task starts once that count has gone up. None:
    the calling thread's tree has no such count (a search that is not compiled); a posted
    task starts at once.
    """

    def __init__(self, entered: np.ndarray | None, core: int | None = None):
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._entered = entered
        # tasks posted so far, the count of ``entered`` at which the caller searches, and
        # whether the thread has polled for tasks yet
        self._posted = np.zeros(3, np.int64)
        ready: queue.SimpleQueue = queue.SimpleQueue()
        counter = np.zeros(1, np.int64) if entered is None else entered
        threading.Thread(target=_serve, args=(self._inbox, self._posted, counter, core, ready),
                         name="smmcts-tree", daemon=True).start()
        self.native_id, bound = ready.get()
        self.core: int | None = core if bound else None
        weakref.finalize(self, self._stop, self._inbox, self._posted)
        # Until the thread polls, without the interpreter lock (it needs the lock to get
        # there: a thread left waiting for it sleeps, and a first move would wait for it).
        until = time.perf_counter() + 1.0
        while not self._posted[2] and time.perf_counter() < until:
            _spin_until(self._posted[2:], 0, _SPINS)

    def start(self, task: _Task) -> None:
        self._inbox.put(task)
        self._posted[1] = 0 if self._entered is None else self._entered[0] + 1
        self._posted[0] += 1

    def bind(self, core: int | None) -> None:
        """Bind the thread to ``core`` (from the calling thread)."""
        self.core = core if _bind(self.native_id, core) else None

    @staticmethod
    def _stop(inbox: queue.SimpleQueue, posted: np.ndarray) -> None:
        inbox.put(None)
        posted[1] = 0
        posted[0] += 1


class ThreadTeam:
    """``count`` threads kept from move to move, each bound to another core than the
    calling thread's (:class:`_TreeThread`), that run a call's tasks at once with the
    caller: one tree each (root parallelism) or one share of one tree's iterations each
    (tree parallelism, :class:`.kernel_engine.KernelSMMCTS`).

    ``entered``: the caller's count of calls into its compiled iterations
    (``KernelSMMCTS.entered``; None: not compiled); a posted task starts once it went up.
    """

    def __init__(self, count: int, entered: np.ndarray | None):
        _spin_until(np.ones(1, np.int64), 0, 1)  # load the compiled code now, not in a move
        self._cores = sorted(os.sched_getaffinity(0))
        self._threads = [_TreeThread(entered, core) for core in cores_for(count, self._cores)]

    def run(self, first: Callable[[], object], others: Sequence[Callable[[], object]],
            take_over: bool = True, stop: Callable[[], object] | None = None) -> None:
        """Run ``first`` on the calling thread and each of ``others`` (at most ``count``) on
        a thread of the team, at once; return when all are done, raising the first error.
        ``take_over``: a task whose thread has not started it when the caller is done is run
        by the caller instead of waited for (only for tasks whose result does not depend on
        when they run: an iteration budget). ``stop``: ends the others' tasks early, called
        when the caller's part fails (a KeyboardInterrupt), which then waits for them: no
        task still runs when the error leaves."""
        threads = self._threads[:len(others)]
        self._place(threads)
        tasks = [_Task(task) for task in others]
        for thread, task in zip(threads, tasks):
            thread.start(task)
        _MOVES[0] += 1  # after the posts: this team's own threads keep polling
        try:
            first()
            for task in tasks:
                if not take_over or not task.run():
                    task.wait(MAX_SPIN_SECONDS)
                elif isinstance(task.error, KeyboardInterrupt):
                    raise task.error  # (the caller's own run of the task)
        except BaseException:
            if stop is not None:
                stop()
            for task in tasks:
                task.wait(0.0)
            raise
        errors = [task.error for task in tasks if task.error is not None]
        if errors:
            raise errors[0]

    def _place(self, threads: Sequence[_TreeThread]) -> None:
        """Rebind the threads that are bound to the caller's current core (or not
        bound) to other cores of the process's when the team was built, which the others
        do not take while there are enough (``cores_for``); the others stay where they are
        (moving a thread in a move delays it)."""
        here = _current_core()
        moved = [t for t in threads if t.core is None or t.core == here]
        if here is None or not moved:
            return
        kept = [t.core for t in threads if t not in moved and t.core is not None]
        for thread, core in zip(moved, cores_for(len(moved), self._cores, kept)):
            thread.bind(core)


class RootParallelSearch:
    """``len(searches)`` independent searches of one game run at once, read as one; the
    interface of :class:`.smmcts.SMMCTS` (``run``, ``set_root``, ``find``, ``strategy``,
    ``policy``, ``reset``, ``root``, ``last_iterations``).

    Args:
      searches: the trees, each an :class:`.tree_arrays.ArrayTreeSearch` (``prepared_run``);
        the first runs on the calling thread, each other on a thread of its own kept from
        move to move (:class:`_TreeThread`), which starts a move's search once the first
        tree's compiled iterations have begun (``KernelSMMCTS.entered``).
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
        for search in self.searches[1:]:  # the others may copy the first tree's root state
            search.sibling = first
        # One thread of its own per tree after the first (which the caller searches), each
        # bound to another core than the caller's now.
        self._team = ThreadTeam(len(self.searches) - 1, first.entered)

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
        for k, search in enumerate(self.searches):
            if k not in busy:
                search.set_root(state)
        # Each tree's root and room, prepared here: a woken thread then goes straight into
        # the compiled iterations, which release the interpreter lock.
        runs = [self.searches[k].prepared_run(state, shares[k], time_limit, started)
                for k in busy]
        # Trees with a share come first (split_budget); under an iteration budget each
        # tree's work is fixed, so which thread searches it changes nothing: a tree whose
        # thread has not woken yet is searched by the caller rather than waited for.
        self._team.run(runs[0], runs[1:], take_over=iterations is not None,
                       stop=self._stop)
        self.last_iterations = sum(self.searches[k].last_iterations for k in busy)
        return self._searched_root()

    def _stop(self) -> None:
        """End every tree's run after its current chunk of iterations."""
        for search in self.searches:
            search.stop()

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

    def strategy(self, state: pyspiel.State, player: int,
                 threshold: float | None = None) -> dict[int, float]:
        """``player``'s final strategy at ``state`` from the merged statistics; uniform
        where no tree went. Turn-based states are answered, other games' refused.
        ``threshold``: as :meth:`.smmcts.TreeSearch.strategy`'s."""
        return strategy_at(self, state, player, threshold)

    def policy(self, threshold: float | None = None) -> SearchPolicy:
        return SearchPolicy(self, threshold)
