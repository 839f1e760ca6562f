"""Online Outcome Sampling compiled with numba over a game kernel: the fast path of OOSBot.

The same algorithm as :class:`smmcts_spiel.imperfect.oos.OutcomeSampling` (read its
docstring), for games with an information kernel
(:mod:`smmcts_spiel.games.kernels.information`: Kuhn and Leduc poker,
``goofspiel(imp_info=True)``, Phantom Tic-Tac-Toe). Whole iterations run compiled:

* **Tables.** One row per information set in the tree: cumulative regrets
  ``regrets[node, a]`` and average-strategy sums ``sums[node, a]`` over the node's legal
  actions, found from the kernel's information key by an open-addressing hash table
  (``hash_keys``, ``hash_nodes``). At most one row is added per iteration, so the arrays
  grow between chunks of iterations, never during one.
* **Targeting.** The current information set is enumerated by a compiled depth-first walk
  (the one of :func:`smmcts_spiel.imperfect.information_sets.information_set`) into a trie of
  the histories that lead to it: ``trie[t, action]`` is the child prefix or -1, and a
  prefix with children is on the way to the target.
* **One iteration** samples a path from the root forward (storing per depth the node, the
  sampled action, the strategy, the opponent's reach and the two sample probabilities),
  then walks it backward with the tail probability, updating regrets at the update
  player's information sets and average-strategy sums at the opponent's.

It draws the same uniform numbers from the same numpy Generator, in the same order and
with the same arithmetic as the Python engine, so both build identical tables from the
same seed (``tests/test_oos_kernel.py``).
"""

from __future__ import annotations

import numba
import numpy as np
import pyspiel

from smmcts_spiel.games.kernels import information as kernels
from smmcts_spiel.imperfect import compiled_information_sets, information_sets, key_table
from smmcts_spiel.imperfect.oos import (
    OOSStrategies,
    OutcomeSampling,
    check_parameters,
    check_weighting,
    target_weight,
)
from smmcts_spiel.search import selectors, tree_arrays

# The perfect-information engine's inlined selector helpers (one compiled copy of each).
_rm_probabilities = tree_arrays.rm_probabilities
_sample_index = tree_arrays.sample_index



# ------------------------------------------------------------------------ sampling
@numba.njit(inline="always")
def _sample(actions, probs, n, trie, t, targeted, u, allowed, restricted):
    """(index, targeted probability, untargeted probability) of a sampled action.

    ``t`` is the trie node of the history if it is on the way to the target, else -1.
    """
    if t < 0:
        i = _sample_index(probs[:n], u)
        return i, probs[i], probs[i]
    m = 0
    mass = 0.0
    for k in range(n):
        if trie[t, actions[k]] >= 0:
            allowed[m] = k
            mass += probs[k]
            m += 1
    for j in range(m):
        restricted[j] = probs[allowed[j]] / mass if mass > 0.0 else 1.0 / m
    if targeted:
        j = _sample_index(restricted[:m], u)
        i = allowed[j]
        return i, restricted[j], probs[i]
    i = _sample_index(probs[:n], u)
    rho1 = 0.0
    for j in range(m):
        if allowed[j] == i:
            rho1 = restricted[j]
    return i, rho1, probs[i]


@numba.njit(inline="always")
def _next_trie_node(trie, trie_open, t, action):
    """The trie node after ``action`` if still on the way to the target, else -1."""
    if t < 0:
        return -1
    child = trie[t, action]
    if child < 0 or not trie_open[child]:
        return -1
    return child


