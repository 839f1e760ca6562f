"""SM-MCTS compiled with numba over a game kernel: the fast path of :class:`SMMCTSBot`.

The same algorithm as :class:`smmcts_spiel.search.smmcts.SMMCTS` (read its docstring; the
selectors' formulas are those of :mod:`.selectors`, compiled as they are), for games that
have a kernel (:mod:`smmcts_spiel.games.kernels`): selection, expansion, the leaf evaluation
and the update of whole iterations run compiled, on array game states, with the tree in
flat arrays:

* per node (``nodes_i[field, node]``, ``nodes_f[field, node]``): kind, number of actions
  of each player (chance: outcomes), offsets into the pools, expanded children, and the
  sums ``X``, visits ``n`` and terminal value;
* a node is *opened* on its first visit: its children table (joint action ``i * n2 + j``,
  or chance outcome, -1 while missing) and its pyspiel actions go to ``pool``, its
  per-action statistics (selector statistic, count, sum of sampling distributions, current
  distribution; chance: outcome probabilities) to ``slots[field, slot]``.

Each iteration replays the actions from the root's array state, so nodes store no state.
The random stream is a numpy Generator owned by the search (same seed, same tree), not the
one of the generic engine, so the two paths agree in distribution, not draw for draw.
Iterations run in chunks sized from the measured rate so that a time limit is checked about
every 2 ms; the arrays grow between chunks.
"""

from __future__ import annotations

import time

import numba
import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.games import kernels
from smmcts_spiel.search import selectors
from smmcts_spiel.search.smmcts import (
    FINAL_STRATEGIES,
    SearchPolicy,
    check_game,
    check_threshold,
    final_probabilities,
)

SELECTOR_CODES = {"rm": 0, "exp3": 1, "ucb": 2}
TERMINAL, CHANCE, DECISION = kernels.TERMINAL, kernels.CHANCE, kernels.DECISION
# nodes_i fields
KIND, N1, N2, CHILD, ACTIONS, SLOT, EXPANDED = range(7)
# nodes_f fields
X, VISITS, U1 = range(3)
# slots fields
STAT, COUNT, AVERAGE, PROB = range(4)
# counters
NUM_NODES, POOL_USED, SLOTS_USED = range(3)
# config (floats)
GAMMA, C, INV_SCALE, UTILITY_SUM = range(4)

_CHECK_EVERY = 0.002  # seconds between clock checks under a time limit

_inlined = numba.njit(inline="always", error_model="numpy")
_rm_probabilities = _inlined(selectors.regret_matching_probabilities)
_exp3_probabilities = _inlined(selectors.exp3_probabilities)
_sample_index = _inlined(selectors.sample_index)
_ucb_index = _inlined(selectors.ucb_index)
_ucb_index_random_ties = _inlined(selectors.ucb_index_random_ties)


# ----------------------------------------------------------------------------------------
# Compiled core.


@_inlined
def _new_node(code, state, params, data, nodes_i, nodes_f, counters):
    node = counters[NUM_NODES]
    counters[NUM_NODES] += 1
    kind = kernels.status(code, state, params, data)
    nodes_i[KIND, node] = kind
    nodes_i[N1, node] = 0
    nodes_i[N2, node] = 0
    nodes_i[CHILD, node] = -1
    nodes_i[EXPANDED, node] = 0
    nodes_f[X, node] = 0.0
    nodes_f[VISITS, node] = 0.0
    nodes_f[U1, node] = kernels.returns(code, state, params, data) if kind == TERMINAL else 0.0
    return node


