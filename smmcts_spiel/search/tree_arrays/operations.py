"""The compiled tree operations both compiled engines inline into their loops: new and
opened nodes, the Update of Alg. 1 with the formulas of :mod:`smmcts_spiel.search.selectors`
compiled as they are, selection, the expansion rule, the back-up of a path, tree-parallel
threads' claims, and the copy of a subtree when the root moves (see the package docstring
for the layout)."""

from __future__ import annotations

import numba

from smmcts_spiel.search import selectors
from smmcts_spiel.search.tree_arrays.atomics import (
    acquire_load,
    add,
    array_returning,
    atomic_add,
    compare_and_swap,
    inlined,
    release_store,
    take,
)
from smmcts_spiel.search.tree_arrays.layout import (
    ACTIONS,
    AVERAGE,
    BLOCK,
    CHANCE,
    CHILD,
    COUNT,
    DECISION,
    EXPANDED,
    GAMMA,
    INV_REWARD_RANGE,
    INV_SCALE,
    KIND,
    MEAN,
    N1,
    N2,
    NUM_NODES,
    POOL_USED,
    PROB,
    REWARD_LOW,
    SHARED,
    SLOT,
    SLOTS_USED,
    STAT,
    U1,
    UTILITY_SUM,
    VISITS,
    C,
    X,
)

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


rm_probabilities = array_returning(selectors.regret_matching_probabilities)
rm_sample = inlined(selectors.regret_matching_sample)
exp3_probabilities = array_returning(selectors.exp3_probabilities)
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


@array_returning
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


@array_returning
def statistics_at(node, own, nodes_i, slots, own_slots, atomic):
    """Where ``node``'s decision statistics are, for :func:`update`: ``(slots, offset,
    atomic)``, the tree's slots at ``nodes_i[SLOT, node]`` (``atomic``: other threads update
    them too), or, if ``own``, this thread's own copy of the root's (:func:`back_up`)."""
    if own:
        return own_slots, 0, False
    return slots, nodes_i[SLOT, node], atomic


@inlined
def select(selector, stat, counts, gamma, c, ties, probs, u, track_average):
    """A player's action from the uniform number ``u`` (draw it only if the player has a
    choice; ``ties``: UCB's tie tolerance); ``probs`` gets the selector's distribution where
    the Update or the average reads it (not regret matching's without the average:
    :func:`rm_sample`)."""
    if len(probs) == 1:
        probs[0] = 1.0
        return 0
    if selector == 0 and not track_average:
        return rm_sample(stat, gamma, u)
    if selector == 2:  # (UCB's update does not read the distribution)
        if track_average:
            probabilities(selector, stat, counts, gamma, c, probs)
        return ucb_index_random_ties(stat, counts, c, ties, u)
    probabilities(selector, stat, counts, gamma, c, probs)
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
            track_average, config, nodes_i, nodes_f, pool, slots, own_f, own_slots, flight):
    """``X += u, n += 1`` and the Update at each node of the path, deepest first; RetVal is
    ``u`` or, in the mean variants, the node's new mean. ``path_probs[d]``: the players'
    sampling distributions at depth ``d`` (empty: in the nodes' ``PROB`` slots).

    ``own_f`` (``X, n``) and ``own_slots`` (its decision statistics, offset 0), if not
    empty: this thread's own copy of the root's (``path_node[0]``) statistics, updated
    without atomics (its ``MEAN`` is not kept during the run). Tree parallelism keeps the
    root's statistics per thread, summed into the tree after each run (``KernelSMMCTS``):
    every iteration updates the root, and threads writing the same root would pass its
    cache lines back and forth.

    ``flight``, if not empty: this thread's published path (``search.in_flight``), whose
    depth is lowered to ``d`` once the node at ``d`` has the result: the iteration is in
    flight at a node until then."""
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
        if flight.shape[0] > 0:
            release_store(flight, 0, d)
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
