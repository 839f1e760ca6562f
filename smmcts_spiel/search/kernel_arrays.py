"""What a search on a game kernel allocates: the most one iteration may add to the tree
(:func:`iteration_rooms`, which sizes the arrays and the least ``max_memory``) and each
searching thread's own arrays (:class:`ThreadArrays`)."""

from __future__ import annotations

import numpy as np

from smmcts_spiel.games import kernels
from smmcts_spiel.search import tree_arrays as ta


def iteration_rooms(kernel: kernels.GameKernel) -> np.ndarray:
    """The most nodes, pool and slot entries one iteration on ``kernel`` may add."""
    joint = kernel.max_actions ** 2
    width = (joint + ta.block_count.py_func(ta.DECISION, joint) + 2 * kernel.max_actions
             + 2 * kernel.max_chance_outcomes)
    return np.array([kernel.max_depth + 1, (kernel.max_depth + 1) * width,
                     (kernel.max_depth + 1) * width], np.int64)


class ThreadArrays:
    """What each thread searching a tree has of its own: its random stream, the game state
    it replays, its path (nodes, actions and sampling distributions) and scratch arrays;
    with several threads also its ranges of entries and iterations (``tree_arrays.OWN_*``)
    and its copy of the root's ``X, n`` and statistics (empty with one thread). Each on
    cache lines of its own (:func:`.tree_arrays.padded_zeros`)."""

    def __init__(self, kernel, rng: np.random.Generator, shared: bool, index: int = 0,
                 threads: int = 1):
        zeros = ta.padded_zeros
        self.rng = rng
        self.index = index  # the thread's row of the published paths (search.in_flight)
        self.alive = zeros(threads, np.int64)  # which other threads' paths it still reads
        self.loss_scratch = zeros((4, kernel.max_actions))  # in-flight counts, scratch copies
        initial = kernel.initial_state()
        self.state = zeros(initial.shape, initial.dtype)
        self.path = zeros((3, kernel.max_depth + 1), np.int64)
        self.probs = zeros((kernel.max_depth + 1, 2 * kernel.max_actions))
        self.actions = zeros(2 * kernel.max_actions + 2, np.int64)
        self.outcomes = zeros(kernel.max_chance_outcomes, np.int64)
        self.outcome_probs = zeros(kernel.max_chance_outcomes)
        self.entered = zeros(1, np.int64)  # calls of the compiled iterations (kernel_engine._run)
        self.own = zeros(ta.OWN_SIZE, np.int64)
        self.own_f = zeros(2 if shared else 0)  # the root's X, n
        self.own_slots = zeros((4, 2 * kernel.max_actions if shared else 0))
        self.done = 0  # iterations of its last run
