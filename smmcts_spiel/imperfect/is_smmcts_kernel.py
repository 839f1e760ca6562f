"""Information-set SM-MCTS compiled with numba over a game's information kernel.

The algorithm of :class:`smmcts_spiel.imperfect.is_smmcts.InformationSetSMMCTS` (read its
docstring) for the games with an information kernel
(:mod:`smmcts_spiel.games.kernels.information`: Kuhn and Leduc poker,
``goofspiel(imp_info=True)``, Phantom Tic-Tac-Toe), whole iterations compiled:

* **Tables.** One row per information set of either player in the trees (the kernel's
  information keys include the player): the selector's statistics ``stats[row, a]`` (RM:
  regrets; Exp3 and UCB: reward sums), visit counts ``counts[row, a]`` and the sums of the
  sampling distributions ``sums[row, a]``, found by :mod:`.key_table`. At most two rows
  are added per iteration (one per player), so the arrays grow between chunks.
* **Worlds.** The histories of the searching player's information set, found by the
  compiled walk (:mod:`.compiled_information_sets`) with their chance probabilities; each
  iteration draws one by its cumulative probability and replays it into a kernel state.
* **One iteration** plays the world out: at a decision, a player still in its tree selects
  with its selector (the node added if missing; then the player rolls out uniformly), at
  a simultaneous move player 1 then player 2 each from its own information set; chance is
  sampled. The visited rows learn the player's reward in [0, 1].

It draws the same uniform numbers in the same order with the same arithmetic as the
Python engine, so both grow the same trees from the same seed
(``tests/test_is_smmcts.py``).
"""

from __future__ import annotations

import numba
import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.games.kernels import information as kernels
from smmcts_spiel.imperfect import compiled_information_sets, information_sets, key_table
from smmcts_spiel.imperfect.is_smmcts import (
    InformationSetSMMCTS,
    ISPolicy,
    check_final_strategy,
    check_selector,
    reward_scale,
    without_exploration,
)
from smmcts_spiel.search import selectors, tree_arrays

# The perfect-information engine's inlined selector helpers (one compiled copy of each).
_rm_probabilities = tree_arrays.rm_probabilities
_exp3_probabilities = tree_arrays.exp3_probabilities
_sample_index = tree_arrays.sample_index
_ucb_index = tree_arrays.ucb_index
_ucb_select = tree_arrays.ucb_index_random_ties

SELECTOR_CODES = {"rm": 0, "exp3": 1, "ucb": 2}


@numba.njit(inline="always")
def _probabilities(selector, gamma, c, stats, counts, n, out):
    """The row's sampling distribution into ``out[:n]`` (UCB: one-hot on its maximiser)."""
    if selector == 0:
        _rm_probabilities(stats[:n], gamma, out[:n])
    elif selector == 1:
        _exp3_probabilities(stats[:n], gamma, out[:n])
    else:
        for k in range(n):
            out[k] = 0.0
        out[_ucb_index(stats[:n], counts[:n], c)] = 1.0


