"""SM-MCTS over any pyspiel game, with the tree in flat arrays: the generic path of SMMCTSBot.

The algorithm of the reference engine (:class:`smmcts_spiel.search.smmcts.SMMCTS`, read its
docstring), with the statistics in the arrays of :mod:`.tree_arrays` and selection, Update
and back-up compiled (shared with :mod:`.kernel_engine`). pyspiel is touched only where a
node is created or a leaf evaluated:

* one compiled call (``_advance``) first finishes the pending step of the iteration in
  progress with what Python learnt about the new node (links it; after an expansion, records
  the leaf value and backs up the path), then runs iterations until one needs pyspiel: a
  decision node with an untried joint action, or a chance outcome never sampled. Iterations
  that end at a terminal node inside the tree never leave compiled code;
* Python then clones the stored pyspiel state of that node, applies the move, reads the
  child's returns / chance outcomes / legal actions, evaluates the leaf (after an
  expansion) and calls again. Each node keeps its pyspiel state until all its children
  exist, and its pyspiel actions in Python lists.

The compiled code draws its random numbers from CPython's Mersenne Twister (``random()``,
53 bits from two 32-bit words), started from the state of the ``random.Random(seed)`` the
reference engine would use, at the same points of the algorithm (selection, the expansion
rule, chance). So from the same seed and with the same evaluator both engines grow the same
tree, which the tests check node by node. The default evaluator differs: one random rollout
run by OpenSpiel in C++ (:class:`.evaluators.OpenSpielRolloutEvaluator`), three to four
times faster than the reference engine's Python rollout on OpenSpiel's C++ games.
"""

from __future__ import annotations

import operator
import random

import numba
import numpy as np
import pyspiel

from smmcts_spiel.search import tree_arrays as ta
from smmcts_spiel.search.evaluators import OpenSpielRolloutEvaluator
from smmcts_spiel.search.tree_arrays import (
    CHANCE,
    CHILD,
    COUNT,
    DECISION,
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
    TIES,
    U1,
    ArrayTreeSearch,
    C,
)

# The integers of a search (``ints``, one array so that a compiled call unpacks few
# arguments): the Mersenne Twister's 624 words and position, the search's own fields, the
# tree's counters (``tree_arrays.NUM_NODES`` ...), then the path (nodes, then each player's
# actions).
_MT_WORDS = 624
_MT_POSITION = _MT_WORDS
(ROOT, MODE, NODE, ACTION, DEPTH, SELECTOR, MEAN_VARIANT, TRACK_AVERAGE, PATH_LENGTH,
 COUNTERS) = range(_MT_WORDS + 1, _MT_WORDS + 11)
PATH = COUNTERS + 3
# What the iteration in progress waits for (the MODE field).
IDLE, AT_NODE, NEEDS_CHILD, NEEDS_ROOT = range(4)
# Why _advance returned; LAST is added when the child is the node's last missing one.
DONE, EXPAND, OUTCOME, FULL, TOO_DEEP = range(5)
LAST = 8
_SIMULTANEOUS, _CHANCE, _TERMINAL = (int(p) for p in (
    pyspiel.PlayerId.SIMULTANEOUS, pyspiel.PlayerId.CHANCE, pyspiel.PlayerId.TERMINAL))
_NO_ACTION = (pyspiel.INVALID_ACTION,)  # the one pseudo-action of a player not moving
PROBS = ta.CONFIG_SIZE  # floats: the config (tree_arrays.GAMMA ...), then chance probabilities


# ----------------------------------------------------------------------------------------
# Compiled core.


@ta.inlined
def _mt_word(mt):
    """The next 32-bit output of the Mersenne Twister ``mt`` (624 words and the position,
    as in ``random.Random.getstate()``), regenerating the words when they are used up."""
    k = mt[_MT_POSITION]
    if k >= _MT_WORDS:
        for kk in range(_MT_WORDS):
            y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % _MT_WORDS] & 0x7fffffff)
            v = mt[(kk + 397) % _MT_WORDS] ^ (y >> 1)
            if y & 1:
                v ^= 0x9908b0df
            mt[kk] = v
        k = 0
    y = mt[k]
    mt[_MT_POSITION] = k + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9d2c5680
    y ^= (y << 15) & 0xefc60000
    return y ^ (y >> 18)


