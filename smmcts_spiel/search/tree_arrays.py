"""The search tree of the compiled SM-MCTS engines, in flat arrays.

:mod:`.kernel_engine` (whole iterations compiled on a game kernel) and :mod:`.array_engine`
(any pyspiel game: pyspiel only where a node is created or a leaf evaluated) keep their
tree in the arrays described here and share everything that touches them: the Update of
Alg. 1 with the formulas of :mod:`.selectors` compiled as they are, selection, the
expansion rule, the back-up of a path, the copy of a subtree when the root moves, the
read-only node views and the time-limited loop. The algorithm is that of
:class:`smmcts_spiel.search.smmcts.SMMCTS` (the reference engine; read its docstring).

Layout:

* per node (``nodes_i[field, node]``, ``nodes_f[field, node]``): kind, number of actions of
  each player (chance: outcomes, and 1), offsets into the pools, expanded children, and the
  sums ``X``, visits ``n``, terminal value and mean ``X / n`` (kept for the regret update);
* a node is *opened* on its first visit (chance nodes of the array engine when created):
  its children table (joint action ``i * n2 + j``, or chance outcome; -1 while missing) goes
  to ``pool``, followed at a decision node wider than ``BLOCK`` joint actions by a Fenwick
  tree of the number of children of each block of ``BLOCK`` entries (:func:`block_count`),
  which lets the expansion rule find the ``k``-th missing child in ``O(log blocks + BLOCK)``
  steps without reading the whole table (Blotto's root has up to tens of thousands of joint
  actions); its per-action statistics (selector statistic, count,
  sum of sampling distributions, current distribution; chance: outcome probabilities) to
  ``slots[field, slot]``. The kernel engine also stores the node's pyspiel actions in
  ``pool`` (field ``ACTIONS``); the array engine keeps them in Python (``ACTIONS`` is -1).

numba caches each compiled engine on disk without noticing edits to this module: after
editing it, delete the ``__pycache__/*.nbi`` / ``*.nbc`` files of ``smmcts_spiel/search``.
"""

from __future__ import annotations

import abc
import ctypes
import gc
import mmap
import os
import threading
import time
import weakref
from collections.abc import Callable

import numba
import numba.extending
import numpy as np
import pyspiel
from absl import logging

from smmcts_spiel import checks
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL  # node kinds
from smmcts_spiel.search import selectors
from smmcts_spiel.search.smmcts import TreeSearch, final_probabilities

SELECTOR_CODES = {"rm": 0, "exp3": 1, "ucb": 2, "rmb": 3}
# nodes_i fields
KIND, N1, N2, CHILD, ACTIONS, SLOT, EXPANDED = range(7)
# nodes_f fields (MEAN: X / VISITS, kept so that regret matching's Update, which reads the
# means of a node's children, does not divide once per action)
X, VISITS, U1, MEAN = range(4)
# slots fields
STAT, COUNT, AVERAGE, PROB = range(4)
# counters
NUM_NODES, POOL_USED, SLOTS_USED = range(3)
# config (floats): the selectors' parameters; the map of u1 onto [0, 1] (``REWARD_LOW``,
# ``INV_REWARD_RANGE``: see smmcts.reward_range); regret matching's units (``INV_SCALE``,
# ``UTILITY_SUM``: see the docstring of smmcts); ``SHARED``: 1.0 where several threads
# grow the tree (tree parallelism: visits, sums and counts are then added atomically).
GAMMA, C, INV_SCALE, UTILITY_SUM, REWARD_LOW, INV_REWARD_RANGE, SHARED = range(7)
CONFIG_SIZE = 7

CHECK_EVERY = 0.002  # seconds between clock checks under a time limit
BLOCK = 64  # joint actions per block of a wide node's children table (see block_count)
#: Seconds of search the arrays are sized for before a timed run starts; a longer run grows
#: them as it goes (4x at a time), so a long time limit allocates nothing up front.
PLAN_SECONDS = 1.0


def _half_the_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows): no clamp
        return 4 << 30


#: Default bound on the memory of a compiled search's tree (bytes; see ArrayTreeSearch):
#: 4 GiB, or half the machine's memory if that is less.
DEFAULT_MAX_MEMORY = min(4 << 30, _half_the_memory())
# Bytes each unit of capacity costs, counting the spare set of arrays re-rooting copies
# into: a node (7 int + 4 float fields, twice, and 4 ints of renumbering scratch), a pool
# entry (one int, twice) and a slot (4 floats, twice).
_NODE_BYTES, _POOL_BYTES, _SLOT_BYTES = 2 * 11 * 8 + 4 * 8, 2 * 8, 2 * 4 * 8

inlined = numba.njit(inline="always", error_model="numpy")


# ----------------------------------------------------------------------------------------
# Atomic operations on int64 arrays (tree parallelism: several threads grow one tree).


def _element(context, builder, signature, args):
    array = context.make_array(signature.args[0])(context, builder, args[0])
    return builder.gep(array.data, [args[1]])


