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

The compiled functions call the built-in kernels through :mod:`smmcts_spiel.games.kernels`'
dispatch (one engine for every built-in game, cached by numba). A user's kernel
(``kernels.register_kernel``) gets its own copy of them, compiled over its dispatch
(:func:`compiled_for`).
"""

from __future__ import annotations

import functools
import types

import numba
import numpy as np
import pyspiel

from smmcts_spiel.games import kernels
from smmcts_spiel.search import tree_arrays as ta
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
# Compiled core.


@ta.inlined
def _new_node(code, state, params, data, nodes_i, nodes_f, counters):
    kind = kernels.status(code, state, params, data)
    u1 = kernels.returns(code, state, params, data) if kind == TERMINAL else 0.0
    return ta.new_node(kind, u1, nodes_i, nodes_f, counters)


@ta.inlined
def _open(node, code, state, params, data, nodes_i, pool, slots, counters, actions_out, outcomes,
          outcome_probs):
    """First visit of a node: its children table, its actions and its statistics."""
    if nodes_i[KIND, node] == CHANCE:
        n1 = kernels.chance_outcomes(code, state, params, data, outcomes, outcome_probs)
        a0 = ta.open_node(node, n1, 1, n1 + 1, nodes_i, pool, slots, counters)
        s = nodes_i[SLOT, node]
        for o in range(n1):
            pool[a0 + o] = outcomes[o]
            slots[PROB, s + o] = outcome_probs[o]
        pool[a0 + n1] = -1
        return
    n1 = kernels.legal_actions(code, state, params, data, 0, actions_out)
    n2 = kernels.legal_actions(code, state, params, data, 1, actions_out[max(n1, 1):])
    if n1 == 0:
        actions_out[0] = -1
        n1 = 1
    if n2 == 0:
        actions_out[n1] = -1
        n2 = 1
    a0 = ta.open_node(node, n1, n2, n1 + n2, nodes_i, pool, slots, counters)
    for a in range(n1 + n2):
        pool[a0 + a] = actions_out[a]


@ta.inlined
def _iteration(root, root_state, code, params, data, evaluator, selector, mean_variant,
               track_average, config, nodes_i, nodes_f, pool, slots, counters, rng, state,
               path_node, path_i, path_j, actions_out, outcomes, outcome_probs):
    """One iteration of Alg. 1 from the root: descend (replaying the moves), then back up."""
    for k in range(len(state)):
        state[k] = root_state[k]
    node = root
    depth = 0
    u = 0.0
    gamma = config[GAMMA]
    c = config[C]
    while True:
        kind = nodes_i[KIND, node]
        if kind == TERMINAL:
            u = nodes_f[U1, node]
            break
        if nodes_i[CHILD, node] < 0:
            _open(node, code, state, params, data, nodes_i, pool, slots, counters, actions_out,
                  outcomes, outcome_probs)
        c0 = nodes_i[CHILD, node]
        n1 = nodes_i[N1, node]
        s = nodes_i[SLOT, node]
        a0 = nodes_i[ACTIONS, node]
        if kind == CHANCE:
            o = ta.sample_index(slots[PROB, s:s + n1], rng.random())
            kernels.apply_chance(code, state, params, data, pool[a0 + o])
            child = pool[c0 + o]
            if child < 0:
                child = _new_node(code, state, params, data, nodes_i, nodes_f, counters)
                pool[c0 + o] = child
            path_node[depth] = node
            depth += 1
            node = child
            continue
        n2 = nodes_i[N2, node]
        if nodes_i[EXPANDED, node] < n1 * n2:
            # Expansion: a uniformly random joint action among those never tried.
            a = ta.untried_joint_action(pool, c0, n1 * n2, n1 * n2 - nodes_i[EXPANDED, node],
                                        rng.random())
            kernels.apply_actions(code, state, params, data, pool[a0 + a // n2],
                                  pool[a0 + n1 + a % n2])
            child = _new_node(code, state, params, data, nodes_i, nodes_f, counters)
            if nodes_i[KIND, child] == TERMINAL:
                u = nodes_f[U1, child]
            else:
                u = kernels.evaluate(code, evaluator, state, params, data, rng)
            ta.expand(node, a, child, u, selector, track_average, config, nodes_i, nodes_f,
                      pool, slots)
            break
        u1 = rng.random() if n1 > 1 else 0.0
        i = ta.select(selector, slots[STAT, s:s + n1], slots[COUNT, s:s + n1], gamma, c,
                      slots[PROB, s:s + n1], u1)
        u2 = rng.random() if n2 > 1 else 0.0
        j = ta.select(selector, slots[STAT, s + n1:s + n1 + n2],
                      slots[COUNT, s + n1:s + n1 + n2], gamma, c, slots[PROB, s + n1:s + n1 + n2],
                      u2)
        kernels.apply_actions(code, state, params, data, pool[a0 + i], pool[a0 + n1 + j])
        path_node[depth] = node
        path_i[depth] = i
        path_j[depth] = j
        depth += 1
        node = pool[c0 + i * n2 + j]
    return ta.back_up(depth, u, path_node, path_i, path_j, mean_variant, selector,
                      track_average, config, nodes_i, nodes_f, pool, slots)


# _nrt is a documented-in-source numba option that its type hints do not list.
@numba.njit(cache=True, error_model="numpy", _nrt=False, nogil=True)  # type: ignore[call-overload]
def _run(iterations, root, root_state, code, params, data, evaluator, selector, mean_variant,
         track_average, config, nodes_i, nodes_f, pool, slots, counters, rng, state, path_node,
         path_i, path_j, actions_out, outcomes, outcome_probs, node_room, pool_room, entered):
    """Run up to ``iterations`` iterations; stops early when the arrays may overflow.

    ``node_room`` / ``pool_room``: the most nodes / pool (and slot) entries one iteration
    can add. ``entered[0]`` counts the calls, incremented once the interpreter lock is
    released (root parallelism wakes a tree's thread on it). Returns the number of
    iterations done.
    """
    entered[0] += 1
    done = 0
    while done < iterations:
        if (counters[NUM_NODES] + node_room > nodes_i.shape[1]
                or counters[POOL_USED] + pool_room > len(pool)
                or counters[SLOTS_USED] + pool_room > slots.shape[1]):
            break
        _iteration(root, root_state, code, params, data, evaluator, selector, mean_variant,
                   track_average, config, nodes_i, nodes_f, pool, slots, counters, rng, state,
                   path_node, path_i, path_j, actions_out, outcomes, outcome_probs)
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


# The compiled functions that call a kernel, and those of them numba caches on disk.
_KERNEL_CALLERS = ("_new_node", "_open", "_iteration", "_run", "_replay", "_new_root")
_CACHED = ("_run", "_replay", "_new_root")
_BUILT_IN = types.SimpleNamespace(run=_run, replay=_replay, new_root=_new_root)


@functools.cache
def compiled_for(module: types.ModuleType) -> types.SimpleNamespace:
    """The engine's kernel-calling functions (``run``, ``replay``, ``new_root``) compiled
    over a user's kernel module: the same source, with ``kernels`` bound to the module's
    dispatch (:func:`smmcts_spiel.games.kernels.dispatch_for`).

    Compiling takes as long as the built-in engine's first compile (tens of seconds). numba
    caches the result under a name that holds a hash of the module's source file (an edit
    recompiles; a module without a file is compiled in every process); like every cached
    caller it does not notice edits to the files the module imports.
    """
    tag = kernels.source_tag(module)
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


#: A node of a :class:`KernelSMMCTS` tree (the shared read-only view).
KernelNode = ArrayNode


class KernelSMMCTS(ArrayTreeSearch):
    """SM-MCTS on a game kernel; the interface of :class:`.smmcts.SMMCTS`.

    Args as :class:`.smmcts.SMMCTS`, except that the evaluator is the name of one of the
    kernel's compiled leaf evaluators (:data:`smmcts_spiel.games.kernels.EVALUATORS`):
    "random_rollout" (default) or "heuristic". Raises ValueError if the game has no kernel.
    """

    def __init__(self, game: pyspiel.Game, selector: str = "rm", gamma: float | None = None,
                 c: float | None = None, final_strategy: str = "empirical",
                 evaluator: str = "random_rollout", seed: int | None = None,
                 initial_nodes: int = 1 << 16, threshold: float = 0.0,
                 max_memory: int = ta.DEFAULT_MAX_MEMORY):
        check_game(game)
        kernel = kernels.kernel_for(game)
        if kernel is None:
            raise ValueError(f"no game kernel covers {game}: use smmcts_spiel.search."
                             "array_engine.ArraySMMCTS (the generic engine), which searches "
                             "any pyspiel game")
        if evaluator not in kernels.EVALUATORS:
            raise ValueError(f"evaluator must be one of {', '.join(kernels.EVALUATORS)} "
                             f"(compiled leaf evaluators of the game kernel), got {evaluator!r}")
        joint = kernel.max_actions ** 2
        width = (joint + ta.block_count(ta.DECISION, joint) + 2 * kernel.max_actions
                 + 2 * kernel.max_chance_outcomes)
        super().__init__(game, selector, gamma, c, final_strategy,
                         node_room=kernel.max_depth + 1,
                         pool_room=(kernel.max_depth + 1) * width, initial_nodes=initial_nodes,
                         assumed_rate=2e6, threshold=threshold, max_memory=max_memory)
        self.kernel = kernel
        self._compiled = (compiled_for(kernel.module) if kernel.code == kernels.USER_CODE
                          else _BUILT_IN)
        self.evaluator = evaluator
        self._evaluator_code = kernels.EVALUATORS[evaluator]
        self._rng = np.random.default_rng(seed)
        self._state = np.zeros_like(kernel.initial_state())
        self._root_state = self._state.copy()
        self._root_state_history: list[int] | None = None
        self._path = np.zeros((3, kernel.max_depth + 1), np.int64)
        self._actions = np.zeros(2 * kernel.max_actions + 2, np.int64)
        self._outcomes = np.zeros(kernel.max_chance_outcomes, np.int64)
        self._outcome_probs = np.zeros(kernel.max_chance_outcomes)
        self.entered = np.zeros(1, np.int64)  # calls of the compiled iterations (_run)
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
        self._set_root_state(state.history())
        return self._compiled.new_root(self.kernel.code, self._root_state, self.kernel.params,
                         self.kernel.data, self.nodes_i, self.nodes_f, self.counters)

    def _kept(self, order: np.ndarray) -> None:
        """Nothing to renumber: the nodes store no game state (``set_root`` replays it)."""

    def set_root(self, state: pyspiel.State) -> KernelNode:
        root = super().set_root(state)
        if self._root_state_history != self._root_history:  # a kept subtree's new root
            self._set_root_state(self._root_history)
        return root

    def _set_root_state(self, history: list[int]) -> None:
        self._root_state_history = None
        self._root_state[:] = self.kernel.initial_state()
        kernel = self.kernel
        if not self._compiled.replay(kernel.code, kernel.params, kernel.data,
                                     np.array(history, np.int64), self._root_state,
                                     self._actions):
            raise ValueError(f"history {history} does not fit the kernel of {self.game}")
        self._root_state_history = list(history)  # the state _root_state holds

    def _iterate(self, root: int, iterations: int) -> int:
        kernel = self.kernel
        done = self._compiled.run(
            iterations, root, self._root_state, kernel.code, kernel.params, kernel.data,
            self._evaluator_code, self._selector_code, self.propagate_mean, self._track_average,
            self._config, self.nodes_i, self.nodes_f, self.pool, self.slots, self.counters,
            self._rng, self._state, self._path[0], self._path[1], self._path[2], self._actions,
            self._outcomes, self._outcome_probs, self._node_room, self._pool_room, self.entered)
        if done < iterations:
            self._grow()
        return done

