"""Virtual loss for a tree grown by several threads: selection that avoids what the other
threads are evaluating now, without touching a stored statistic.

Each thread publishes its current path in a row of its own of ``flights`` (cache lines of its
own): ``row[0]`` the depth published, then per depth ``d`` the node and both players' action
indices at ``row[1 + 3 d : 4 + 3 d]`` (-1 where a player did not choose: chance nodes). A
thread writes a depth's entries before it raises the published depth past it (a release
store), and lowers the depth level by level in the back-up, after each level's statistics
have the real result (:func:`retract`), so an iteration is in flight at a node exactly until
that node is updated with it.

A thread at node ``h`` at depth ``d`` reads every other thread whose published depth exceeds
``d`` and whose node at ``d`` is ``h`` (:func:`gather`): ``o_p[a]``, the other iterations in
flight through ``h`` whose player ``p`` chose ``a``, and ``O`` their number. Two paths of a
tree that differ at one depth differ below it, so a thread stops reading another's path for
the rest of an iteration once they part (``alive``). The virtual loss then changes only the
numbers the thread selects from, in scratch copies (:func:`select_in_flight`); the Update
with the real result is the paper's. With nothing in flight the selection is
:func:`.tree_arrays.select`'s, bit for bit. experiments/threads/README.md gives the design.
"""

from __future__ import annotations

import numpy as np

from smmcts_spiel.search import tree_arrays as ta
from smmcts_spiel.search.tree_arrays import acquire_load, inlined, release_store

_ENTRY = 3  # node, player 1's action, player 2's action


def check_virtual_loss(virtual_loss) -> bool:
    """A ``virtual_loss`` setting: True or False (ValueError otherwise)."""
    if not isinstance(virtual_loss, (bool, np.bool_)):
        raise ValueError(f"virtual_loss must be True or False, got {virtual_loss!r}")
    return bool(virtual_loss)


def new_flights(threads: int, max_depth: int, virtual_loss: bool = True) -> np.ndarray:
    """The published paths of ``threads`` threads of a search at most ``max_depth`` deep:
    one row each, rows a whole number of cache lines apart; without ``virtual_loss``, rows
    without columns (nothing is published)."""
    if not virtual_loss:
        return np.zeros((threads, 0), np.int64)
    width = 1 + _ENTRY * (max_depth + 2)
    width += -width % 8  # int64 entries per 64-byte cache line
    return ta.padded_zeros((threads, width), np.int64)


@inlined
def begin(alive):
    """A new iteration: every other thread may be on this thread's path."""
    for t in range(len(alive)):
        alive[t] = 1


@inlined
def publish(row, depth, node, i, j):
    """This thread's iteration is in flight at ``node`` (depth ``depth``) with actions
    ``i``, ``j``: the entries first, then the depth (a release store). Nothing where
    ``row`` is empty (no virtual loss)."""
    if len(row) == 0:
        return
    k = 1 + _ENTRY * depth
    row[k] = node
    row[k + 1] = i
    row[k + 2] = j
    release_store(row, 0, depth + 1)


@inlined
def retract(row, depth):
    """Nothing of this thread's iteration is in flight at depth ``depth`` or below (nothing
    where ``row`` is empty)."""
    if len(row) > 0:
        release_store(row, 0, depth)


@inlined
def gather(flights, me, alive, depth, node, n1, o1, o2):
    """The other threads' iterations in flight through ``node`` at ``depth``: adds each one's
    actions to ``o1[:n1]`` / ``o2`` and returns their number. ``alive[t]``: thread ``t`` may
    still be on this thread's path (set to 1 for every thread at the start of an iteration);
    cleared once their paths part. ``o1``, ``o2`` must be zero on entry where this returns
    more than 0, and are left zero where it returns 0."""
    count = 0
    k = 1 + _ENTRY * depth
    for t in range(flights.shape[0]):
        if t == me or alive[t] == 0:
            continue
        row = flights[t]
        if acquire_load(row, 0) <= depth or acquire_load(row, k) != node:
            alive[t] = 0
            continue
        i = acquire_load(row, k + 1)
        j = acquire_load(row, k + 2)
        if 0 <= i < n1 and 0 <= j < len(o2):  # (a torn read of a moving path: skipped)
            o1[i] += 1.0
            o2[j] += 1.0
            count += 1
    return count