@numba.extending.intrinsic
def _atomic_add(typingctx, array, index, value):
    """``array[index] += value`` as one atomic step; returns the value before."""
    def codegen(context, builder, signature, args):
        return builder.atomic_rmw("add", _element(context, builder, signature, args), args[2],
                                  "seq_cst")
    return numba.types.int64(array, numba.types.intp, numba.types.int64), codegen


@numba.extending.intrinsic
def _compare_and_swap(typingctx, array, index, expected, value):
    """``array[index] = value`` if it holds ``expected``, as one atomic step; whether it did."""
    def codegen(context, builder, signature, args):
        pair = builder.cmpxchg(_element(context, builder, signature, args), args[2], args[3],
                               "seq_cst", "seq_cst")
        return builder.extract_value(pair, 1)
    return numba.types.boolean(array, numba.types.intp, numba.types.int64,
                               numba.types.int64), codegen


@numba.extending.intrinsic
def _acquire_load(typingctx, array, index):
    """``array[index]`` read as an atomic load: read again on every call (never kept in a
    register across a loop), and what the writer stored before its release store is seen."""
    def codegen(context, builder, signature, args):
        return builder.load_atomic(_element(context, builder, signature, args), "acquire", 8)
    return numba.types.int64(array, numba.types.intp), codegen


@numba.extending.intrinsic
def _release_store(typingctx, array, index, value):
    """``array[index] = value`` after every store before it (a reader's acquire load that
    sees the value sees them too): how a node or child is published to other threads."""
    def codegen(context, builder, signature, args):
        builder.store_atomic(args[2], _element(context, builder, signature, args), "release", 8)
        return context.get_dummy_value()
    return numba.types.none(array, numba.types.intp, numba.types.int64), codegen


@numba.extending.intrinsic
def _atomic_float_add(typingctx, array, index, value):
    """``array[index] += value`` (float64) as one atomic step."""
    def codegen(context, builder, signature, args):
        builder.atomic_rmw("fadd", _element(context, builder, signature, args), args[2],
                           "monotonic")
        return context.get_dummy_value()
    return numba.types.none(array, numba.types.intp, numba.types.float64), codegen


# (mypy reads an intrinsic's typing context as an argument: hence these wrappers.)
@inlined
def atomic_add(array, index, value):
    """``array[index] += value`` as one atomic step; returns the value before."""
    return _atomic_add(array, index, value)  # type: ignore[call-arg]


@inlined
def compare_and_swap(array, index, expected, value):
    """``array[index] = value`` if it holds ``expected``, as one atomic step; whether it did."""
    return _compare_and_swap(array, index, expected, value)  # type: ignore[call-arg]


@inlined
def acquire_load(array, index):
    """``array[index]`` as an acquire load (see :func:`_acquire_load`)."""
    return _acquire_load(array, index)  # type: ignore[call-arg]


@inlined
def release_store(array, index, value):
    """``array[index] = value`` as a release store (see :func:`_release_store`)."""
    _release_store(array, index, value)  # type: ignore[call-arg]


@inlined
def add(array, index, value, atomic):
    """``array[index] += value``, atomically if ``atomic`` (threads share the tree and this
    entry: ``config[SHARED]``): a thread descheduled between reading and writing a plain sum
    would otherwise write back a value milliseconds old, erasing every update made
    meanwhile (seen: a node's visits short by thousands on the loaded machine)."""
    if atomic:
        _atomic_float_add(array, index, value)  # type: ignore[call-arg]
    else:
        array[index] += value


@inlined
def take(array, index, n, shared):
    """``array[index] += n``, returning the value before: atomic if ``shared`` (another
    thread may take from the same counter)."""
    if shared:
        return atomic_add(array, index, n)
    old = array[index]
    array[index] = old + n
    return old
# A tree-parallel thread's own ranges (``own``, :func:`claim_blocks`): at ``NUM_NODES``,
# ``POOL_USED``, ``SLOTS_USED`` the next free entry of its blocks (the layout of ``counters``,
# so that it is passed where they are), at ``OWN_END + field`` their ends, at ``OWN_UNUSED +
# field`` the entries it left unused in blocks it gave up; ``OWN_ITERATION`` /
# ``OWN_ITERATION_END``: the iterations it claimed and has not run yet.
OWN_END, OWN_UNUSED, OWN_ITERATION, OWN_ITERATION_END = 3, 6, 9, 10
OWN_SIZE = 11
ITERATION_BATCH = 16  # iterations a tree-parallel thread claims from the budget at a time


@inlined
def claim_blocks(own, counters, rooms, blocks, capacities):
    """Before an iteration of a tree-parallel thread: for nodes, pool and slots, if the
    thread's own block has fewer than ``rooms[field]`` entries left (what an iteration may
    use), claim a new one of ``blocks[field]`` entries from the tree's ``counters`` by
    compare-and-swap, never past ``capacities[field]`` (the rest of the old block stays
    unused, counted at ``OWN_UNUSED``). Threads then touch the shared counters once per
    block rather than once per node. False if a block does not fit: the run stops, and the
    arrays grow before the next."""
    for f in range(3):
        if own[OWN_END + f] - own[f] >= rooms[f]:
            continue
        while True:
            start = acquire_load(counters, f)
            if start + blocks[f] > capacities[f]:
                return False
            if compare_and_swap(counters, f, start, start + blocks[f]):
                break
        own[OWN_UNUSED + f] += own[OWN_END + f] - own[f]
        own[f] = start
        own[OWN_END + f] = start + blocks[f]
    return True