@numba.njit(cache=True)
def _run(iterations, code, root, params, data, histories, lengths, cumulative, count,
         selector, gamma, c, low, scale, stats, counts, sums, num_actions, node_keys,
         counters, hash_keys, hash_nodes, rng, max_depth, moves):
    """Runs ``iterations`` iterations from worlds drawn among the first ``count``
    ``histories``; ``counters[0]`` is the number of rows in use. ``moves`` bounds the
    number of actions or chance outcomes at a node."""
    width = stats.shape[1]
    actions = np.zeros(moves, np.int64)
    probs = np.zeros(moves, np.float64)
    scratch = np.zeros(width, np.int64)
    path_row = np.zeros(max_depth, np.int64)
    path_player = np.zeros(max_depth, np.int64)
    path_i = np.zeros(max_depth, np.int64)
    path_probs = np.zeros((max_depth, width), np.float64)
    total = cumulative[count - 1]
    for _ in range(iterations):
        u = rng.random() * total
        w = min(np.searchsorted(cumulative[:count], u, side="right"), count - 1)
        state = root.copy()
        pending = -1
        for d in range(lengths[w]):
            mover = kernels.to_move(code, state, params, data, pending, scratch)
            pending = kernels.step(code, state, params, data, pending, mover,
                                   histories[w, d], scratch)
        expanded0 = False
        expanded1 = False
        visited = 0
        while True:
            mover = kernels.to_move(code, state, params, data, pending, scratch)
            if mover == -2:
                break
            if mover == -1:
                n = kernels.chance_outcomes(code, state, params, data, actions, probs)
                a = actions[_sample_index(probs[:n], rng.random())]
            else:
                n = kernels.legal_actions(code, state, params, data, mover, actions)
                if (expanded0 if mover == 0 else expanded1):
                    a = actions[int(rng.random() * n)]
                else:
                    key = kernels.information_key(code, state, params, data, mover)
                    row = key_table.find(key, hash_keys, hash_nodes)
                    if row < 0:
                        row = key_table.add(key, n, hash_keys, hash_nodes, node_keys,
                                            num_actions, counters)
                        if mover == 0:
                            expanded0 = True
                        else:
                            expanded1 = True
                    p = path_probs[visited]
                    _probabilities(selector, gamma, c, stats[row], counts[row], n, p)
                    if selector == 2:
                        i = _ucb_select(stats[row, :n], counts[row, :n], c, 0.0, rng.random())
                    else:
                        i = _sample_index(p[:n], rng.random())
                    path_row[visited] = row
                    path_player[visited] = mover
                    path_i[visited] = i
                    visited += 1
                    a = actions[i]
            pending = kernels.step(code, state, params, data, pending, mover, a, scratch)
        u0 = kernels.returns(code, state, params, data)
        for v in range(visited):
            row = path_row[v]
            i = path_i[v]
            n = num_actions[row]
            p = path_probs[v]
            reward = ((u0 if path_player[v] == 0 else -u0) - low) * scale
            if selector == 0:
                # Importance-sampled action values: reward / p for the sampled action.
                for k in range(n):
                    value = reward / p[i] if k == i else 0.0
                    stats[row, k] += value - reward
            elif selector == 1:
                stats[row, i] += reward / p[i]
            else:
                stats[row, i] += reward
            for k in range(n):
                sums[row, k] += p[k]
            counts[row, i] += 1


class KernelWorlds:
    """The worlds of a player's information set for the compiled engine: the histories (a
    simultaneous round's hidden first move cut off) and their cumulative chance
    probabilities."""

    def __init__(self, kernel: kernels.InformationKernel, game: pyspiel.Game,
                 state: pyspiel.State, player: int):
        search_game = information_sets.check_sequential_search_game(game, "the world sampler")
        decision = information_sets.decision_state(search_game, state, player)
        hidden = len(decision.history()) - len(state.history())
        _, _, histories, lengths, weights, count = compiled_information_sets.walk(
            kernel, decision.history(), player)
        self.histories = histories
        self.lengths = lengths[:count] - hidden
        self.cumulative = np.cumsum(weights[:count])
        self.count = count


