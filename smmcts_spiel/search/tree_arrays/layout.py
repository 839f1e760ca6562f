"""The layout of the array tree: field numbers, the config, the selectors' codes, and what
a unit of capacity costs in memory (see the package docstring)."""

from __future__ import annotations

import os

# The node kinds (field KIND), part of the layout.
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL  # noqa: F401

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
# grow the tree (tree parallelism: visits, sums and counts are then added atomically);
# ``TIES``: UCB's tie tolerance (selectors.ucb_index_random_ties).
GAMMA, C, INV_SCALE, UTILITY_SUM, REWARD_LOW, INV_REWARD_RANGE, SHARED, TIES = range(8)
CONFIG_SIZE = 8

BLOCK = 64  # joint actions per block of a wide node's children table (see block_count)


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



def capacity_bytes(capacity, python_bytes_per_node: int = 0) -> int:
    """The memory arrays of this capacity (nodes, pool, slots) count for."""
    nodes, pool, slots = capacity
    return (nodes * (_NODE_BYTES + python_bytes_per_node) + pool * _POOL_BYTES
            + slots * _SLOT_BYTES)


def minimum_memory(nodes: int, entries: int, python_bytes_per_node: int = 0) -> int:
    """The least ``max_memory`` of an :class:`.tree_search.ArrayTreeSearch` whose iterations
    running at once add at most ``nodes`` nodes and ``entries`` pool (and slot) entries:
    room for a few of them (below that the root cannot even be opened)."""
    return 8 * capacity_bytes((nodes + 1, entries, entries), python_bytes_per_node)