@ta.inlined
def _mt_random(mt):
    """CPython's ``random.random()``: 53 random bits from two words."""
    a = _mt_word(mt) >> 5
    b = _mt_word(mt) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, error_model="numpy")
def _advance(budget, kind, n1, n2, value, floats, nodes_i, nodes_f, pool, slots, ints):
    """Finish the pending step with the new node's ``kind``, ``n1``, ``n2`` and ``value`` (a
    terminal's u1, or the leaf value after an expansion), then run iterations until one
    needs Python or ``budget`` iterations are done (counting the finished one).

    Returns ``(why, node, action, iterations done)``: DONE; EXPAND / OUTCOME (``+ LAST``):
    create the child of ``node`` after joint action / chance outcome ``action``; FULL: grow
    the arrays and call again with the same arguments; TOO_DEEP: the same for the path.
    """
    done = 0
    in_slots = np.empty((0, 1))  # back_up: the sampling distributions are in PROB slots
    no_f, no_slots = np.empty(0), np.empty((4, 0))  # the root's statistics are in the tree
    mode = ints[MODE]
    node = ints[NODE]
    depth = ints[DEPTH]
    selector = ints[SELECTOR]
    mean_variant = ints[MEAN_VARIANT] != 0
    track_average = ints[TRACK_AVERAGE] != 0
    counters = ints[COUNTERS:COUNTERS + 3]
    length = ints[PATH_LENGTH]
    path_node = ints[PATH:PATH + length]
    path_i = ints[PATH + length:PATH + 2 * length]
    path_j = ints[PATH + 2 * length:PATH + 3 * length]
    if mode == NEEDS_CHILD or mode == NEEDS_ROOT:
        if (counters[NUM_NODES] + 1 > nodes_i.shape[1]
                or counters[POOL_USED] + n1 > len(pool)
                or counters[SLOTS_USED] + n1 + 1 > slots.shape[1]):
            return FULL, node, ints[ACTION], done
        child = ta.new_node(kind, value if kind == TERMINAL else 0.0, nodes_i, nodes_f,
                            counters)
        if kind == CHANCE:
            children = ta.open_node(child, n1, 1, 0, nodes_i, pool, slots, counters)
            s = nodes_i[SLOT, child]
            for o in range(n1):
                slots[PROB, s + o] = floats[PROBS + o]
            ta.mark_open(child, children, nodes_i)
        else:
            nodes_i[N1, child] = n1
            nodes_i[N2, child] = n2
        if mode == NEEDS_ROOT:
            ints[ROOT] = child
            mode = IDLE
        elif nodes_i[KIND, node] == CHANCE:
            pool[nodes_i[CHILD, node] + ints[ACTION]] = child
            nodes_i[EXPANDED, node] += 1
            path_node[depth] = node
            depth += 1
            node = child
            mode = AT_NODE
        else:
            s = nodes_i[SLOT, node]
            n1 = nodes_i[N1, node]
            n2 = nodes_i[N2, node]
            ta.expand(node, ints[ACTION], child, value, slots[PROB, s:s + n1],
                      slots[PROB, s + n1:s + n1 + n2], selector, track_average, floats,
                      nodes_i, nodes_f, pool, slots, False, False, no_slots)
            ta.back_up(depth, value, path_node, path_i, path_j, in_slots, mean_variant,
                       selector, track_average, floats, nodes_i, nodes_f, pool, slots, no_f,
                       no_slots, path_node[:0])
            done += 1
            mode = IDLE
    gamma = floats[GAMMA]
    c = floats[C]
    ties = floats[TIES]
    while True:
        if mode == IDLE:
            if done >= budget:
                ints[MODE] = IDLE
                return DONE, -1, -1, done
            node = ints[ROOT]
            depth = 0
            mode = AT_NODE
        kind = nodes_i[KIND, node]
        if kind == TERMINAL:
            ta.back_up(depth, nodes_f[U1, node], path_node, path_i, path_j, in_slots,
                       mean_variant, selector, track_average, floats, nodes_i, nodes_f, pool,
                       slots, no_f, no_slots, path_node[:0])
            done += 1
            mode = IDLE
            continue
        n1 = nodes_i[N1, node]
        n2 = nodes_i[N2, node]
        if nodes_i[CHILD, node] < 0:  # first visit of a decision node
            if (counters[POOL_USED] + n1 * n2 + ta.block_count(kind, n1 * n2) > len(pool)
                    or counters[SLOTS_USED] + n1 + n2 > slots.shape[1]):
                ints[MODE], ints[NODE], ints[DEPTH] = AT_NODE, node, depth
                return FULL, node, -1, done
            ta.mark_open(node, ta.open_node(node, n1, n2, 0, nodes_i, pool, slots, counters),
                         nodes_i)
        if depth >= length:
            ints[MODE], ints[NODE], ints[DEPTH] = AT_NODE, node, depth
            return TOO_DEEP, node, -1, done
        c0 = nodes_i[CHILD, node]
        s = nodes_i[SLOT, node]
        expanded = nodes_i[EXPANDED, node]
        if kind == CHANCE:
            o = ta.sample_index(slots[PROB, s:s + n1], _mt_random(ints))
            child = pool[c0 + o]
            if child < 0:
                ints[MODE], ints[NODE], ints[ACTION], ints[DEPTH] = NEEDS_CHILD, node, o, depth
                return OUTCOME + (LAST if expanded == n1 - 1 else 0), node, o, done
            path_node[depth] = node
            depth += 1
            node = child
            continue
        if expanded < n1 * n2:
            a = ta.untried_joint_action(pool, c0, n1 * n2, n1 * n2 - expanded,
                                        _mt_random(ints))
            ints[MODE], ints[NODE], ints[ACTION], ints[DEPTH] = NEEDS_CHILD, node, a, depth
            return EXPAND + (LAST if expanded == n1 * n2 - 1 else 0), node, a, done
        u1 = _mt_random(ints) if n1 > 1 else 0.0
        i = ta.select(selector, slots[STAT, s:s + n1], slots[COUNT, s:s + n1], gamma, c, ties,
                      slots[PROB, s:s + n1], u1, track_average)
        u2 = _mt_random(ints) if n2 > 1 else 0.0
        j = ta.select(selector, slots[STAT, s + n1:s + n1 + n2],
                      slots[COUNT, s + n1:s + n1 + n2], gamma, c, ties,
                      slots[PROB, s + n1:s + n1 + n2], u2, track_average)
        path_node[depth] = node
        path_i[depth] = i
        path_j[depth] = j
        depth += 1
        node = pool[c0 + i * n2 + j]