@inlined
def claim_iteration(own, claimed):
    """Whether a tree-parallel thread may run one more iteration: from its own batch, or
    from a new batch of up to :data:`ITERATION_BATCH` claimed from the run's budget
    (``claimed[0]`` the iterations claimed so far, ``claimed[1]`` the budget; -1: another
    thread stopped the run). The budget is met exactly: a batch ends at the budget."""
    if acquire_load(claimed, 1) < 0:
        return False
    if own[OWN_ITERATION] >= own[OWN_ITERATION_END]:
        start = atomic_add(claimed, 0, ITERATION_BATCH)
        own[OWN_ITERATION] = start
        own[OWN_ITERATION_END] = min(start + ITERATION_BATCH, acquire_load(claimed, 1))
        if start >= own[OWN_ITERATION_END]:
            return False
    own[OWN_ITERATION] += 1
    return True


rm_probabilities = inlined(selectors.regret_matching_probabilities)
rm_sample = inlined(selectors.regret_matching_sample)
exp3_probabilities = inlined(selectors.exp3_probabilities)
sample_index = inlined(selectors.sample_index)
bandit_regret_update = inlined(selectors.bandit_regret_update)
ucb_index = inlined(selectors.ucb_index)
ucb_index_random_ties = inlined(selectors.ucb_index_random_ties)


# ----------------------------------------------------------------------------------------
# Compiled helpers (inlined into each engine's loop).


@inlined
def new_node(kind, u1, nodes_i, nodes_f, counters):
    """Append an unopened node of ``kind`` (``u1``: its value if terminal), taken from
    ``counters``: the tree's, or a tree-parallel thread's own block (:func:`claim_blocks`)."""
    node = take(counters, NUM_NODES, 1, False)
    nodes_i[KIND, node] = kind
    nodes_i[N1, node] = 0
    nodes_i[N2, node] = 0
    nodes_i[CHILD, node] = -1
    nodes_i[ACTIONS, node] = -1
    nodes_i[EXPANDED, node] = 0
    nodes_f[X, node] = 0.0
    nodes_f[VISITS, node] = 0.0
    nodes_f[U1, node] = u1
    nodes_f[MEAN, node] = 0.0
    return node


@numba.njit(inline="always")
def block_count(kind, width):
    """Block counters after a children table of ``width`` entries (decision nodes wider
    than ``BLOCK``: one per block of ``BLOCK`` entries, together the Fenwick tree of the
    blocks' numbers of children, see :func:`count_child`)."""
    if kind == CHANCE or width <= BLOCK:
        return 0
    return (width + BLOCK - 1) // BLOCK


@inlined
def open_node(node, n1, n2, action_room, nodes_i, pool, slots, counters):
    """Give ``node`` its children table (``n1 * n2`` entries; chance: ``n1``, with ``n2 = 1``)
    and its block counters (:func:`block_count`), ``action_room`` pool entries for its
    actions (``ACTIONS``; none if 0) and ``n1 + n2`` zeroed slots, taken from ``counters``
    (as :func:`new_node`). Returns the pool offset of the children table, which the caller, once it
    has written what else the node needs, publishes with :func:`mark_open`."""
    width = n1 if nodes_i[KIND, node] == CHANCE else n1 * n2
    blocks = block_count(nodes_i[KIND, node], width)
    p = take(counters, POOL_USED, width + blocks + action_room, False)
    s = take(counters, SLOTS_USED, n1 + n2, False)
    nodes_i[N1, node] = n1
    nodes_i[N2, node] = n2
    nodes_i[ACTIONS, node] = p + width + blocks if action_room > 0 else -1
    nodes_i[SLOT, node] = s
    for a in range(width):
        pool[p + a] = -1
    for b in range(blocks):
        pool[p + width + b] = 0
    for a in range(n1 + n2):
        slots[STAT, s + a] = 0.0
        slots[COUNT, s + a] = 0.0
        slots[AVERAGE, s + a] = 0.0
        slots[PROB, s + a] = 0.0
    return p


@inlined
def mark_open(node, children, nodes_i):
    """Publish an opened node: its children table at pool offset ``children`` (a node is
    open once ``CHILD >= 0``; everything written before is seen by a thread that sees it)."""
    release_store(nodes_i[CHILD], node, children)


@inlined
def probabilities(selector, stat, counts, gamma, c, out):
    """The selector's current sampling distribution (UCB: all mass on its choice)."""
    if selector == 0 or selector == 3:
        rm_probabilities(stat, gamma, out)
    elif selector == 1:
        exp3_probabilities(stat, gamma, out)
    else:
        best = ucb_index(stat, counts, c)
        for a in range(len(out)):
            out[a] = 0.0
        out[best] = 1.0
    return out