@_inlined
def _open(node, code, state, params, data, nodes_i, pool, slots, counters, actions_out, outcomes,
          outcome_probs):
    """First visit of a node: its children table, its actions and its statistics."""
    if nodes_i[KIND, node] == CHANCE:
        n1 = kernels.chance_outcomes(code, state, params, data, outcomes, outcome_probs)
        n2 = 1
        width = n1
    else:
        n1 = kernels.legal_actions(code, state, params, data, 0, actions_out)
        n2 = kernels.legal_actions(code, state, params, data, 1, actions_out[max(n1, 1):])
        if n1 == 0:
            actions_out[0] = -1
            n1 = 1
        if n2 == 0:
            actions_out[n1] = -1
            n2 = 1
        width = n1 * n2
    p = counters[POOL_USED]
    counters[POOL_USED] += width + n1 + n2
    s = counters[SLOTS_USED]
    counters[SLOTS_USED] += n1 + n2
    nodes_i[N1, node] = n1
    nodes_i[N2, node] = n2
    nodes_i[CHILD, node] = p
    nodes_i[ACTIONS, node] = p + width
    nodes_i[SLOT, node] = s
    for a in range(width):
        pool[p + a] = -1
    for a in range(n1 + n2):
        slots[STAT, s + a] = 0.0
        slots[COUNT, s + a] = 0.0
        slots[AVERAGE, s + a] = 0.0
        slots[PROB, s + a] = 0.0
    if nodes_i[KIND, node] == CHANCE:
        for o in range(n1):
            pool[p + width + o] = outcomes[o]
            slots[PROB, s + o] = outcome_probs[o]
        pool[p + width + n1] = -1
    else:
        for a in range(n1 + n2):
            pool[p + width + a] = actions_out[a]


@_inlined
def _probabilities(selector, stat, counts, gamma, c, out):
    if selector == 0:
        _rm_probabilities(stat, gamma, out)
    elif selector == 1:
        _exp3_probabilities(stat, gamma, out)
    else:
        best = _ucb_index(stat, counts, c)
        for a in range(len(out)):
            out[a] = 0.0
        out[best] = 1.0
    return out


@_inlined
def _player_update(selector, action, reward, probs, stat, counts, average, track_average,
                   sibling_children, nodes_f, player, config):
    """One player's Update at a node: ``sibling_children[a]`` is the child had it played a."""
    n = len(probs)
    counts[action] += 1.0
    if n == 1:
        return
    if track_average:
        for a in range(n):
            average[a] += probs[a]
    if selector == 0:
        inv_scale = config[INV_SCALE]
        for a in range(n):
            child = sibling_children[a]
            if a != action and child >= 0:
                mean = nodes_f[X, child] / nodes_f[VISITS, child]
                if player == 1:
                    mean = config[UTILITY_SUM] - mean
                stat[a] += mean * inv_scale - reward
    elif selector == 1:
        stat[action] += reward / probs[action]
    else:
        stat[action] += reward


@_inlined
def _update(node, i, j, u1, fresh, selector, track_average, config, nodes_i, nodes_f, pool,
            slots):
    """Update(h, i, j, u1) of Alg. 1: each player's selector learns from its own reward."""
    n1 = nodes_i[N1, node]
    n2 = nodes_i[N2, node]
    s = nodes_i[SLOT, node]
    c0 = nodes_i[CHILD, node]
    p1 = slots[PROB, s:s + n1]
    p2 = slots[PROB, s + n1:s + n1 + n2]
    if not fresh:
        if n1 > 1:
            _probabilities(selector, slots[STAT, s:s + n1], slots[COUNT, s:s + n1],
                           config[GAMMA], config[C], p1)
        if n2 > 1:
            _probabilities(selector, slots[STAT, s + n1:s + n1 + n2],
                           slots[COUNT, s + n1:s + n1 + n2], config[GAMMA], config[C], p2)
    reward1 = u1 * config[INV_SCALE]
    reward2 = (config[UTILITY_SUM] - u1) * config[INV_SCALE]
    _player_update(selector, i, reward1, p1, slots[STAT, s:s + n1], slots[COUNT, s:s + n1],
                   slots[AVERAGE, s:s + n1], track_average, pool[c0 + j:c0 + n1 * n2:n2],
                   nodes_f, 0, config)
    _player_update(selector, j, reward2, p2, slots[STAT, s + n1:s + n1 + n2],
                   slots[COUNT, s + n1:s + n1 + n2], slots[AVERAGE, s + n1:s + n1 + n2],
                   track_average, pool[c0 + i * n2:c0 + (i + 1) * n2], nodes_f, 1, config)