# ------------------------------------------------------------------------ iterations
@numba.njit(cache=True)
def _run(iterations, first_iteration, code, root, params, data, delta, epsilon, gamma,
         has_target, scale,
         trie, trie_open, regrets, sums, num_actions, node_keys, counters, hash_keys,
         hash_nodes, rng, max_depth):
    """Runs ``iterations`` OOS iterations in place (update player alternating from
    ``first_iteration``; sample probabilities start at ``scale``, 1 / w_T); ``counters[0]``
    is the number of rows in use."""
    width = regrets.shape[1]
    moves = max(width, trie.shape[1])  # chance outcomes included
    actions = np.zeros(moves, np.int64)
    probs = np.zeros(moves, np.float64)
    sampling = np.zeros(width, np.float64)
    allowed = np.zeros(probs.shape[0], np.int64)
    restricted = np.zeros(probs.shape[0], np.float64)
    scratch = np.zeros(width, np.int64)
    path_player = np.zeros(max_depth, np.int64)
    path_node = np.zeros(max_depth, np.int64)
    path_i = np.zeros(max_depth, np.int64)
    path_n = np.zeros(max_depth, np.int64)
    path_sigma = np.zeros((max_depth, width), np.float64)
    path_reach = np.zeros(max_depth, np.float64)
    path_s1 = np.zeros(max_depth, np.float64)
    path_s2 = np.zeros(max_depth, np.float64)
    path_prob = np.zeros(max_depth, np.float64)
    for iteration in range(first_iteration, first_iteration + iterations):
        update_player = iteration % 2
        targeted = False
        if has_target:
            targeted = rng.random() < delta
        t = 0 if has_target else -1
        if t >= 0 and not trie_open[0]:
            t = -1
        state = root.copy()
        pending = -1
        reach_i = 1.0
        reach_o = 1.0
        s1 = scale
        s2 = scale
        in_tree = True
        depth = 0
        u_terminal = 0.0
        q = 1.0
        while True:
            mover = kernels.to_move(code, state, params, data, pending, scratch)
            if mover == -2:
                q = delta * s1 + (1.0 - delta) * s2
                u0 = kernels.returns(code, state, params, data)
                u_terminal = u0 if update_player == 0 else -u0
                break
            if mover == -1:
                n = kernels.chance_outcomes(code, state, params, data, actions, probs)
                i, rho1, rho2 = _sample(actions, probs, n, trie, t, targeted, rng.random(),
                                        allowed, restricted)
                path_player[depth] = -1
                path_prob[depth] = probs[i]
                a = actions[i]
                reach_o = reach_o * probs[i]
            else:
                n = kernels.legal_actions(code, state, params, data, mover, actions)
                node = -1
                if in_tree:
                    key = kernels.information_key(code, state, params, data, mover)
                    node = key_table.find(key, hash_keys, hash_nodes)
                    if node < 0:
                        node = key_table.add(key, n, hash_keys, hash_nodes, node_keys,
                                             num_actions, counters)
                        in_tree = False  # the playout starts below the node just added
                sigma = path_sigma[depth]
                if node >= 0:
                    _rm_probabilities(regrets[node, :n], gamma, sigma[:n])
                else:
                    for k in range(n):
                        sigma[k] = 1.0 / n
                if mover == update_player:
                    for k in range(n):
                        sampling[k] = epsilon / n + (1.0 - epsilon) * sigma[k]
                else:
                    for k in range(n):
                        sampling[k] = sigma[k]
                i, rho1, rho2 = _sample(actions, sampling, n, trie, t, targeted, rng.random(),
                                        allowed, restricted)
                path_player[depth] = mover
                path_node[depth] = node
                path_i[depth] = i
                path_n[depth] = n
                path_reach[depth] = reach_o
                path_s1[depth] = s1
                path_s2[depth] = s2
                a = actions[i]
                if mover == update_player:
                    reach_i = reach_i * sigma[i]
                else:
                    reach_o = reach_o * sigma[i]
            s1 = s1 * rho1
            s2 = s2 * rho2
            t = _next_trie_node(trie, trie_open, t, a)
            pending = kernels.step(code, state, params, data, pending, mover, a, scratch)
            depth += 1
        # Backward: tail probabilities and the updates.
        x = 1.0
        for d in range(depth - 1, -1, -1):
            player = path_player[d]
            if player < 0:
                x = x * path_prob[d]
                continue
            i = path_i[d]
            n = path_n[d]
            sigma = path_sigma[d]
            tail_child = x
            tail = tail_child * sigma[i]
            node = path_node[d]
            if node >= 0:
                if player == update_player:
                    w = u_terminal * path_reach[d] / q
                    for k in range(n):
                        if k == i:
                            regrets[node, k] += (tail_child - tail) * w
                        else:
                            regrets[node, k] += -tail * w
                else:
                    weight = path_reach[d] / (delta * path_s1[d] + (1.0 - delta) * path_s2[d])
                    for k in range(n):
                        sums[node, k] += weight * sigma[k]
            x = tail


