"""SM-MCTS compiled with numba over a game kernel: the fast path of :class:`SMMCTSBot`.

The same algorithm as :class:`smmcts_spiel.search.smmcts.SMMCTS` (the reference engine; read
its docstring), for games that have a kernel (:mod:`smmcts_spiel.games.kernels`): selection,
expansion, the leaf evaluation and the update of whole iterations run compiled, on array
game states, with the tree in the flat arrays of :mod:`.tree_arrays` (whose Update,
selection and re-rooting this engine shares with :mod:`.array_engine`). A node is opened on
its first visit, with its pyspiel actions (from the kernel) in ``pool``.

Each iteration replays the actions from the root's array state, so nodes store no state.
The random stream is a numpy Generator owned by the search (same seed, same tree), not the
one of the reference engine, so the two agree in distribution, not draw for draw.
Iterations run in chunks sized from the measured rate so that a time limit is checked about
every 2 ms; the arrays grow between chunks.

The compiled functions are compiled per kernel module, built-in or a user's
(``kernels.register_kernel``), over the module's dispatch (:func:`compiled_for`): a search
compiles (and numba caches) only the kernel it plays.
"""

from __future__ import annotations

import functools
import math
import pathlib
import time
import types

import numba
import numpy as np
import pyspiel

from smmcts_spiel.games import kernels
from smmcts_spiel.search import in_flight, root_parallel, thread_counts
from smmcts_spiel.search import tree_arrays as ta
from smmcts_spiel.search.kernel_arrays import ThreadArrays, iteration_rooms
from smmcts_spiel.search.smmcts import check_game
from smmcts_spiel.search.tree_arrays import (
    ACTIONS,
    CHANCE,
    CHILD,
    COUNT,
    EXPANDED,
    GAMMA,
    KIND,
    N1,
    N2,
    NUM_NODES,
    POOL_USED,
    PROB,
    SLOT,
    SLOTS_USED,
    STAT,
    TERMINAL,
    U1,
    ArrayNode,
    ArrayTreeSearch,
    C,
)

# ----------------------------------------------------------------------------------------
# Compiled core: templates that compiled_for compiles per kernel module, with their options.


@ta.inlined
def _new_node(code, state, params, data, nodes_i, nodes_f, counters):
    kind = kernels.status(code, state, params, data)
    u1 = kernels.returns(code, state, params, data) if kind == TERMINAL else 0.0
    return ta.new_node(kind, u1, nodes_i, nodes_f, counters)


@ta.inlined
def _open(node, code, state, params, data, nodes_i, pool, slots, counters, actions_out, outcomes,
          outcome_probs, shared):
    """First visit of a node: its children table, its actions and its statistics; returns
    the children table's pool offset (entries taken from ``counters``: the tree's, or the
    thread's own blocks, see ``_run``). ``shared`` (tree parallelism): the thread that claims
    the node (``CHILD``: -1 -> -2, by compare-and-swap) opens it; another one waits for it
    to be published (a few hundred nanoseconds: legal actions and the tables)."""
    if shared and not ta.compare_and_swap(nodes_i[CHILD], node, -1, -2):
        return ta.published_child(nodes_i[CHILD], node)
    if nodes_i[KIND, node] == CHANCE:
        n1 = kernels.chance_outcomes(code, state, params, data, outcomes, outcome_probs)
        c0 = ta.open_node(node, n1, 1, n1 + 1, nodes_i, pool, slots, counters)
        a0 = nodes_i[ACTIONS, node]
        s = nodes_i[SLOT, node]
        for o in range(n1):
            pool[a0 + o] = outcomes[o]
            slots[PROB, s + o] = outcome_probs[o]
        pool[a0 + n1] = -1
        ta.mark_open(node, c0, nodes_i)
        return c0
    n1 = kernels.legal_actions(code, state, params, data, 0, actions_out)
    n2 = kernels.legal_actions(code, state, params, data, 1, actions_out[max(n1, 1):])
    if n1 == 0:
        actions_out[0] = -1
        n1 = 1
    if n2 == 0:
        actions_out[n1] = -1
        n2 = 1
    c0 = ta.open_node(node, n1, n2, n1 + n2, nodes_i, pool, slots, counters)
    a0 = nodes_i[ACTIONS, node]
    for a in range(n1 + n2):
        pool[a0 + a] = actions_out[a]
    ta.mark_open(node, c0, nodes_i)
    return c0