@inlined
def loss_scales(selector, mean, config):
    """Per player, the size of one in-flight loss in the units of the selector's statistic
    at a node whose mean value (player 1's utility) is ``mean``: regret matching's, the
    node's value above the player's worst utility (in RM's units); bandit RM's, the same as a
    reward in [0, 1]."""
    reward1 = min(max((mean - config[ta.REWARD_LOW]) * config[ta.INV_REWARD_RANGE], 0.0), 1.0)
    if selector == 3:
        return reward1, 1.0 - reward1
    to_units = config[ta.INV_SCALE] / config[ta.INV_REWARD_RANGE]
    return reward1 * to_units, (1.0 - reward1) * to_units


@inlined
def select_in_flight(selector, stat, counts, gamma, c, ties, probs, u, track_average, o,
                     others, scale, scratch, scratch_counts):
    """:func:`.tree_arrays.select` with ``others`` iterations of other threads in flight at
    the node, ``o[a]`` of them having chosen ``a`` (then reset to 0), ``scale`` the size of one
    loss (:func:`loss_scales`). The stored ``stat`` and ``counts`` are not written: the
    selection reads ``scratch`` copies. ``probs`` gets the distribution actually sampled
    from, which the Update's importance weights and the average strategy then read.

    * regret matching (and bandit RM): ``r'[b] = r[b] + (others - o[b]) scale``, the update
      the in-flight iterations would make had each returned the player's worst utility with
      every sibling valued at the node's mean;
    * Exp3: ``S'[a] = S[a] - o[a] / sigma[a]``, each in-flight sample counted as a loss in
      Exp3's loss estimator (``sigma``: the distribution without the virtual loss);
    * UCB: the in-flight samples counted as rewards of 0 in the index (``n[a] + o[a]``
      plays, the same sum).
    """
    n = len(probs)
    if others == 0 or n == 1:
        for a in range(n):
            o[a] = 0.0
        return ta.select(selector, stat, counts, gamma, c, ties, probs, u, track_average)
    values = scratch[:n]
    plays = scratch_counts[:n]
    for a in range(n):
        values[a] = stat[a]
        plays[a] = counts[a]
    if selector == 0 or selector == 3:
        for a in range(n):
            values[a] += (others - o[a]) * scale
    elif selector == 1:
        ta.exp3_probabilities(stat, gamma, probs)
        for a in range(n):
            values[a] -= o[a] / probs[a]
    else:
        for a in range(n):
            plays[a] += o[a]
    for a in range(n):
        o[a] = 0.0
    return ta.select(selector, values, plays, gamma, c, ties, probs, u, track_average)


@inlined
def select_joint(selector, stats, s, n1, n2, gamma, c, ties, probs1, probs2, u1, u2,
                 track_average, flights, me, alive, depth, node, mean, config, scratch,
                 own_stats):
    """Both players' actions at a decision node (statistics at ``stats[:, s:s + n1 + n2]``)
    by :func:`.tree_arrays.select`, or, where ``flights`` has columns, with the other threads'
    iterations in flight there as virtual losses (``mean``: the node's mean value), then
    published as this thread's (``me``) before it descends. ``scratch``: this thread's
    (4, most actions) floats, rows 0 and 1 zero between calls. ``own_stats``: the statistics
    are this thread's own (the root's during a run), which no other thread's iteration will
    update, so there is no loss to anticipate: the plain selection, published."""
    if flights.shape[1] == 0 or own_stats:
        i = ta.select(selector, stats[ta.STAT, s:s + n1], stats[ta.COUNT, s:s + n1], gamma, c,
                      ties, probs1, u1, track_average)
        j = ta.select(selector, stats[ta.STAT, s + n1:s + n1 + n2],
                      stats[ta.COUNT, s + n1:s + n1 + n2], gamma, c, ties, probs2, u2,
                      track_average)
        publish(flights[me], depth, node, i, j)
        return i, j
    others = gather(flights, me, alive, depth, node, n1, scratch[0, :n1], scratch[1, :n2])
    scale1, scale2 = loss_scales(selector, mean, config)
    i = select_in_flight(selector, stats[ta.STAT, s:s + n1], stats[ta.COUNT, s:s + n1], gamma,
                         c, ties, probs1, u1, track_average, scratch[0, :n1], others, scale1,
                         scratch[2], scratch[3])
    j = select_in_flight(selector, stats[ta.STAT, s + n1:s + n1 + n2],
                         stats[ta.COUNT, s + n1:s + n1 + n2], gamma, c, ties, probs2, u2,
                         track_average, scratch[1, :n2], others, scale2, scratch[2], scratch[3])
    publish(flights[me], depth, node, i, j)
    return i, j