@numba.njit(cache=True)
def _mean_reach(code, root, params, data, histories, lengths, count, sums, num_actions,
                hash_keys, hash_nodes, width, moves):
    """The probability that chance and both players' average strategies (uniform off the
    tree) play one of the first ``count`` ``histories`` (the arithmetic of
    ``OutcomeSampling.mean_reach``)."""
    actions = np.zeros(moves, np.int64)
    probs = np.zeros(moves, np.float64)
    scratch = np.zeros(width, np.int64)
    total = 0.0
    for h in range(count):
        state = root.copy()
        pending = -1
        reach = 1.0
        for d in range(lengths[h]):
            a = histories[h, d]
            mover = kernels.to_move(code, state, params, data, pending, scratch)
            if mover == -1:
                n = kernels.chance_outcomes(code, state, params, data, actions, probs)
                for k in range(n):
                    if actions[k] == a:
                        reach = reach * probs[k]
            else:
                n = kernels.legal_actions(code, state, params, data, mover, actions)
                row = key_table.find(kernels.information_key(code, state, params, data, mover),
                            hash_keys, hash_nodes)
                mass = 0.0
                if row >= 0:
                    for k in range(n):
                        mass += sums[row, k]
                for k in range(n):
                    if actions[k] == a:
                        if mass <= 0.0:
                            reach = reach * (1.0 / n)
                        else:
                            reach = reach * (sums[row, k] / mass)
            pending = kernels.step(code, state, params, data, pending, mover, a, scratch)
        total += reach
    return total