@inlined
def player_update(selector, action, reward, scaled, probs, stat, counts, average,
                  track_average, sibling_children, nodes_f, player, config, atomic):
    """One player's Update at a node: ``reward`` in [0, 1]; ``scaled``, the player's utility
    in regret matching's units; ``sibling_children[a]`` is the child had it played a.
    ``atomic``: other threads update these statistics too; the sums of one entry are then
    added atomically (:func:`add`); regret matching's whole-vector updates and the average's
    sums are not (lost updates)."""
    n = len(probs)
    add(counts, action, 1.0, atomic)
    if n == 1:
        return
    if track_average:
        for a in range(n):
            average[a] += probs[a]
    if selector == 0:
        inv_scale = config[INV_SCALE]
        utility_sum = config[UTILITY_SUM]
        for a in range(n):
            # Branch-free (a wide node's children are scattered, so a branch would be
            # mispredicted often): a missing child, and the played action itself, add 0.
            child = sibling_children[a]
            mean = nodes_f[MEAN, max(child, 0)]
            if player == 1:
                mean = utility_sum - mean
            stat[a] += (mean * inv_scale - scaled) if (a != action) & (child >= 0) else 0.0
    elif selector == 1:
        add(stat, action, reward / probs[action], atomic)
    elif selector == 3:
        bandit_regret_update(stat, action, reward, probs[action])
    else:
        add(stat, action, reward, atomic)


@inlined
def update(node, i, j, u1, fresh, p1, p2, selector, track_average, config, nodes_i, nodes_f,
           pool, slots, s, atomic):
    """Update(h, i, j, u1) of Alg. 1: each player's selector learns from its own reward.

    The node's statistics are at ``slots[:, s:s + n1 + n2]`` (the tree's slots at
    ``nodes_i[SLOT, node]``, or a thread's own copy of the root's: :func:`back_up`);
    ``atomic``: other threads update them too (:func:`add`). ``fresh``: ``p1`` / ``p2``
    hold the distributions the actions were sampled from (after a selection); otherwise
    they are computed into them here (after an expansion)."""
    n1 = nodes_i[N1, node]
    n2 = nodes_i[N2, node]
    c0 = nodes_i[CHILD, node]
    if not fresh and (track_average or selector == 1 or selector == 3):
        # (Regret matching's and UCB's updates do not read the distributions.)
        if n1 > 1:
            probabilities(selector, slots[STAT, s:s + n1], slots[COUNT, s:s + n1],
                          config[GAMMA], config[C], p1)
        if n2 > 1:
            probabilities(selector, slots[STAT, s + n1:s + n1 + n2],
                          slots[COUNT, s + n1:s + n1 + n2], config[GAMMA], config[C], p2)
    reward1 = (u1 - config[REWARD_LOW]) * config[INV_REWARD_RANGE]
    player_update(selector, i, reward1, u1 * config[INV_SCALE], p1, slots[STAT, s:s + n1],
                  slots[COUNT, s:s + n1], slots[AVERAGE, s:s + n1], track_average,
                  pool[c0 + j:c0 + n1 * n2:n2], nodes_f, 0, config, atomic)
    player_update(selector, j, 1.0 - reward1, (config[UTILITY_SUM] - u1) * config[INV_SCALE],
                  p2, slots[STAT, s + n1:s + n1 + n2], slots[COUNT, s + n1:s + n1 + n2],
                  slots[AVERAGE, s + n1:s + n1 + n2], track_average,
                  pool[c0 + i * n2:c0 + (i + 1) * n2], nodes_f, 1, config, atomic)


@inlined
def statistics_at(node, own, nodes_i, slots, own_slots, atomic):
    """Where ``node``'s decision statistics are, for :func:`update`: ``(slots, offset,
    atomic)``, the tree's slots at ``nodes_i[SLOT, node]`` (``atomic``: other threads update
    them too), or, if ``own``, this thread's own copy of the root's (:func:`back_up`)."""
    if own:
        return own_slots, 0, False
    return slots, nodes_i[SLOT, node], atomic


@inlined
def select(selector, stat, counts, gamma, c, probs, u, track_average):
    """A player's action from the uniform number ``u`` (draw it only if the player has a
    choice); ``probs`` gets the selector's distribution where the Update or the average
    reads it (not regret matching's without the average: :func:`rm_sample`)."""
    if len(probs) == 1:
        probs[0] = 1.0
        return 0
    if selector == 0 and not track_average:
        return rm_sample(stat, gamma, u)
    probabilities(selector, stat, counts, gamma, c, probs)
    if selector == 2:
        return ucb_index_random_ties(stat, counts, c, u)
    return sample_index(probs, u)