# ----------------------------------------------------------------------------------------
# Python side.


class ArraySMMCTS(ArrayTreeSearch):
    """SM-MCTS over any pyspiel game with array statistics; the interface of
    :class:`.smmcts.SMMCTS`, whose arguments it takes.

    ``evaluator``: anything with OpenSpiel's ``evaluate(state)`` returning every player's
    return; default: one random rollout in C++ (:class:`.evaluators.OpenSpielRolloutEvaluator`)
    seeded from ``seed``.
    """

    #: Each node's pyspiel state (until all its children exist) and action tuples:
    #: 0.3-1.9 KB per node measured over OpenSpiel's and our Python games (process memory).
    python_bytes_per_node = 2048

    def __init__(self, game: pyspiel.Game, selector: str = "rm", gamma: float | None = None,
                 c: float | None = None, final_strategy: str = "empirical", evaluator=None,
                 seed: int | None = None, initial_nodes: int = 1 << 14, threshold: float = 0.0,
                 max_memory: int = ta.DEFAULT_MAX_MEMORY, tie_tolerance: float = 0.0):
        super().__init__(game, selector, gamma, c, final_strategy, node_room=1, pool_room=0,
                         initial_nodes=initial_nodes, assumed_rate=3e5, threshold=threshold,
                         max_memory=max_memory, tie_tolerance=tie_tolerance)
        depth = game.max_game_length() + 2  # nodes on a path (chance nodes: grown if need be)
        rng = random.Random(seed)  # the reference engine's draws, in the same order
        self.evaluator = evaluator or OpenSpielRolloutEvaluator(seed=rng.getrandbits(63))
        self._ints = np.zeros(PATH + 3 * depth, np.int64)
        self._ints[:_MT_WORDS + 1] = rng.getstate()[1]
        self._ints[SELECTOR] = self._selector_code
        self._ints[MEAN_VARIANT] = self.propagate_mean
        self._ints[TRACK_AVERAGE] = self._track_average
        self._ints[PATH_LENGTH] = depth
        self.counters = self._ints[COUNTERS:COUNTERS + 3]  # a view: kept up to date
        self._floats = np.zeros(PROBS + max(1, game.max_chance_outcomes()))
        self._floats[:PROBS] = self._config
        self._states: list = []  # per node: its pyspiel state while a child is missing
        self._actions: list = []  # per node: (actions of player 0, of player 1, mover)
        self._load_compiled_code()

    def _load_compiled_code(self) -> None:
        """Call each compiled function once (no random draw), so that loading (or
        compiling) it happens here rather than inside the first timed move."""
        self.set_root(self.game.new_initial_state())
        self._copy_to_scratch()
        self.reset()
        ta.freeze_loaded_objects()

    # -- the hooks of ArrayTreeSearch ------------------------------------------------

    def node_actions(self, index: int):
        """Each player's pyspiel actions at a decision node (chance: its outcomes, ())."""
        actions = self._actions[index]
        return None if actions is None else actions[:2]

    def _new_tree(self, state: pyspiel.State) -> int:
        self._states, self._actions = [], []
        self._ints[MODE] = NEEDS_ROOT
        kind, n1, n2, value = self._describe(state.clone())
        # A root with more actions or outcomes than the first arrays hold grows them first.
        while self._advance(0, kind, n1, n2, value)[0] == FULL:
            nodes, pool, slots = current = self._capacity()
            wanted = (nodes, max(pool, 2 * n1), max(slots, 2 * (n1 + 1)))
            if wanted == current or self._bytes(wanted) > self.max_memory:
                raise ValueError(f"max_memory={self.max_memory} bytes cannot hold the root of "
                                 f"{self.game} ({n1} actions or chance outcomes): raise it")
            self._resize(*wanted)
        return int(self._ints[ROOT])

    def _kept(self, order: np.ndarray) -> None:
        if len(order) == 1:
            self._states, self._actions = [self._states[order[0]]], [self._actions[order[0]]]
        else:
            pick = operator.itemgetter(*order)
            self._states, self._actions = list(pick(self._states)), list(pick(self._actions))
        self._ints[ROOT] = 0
        self._ints[MODE] = IDLE

    def reset(self) -> None:
        super().reset()
        self._states, self._actions = [], []

    def set_root(self, state: pyspiel.State):
        if self._ints[MODE] not in (IDLE, NEEDS_ROOT):
            # An iteration was interrupted (an exception between two compiled calls): drop
            # it and anything Python stored for a node the arrays never received.
            self._ints[MODE] = IDLE
            del self._states[int(self.counters[NUM_NODES]):]
            del self._actions[int(self.counters[NUM_NODES]):]
        return super().set_root(state)

    def _describe(self, state: pyspiel.State):
        """Store a new node's state and actions; its (kind, n1, n2, value) for _advance.

        ``current_player()`` tells terminal, chance, simultaneous and sequential nodes
        apart in one pyspiel call. The actions are kept in tuples of ints, which Python's
        garbage collector stops tracking: a full collection over a tree of lists would
        pause a timed move for tens of milliseconds."""
        player = state.current_player()
        if player >= 0:
            actions = tuple(state.legal_actions(player))
            self._states.append(state)
            if player == 0:
                self._actions.append((actions, _NO_ACTION, 0))
                return DECISION, len(actions), 1, 0.0
            self._actions.append((_NO_ACTION, actions, 1))
            return DECISION, 1, len(actions), 0.0
        if player == _SIMULTANEOUS:
            first = tuple(state.legal_actions(0)) or _NO_ACTION
            second = tuple(state.legal_actions(1)) or _NO_ACTION
            self._states.append(state)
            self._actions.append((first, second, None))
            return DECISION, len(first), len(second), 0.0
        if player == _CHANCE:
            outcomes, probs = zip(*state.chance_outcomes())
            n = len(outcomes)
            if PROBS + n > len(self._floats):
                self._floats = np.concatenate([self._floats, np.zeros(n)])
            self._floats[PROBS:PROBS + n] = probs
            self._states.append(state)
            self._actions.append((outcomes, (), None))
            return CHANCE, n, 1, 0.0
        if player != _TERMINAL:
            raise ValueError(f"{self.game}: current_player() {player} at {state.history()} "
                             "is none of a player, chance, simultaneous or terminal")
        self._states.append(None)
        self._actions.append(None)
        return TERMINAL, 0, 0, state.returns()[0]

    def _advance(self, budget, kind, n1, n2, value):
        return _advance(budget, kind, n1, n2, value, self._floats, self.nodes_i, self.nodes_f,
                        self.pool, self.slots, self._ints)

    def _iterate(self, root: int, iterations: int) -> int:
        """Up to ``iterations`` iterations (all of them: the arrays grow as needed)."""
        states, actions = self._states, self._actions
        evaluate = self._leaf_value()
        kind, n1, n2, value = DECISION, 0, 0, 0.0
        done = 0
        arrays = (self._floats, self.nodes_i, self.nodes_f, self.pool, self.slots, self._ints)
        # A node whose last missing child is being made: its state goes once the child is
        # in the arrays (not before: an exception, a KeyboardInterrupt in the evaluator,
        # would leave it with an untried joint action and no state).
        drop = -1
        while True:
            why, node, action, k = _advance(iterations - done, kind, n1, n2, value, *arrays)
            if drop >= 0 and self.counters[NUM_NODES] == len(states):
                states[drop] = None  # every child exists: the state is no longer needed
                drop = -1
            done += k
            if why == DONE:
                return done
            if why == FULL or why == TOO_DEEP:
                if not (self._grow_for(node, n1) if why == FULL else self._grow_path()):
                    return done  # max_memory reached: the run stops
                arrays = (self._floats, self.nodes_i, self.nodes_f, self.pool, self.slots,
                          self._ints)
                continue
            child = states[node].clone()
            first, second, mover = actions[node]
            if why & OUTCOME or mover == 0:  # (one action of player 2: joint action i)
                child.apply_action(first[action])
            elif mover is None:
                i, j = divmod(action, len(second))
                child.apply_actions([first[i], second[j]])
            else:  # one action of player 1: joint action j
                child.apply_action(second[action])
            if why & LAST:
                drop = node
            kind, n1, n2, value = self._describe(child)
            if why & EXPAND and kind != TERMINAL:
                value = evaluate(child)

    def _leaf_value(self):
        """Player 1's value of a new leaf (its state is kept, so the evaluator gets a copy):
        with the default evaluator, one C++ rollout called directly (a Python call less per
        leaf), else the evaluator's ``evaluate``."""
        evaluator = self.evaluator
        if type(evaluator) is OpenSpielRolloutEvaluator and evaluator.n_rollouts == 1:
            bots, draw = evaluator.bots, evaluator.seeds.getrandbits
            evaluate_bots = pyspiel.evaluate_bots
            return lambda state: evaluate_bots(state.clone(), bots, draw(31))[0]
        evaluate = evaluator.evaluate
        return lambda state: evaluate(state)[0]

    def _grow_path(self) -> bool:
        """Double the path's room, keeping the path of the iteration in progress; False
        (the tree is full) if the arrays and the new path would pass ``max_memory``."""
        old, length = self._ints, int(self._ints[PATH_LENGTH])
        if self._bytes(self._capacity()) + 8 * (PATH + 6 * length) > self.max_memory:
            return self._stop_full()
        ints = np.zeros(PATH + 6 * length, np.int64)
        ints[:PATH] = old[:PATH]
        for k in range(3):
            ints[PATH + 2 * k * length:PATH + (2 * k + 1) * length] = (
                old[PATH + k * length:PATH + (k + 1) * length])
        ints[PATH_LENGTH] = 2 * length
        self._ints, self.counters = ints, ints[COUNTERS:COUNTERS + 3]
        return True

    def _grow_for(self, node: int, outcomes: int) -> bool:
        """Grow the arrays for what _advance needed: the pending chance child's
        ``outcomes`` or the opening of ``node``; False if ``max_memory`` does not allow it."""
        n1, n2 = int(self.nodes_i[N1, node]), int(self.nodes_i[N2, node])
        self._pool_room = max(self._pool_room, outcomes + 1,
                              n1 * n2 + ta.block_count.py_func(DECISION, n1 * n2) + n1 + n2)
        while not self.has_room():
            if not self._grow():
                return False
        return True