class KernelInformationSetSMMCTS(key_table.KeyedRows):
    """Information-set SM-MCTS compiled on an information kernel (same interface and same
    trees as the Python :class:`~smmcts_spiel.imperfect.is_smmcts.InformationSetSMMCTS`).

    Args:
      game: a game with an information kernel (``information_kernel_for(game)``).
      selector, gamma, c, final_strategy, seed: as the Python engine's.
    """

    ROW_TABLES = (("stats", np.float64), ("sums", np.float64), ("counts", np.int64))
    stats: np.ndarray  # [row, a], set by _new_tables and _reserve
    sums: np.ndarray
    counts: np.ndarray

    def __init__(self, game: pyspiel.Game, selector: str = "rm", gamma: float = 0.05,
                 c: float = 1.4, final_strategy: str = "empirical", seed: int | None = None):
        checks.check_game(game, "Information-set SM-MCTS", perfect_information=False,
                          information_states=True, zero_sum_only=True)
        self.selector = check_selector(selector)
        if self.selector == "ucb":
            self.gamma, self.c = 0.0, selectors.check_c(c)
        else:
            self.gamma, self.c = selectors.check_gamma(gamma), float(c)
        self.final_strategy = check_final_strategy(final_strategy)
        self.game = game
        kernel = kernels.information_kernel_for(game)
        if kernel is None:
            raise ValueError(f"{game} has no information kernel "
                             "(smmcts_spiel.games.kernels.information); use the Python engine "
                             "(InformationSetSMMCTS) for it")
        self.kernel = kernel
        self._low, self._scale = reward_scale(game)
        self._rng = np.random.default_rng(seed)
        self._root = self.kernel.initial_state()
        self.reset()
        self._load_compiled_code()

    def _load_compiled_code(self) -> None:
        """Run the compiled code once, so that loading (or compiling) it happens here rather
        than inside the first timed search; leaves no trace in the trees, the iteration
        count or the random state."""
        random_state = self._rng.bit_generator.state
        search_game = information_sets.check_sequential_search_game(self.game, "IS-SM-MCTS")
        first = information_sets.first_decision_state(search_game)
        self.run(self.worlds(information_sets.replay(self.game, first.history()),
                             first.current_player()), 1)
        self.reset()
        self._load_table_code()
        self._rng.bit_generator.state = random_state
        tree_arrays.freeze_loaded_objects()

    def reset(self) -> None:
        """Forget the trees: a fresh search (a new game)."""
        self._new_tables(self.kernel.max_actions)
        self.iterations = 0

    def reseed(self, seed: int | None) -> None:
        """Draw the following iterations from a fresh generator seeded with ``seed``."""
        self._rng = np.random.default_rng(seed)

    def worlds(self, state: pyspiel.State, player: int) -> KernelWorlds:
        """The worlds of ``player``'s information set at ``state`` of ``game``."""
        return KernelWorlds(self.kernel, self.game, state, player)

    def _iterate(self, worlds: KernelWorlds, iterations: int) -> None:
        self._reserve(2 * iterations)
        k = self.kernel
        _run(iterations, k.code, self._root, k.params, k.data, worlds.histories,
             worlds.lengths, worlds.cumulative, worlds.count, SELECTOR_CODES[self.selector],
             self.gamma, self.c, self._low, self._scale, self.stats, self.counts, self.sums,
             self.num_actions, self.node_keys, self.counters, self.hash_keys,
             self.hash_nodes, self._rng, k.max_depth, max(k.max_actions, k.num_action_ids))
        self.iterations += iterations

    def run(self, worlds: KernelWorlds, iterations: int | None = None,
            time_limit: float | None = None) -> int:
        """Iterates from worlds drawn from ``worlds`` until ``iterations`` or ``time_limit``
        seconds (whichever first); returns the count. Under a time limit, iterations run
        in chunks sized so that the clock is read about every 2 ms."""
        return self._run_chunks(lambda n: self._iterate(worlds, n), iterations, time_limit,
                                first_chunk=8, untimed_chunk=1 << 14)

    def key(self, state: pyspiel.State, player: int) -> int:
        """The information key of ``player`` at ``state`` (of ``game``)."""
        k = self.kernel
        return int(compiled_information_sets.key_at(
            k.code, self._root, k.params, k.data, np.array(state.history(), np.int64), player,
            k.max_actions))

    def strategy(self, state: pyspiel.State, player: int):
        """(actions, final strategy) of ``player`` at ``state``; uniform off the trees."""
        actions = state.legal_actions(player)
        n = len(actions)
        row = int(key_table.find(self.key(state, player), self.hash_keys, self.hash_nodes))
        if row < 0:
            return actions, [1.0 / n] * n
        weights = (self.sums[row, :n] if self.final_strategy == "average"
                   else self.counts[row, :n])
        total = float(weights.sum())
        if total <= 0:
            return actions, [1.0 / n] * n
        probs = [float(w) / total for w in weights]
        if self.final_strategy == "empirical_no_exploration":
            probs = without_exploration(probs, self.gamma)
        return actions, probs

    def tables(self) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """{information key: (selector statistics, visit counts, sampling sums)}."""
        return {int(self.node_keys[r]): (self.stats[r, :self.num_actions[r]].copy(),
                                         self.counts[r, :self.num_actions[r]].copy(),
                                         self.sums[r, :self.num_actions[r]].copy())
                for r in range(self.num_nodes)}

    def policy(self) -> ISPolicy:
        return ISPolicy(self)


ENGINES = ("auto", "kernel", "generic")


def information_set_smmcts(game: pyspiel.Game, engine: str = "auto", **settings):
    """An IS-SM-MCTS search of ``game``: compiled (``kernel``) or over pyspiel states
    (``generic``); ``auto`` takes the kernel when the game has one."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "auto":
        engine = "kernel" if kernels.information_kernel_for(game) is not None else "generic"
    search = KernelInformationSetSMMCTS if engine == "kernel" else InformationSetSMMCTS
    return search(game, **settings)
