"""How many updates a tree grown by several threads lost: the count of its statistics that
an identity the tree keeps when nothing is lost no longer satisfies.

At every opened decision node each player's action counts sum to the node's selections plus
its expansions, and its visits are its selections plus the one its creation gave it when a
decision node expanded it (a child of a chance node is created on the way down, without a
visit): ``sum(counts of player p) = visits + expanded - created by expansion``, for both
players. ``expanded`` is claimed by compare-and-swap, so it is exact; a count or a visit
added without an atomic step and overwritten by another thread's (:func:`.tree_arrays.add`)
shows as a difference. The root is left out (its statistics are the threads' own during a
run, summed exactly; its visits count iterations of earlier moves that its counts may not).
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.search import tree_arrays as ta


@numba.njit(cache=True)
def _lost(nodes_i, nodes_f, pool, slots, num_nodes, queue, by_expansion):
    lost = 0.0
    queue[0] = 0
    by_expansion[0] = 0
    head, tail = 0, 1
    while head < tail:
        node = queue[head]
        head += 1
        c0 = nodes_i[ta.CHILD, node]
        if c0 < 0 or nodes_i[ta.KIND, node] == ta.TERMINAL:
            continue
        kind = nodes_i[ta.KIND, node]
        n1 = nodes_i[ta.N1, node]
        n2 = nodes_i[ta.N2, node]
        width = n1 if kind == ta.CHANCE else n1 * n2
        for a in range(width):
            child = pool[c0 + a]
            if 0 <= child < num_nodes and tail < len(queue):
                queue[tail] = child
                by_expansion[tail] = kind == ta.DECISION
                tail += 1
        if kind != ta.DECISION or node == 0:
            continue
        s = nodes_i[ta.SLOT, node]
        expected = (nodes_f[ta.VISITS, node] + nodes_i[ta.EXPANDED, node]
                    - by_expansion[head - 1])
        first = 0.0
        for a in range(n1):
            first += slots[ta.COUNT, s + a]
        second = 0.0
        for b in range(n2):
            second += slots[ta.COUNT, s + n1 + b]
        lost += abs(first - expected) + abs(second - expected)
    return lost


def lost_updates(search) -> int:
    """The lost updates of counts and visits in ``search``'s tree (an
    :class:`.tree_arrays.ArrayTreeSearch` whose root is node 0, as after every run): 0 when
    every such update was atomic or unshared."""
    num_nodes = int(search.counters[ta.NUM_NODES])
    if num_nodes == 0:
        return 0
    return int(round(_lost(search.nodes_i, search.nodes_f, search.pool, search.slots,
                           num_nodes, np.zeros(num_nodes, np.int64),
                           np.zeros(num_nodes, np.int64))))