class KernelOutcomeSampling(OOSStrategies, key_table.KeyedRows):
    """OOS tables of both players and compiled iterations (same interface as the Python
    :class:`~smmcts_spiel.imperfect.oos.OutcomeSampling`).

    Args:
      game: a game with an information kernel (``information_kernel_for(game)``).
      delta, epsilon, seed, gamma, weighting: as the Python engine's.
    """

    ROW_TABLES = (("regrets", np.float64), ("sums", np.float64))
    regrets: np.ndarray  # [row, a], set by _new_tables and _reserve
    sums: np.ndarray

    def __init__(self, game: pyspiel.Game, delta: float = 0.9, epsilon: float = 0.6,
                 seed: int | None = None, gamma: float = 0.0, weighting: bool = False):
        self.game = game
        self.search_game, self.delta, self.epsilon, self.gamma = check_parameters(
            game, delta, epsilon, gamma)
        self.weighting = check_weighting(weighting)
        kernel = kernels.information_kernel_for(game)
        if kernel is None:
            raise ValueError(f"{game} has no information kernel "
                             "(smmcts_spiel.games.kernels.information); use the Python engine "
                             "(OutcomeSampling) for it")
        self.kernel = kernel
        self._rng = np.random.default_rng(seed)
        self._root = self.kernel.initial_state()
        self.iterations = 0
        # (state, player, trie, trie_open) of the target
        self._target: tuple | None = None
        self.weight = 1.0  # w_T of the current target
        self._no_trie = np.full((1, self.kernel.num_action_ids), -1, np.int64)
        self._no_trie_open = np.zeros(1, np.bool_)
        self.reset()
        self._load_compiled_code()

    def _load_compiled_code(self) -> None:
        """Run each compiled function once, so that loading (or compiling) it happens here
        rather than inside the first timed search; leaves no trace in the tables, the
        iteration count or the random state."""
        random_state = self._rng.bit_generator.state
        first = information_sets.first_decision_state(self.search_game)
        self.target(first, first.current_player())
        self._iterate(1)
        self.mean_reach(first, first.current_player())
        self.key(first, first.current_player())
        self.target(None)
        self.reset()
        self._load_table_code()
        self._rng.bit_generator.state = random_state
        tree_arrays.freeze_loaded_objects()

    # ---------------------------------------------------------------- tables
    def reset(self) -> None:
        self._new_tables(self.kernel.max_actions)
        self.iterations = 0
        self._target = None
        self.weight = 1.0

    def reseed(self, seed: int | None) -> None:
        """Draw the following iterations from a fresh generator seeded with ``seed``."""
        self._rng = np.random.default_rng(seed)

    # ---------------------------------------------------------------- targeting
    def target(self, state: pyspiel.State | None, player: int | None = None) -> None:
        """Target ``player``'s (default: the mover's) information set at ``state`` of
        ``search_game`` with probability ``delta`` from now on (None: no targeting)."""
        self.weight = 1.0
        if state is None:
            self._target = None
            return
        if player is None:
            player = state.current_player()
        self._check_decision(state, player)
        if self.weighting:
            trie, trie_open, reach = self._walk_target(state, player)
            self.weight = target_weight(self.delta, reach)
        else:
            # Only the trie is needed to search; the histories are built on request.
            trie, trie_open = compiled_information_sets.target_trie(self.kernel,
                                                                    state.history(), player)
        self._target = (state.clone(), player, trie, trie_open)

    @staticmethod
    def _check_decision(state: pyspiel.State, player: int) -> None:
        if state.is_terminal() or state.is_chance_node() or state.current_player() != player:
            raise ValueError(f"player {player} is not to move in this state, so it has no "
                             f"current information set to search from:\n{state}")

    def _walk_target(self, state: pyspiel.State, player: int):
        """(trie, trie_open, probability of the set under the average strategies)."""
        k = self.kernel
        trie, trie_open, histories, lengths, _, count = compiled_information_sets.walk(
            k, state.history(), player)
        reach = _mean_reach(k.code, self._root, k.params, k.data, histories, lengths, count,
                            self.sums, self.num_actions, self.hash_keys, self.hash_nodes,
                            k.max_actions, max(k.max_actions, k.num_action_ids))
        return trie, trie_open, float(reach)

    def mean_reach(self, state: pyspiel.State, player: int | None = None) -> float:
        """The probability that chance and both players' average strategies (uniform off
        the tree) reach ``player``'s information set at ``state`` of ``search_game``."""
        player = state.current_player() if player is None else player
        self._check_decision(state, player)
        return self._walk_target(state, player)[2]

    @property
    def target_set(self) -> information_sets.InformationSet | None:
        """The targeted information set (its histories), or None."""
        if self._target is None:
            return None
        state, player = self._target[:2]
        return information_sets.information_set(self.search_game, state, player)

    # ---------------------------------------------------------------- iterations
    def _iterate(self, iterations: int) -> None:
        self._reserve(iterations)
        k = self.kernel
        target = self._target
        trie, trie_open = (target[2:] if target is not None
                           else (self._no_trie, self._no_trie_open))
        _run(iterations, self.iterations, k.code, self._root, k.params, k.data, self.delta,
             self.epsilon, self.gamma, target is not None, 1.0 / self.weight, trie, trie_open,
             self.regrets, self.sums,
             self.num_actions, self.node_keys, self.counters, self.hash_keys,
             self.hash_nodes, self._rng, k.max_depth)
        self.iterations += iterations

    def run(self, iterations: int | None = None, time_limit: float | None = None) -> int:
        """Runs until ``iterations`` or ``time_limit`` seconds (whichever first); returns
        the number of iterations run. Under a time limit, iterations run in chunks sized
        so that the clock is read about every 2 ms."""
        return self._run_chunks(self._iterate, iterations, time_limit, first_chunk=16,
                                untimed_chunk=1 << 16)

    # ---------------------------------------------------------------- strategies
    def key(self, state: pyspiel.State, player: int) -> int:
        """The information key of ``player`` at ``state`` of ``search_game``."""
        k = self.kernel
        return int(compiled_information_sets.key_at(
            k.code, self._root, k.params, k.data, np.array(state.history(), np.int64), player,
            k.max_actions))

    def row(self, state: pyspiel.State, player: int) -> int:
        """The table row of ``player``'s information set at ``state``, or -1."""
        return int(key_table.find(self.key(state, player), self.hash_keys, self.hash_nodes))

    def _table_strategy(self, state, player, num_actions, final_strategy):
        row = self.row(state, player)
        if row < 0:
            return None
        n = num_actions
        if final_strategy == "current":
            return selectors.regret_matching_probabilities(
                self.regrets[row, :n].tolist(), self.gamma, [0.0] * n)
        sums = self.sums[row, :n]
        total = float(sums.sum())
        return None if total <= 0.0 else [float(x) / total for x in sums]

    def tables(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """{information key: (regrets, average-strategy sums)} of every row."""
        return {int(self.node_keys[r]): (self.regrets[r, :self.num_actions[r]].copy(),
                                         self.sums[r, :self.num_actions[r]].copy())
                for r in range(self.num_nodes)}

    def copy(self) -> KernelOutcomeSampling:
        """An independent copy of the tables, target and random state."""
        other = KernelOutcomeSampling.__new__(KernelOutcomeSampling)
        other.__dict__.update(self.__dict__)
        self._copy_tables_to(other)
        other._rng = np.random.default_rng()
        other._rng.bit_generator.state = self._rng.bit_generator.state
        return other


ENGINES = ("auto", "kernel", "generic")


def outcome_sampling(game: pyspiel.Game, delta: float = 0.9, epsilon: float = 0.6,
                     seed: int | None = None, engine: str = "auto", gamma: float = 0.0,
                     weighting: bool = False):
    """An OOS search of ``game``: compiled (``kernel``) or over pyspiel states
    (``generic``); ``auto`` takes the kernel when the game has one."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "auto":
        engine = "kernel" if kernels.information_kernel_for(game) is not None else "generic"
    search = KernelOutcomeSampling if engine == "kernel" else OutcomeSampling
    return search(game, delta=delta, epsilon=epsilon, seed=seed, gamma=gamma,
                  weighting=weighting)