@inlined
def untried_joint_action(pool, c0, width, untried, u):
    """The expansion rule: the ``floor(u * untried)``-th joint action without a child (of
    the ``width`` of a decision node). In a wide node the blocks before it are skipped in
    ``O(log blocks)`` steps by the Fenwick tree of their children counts (:func:`block_count`),
    then its block is scanned."""
    target = min(int(u * untried), untried - 1)
    # (Missing: -1. A tree-parallel search marks a child another thread is creating -2, and
    # may find fewer missing children than ``untried`` says: then -1 is returned.)
    a = 0
    if width > BLOCK:
        blocks = (width + BLOCK - 1) // BLOCK
        tree = c0 + width
        step = 1
        while step * 2 <= blocks:
            step *= 2
        done = 0  # blocks skipped: every one full, each missing BLOCK - its children
        while step > 0:
            if done + step <= blocks:
                missing = step * BLOCK - pool[tree + done + step - 1]
                if missing <= target:  # (never true past the last, partial, block)
                    done += step
                    target -= missing
            step //= 2
        a = done * BLOCK
    while a < width:
        if pool[c0 + a] == -1:
            if target == 0:
                return a
            target -= 1
        a += 1
    return -1


@inlined
def count_child(pool, c0, width, a, shared):
    """Record a new child at joint action ``a`` in a wide node's Fenwick tree of children
    counts per block (nothing to do in a node of at most ``BLOCK`` joint actions)."""
    if width > BLOCK:
        blocks = (width + BLOCK - 1) // BLOCK
        k = a // BLOCK + 1
        while k <= blocks:
            take(pool, c0 + width + k - 1, 1, shared)
            k += k & -k


@inlined
def claim_untried(node, c0, width, nodes_i, pool, rng):
    """Tree parallelism's expansion rule: claim a joint action without a child (marked -2
    until :func:`expand` links it) by compare-and-swap, so that no two threads create the
    same child; -1 once every joint action is claimed (the node is then selected from)."""
    while True:
        expanded = acquire_load(nodes_i[EXPANDED], node)
        if expanded >= width:
            return -1
        a = untried_joint_action(pool, c0, width, width - expanded, rng.random())
        if a >= 0 and compare_and_swap(pool, c0 + a, -1, -2):
            atomic_add(nodes_i[EXPANDED], node, 1)
            count_child(pool, c0, width, a, True)
            return a


@inlined
def published_child(pool, index):
    """The child at ``pool[index]``, waiting while another thread creates it (-2)."""
    child = acquire_load(pool, index)
    while child < 0:
        child = acquire_load(pool, index)
    return child


@inlined
def expand(node, a, child, u, p1, p2, selector, track_average, config, nodes_i, nodes_f,
           pool, slots, shared, own, own_slots):
    """Link the new ``child`` at joint action ``a``, record its first value ``u`` and update
    ``node`` (whose own ``X, n`` the expansion does not touch). ``shared``: the joint
    action was claimed (:func:`claim_untried`), which counted it already. The child's
    statistics are written before it is linked: a thread that sees it sees them.
    ``own``: ``node`` is the root, whose statistics this thread keeps in its own copy
    ``own_slots`` (:func:`back_up`)."""
    c0 = nodes_i[CHILD, node]
    n2 = nodes_i[N2, node]
    width = nodes_i[N1, node] * n2
    nodes_f[X, child] += u
    nodes_f[VISITS, child] += 1.0
    nodes_f[MEAN, child] = nodes_f[X, child] / nodes_f[VISITS, child]
    release_store(pool, c0 + a, child)
    if not shared:
        count_child(pool, c0, width, a, False)
        nodes_i[EXPANDED, node] += 1
    stats, s, atomic = statistics_at(node, own, nodes_i, slots, own_slots,
                                     config[SHARED] != 0.0)
    update(node, a // n2, a % n2, u, False, p1, p2, selector, track_average, config, nodes_i,
           nodes_f, pool, stats, s, atomic)


@inlined
def back_up(depth, u, path_node, path_i, path_j, path_probs, mean_variant, selector,
            track_average, config, nodes_i, nodes_f, pool, slots, own_f, own_slots):
    """``X += u, n += 1`` and the Update at each node of the path, deepest first; RetVal is
    ``u`` or, in the mean variants, the node's new mean. ``path_probs[d]``: the players'
    sampling distributions at depth ``d`` (empty: in the nodes' ``PROB`` slots).

    ``own_f`` (``X, n``) and ``own_slots`` (its decision statistics, offset 0), if not
    empty: this thread's own copy of the root's (``path_node[0]``) statistics, updated
    without atomics (its ``MEAN`` is not kept during the run). Tree parallelism keeps the
    root's statistics per thread, summed into the tree after each run (``KernelSMMCTS``):
    every iteration updates the root, and threads writing the same root would pass its
    cache lines back and forth."""
    atomic = config[SHARED] != 0.0
    for d in range(depth - 1, -1, -1):
        h = path_node[d]
        own = d == 0 and own_f.shape[0] > 0
        if own:
            own_f[X] += u
            own_f[VISITS] += 1.0
        else:
            add(nodes_f[X], h, u, atomic)
            add(nodes_f[VISITS], h, 1.0, atomic)
            nodes_f[MEAN, h] = nodes_f[X, h] / nodes_f[VISITS, h]
        if nodes_i[KIND, h] == DECISION:
            n1 = nodes_i[N1, h]
            n2 = nodes_i[N2, h]
            if path_probs.shape[0] > 0:
                p1 = path_probs[d, :n1]
                p2 = path_probs[d, n1:n1 + n2]
            else:
                s = nodes_i[SLOT, h]
                p1 = slots[PROB, s:s + n1]
                p2 = slots[PROB, s + n1:s + n1 + n2]
            stats, s, shared_entry = statistics_at(h, own, nodes_i, slots, own_slots, atomic)
            update(h, path_i[d], path_j[d], u, True, p1, p2, selector, track_average, config,
                   nodes_i, nodes_f, pool, stats, s, shared_entry)
        if mean_variant:
            u = (own_f[X] / own_f[VISITS]) if own else nodes_f[X, h] / nodes_f[VISITS, h]
    return u