@ta.inlined
def _iteration(root, root_state, code, params, data, evaluator, selector, mean_variant,
               track_average, config, nodes_i, nodes_f, pool, slots, counters, rng, state,
               path_node, path_i, path_j, path_probs, actions_out, outcomes, outcome_probs,
               own_f, own_slots, shared, flight):
    """One iteration of Alg. 1 from the root: descend (replaying the moves), then back up.

    The players' sampling distributions go to this thread's ``path_probs`` (one row per
    depth), not to the tree. ``shared``: other threads search the same tree (tree
    parallelism): nodes and children are claimed atomically and published with release
    stores (:mod:`.tree_arrays`), new entries come from the thread's own blocks
    (``counters`` is then the thread's, see ``_run``), the statistics are updated without
    locks, and the root's are this thread's own copy (``own_f``, ``own_slots``: see
    ``tree_arrays.back_up``; empty with one thread). ``flight``: the virtual loss's arrays
    (:mod:`.in_flight`; ``flights`` without columns: none), one argument (numba inlines no
    call of 30 arguments)."""
    own_root = own_f.shape[0] > 0
    flights, alive, loss_scratch, me = flight
    in_flight.begin(alive)
    for k in range(len(state)):
        state[k] = root_state[k]
    node = root
    depth = 0
    u = 0.0
    gamma, c, ties = config[GAMMA], config[C], config[ta.TIES]
    while True:
        kind = nodes_i[KIND, node]
        if kind == TERMINAL:
            u = nodes_f[U1, node]
            break
        c0 = ta.acquire_load(nodes_i[CHILD], node)
        if c0 < 0:
            c0 = _open(node, code, state, params, data, nodes_i, pool, slots, counters,
                       actions_out, outcomes, outcome_probs, shared)
        n1 = nodes_i[N1, node]
        s = nodes_i[SLOT, node]
        a0 = nodes_i[ACTIONS, node]
        if kind == CHANCE:
            o = ta.sample_index(slots[PROB, s:s + n1], rng.random())
            kernels.apply_chance(code, state, params, data, pool[a0 + o])
            child = ta.acquire_load(pool, c0 + o)
            if child < 0:
                if not shared or ta.compare_and_swap(pool, c0 + o, -1, -2):
                    child = _new_node(code, state, params, data, nodes_i, nodes_f, counters)
                    ta.release_store(pool, c0 + o, child)
                else:
                    child = ta.published_child(pool, c0 + o)
            in_flight.publish(flights[me], depth, node, -1, -1)
            path_node[depth] = node
            depth += 1
            node = child
            continue
        n2 = nodes_i[N2, node]
        width = n1 * n2
        if nodes_i[EXPANDED, node] < width:
            # Expansion: a uniformly random joint action among those never tried.
            if shared:
                a = ta.claim_untried(node, c0, width, nodes_i, pool, rng)
            else:
                a = ta.untried_joint_action(pool, c0, width, width - nodes_i[EXPANDED, node],
                                            rng.random())
            if a >= 0:
                in_flight.publish(flights[me], depth, node, a // n2, a % n2)
                kernels.apply_actions(code, state, params, data, pool[a0 + a // n2],
                                      pool[a0 + n1 + a % n2])
                child = _new_node(code, state, params, data, nodes_i, nodes_f, counters)
                if nodes_i[KIND, child] == TERMINAL:
                    u = nodes_f[U1, child]
                else:
                    u = kernels.evaluate(code, evaluator, state, params, data, rng)
                ta.expand(node, a, child, u, path_probs[depth, :n1],
                          path_probs[depth, n1:n1 + n2], selector, track_average, config,
                          nodes_i, nodes_f, pool, slots, shared, own_root and depth == 0,
                          own_slots)
                in_flight.retract(flights[me], depth)
                break
        stats = slots
        own_stats = own_root and depth == 0
        if own_stats:  # the root's statistics: this thread's own
            stats = own_slots
            s = 0
        u1 = rng.random() if n1 > 1 else 0.0
        u2 = rng.random() if n2 > 1 else 0.0
        mean = (own_f[ta.X] / own_f[ta.VISITS] if own_stats and own_f[ta.VISITS] > 0
                else nodes_f[ta.MEAN, node])
        i, j = in_flight.select_joint(selector, stats, s, n1, n2, gamma, c, ties,
                                      path_probs[depth, :n1], path_probs[depth, n1:n1 + n2], u1,
                                      u2, track_average, flights, me, alive, depth, node, mean,
                                      config, loss_scratch, own_stats)
        kernels.apply_actions(code, state, params, data, pool[a0 + i], pool[a0 + n1 + j])
        path_node[depth] = node
        path_i[depth] = i
        path_j[depth] = j
        depth += 1
        node = ta.published_child(pool, c0 + i * n2 + j)
    return ta.back_up(depth, u, path_node, path_i, path_j, path_probs, mean_variant, selector,
                      track_average, config, nodes_i, nodes_f, pool, slots, own_f, own_slots,
                      flights[me])


# _nrt is a documented-in-source numba option that its type hints do not list.
@numba.njit(cache=True, error_model="numpy", _nrt=False, nogil=True)  # type: ignore[call-overload]
def _run(iterations, root, root_state, code, params, data, evaluator, selector, mean_variant,
         track_average, config, nodes_i, nodes_f, pool, slots, counters, rng, state, path_node,
         path_i, path_j, path_probs, actions_out, outcomes, outcome_probs, rooms, blocks,
         entered, claimed, own, own_f, own_slots, shared, flights, me, alive, loss_scratch):
    """Run up to ``iterations`` iterations while fewer than ``claimed[1]`` are claimed
    (``claimed[0]``); stops early when the arrays may overflow. ``rooms``: the most nodes,
    pool and slot entries one iteration can add.

    ``shared``: several threads run this on one tree (tree parallelism) and share the
    budget; another thread stops them all by setting ``claimed[1]`` to -1. Each thread
    claims iterations in batches (``tree_arrays.claim_iteration``) and new entries in
    blocks of ``blocks`` (``tree_arrays.claim_blocks``) into its own ranges ``own``, and
    keeps its own copy of the root's statistics (``own_f``, ``own_slots``): the shared
    counters and the root would otherwise pass between the cores' caches on every
    iteration. ``flights``, ``me``, ``alive``, ``loss_scratch``: see ``_iteration``.

    ``entered[0]`` counts the calls, incremented once the interpreter lock is released
    (another tree's thread waits for it to take its task). Returns the number of
    iterations this call did.
    """
    entered[0] += 1
    done = 0
    capacities = (nodes_i.shape[1], len(pool), slots.shape[1])
    allocate = own if shared else counters
    while done < iterations:
        if shared:
            if (not ta.claim_blocks(own, counters, rooms, blocks, capacities)
                    or not ta.claim_iteration(own, claimed)):
                break
        else:
            if (counters[NUM_NODES] + rooms[NUM_NODES] > capacities[NUM_NODES]
                    or counters[POOL_USED] + rooms[POOL_USED] > capacities[POOL_USED]
                    or counters[SLOTS_USED] + rooms[SLOTS_USED] > capacities[SLOTS_USED]):
                break
            if ta.take(claimed, 0, 1, False) >= claimed[1]:
                break
        _iteration(root, root_state, code, params, data, evaluator, selector, mean_variant,
                   track_average, config, nodes_i, nodes_f, pool, slots, allocate, rng, state,
                   path_node, path_i, path_j, path_probs, actions_out, outcomes, outcome_probs,
                   own_f, own_slots, shared, (flights, alive, loss_scratch, me))
        done += 1
    return done


@numba.njit(cache=True)
def _replay(code, params, data, history, state, actions_out):
    """Apply a pyspiel history (one entry per chance or single move, two per joint move)
    to ``state``; False if it does not fit the kernel (then ``state`` is undefined)."""
    k = 0
    while k < len(history):
        kind = kernels.status(code, state, params, data)
        if kind == TERMINAL:
            return False
        if kind == CHANCE:
            kernels.apply_chance(code, state, params, data, history[k])
            k += 1
            continue
        n1 = kernels.legal_actions(code, state, params, data, 0, actions_out)
        n2 = kernels.legal_actions(code, state, params, data, 1, actions_out)
        if n1 > 0 and n2 > 0:
            if k + 1 >= len(history):
                return False
            kernels.apply_actions(code, state, params, data, history[k], history[k + 1])
            k += 2
        elif n1 > 0:
            kernels.apply_actions(code, state, params, data, history[k], -1)
            k += 1
        else:
            kernels.apply_actions(code, state, params, data, -1, history[k])
            k += 1
    return True


@numba.njit(cache=True)
def _new_root(code, state, params, data, nodes_i, nodes_f, counters):
    return _new_node(code, state, params, data, nodes_i, nodes_f, counters)


# The engine's source (this package's modules), in the name its code is cached under; the
# compiled functions that call a kernel, and those of them numba caches on disk.
ENGINE_SOURCES = tuple(str(p) for p in pathlib.Path(__file__).parent.rglob("*.py"))
_KERNEL_CALLERS = ("_new_node", "_open", "_iteration", "_run", "_replay", "_new_root")
_CACHED = ("_run", "_replay", "_new_root")


@functools.cache
def compiled_for(module: types.ModuleType) -> types.SimpleNamespace:
    """The engine's kernel-calling functions (``run``, ``replay``, ``new_root``) compiled
    over one kernel module, built-in or a user's: the same source, with ``kernels`` bound to
    the module's dispatch (:func:`smmcts_spiel.games.kernels.dispatch_for`), so a search
    compiles only the kernel it plays.

    numba caches it under a name with a hash of the module's source and of the engine's
    (:func:`smmcts_spiel.games.kernels.source_tag`): an edit of either recompiles; a module
    without a file is compiled in every process. (Like every numba cache, it does not notice
    an edit of another module whose cached functions the kernel calls.)"""
    tag = kernels.source_tag(module, engine=ENGINE_SOURCES)
    namespace = dict(globals())
    namespace["kernels"] = kernels.dispatch_for(module)
    for name in _KERNEL_CALLERS:
        dispatcher = globals()[name]
        f = dispatcher.py_func
        function = types.FunctionType(f.__code__, namespace, name, f.__defaults__, f.__closure__)
        cache = tag is not None and name in _CACHED
        if cache:  # numba names the cache files after the qualified name
            function.__qualname__ = f"{name}_{tag}"
        options = {k: v for k, v in dispatcher.targetoptions.items() if k != "nopython"}
        namespace[name] = numba.njit(cache=cache, **options)(function)
    return types.SimpleNamespace(run=namespace["_run"], replay=namespace["_replay"],
                                 new_root=namespace["_new_root"])


# ----------------------------------------------------------------------------------------
# Python side.

_UNBOUNDED = 1 << 62  # iterations of a run that only a deadline or full arrays end


def minimum_memory(kernel: kernels.GameKernel, threads: int = 1) -> int:
    """The least ``max_memory`` (bytes) of a :class:`KernelSMMCTS` on ``kernel`` grown by
    ``threads`` threads: room for a few worst-case iterations of each."""
    rooms = iteration_rooms(kernel)
    return ta.minimum_memory(int(threads * rooms[0]), int(threads * max(rooms[1], rooms[2])))


#: A node of a :class:`KernelSMMCTS` tree (the shared read-only view).
KernelNode = ArrayNode


class KernelSMMCTS(ArrayTreeSearch):
    """SM-MCTS on a game kernel; the interface of :class:`.smmcts.SMMCTS`.

    Args as :class:`.smmcts.SMMCTS`, except that the evaluator is the name of one of the
    kernel's compiled leaf evaluators (:data:`smmcts_spiel.games.kernels.EVALUATORS`):
    "random_rollout" (default) or "heuristic", and:

      threads: threads growing this one tree at once (tree parallelism), each with its own
        random stream (seeded from ``seed``) and scratch arrays, on threads bound to other
        cores (:class:`.root_parallel.ThreadTeam`). Nodes and children are claimed
        atomically, so the tree is always well formed; the statistics are updated without
        locks (a rare lost update, which changes nothing that matters), and an iteration
        budget is met exactly in total. Each thread keeps its own copy of the root's
        statistics during a run (selecting at the root from its own, the tree's below),
        summed into the tree when the run ends, and takes new entries from blocks of its own
        (``unused`` counts the entries left in them). Not reproducible with more than one
        thread: which thread gets which iteration, and so the tree, depends on timing.
      virtual_loss: each thread selects as if the other threads' iterations in flight at a
        node had lost (:mod:`.in_flight`), the stored statistics untouched; False: the paper's.

    Raises ValueError if the game has no kernel.
    """

    def __init__(self, game: pyspiel.Game, selector: str = "rm", gamma: float | None = None,
                 c: float | None = None, final_strategy: str = "empirical",
                 evaluator: str = "random_rollout", seed: int | None = None,
                 initial_nodes: int = 1 << 16, threshold: float = 0.0,
                 max_memory: int = ta.DEFAULT_MAX_MEMORY, threads: int = 1,
                 virtual_loss: bool = False, tie_tolerance: float = 0.0):
        check_game(game)
        threads = thread_counts.check_threads(threads)
        virtual_loss = in_flight.check_virtual_loss(virtual_loss)
        kernel = kernels.kernel_for(game)
        if kernel is None:
            raise ValueError(f"no game kernel covers {game}: use smmcts_spiel.search."
                             "array_engine.ArraySMMCTS (the generic engine), which searches "
                             "any pyspiel game")
        if evaluator not in kernels.EVALUATORS:
            raise ValueError(f"evaluator must be one of {', '.join(kernels.EVALUATORS)} "
                             f"(compiled leaf evaluators of the game kernel), got {evaluator!r}")
        # With several threads each claims blocks of entries (see _run), of which it may
        # hold one that the run leaves unused.
        self._rooms = iteration_rooms(kernel)
        self._blocks = np.maximum(2 * self._rooms, [64, 4096, 4096]).astype(np.int64)
        room = self._rooms if threads == 1 else threads * self._blocks
        super().__init__(game, selector, gamma, c, final_strategy,
                         node_room=int(room[0]), pool_room=int(max(room[1], room[2])),
                         initial_nodes=initial_nodes, assumed_rate=2e6 * threads,
                         threshold=threshold, max_memory=max_memory, tie_tolerance=tie_tolerance,
                         # the minimum max_memory: one iteration per thread, not a block
                         # (twice a worst-case iteration: 7 GB on the default Oshi-Zumo)
                         iteration_room=(int(threads * self._rooms[0]),
                                         int(threads * max(self._rooms[1], self._rooms[2]))))
        self.kernel = kernel
        self._compiled = compiled_for(kernel.module)
        self.evaluator = evaluator
        self._evaluator_code = kernels.EVALUATORS[evaluator]
        self.threads = threads
        self._config[ta.SHARED] = float(threads > 1)
        rngs = ([np.random.default_rng(seed)] if threads == 1 else
                [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(threads)])
        self._per_thread = [ThreadArrays(kernel, rng, threads > 1, k, threads)
                            for k, rng in enumerate(rngs)]
        self.virtual_loss = virtual_loss  # with it, every thread's path (.in_flight)
        self.flights = in_flight.new_flights(threads, kernel.max_depth, virtual_loss)
        #: Node, pool and slot entries below ``counters`` that no node uses: the rest of
        #: the blocks of entries tree-parallel threads claimed (0 with one thread).
        self.unused = np.zeros(3, np.int64)
        self._actions = self._per_thread[0].actions
        self._root_state = self._per_thread[0].state.copy()
        self._root_state_history: list[int] | None = None
        # per thread: the tree arrays _run's arguments were built with, and the arguments
        # (_run_arguments)
        self._arguments: dict[int, tuple[tuple, tuple]] = {}
        self.entered = self._per_thread[0].entered
        self._claimed = np.zeros(2, np.int64)  # iterations claimed in a run, its budget (_run)
        self._team = (root_parallel.ThreadTeam(threads - 1, self.entered) if threads > 1
                      else None)
        self._load_compiled_code()

    def _load_compiled_code(self) -> None:
        """Call each compiled function once, so that loading (or compiling) it happens
        here rather than inside the first timed move."""
        self.set_root(self.game.new_initial_state())
        self._iterate(0, 0)
        self._copy_to_scratch()
        self.reset()
        ta.freeze_loaded_objects()

    # -- the hooks of ArrayTreeSearch ------------------------------------------------

    def node_actions(self, index: int):
        """The pyspiel actions of an opened node (chance: its outcomes), or None."""
        fields = self.nodes_i[:, index].tolist()
        if fields[CHILD] < 0:
            return None
        n1, n2, a0 = fields[N1], fields[N2], fields[ACTIONS]
        actions = self.pool[a0:a0 + n1 + n2].tolist()
        return tuple(actions[:n1]), tuple(actions[n1:])

    def _new_tree(self, state: pyspiel.State) -> int:
        self.unused[:] = 0
        self._set_root_state(state.history())
        return self._compiled.new_root(self.kernel.code, self._root_state, self.kernel.params,
                         self.kernel.data, self.nodes_i, self.nodes_f, self.counters)

    def _kept(self, order: np.ndarray) -> None:
        """Nothing to renumber: the nodes store no game state (``set_root`` replays it);
        the copy uses every entry."""
        self.unused[:] = 0

    def reset(self) -> None:
        super().reset()
        self.unused[:] = 0

    def set_root(self, state: pyspiel.State) -> KernelNode:
        root = super().set_root(state)
        if self._root_state_history != self._root_history:  # a kept subtree's new root
            self._set_root_state(self._root_history)
        return root

    def _set_root_state(self, history: list[int]) -> None:
        """``_root_state``: the array state after ``history``, kept if it is that already
        (a fresh tree at the same state: every fresh search of the benchmark), else copied
        from the root-parallel sibling or replayed from the kernel's initial state."""
        if self._root_state_history == history:
            return
        sibling = self.sibling
        if (isinstance(sibling, KernelSMMCTS) and sibling._root_state_history == history
                and sibling.game is self.game
                and sibling.kernel.module is self.kernel.module):
            self._root_state[:] = sibling._root_state
            self._root_state_history = list(history)
            return
        self._root_state_history = None
        self._root_state[:] = self.kernel.initial_state()
        kernel = self.kernel
        if not self._compiled.replay(kernel.code, kernel.params, kernel.data,
                                     np.array(history, np.int64), self._root_state,
                                     self._actions):
            raise ValueError(f"history {history} does not fit the kernel of {self.game}")
        self._root_state_history = list(history)  # the state _root_state holds

    def _iterate(self, root: int, iterations: int) -> int:
        """One thread's iterations (a tree-parallel search runs in :meth:`_search`)."""
        self._claimed[:] = (0, iterations)
        arrays = self._per_thread[0]
        arrays.done = 0
        self._run_thread(arrays, root, iterations)
        if arrays.done < iterations:
            self._grow()
        return arrays.done

    def _search(self, root: int, iterations: int | None, deadline: float | None) -> int:
        """With several threads: every thread searches from the start of a run to its end
        (the budget, the deadline or full arrays), taking iterations from the shared budget;
        the calling thread checks the clock between chunks of its own and stops the others.
        The arrays grow between runs."""
        if self._team is None:
            return super()._search(root, iterations, deadline)
        done = 0
        while iterations is None or done < iterations:
            done += self._shared_run(root, _UNBOUNDED if iterations is None
                                     else iterations - done, deadline)
            if deadline is not None and time.perf_counter() >= deadline:
                break  # (growing now would copy the tree after the deadline)
            if not self.has_room() and not self._grow():
                break
        return done

    def _shared_run(self, root: int, budget: int, deadline: float | None) -> int:
        self._claimed[:] = (0, budget)
        start = self._root_statistics(root)
        for arrays in self._per_thread:
            arrays.done = 0
            arrays.own[:] = 0
            arrays.own_f[:] = start[0]
            arrays.own_slots[:] = start[1]
        others = [functools.partial(self._run_thread, arrays, root, _UNBOUNDED)
                  for arrays in self._per_thread[1:]]
        assert self._team is not None
        try:
            self._team.run(functools.partial(self._lead, root, deadline), others)
        finally:
            self._merge_root_statistics(root, start)
        return sum(arrays.done for arrays in self._per_thread)

    def _root_statistics(self, root: int) -> tuple[np.ndarray, np.ndarray]:
        """The root's ``X, n`` and, laid out as a thread's ``own_slots``, its statistics
        (zero while it is not opened)."""
        f = self.nodes_f[[ta.X, ta.VISITS], root].copy()
        slots = np.zeros_like(self._per_thread[0].own_slots)
        n1, n2, s = (int(self.nodes_i[k, root]) for k in (N1, N2, ta.SLOT))
        if self.nodes_i[CHILD, root] >= 0 and self.nodes_i[ta.KIND, root] == ta.DECISION:
            slots[:, :n1 + n2] = self.slots[:, s:s + n1 + n2]
        return f, slots

    def _merge_root_statistics(self, root: int, start: tuple[np.ndarray, np.ndarray]) -> None:
        """Write the root's statistics back into the tree after a run: what it had at the
        start plus each thread's additions (every one of them is a sum), and count the
        entries the threads' blocks left unused."""
        extra = len(self._per_thread) - 1
        f = sum(arrays.own_f for arrays in self._per_thread) - extra * start[0]
        self.nodes_f[[ta.X, ta.VISITS], root] = f
        if f[1] > 0:
            self.nodes_f[ta.MEAN, root] = f[0] / f[1]
        n1, n2, s = (int(self.nodes_i[k, root]) for k in (N1, N2, ta.SLOT))
        if self.nodes_i[CHILD, root] >= 0 and self.nodes_i[ta.KIND, root] == ta.DECISION:
            slots = sum(arrays.own_slots[:, :n1 + n2] for arrays in self._per_thread)
            slots -= extra * start[1][:, :n1 + n2]
            self.slots[[STAT, COUNT, ta.AVERAGE], s:s + n1 + n2] = slots[:3]
        for arrays in self._per_thread:
            own = arrays.own
            self.unused += (own[ta.OWN_UNUSED:ta.OWN_UNUSED + 3]
                            + own[ta.OWN_END:ta.OWN_END + 3] - own[:3])

    def _lead(self, root: int, deadline: float | None) -> None:
        """The calling thread's part of a shared run: in chunks of its own of about
        ``CHECK_EVERY`` seconds under a time limit, ``INTERRUPT_EVERY`` under an iteration
        budget alone (where a Ctrl-C is seen), then it stops the other threads."""
        arrays = self._per_thread[0]
        try:
            chunk = 16
            searching = time.perf_counter()
            while self._run_thread(arrays, root, chunk) == chunk:
                now = time.perf_counter()
                if deadline is not None and now >= deadline:
                    break
                rate = arrays.done / max(now - searching, 1e-6)
                chunk = (ta.next_chunk(chunk, rate, math.inf, ta.INTERRUPT_EVERY)
                         if deadline is None else ta.next_chunk(chunk, rate, deadline - now))
        finally:
            self._claimed[1] = -1  # the others stop after their current iteration

    def _run_thread(self, arrays: ThreadArrays, root: int, iterations: int) -> int:
        """Up to ``iterations`` iterations on one thread (fewer when the shared budget runs
        out or the arrays are full); how many."""
        done = self._compiled.run(iterations, root, *self._run_arguments(arrays))
        arrays.done += done
        return done

    def _run_arguments(self, arrays: ThreadArrays) -> tuple:
        """``_run``'s arguments after ``iterations, root`` for one thread, built once and
        again only when the tree's arrays were replaced (growth, re-rooting): gathering 31
        attributes was a tenth of the Python of a two-tree move)."""
        tree = (self.nodes_i, self.nodes_f, self.pool, self.slots)
        kept = self._arguments.get(id(arrays))
        if kept is not None and all(a is b for a, b in zip(kept[0], tree)):
            return kept[1]
        kernel = self.kernel
        path = arrays.path
        arguments = (
            self._root_state, kernel.code, kernel.params, kernel.data, self._evaluator_code,
            self._selector_code, self.propagate_mean, self._track_average, self._config,
            *tree, self.counters, arrays.rng, arrays.state, path[0], path[1], path[2],
            arrays.probs, arrays.actions, arrays.outcomes, arrays.outcome_probs, self._rooms,
            self._blocks, arrays.entered, self._claimed, arrays.own, arrays.own_f,
            arrays.own_slots, self.threads > 1, self.flights, arrays.index, arrays.alive,
            arrays.loss_scratch)
        self._arguments[id(arrays)] = (tree, arguments)
        return arguments