@_inlined
def _select(selector, stat, counts, gamma, c, probs, rng):
    """A player's action; ``probs`` gets the selector's distribution (for the average)."""
    if len(probs) == 1:
        probs[0] = 1.0
        return 0
    _probabilities(selector, stat, counts, gamma, c, probs)
    if selector == 2:
        return _ucb_index_random_ties(stat, counts, c, rng.random())
    return _sample_index(probs, rng.random())


@_inlined
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
            o = _sample_index(slots[PROB, s:s + n1], rng.random())
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
            untried = n1 * n2 - nodes_i[EXPANDED, node]
            target = min(int(rng.random() * untried), untried - 1)
            a = 0
            while True:
                if pool[c0 + a] < 0:
                    if target == 0:
                        break
                    target -= 1
                a += 1
            i = a // n2
            j = a % n2
            kernels.apply_actions(code, state, params, data, pool[a0 + i], pool[a0 + n1 + j])
            child = _new_node(code, state, params, data, nodes_i, nodes_f, counters)
            pool[c0 + a] = child
            nodes_i[EXPANDED, node] += 1
            if nodes_i[KIND, child] == TERMINAL:
                u = nodes_f[U1, child]
            else:
                u = kernels.evaluate(code, evaluator, state, params, data, rng)
            nodes_f[X, child] += u
            nodes_f[VISITS, child] += 1.0
            _update(node, i, j, u, False, selector, track_average, config, nodes_i, nodes_f,
                    pool, slots)
            break
        i = _select(selector, slots[STAT, s:s + n1], slots[COUNT, s:s + n1], gamma, c,
                    slots[PROB, s:s + n1], rng)
        j = _select(selector, slots[STAT, s + n1:s + n1 + n2], slots[COUNT, s + n1:s + n1 + n2],
                    gamma, c, slots[PROB, s + n1:s + n1 + n2], rng)
        kernels.apply_actions(code, state, params, data, pool[a0 + i], pool[a0 + n1 + j])
        path_node[depth] = node
        path_i[depth] = i
        path_j[depth] = j
        depth += 1
        node = pool[c0 + i * n2 + j]
    for d in range(depth - 1, -1, -1):
        h = path_node[d]
        nodes_f[X, h] += u
        nodes_f[VISITS, h] += 1.0
        if nodes_i[KIND, h] == DECISION:
            _update(h, path_i[d], path_j[d], u, True, selector, track_average, config, nodes_i,
                    nodes_f, pool, slots)
        if mean_variant:
            u = nodes_f[X, h] / nodes_f[VISITS, h]
    return u


@numba.njit(cache=True, error_model="numpy", _nrt=False)
def _run(iterations, root, root_state, code, params, data, evaluator, selector, mean_variant,
         track_average, config, nodes_i, nodes_f, pool, slots, counters, rng, state, path_node,
         path_i, path_j, actions_out, outcomes, outcome_probs, node_room, pool_room):
    """Run up to ``iterations`` iterations; stops early when the arrays may overflow.

    ``node_room`` / ``pool_room``: the most nodes / pool (and slot) entries one iteration
    can add. Returns the number of iterations done.
    """
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


# ----------------------------------------------------------------------------------------
# Python side.