@numba.njit(cache=True, nogil=True)
def copy_subtree(root, nodes_i, nodes_f, pool, slots, counters, new_nodes_i, new_nodes_f,
                 new_pool, new_slots, new_counters, new_index, queue):
    """Copy the subtree of ``root`` into the ``new_*`` arrays, numbered breadth first.

    ``new_index`` (given as one -1 per old node) maps old node numbers to new ones;
    ``queue`` (room for one entry per old node) ends with the old numbers of the copied
    nodes in their new order."""
    new_index[root] = 0
    new_counters[NUM_NODES] = 1
    new_counters[POOL_USED] = 0
    new_counters[SLOTS_USED] = 0
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
        blocks = block_count(nodes_i[KIND, old], width)
        a0 = nodes_i[ACTIONS, old]
        room = n1 + n2 if a0 >= 0 else 0
        p = new_counters[POOL_USED]
        new_counters[POOL_USED] += width + blocks + room
        new_nodes_i[CHILD, new] = p
        new_nodes_i[ACTIONS, new] = p + width + blocks if a0 >= 0 else -1
        for b in range(blocks):
            new_pool[p + width + b] = pool[c0 + width + b]
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
        for a in range(room):
            new_pool[p + width + blocks + a] = pool[a0 + a]
        s = nodes_i[SLOT, old]
        t = new_counters[SLOTS_USED]
        new_counters[SLOTS_USED] += n1 + n2
        new_nodes_i[SLOT, new] = t
        for f in range(slots.shape[0]):
            for a in range(n1 + n2):
                new_slots[f, t + a] = slots[f, s + a]


# ----------------------------------------------------------------------------------------
# Python side.


def freeze_loaded_objects() -> None:
    """Collect the garbage, then exclude every object alive from later collections
    (:func:`gc.freeze`); called when a compiled engine has loaded its code.

    Loading numba's code leaves some 60,000 objects the collector tracks (126,000 in a
    process with pyspiel, OpenSpiel's games and both engines loaded): each full collection
    then walks them all, 30-130 ms on the shared machine, which inside a timed move is the
    overshoot. Frozen objects are still freed when their last reference goes; only a frozen
    object that later ends in a reference cycle is never reclaimed (the searches avoid
    cycles: see :attr:`ArrayTreeSearch.root`).

    Only when at least :data:`FREEZE_ABOVE` objects the collector tracks are not frozen yet
    (code was loaded since the last freeze): building a bot whose code is loaded already
    adds a few hundred objects, whose collection at every bot's construction only cost time
    (0.1-2 ms once the rest is frozen, 26 Nov 2026).
    """
    if sum(len(gc.get_objects(generation)) for generation in range(3)) < FREEZE_ABOVE:
        return
    gc.collect()
    gc.freeze()


#: Tracked objects not frozen yet from which :func:`freeze_loaded_objects` collects and
#: freezes (a full collection of this many takes about 1-5 ms on the shared machine).
FREEZE_ABOVE = 5_000


#: ``mmap`` flags of :func:`lazy_zeros`: private anonymous memory where the system has it.
#: (``mmap.mmap(-1, n)`` alone maps *shared* anonymous memory, which a forked process would
#: write into, and whose first-touch page faults go through the shared-memory file system:
#: slower than private ones, about 5% of a fresh 20,000-iteration Oshi-Zumo search,
#: 26 Nov 2026.)
_PRIVATE = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)


def lazy_zeros(shape, dtype=np.float64) -> np.ndarray:
    """An array of zeros in private anonymous memory, whose pages the operating system
    supplies (zeroed) when first written: allocating a big capacity costs no time. A forked
    process gets its own copy of the pages it writes (copy on write).

    Memory of the same size that a dropped array released is reused (see
    :class:`_ReleasedMemory`): its written pages cleared, so that a new search does not
    pay a first-touch page fault for each page its predecessor already had.

    ``np.zeros`` may instead reuse freed heap memory, which it must clear: on the shared
    machine that took 60-70 ms for the 25 MB of node arrays a 0.1 s move plans for.
    """
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    if size == 0:
        return np.zeros(shape, dtype)
    memory = _RELEASED.take(size)
    if memory is None:
        memory = mmap.mmap(-1, size, flags=_PRIVATE) if _PRIVATE else mmap.mmap(-1, size)
    array = np.frombuffer(memory, dtype)
    _RELEASED.watch(array, memory)
    return array.reshape(shape)


