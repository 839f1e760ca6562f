"""The search tree of the compiled SM-MCTS engines, in flat arrays.

:mod:`smmcts_spiel.search.kernel_engine` (whole iterations compiled on a game kernel) and
:mod:`smmcts_spiel.search.array_engine` (any pyspiel game: pyspiel only where a node is
created or a leaf evaluated) keep their tree in the arrays described here and share
everything that touches them: the Update of Alg. 1 with the formulas of
:mod:`smmcts_spiel.search.selectors` compiled as they are, selection, the expansion rule,
the back-up of a path, the copy of a subtree when the root moves, the read-only node views
and the time-limited loop. The algorithm is that of
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

Modules, by concern: :mod:`.layout` (field numbers, config, the bytes a unit of capacity
costs), :mod:`.atomics` (LLVM atomic operations for tree parallelism), :mod:`.operations`
(the compiled tree operations the engines inline), :mod:`.memory` (lazily supplied and
reused memory), :mod:`.nodes` (read-only node views), :mod:`.tree_search` (the Python base
class :class:`ArrayTreeSearch`), :mod:`.gc_freeze` (the collector freeze after loading
compiled code). This package's namespace holds what the engines use of them.

numba caches each compiled engine on disk without noticing edits to these modules: after
editing one, delete the ``__pycache__/*.nbi`` / ``*.nbc`` files of ``smmcts_spiel/search``
and its subfolders.
"""

from __future__ import annotations

from smmcts_spiel import compiling
from smmcts_spiel.search.tree_arrays.atomics import (
    acquire_load,
    add,
    atomic_add,
    compare_and_swap,
    inlined,
    release_store,
    take,
)
from smmcts_spiel.search.tree_arrays.gc_freeze import (
    FREEZE_ABOVE,
    freeze_loaded_objects,
)
from smmcts_spiel.search.tree_arrays.layout import (
    ACTIONS,
    AVERAGE,
    BLOCK,
    CHANCE,
    CHILD,
    CONFIG_SIZE,
    COUNT,
    DECISION,
    DEFAULT_MAX_MEMORY,
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
    SELECTOR_CODES,
    SHARED,
    SLOT,
    SLOTS_USED,
    STAT,
    TERMINAL,
    TIES,
    U1,
    UTILITY_SUM,
    VISITS,
    C,
    X,
    capacity_bytes,
    minimum_memory,
)
from smmcts_spiel.search.tree_arrays.memory import (
    KEEP_RELEASED_BYTES,
    lazy_zeros,
    padded_zeros,
)
from smmcts_spiel.search.tree_arrays.nodes import (
    ArrayNode,
    ArrayTree,
)
from smmcts_spiel.search.tree_arrays.operations import (
    ITERATION_BATCH,
    OWN_END,
    OWN_ITERATION,
    OWN_ITERATION_END,
    OWN_SIZE,
    OWN_UNUSED,
    back_up,
    bandit_regret_update,
    block_count,
    claim_blocks,
    claim_iteration,
    claim_untried,
    copy_subtree,
    count_child,
    exp3_probabilities,
    expand,
    mark_open,
    new_node,
    open_node,
    player_update,
    probabilities,
    published_child,
    rm_probabilities,
    rm_sample,
    sample_index,
    select,
    statistics_at,
    ucb_index,
    ucb_index_random_ties,
    untried_joint_action,
    update,
)
from smmcts_spiel.search.tree_arrays.tree_search import (
    CHECK_EVERY,
    INTERRUPT_EVERY,
    PLAN_SECONDS,
    ArrayTreeSearch,
    next_chunk,
)

compiling.install()

# The names the engines use, then the modules (so that the API reference shows them too).
__all__ = [
    "ACTIONS", "AVERAGE", "BLOCK", "C", "CHANCE", "CHECK_EVERY", "CHILD", "CONFIG_SIZE",
    "COUNT", "DECISION", "DEFAULT_MAX_MEMORY", "EXPANDED", "FREEZE_ABOVE", "GAMMA",
    "INTERRUPT_EVERY", "INV_REWARD_RANGE", "INV_SCALE", "ITERATION_BATCH",
    "KEEP_RELEASED_BYTES", "KIND", "MEAN", "N1", "N2", "NUM_NODES", "OWN_END", "OWN_ITERATION",
    "OWN_ITERATION_END", "OWN_SIZE", "OWN_UNUSED", "PLAN_SECONDS", "POOL_USED", "PROB",
    "REWARD_LOW", "SELECTOR_CODES", "SHARED", "SLOT", "SLOTS_USED", "STAT", "TERMINAL", "TIES",
    "U1", "UTILITY_SUM", "VISITS", "X", "acquire_load", "add", "ArrayNode", "ArrayTree",
    "ArrayTreeSearch", "atomic_add", "back_up", "bandit_regret_update", "block_count",
    "capacity_bytes", "claim_blocks", "claim_iteration", "claim_untried", "compare_and_swap",
    "copy_subtree", "count_child", "exp3_probabilities", "expand", "freeze_loaded_objects",
    "inlined", "lazy_zeros", "mark_open", "minimum_memory", "new_node", "next_chunk",
    "open_node", "padded_zeros", "player_update", "probabilities", "published_child",
    "release_store", "rm_probabilities", "rm_sample", "sample_index", "select",
    "statistics_at", "take", "ucb_index", "ucb_index_random_ties", "untried_joint_action",
    "update",
    "atomics", "gc_freeze", "layout", "memory", "nodes", "operations", "tree_search",
]