class KernelNode:
    """A read-only view of one node of a :class:`KernelSMMCTS` tree (as ``SearchNode``)."""

    __slots__ = ("_search", "index")

    def __init__(self, search: KernelSMMCTS, index: int):
        self._search = search
        self.index = index

    def _field(self, field: int) -> int:
        return int(self._search.nodes_i[field, self.index])

    @property
    def is_terminal(self) -> bool:
        return self._field(KIND) == TERMINAL

    @property
    def is_chance(self) -> bool:
        return self._field(KIND) == CHANCE

    @property
    def is_open(self) -> bool:
        return self._field(CHILD) >= 0

    @property
    def visits(self) -> int:
        return int(self._search.nodes_f[VISITS, self.index])

    @property
    def total(self) -> float:
        return float(self._search.nodes_f[X, self.index])

    def mean(self) -> float:
        return self.total / self.visits

    @property
    def actions(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Each player's pyspiel actions (``(INVALID_ACTION,)`` for a player not moving)."""
        if not self.is_open or self.is_chance:
            raise ValueError("only opened decision nodes list actions")
        n1, n2, a0 = self._field(N1), self._field(N2), self._field(ACTIONS)
        pool = self._search.pool
        return (tuple(int(a) for a in pool[a0:a0 + n1]),
                tuple(int(a) for a in pool[a0 + n1:a0 + n1 + n2]))

    @property
    def mover(self) -> int | None:
        """The only player to move here, or None at a simultaneous node."""
        first, second = self.actions
        if first == (pyspiel.INVALID_ACTION,):
            return 1
        if second == (pyspiel.INVALID_ACTION,):
            return 0
        return None

    def _slots(self, field: int, player: int) -> np.ndarray:
        n1, n2, s = self._field(N1), self._field(N2), self._field(SLOT)
        start, n = (s, n1) if player == 0 else (s + n1, n2)
        return self._search.slots[field, start:start + n]

    @property
    def counts(self) -> tuple[list[int], list[int]]:
        return tuple([int(x) for x in self._slots(COUNT, p)] for p in (0, 1))

    def strategy(self, player: int, final_strategy: str = "empirical",
                 exploration: float = 0.0, threshold: float = 0.0) -> list[float]:
        """The final strategy of ``player`` here (see ``smmcts.final_probabilities``)."""
        if not self.is_open or self.is_chance:
            raise ValueError("only decision nodes the search has opened (visited twice) have "
                             "strategies; KernelSMMCTS.strategy(state, player) answers anywhere")
        return final_probabilities(self._slots(COUNT, player).tolist(),
                                   self._slots(AVERAGE, player).tolist(), final_strategy,
                                   exploration, threshold)

    def child(self, player_actions) -> KernelNode | None:
        """The child after the given action of each player (chance: one action), or None."""
        index = self._search.child_index(self.index, player_actions)
        return None if index < 0 else KernelNode(self._search, index)


class KernelSMMCTS:
    """SM-MCTS on a game kernel; the interface of :class:`.smmcts.SMMCTS`.

    Args as :class:`.smmcts.SMMCTS`, except that the evaluator is the name of one of the
    kernel's compiled leaf evaluators (:data:`smmcts_spiel.games.kernels.EVALUATORS`):
    "random_rollout" (default) or "heuristic". Raises ValueError if the game has no kernel.
    """

    def __init__(self, game: pyspiel.Game, selector: str = "rm", gamma: float = 0.05,
                 c: float = 1.4, final_strategy: str = "empirical",
                 evaluator: str = "random_rollout", seed: int | None = None,
                 initial_nodes: int = 1 << 16, threshold: float = 0.0):
        check_game(game)
        kernel = kernels.kernel_for(game)
        if kernel is None:
            raise ValueError(f"no game kernel covers {game}: use smmcts_spiel.search.smmcts."
                             "SMMCTS (the generic engine), which searches any pyspiel game")
        base, self.propagate_mean = selectors.parse_selector(selector)
        if base == "ucb":
            c = selectors.check_c(c)
        else:
            gamma = selectors.check_gamma(gamma)
        if final_strategy not in FINAL_STRATEGIES:
            raise ValueError(f"final_strategy must be one of {', '.join(FINAL_STRATEGIES)}, "
                             f"got {final_strategy!r}")
        if evaluator not in kernels.EVALUATORS:
            raise ValueError(f"evaluator must be one of {', '.join(kernels.EVALUATORS)} "
                             f"(compiled leaf evaluators of the game kernel), got {evaluator!r}")
        self.game = game
        self.kernel = kernel
        self.selector = selector
        self.final_strategy = final_strategy
        self.threshold = check_threshold(threshold)
        self.evaluator = evaluator
        self._selector_code = SELECTOR_CODES[base]
        # The uniform exploration the selectors mix in (removed by average_no_exploration).
        self.exploration = 0.0 if base == "ucb" else float(gamma)
        self._evaluator_code = kernels.EVALUATORS[evaluator]
        scale = max(abs(game.min_utility()), abs(game.max_utility())) or 1.0
        self._config = np.array([gamma, c, 1.0 / scale, game.utility_sum()])
        self._rng = np.random.default_rng(seed)
        width = kernel.max_actions ** 2 + 2 * kernel.max_actions + 2 * kernel.max_chance_outcomes
        self._node_room = kernel.max_depth + 1
        self._pool_room = self._node_room * width
        self.nodes_i = np.zeros((7, initial_nodes), np.int64)
        self.nodes_f = np.zeros((3, initial_nodes))
        # Fresh zeros cost nothing until written: start large enough that moves of a
        # fraction of a second rarely pause to grow the arrays.
        self.pool = np.zeros(max(32 * initial_nodes, 2 * self._pool_room), np.int64)
        self.slots = np.zeros((4, max(8 * initial_nodes, 2 * self._pool_room)))
        self.counters = np.zeros(3, np.int64)
        self._state = np.zeros_like(kernel.initial_state())
        self._root_state = self._state.copy()
        self._path = np.zeros((3, kernel.max_depth + 1), np.int64)
        self._actions = np.zeros(2 * kernel.max_actions + 2, np.int64)
        self._outcomes = np.zeros(kernel.max_chance_outcomes, np.int64)
        self._outcome_probs = np.zeros(kernel.max_chance_outcomes)
        self.root: KernelNode | None = None
        self._root_history: list[int] = []
        self.last_iterations = 0  # iterations of the last run
        self._spare = None  # arrays to copy the kept subtree into when re-rooting
        self._load_compiled_code()

    def _load_compiled_code(self) -> None:
        """Call each compiled function once, so that loading (or compiling) it happens
        here rather than inside the first timed move."""
        self.set_root(self.game.new_initial_state())
        self._iterate(0, 0)
        _copy_subtree(0, self.nodes_i, self.nodes_f, self.pool, self.slots, self.counters,
                      self.nodes_i[:, :1].copy(), self.nodes_f[:, :1].copy(), self.pool[:0],
                      self.slots[:, :0].copy(), np.zeros(3, np.int64),
                      np.full(1, -1, np.int64))
        self.reset()

    # -- tree management ---------------------------------------------------------------

    def set_root(self, state: pyspiel.State) -> KernelNode:
        """Make ``state`` the root, keeping the subtree of the current tree if it has one."""
        history = state.history()
        if self.root is not None and history[:len(self._root_history)] == self._root_history:
            index = self._descend(self.root.index, history[len(self._root_history):])
            if index > 0:
                index = self._keep_only_subtree(index)
            if index >= 0:
                self.root, self._root_history = KernelNode(self, index), history
                self._set_root_state(history)
                return self.root
        self.counters[:] = 0
        self._set_root_state(history)
        index = _new_root(self.kernel.code, self._root_state, self.kernel.params, self.kernel.data,
                          self.nodes_i,
                          self.nodes_f, self.counters)
        self.root, self._root_history = KernelNode(self, index), history
        return self.root

    def _keep_only_subtree(self, index: int) -> int:
        """Copy the subtree of node ``index`` into the spare arrays (it becomes node 0) and
        swap them in, so the memory of a game-long search stays that of the kept subtree;
        returns 0. The two sets of arrays are reused: allocating and freeing arrays of
        hundreds of megabytes inside a timed move would take tens of milliseconds."""
        arrays = (self.nodes_i, self.nodes_f, self.pool, self.slots)
        spare = self._spare
        if spare is None or any(s.shape[-1] < a.shape[-1] for s, a in zip(spare, arrays)):
            spare = tuple(np.zeros(a.shape, a.dtype) for a in arrays)
        counters = np.zeros(3, np.int64)
        _copy_subtree(index, *arrays, self.counters, *spare, counters,
                      np.full(int(self.counters[NUM_NODES]), -1, np.int64))
        self._spare = arrays
        self.nodes_i, self.nodes_f, self.pool, self.slots = spare
        self.counters = counters
        return 0

    def _set_root_state(self, history: list[int]) -> None:
        self._root_state[:] = self.kernel.initial_state()
        kernel = self.kernel
        if not _replay(kernel.code, kernel.params, kernel.data, np.array(history, np.int64),
                       self._root_state, self._actions):
            raise ValueError(f"history {history} does not fit the kernel of {self.game}")

    def reset(self) -> None:
        self.root, self._root_history = None, []
        self.counters[:] = 0

    def find(self, state: pyspiel.State) -> KernelNode | None:
        """The tree's node for ``state``, or None if the search never went there."""
        if self.root is None:
            return None
        history = state.history()
        if history[:len(self._root_history)] != self._root_history:
            return None
        index = self._descend(self.root.index, history[len(self._root_history):])
        return None if index < 0 else KernelNode(self, index)

    def child_index(self, node: int, player_actions) -> int:
        """The child of ``node`` after the given actions (chance: one outcome), or -1."""
        nodes_i, pool = self.nodes_i, self.pool
        if nodes_i[CHILD, node] < 0 or nodes_i[KIND, node] == TERMINAL:
            return -1
        n1, n2 = int(nodes_i[N1, node]), int(nodes_i[N2, node])
        c0, a0 = int(nodes_i[CHILD, node]), int(nodes_i[ACTIONS, node])
        if nodes_i[KIND, node] == CHANCE:
            hits = np.flatnonzero(pool[a0:a0 + n1] == player_actions[0])
            return int(pool[c0 + hits[0]]) if hits.size else -1
        i = np.flatnonzero(pool[a0:a0 + n1] == player_actions[0])
        j = np.flatnonzero(pool[a0 + n1:a0 + n1 + n2] == player_actions[1])
        if not i.size or not j.size:
            return -1
        return int(pool[c0 + i[0] * n2 + j[0]])

    def _descend(self, node: int, moves) -> int:
        """Follow history entries (one per chance or single move, two per joint move)."""
        k = 0
        while k < len(moves):
            if node < 0 or self.nodes_i[KIND, node] == TERMINAL or self.nodes_i[CHILD, node] < 0:
                return -1
            view = KernelNode(self, node)
            if view.is_chance:
                node, k = self.child_index(node, (moves[k],)), k + 1
            elif view.mover is None:
                if k + 1 >= len(moves):
                    return -1
                node, k = self.child_index(node, (moves[k], moves[k + 1])), k + 2
            else:
                pair = [pyspiel.INVALID_ACTION, pyspiel.INVALID_ACTION]
                pair[view.mover] = moves[k]
                node, k = self.child_index(node, pair), k + 1
        return node

    def _grow(self) -> None:
        """Enlarge (4x) the arrays that may overflow in the next iteration.

        Only the used part is copied: numpy's fresh zeros are not touched until written,
        so a large capacity costs no time (this bounds the pause of a timed move).
        """
        def enlarged(array, used):
            bigger = np.zeros(array.shape[:-1] + (4 * array.shape[-1],), array.dtype)
            bigger[..., :used] = array[..., :used]
            return bigger
        nodes, pool, slots = (int(x) for x in self.counters)
        if nodes + self._node_room > self.nodes_i.shape[1]:
            self.nodes_i, self.nodes_f = enlarged(self.nodes_i, nodes), enlarged(self.nodes_f,
                                                                                  nodes)
        if pool + self._pool_room > len(self.pool):
            self.pool = enlarged(self.pool, pool)
        if slots + self._pool_room > self.slots.shape[1]:
            self.slots = enlarged(self.slots, slots)

    # -- running -----------------------------------------------------------------------

    def _iterate(self, root: int, iterations: int) -> int:
        kernel = self.kernel
        done = _run(iterations, root, self._root_state, kernel.code, kernel.params, kernel.data,
                    self._evaluator_code, self._selector_code, self.propagate_mean,
                    self.final_strategy.startswith("average"), self._config, self.nodes_i,
                    self.nodes_f, self.pool, self.slots, self.counters, self._rng,
                    self._state, self._path[0], self._path[1], self._path[2], self._actions,
                    self._outcomes, self._outcome_probs, self._node_room, self._pool_room)
        if done < iterations:
            self._grow()
        return done

    def run(self, state: pyspiel.State, iterations: int | None = 1000,
            time_limit: float | None = None) -> KernelNode:
        """Search from ``state`` until ``iterations`` are done or ``time_limit`` seconds pass.

        Pass ``iterations=None`` to search by time alone. Returns the root node.
        """
        start = time.perf_counter()
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        if state.is_terminal():
            raise ValueError("cannot search from a terminal state: the game is over")
        root = self.set_root(state).index
        done = 0
        if time_limit is None:
            while done < iterations:
                done += self._iterate(root, iterations - done)
            self.last_iterations = done
            return self.root
        deadline = start + time_limit
        chunk = 16
        searching = time.perf_counter()
        while iterations is None or done < iterations:
            todo = chunk if iterations is None else min(chunk, iterations - done)
            done += self._iterate(root, todo)
            now = time.perf_counter()
            if now >= deadline:
                break
            # Size the next chunk to about _CHECK_EVERY seconds from the average rate so far
            # (a single chunk's rate swings with the tree and with the machine's load), at
            # most doubling it.
            rate = done / max(now - searching, 1e-6)
            chunk = int(max(1, min(2 * chunk, rate * min(_CHECK_EVERY, deadline - now))))
        self.last_iterations = done
        return self.root

    # -- results -----------------------------------------------------------------------

    def strategy(self, state: pyspiel.State, player: int) -> dict[int, float]:
        """``player``'s final strategy at ``state``: uniform where the search never went."""
        node = self.find(state)
        if (node is not None and node.is_open and not node.is_chance and not node.is_terminal
                and node.mover in (None, player)):
            return dict(zip(node.actions[player],
                            node.strategy(player, self.final_strategy, self.exploration,
                                          self.threshold)))
        actions = state.legal_actions(player)
        return {a: 1.0 / len(actions) for a in actions}

    def policy(self) -> SearchPolicy:
        return SearchPolicy(self)


@numba.njit(cache=True)
def _new_root(code, state, params, data, nodes_i, nodes_f, counters):
    return _new_node(code, state, params, data, nodes_i, nodes_f, counters)


@numba.njit(cache=True)
def _copy_subtree(root, nodes_i, nodes_f, pool, slots, counters, new_nodes_i, new_nodes_f,
                  new_pool, new_slots, new_counters, new_index):
    """Copy the subtree of ``root`` into the ``new_*`` arrays, numbered breadth first.

    ``new_index`` (one -1 per old node) maps old node numbers to new ones."""
    new_index[root] = 0
    new_counters[NUM_NODES] = 1
    queue = np.empty(counters[NUM_NODES], np.int64)
    queue[0] = root
    head = 0
    tail = 1
    while head < tail:
        old = queue[head]
        head += 1
        new = new_index[old]
        for f in range(nodes_i.shape[0]):
            new_nodes_i[f, new] = nodes_i[f, old]
        for f in range(nodes_f.shape[0]):
            new_nodes_f[f, new] = nodes_f[f, old]
        c0 = nodes_i[CHILD, old]
        if c0 < 0:
            continue
        n1 = nodes_i[N1, old]
        n2 = nodes_i[N2, old]
        width = n1 if nodes_i[KIND, old] == CHANCE else n1 * n2
        p = new_counters[POOL_USED]
        new_counters[POOL_USED] += width + n1 + n2
        new_nodes_i[CHILD, new] = p
        new_nodes_i[ACTIONS, new] = p + width
        for a in range(width):
            child = pool[c0 + a]
            if child >= 0:
                new_index[child] = new_counters[NUM_NODES]
                new_counters[NUM_NODES] += 1
                queue[tail] = child
                tail += 1
                new_pool[p + a] = new_index[child]
            else:
                new_pool[p + a] = -1
        a0 = nodes_i[ACTIONS, old]
        for a in range(n1 + n2):
            new_pool[p + width + a] = pool[a0 + a]
        s = nodes_i[SLOT, old]
        t = new_counters[SLOTS_USED]
        new_counters[SLOTS_USED] += n1 + n2
        new_nodes_i[SLOT, new] = t
        for f in range(slots.shape[0]):
            for a in range(n1 + n2):
                new_slots[f, t + a] = slots[f, s + a]