def _load_mincore():
    """libc's ``mincore`` (which pages of a mapping are in memory), or None."""
    if not _PRIVATE or not hasattr(mmap.mmap, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return None
    try:
        mincore = ctypes.CDLL(None, use_errno=True).mincore
    except (OSError, AttributeError):
        return None
    mincore.restype = ctypes.c_int
    mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    return mincore


class _ReleasedMemory:
    """The memory of dropped tree arrays, kept (at most :attr:`limit` bytes of pages in
    memory) for the next array of the same size, as the C heap keeps freed memory for the
    next allocation.

    A fresh search writes megabytes of new arrays (20,000 iterations of the default
    Oshi-Zumo: 14 MB, 3,500 pages), and each page first written costs a page fault
    (about a fifth of such a search on the shared machine, 26 Nov 2026); OpenSpiel's C++
    MCTSBot gets its nodes from the heap, which reuses the memory of the bot before.

    An array's memory comes back when the array and every view of it are gone (a weak
    reference to the array that owns the buffer); it is cleared only when taken: pages in
    memory are set to zero (a fraction of the cost of faulting them in anew), the others
    (never written, or swapped out) are dropped (``madvise(MADV_DONTNEED)``: read as zeros
    again). Where the system cannot tell which pages are in memory (``mincore``), nothing
    is kept.
    """

    def __init__(self, limit: int):
        self.limit = limit
        self._mincore = _load_mincore()
        # Arrays are dropped on any thread, and in a garbage collection that may run inside
        # this class's own locked steps (hence re-entrant).
        self._lock = threading.RLock()
        self._kept: dict[int, list[tuple[mmap.mmap, int]]] = {}  # size: (memory, in memory)
        self._bytes = 0  # of the kept memory's pages in memory

    def watch(self, array: np.ndarray, memory: mmap.mmap) -> None:
        """Take ``memory`` back when ``array`` (which owns it) is gone."""
        if self._mincore is not None and self.limit > 0:
            weakref.finalize(array, self._give_back, memory).atexit = False

    def _give_back(self, memory: mmap.mmap) -> None:
        resident = self._resident(memory)
        if resident is None:
            return
        used = int(resident.sum()) * mmap.PAGESIZE
        with self._lock:
            if self._bytes + used > self.limit:
                return  # unmapped when the last reference goes
            self._kept.setdefault(len(memory), []).append((memory, used))
            self._bytes += used

    def take(self, size: int) -> mmap.mmap | None:
        """Kept memory of ``size`` bytes, cleared, or None."""
        with self._lock:
            kept = self._kept.get(size)
            if not kept:
                return None
            memory, used = kept.pop()
            self._bytes -= used
        return memory if self._clear(memory) else None

    def _resident(self, memory: mmap.mmap) -> np.ndarray | None:
        """Per page of ``memory``: 1 if it is in memory (``mincore``), else 0; or None."""
        assert self._mincore is not None
        pages = (len(memory) + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        resident = np.zeros(pages, np.uint8)
        view = np.frombuffer(memory, np.uint8)
        if self._mincore(view.__array_interface__["data"][0], len(memory),
                         resident.ctypes.data) != 0:
            return None
        return resident & 1

    def _clear(self, memory: mmap.mmap) -> bool:
        """Zero ``memory``: its pages in memory by writing, the others by dropping them."""
        resident = self._resident(memory)
        if resident is None:
            return False
        view = np.frombuffer(memory, np.uint8)
        flags = np.concatenate(([2], resident, [2]))
        starts = np.flatnonzero(flags[1:] != flags[:-1])  # where each run of pages begins
        for first, end in zip(starts[:-1].tolist(), starts[1:].tolist()):
            begin, stop = first * mmap.PAGESIZE, min(end * mmap.PAGESIZE, len(memory))
            if resident[first]:
                view[begin:stop] = 0
            else:
                memory.madvise(mmap.MADV_DONTNEED, begin, stop - begin)
        return True


#: Bytes of released tree memory a process keeps for new arrays (:class:`_ReleasedMemory`).
KEEP_RELEASED_BYTES = 256 << 20
_RELEASED = _ReleasedMemory(KEEP_RELEASED_BYTES)
if hasattr(os, "register_at_fork"):  # a lock held by another thread stays held in a fork
    os.register_at_fork(after_in_child=lambda: setattr(_RELEASED, "_lock", threading.RLock()))


_CACHE_LINE = 64  # bytes


def padded_zeros(shape, dtype=np.float64) -> np.ndarray:
    """Zeros (C-contiguous) on cache lines of their own: a thread's scratch array that
    shared a cache line with another thread's, at either end, would pass that line between
    the cores on every write (tree parallelism)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    pad = _CACHE_LINE // dtype.itemsize
    buffer = np.zeros(size + 3 * pad, dtype)
    start = pad + (-buffer.ctypes.data // dtype.itemsize) % pad  # aligned, a line before
    return buffer[start:start + size].reshape(shape)


class ArrayNode:
    """A read-only view of one node of an array tree (the interface of ``SearchNode``)."""

    __slots__ = ("_search", "index")

    def __init__(self, search: ArrayTreeSearch, index: int):
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
        if self.is_terminal or self.is_chance:
            raise ValueError("only decision nodes list actions")
        actions = self._search.node_actions(self.index)
        if actions is None:
            raise ValueError("only opened decision nodes list actions")
        return actions

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
        fields = self._search.nodes_i[:, self.index].tolist()  # one read, not three
        n1, n2, s = fields[N1], fields[N2], fields[SLOT]
        start, n = (s, n1) if player == 0 else (s + n1, n2)
        return self._search.slots[field, start:start + n]

    def player_counts(self, player: int) -> list[int]:
        """``player``'s visit counts per action (of an opened node)."""
        return self._slots(COUNT, player).astype(np.int64).tolist()

    def player_strategy_sums(self, player: int) -> list[float]:
        """``player``'s sums of sampling distributions (of an opened node)."""
        return self._slots(AVERAGE, player).tolist()

    def player_row(self, field: str, player: int) -> np.ndarray:
        """``player``'s "counts" (int64) or "strategy_sums" as a new array (of an opened
        node): what a merged root adds over the trees."""
        if field == "counts":
            return self._slots(COUNT, player).astype(np.int64)
        return self._slots(AVERAGE, player).copy()

    @property
    def counts(self) -> tuple[list[int], list[int]]:
        if not self.is_open:
            first, second = self.actions
            return [0] * len(first), [0] * len(second)
        return self.player_counts(0), self.player_counts(1)

    @property
    def strategy_sums(self) -> tuple[list[float], list[float]]:
        """Each player's sums of sampling distributions (kept for the average strategy)."""
        if not self.is_open:
            first, second = self.actions
            return [0.0] * len(first), [0.0] * len(second)
        return self.player_strategy_sums(0), self.player_strategy_sums(1)

    def strategy(self, player: int, final_strategy: str = "empirical",
                 exploration: float = 0.0, threshold: float = 0.0) -> list[float]:
        """The final strategy of ``player`` here (see ``smmcts.final_probabilities``)."""
        if not self.is_open or self.is_chance:
            raise ValueError("only decision nodes the search has opened (visited twice) have "
                             "strategies; the search's strategy(state, player) answers anywhere")
        return final_probabilities(self._slots(COUNT, player).tolist(),
                                   self.player_strategy_sums(player), final_strategy,
                                   exploration, threshold)

    def child(self, player_actions) -> ArrayNode | None:
        """The child after the given action of each player (chance: one action), or None."""
        index = self._search.child_index(self.index, player_actions)
        return None if index < 0 else ArrayNode(self._search, index)


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
                 iteration_room: tuple[int, int] | None = None):
        super().__init__(game, selector, gamma, c, final_strategy, threshold)
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
            minimum=8 * self._bytes((nodes_once + 1, pool_once, pool_once)))
        self._selector_code = SELECTOR_CODES[self.base_selector]
        self._config = np.array([self.gamma, self.c, self._inv_scale, self._utility_sum,
                                 self._reward_low, self._inv_reward_range, 0.0])
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
        #: root-parallel search (:class:`.root_parallel.ThreadTeam`) starts its tree once
        #: this count has gone up, or at once where it is None.
        self.entered: np.ndarray | None = None

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
        nodes, pool, slots = capacity
        return (nodes * (_NODE_BYTES + self.python_bytes_per_node) + pool * _POOL_BYTES
                + slots * _SLOT_BYTES)

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
        self.full = False
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
        """Iterations until the budget runs out; returns how many were done."""
        done = 0
        if deadline is None:
            assert iterations is not None  # check_budget: no time limit, so a count
            while done < iterations and not self.full:
                done += self._iterate(root, iterations - done)
            return done
        chunk = 16
        searching = time.perf_counter()
        while iterations is None or done < iterations:
            todo = chunk if iterations is None else min(chunk, iterations - done)
            done += self._iterate(root, todo)
            now = time.perf_counter()
            if now >= deadline or self.full:
                break
            chunk = next_chunk(chunk, done / max(now - searching, 1e-6), deadline - now)
        return done


def next_chunk(chunk: int, rate: float, left: float) -> int:
    """The iterations of the next chunk of a timed run: about :data:`CHECK_EVERY` seconds at
    ``rate``, the average rate so far (a single chunk's rate swings with the tree and with
    the machine's load), at most twice the last ``chunk``; with ``left`` seconds to the
    deadline, half of that, so that a chunk slower than planned overruns by a fraction of
    a chunk."""
    return int(max(1, min(2 * chunk, rate * min(CHECK_EVERY, left / 2))))

