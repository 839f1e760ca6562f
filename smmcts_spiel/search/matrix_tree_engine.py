"""SM-MCTS on explicit game trees, compiled with numba: the engine of the paper-scale runs.

Reproducing Fig. 2 and Fig. 3 of Lisy et al. (NIPS 2013) takes 10^9 - 10^10 iterations,
far beyond an engine over pyspiel states. This module runs exactly the same algorithm
(Alg. 1, the selectors of :mod:`smmcts_spiel.search.selectors` compiled with numba) on a
:mod:`smmcts_spiel.trees` game flattened into arrays. The search tree is the game
tree with an "in tree" flag per node, so an iteration allocates nothing.

Semantics (shared with the generic engine, :mod:`smmcts_spiel.search`):

* At a matrix node with joint actions never selected, one of them is picked uniformly at
  random, its child is added to the tree, a uniform random rollout from the child gives
  ``u1``, the child records ``X += u1, n += 1``, the node's selectors are updated with
  ``u1`` and ``u1`` is returned (the node's own ``X, n`` are not touched).
* Otherwise each player samples its action from its selector, the iteration recurses,
  then ``X_h += u1, n_h += 1``, the selectors are updated and ``u1`` is returned, or
  ``X_h / n_h`` in the mean-propagating variants (RMM, Exp3M, UCBM).
* A chance node in the tree samples an outcome, adds the child if new, recurses and
  records ``X += u1, n += 1``. Leaves return their utility.
* Selector rewards are in [0, 1]: ``(u1 - lo) / (hi - lo)`` for player 1 and one minus
  that for player 2, with ``[lo, hi]`` the range of the leaf utilities (the paper's
  ``u1`` and ``1 - u1`` on its games with utilities 0 and 1; the map of
  :func:`smmcts_spiel.search.smmcts.reward_range`). Exp3 adds ``reward / p_a``; UCB adds
  the reward; bandit regret matching (``rmb``) only uses the sampled reward
  (:func:`smmcts_spiel.search.selectors.bandit_regret_update`). Regret matching compares
  the sampled reward with the means of the sibling children (the sampled reward if a
  sibling is not in the tree yet) in units ``u1 / scale`` and ``-u1 / scale``, ``scale``
  the largest absolute leaf utility: its strategies do not depend on the units, and these
  are the ones the committed figures were made with.
* Every update counts the action (empirical frequencies) and, for the average strategy,
  adds the current sampling distribution to its sums. Unvisited nodes play uniformly.

Exploitability ``e1 = v* - min_br u(sigma1, br)`` and NashConv (``e1 + e2``) of the final
strategies are computed exactly by backward induction at the requested checkpoints.
Every run reseeds numba's generator with its own seed, so results do not depend on how
runs are spread over processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from smmcts_spiel import checks, trees
from smmcts_spiel.search import selectors, tree_arrays
from smmcts_spiel.trees.flat import CHANCE, LEAF, MATRIX

SELECTOR_CODES = tree_arrays.SELECTOR_CODES
FINAL_STRATEGIES = ("empirical", "average")
GAMMA_SCHEDULES = ("constant", "decreasing")

# The per-iteration helpers are inlined into the compiled loop (numba IR inlining): the
# calls and their array arguments cost more than the arithmetic. The error model "numpy"
# drops the zero-division checks; no division here can have a zero divisor.
_inlined = numba.njit(inline="always", error_model="numpy")

_sample_index = tree_arrays.sample_index
_ucb_index_random_ties = tree_arrays.ucb_index_random_ties
_bandit_regret_update = tree_arrays.bandit_regret_update
_decreasing_gamma = _inlined(selectors.decreasing_gamma)



@dataclass(frozen=True)
class Curves:
    """Exploitability of many runs at the checkpoints: arrays of shape (runs, checkpoints)."""

    checkpoints: np.ndarray
    e1: np.ndarray
    nash_conv: np.ndarray
    # Final per-action statistics of the last run (see FlatTree for the slot layout); the
    # average-strategy sums are kept only with final_strategy="average".
    counts_p1: np.ndarray
    counts_p2: np.ndarray
    average_p1: np.ndarray
    average_p2: np.ndarray


def log_checkpoints(iterations: int, per_decade: int = 8) -> np.ndarray:
    """Iteration counts 1 .. ``iterations`` evenly spaced on a log axis (always ends there)."""
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) \
            or iterations < 1:
        raise ValueError(f"iterations must be an integer >= 1, got {checks.shown(iterations)!r}")
    if per_decade < 1:
        raise ValueError(f"per_decade must be >= 1, got {per_decade}")
    count = int(np.ceil(np.log10(iterations) * per_decade)) + 1
    points = np.unique(np.round(np.logspace(0, np.log10(iterations), max(count, 1))))
    return points.astype(np.int64)


def run_seeds(base_seed: int, game_index: int, runs: int, first_run: int = 0) -> np.ndarray:
    """One 32-bit seed per run, from numpy's SeedSequence((base, game, run))."""
    return np.array(
        [np.random.SeedSequence([base_seed, game_index, r]).generate_state(1)[0]
         for r in range(first_run, first_run + runs)], dtype=np.int64)


def exploitability_curves(
    flat: trees.FlatTree,
    selector: str,
    *,
    gamma: float | None = None,
    c: float | None = None,
    checkpoints: Sequence[int],
    seeds: Sequence[int] | np.ndarray,
    game_value: float,
    final_strategy: str = "empirical",
    gamma_schedule: str = "constant",
    tie_tolerance: float | None = None,
) -> Curves:
    """Run one SM-MCTS search per seed and record e1 / NashConv at each checkpoint.

    ``selector`` is rm, rmm, rmb, rmbm, exp3, exp3m, ucb or ucbm; ``game_value`` is v* (the exact
    value for player 1, e.g. from :mod:`smmcts_spiel.exact.solver`). ``gamma_schedule``
    "decreasing" explores with ``min(1, gamma / sqrt(t))`` at the t-th update of a node
    (:func:`smmcts_spiel.search.selectors.decreasing_gamma`) instead of a constant gamma.
    UCB takes its lowest maximiser (None, the AIJ 2016 study's "fully deterministic" UCT) or
    one of the bounds within ``tie_tolerance`` of the best at random (0: equal bounds only;
    :func:`smmcts_spiel.search.selectors.ucb_index_random_ties`).
    """
    base, mean_variant = selectors.parse_selector(selector)
    gamma, c = selectors.exploration(base, gamma, c)
    if gamma_schedule not in GAMMA_SCHEDULES:
        raise ValueError(f"gamma_schedule must be one of {GAMMA_SCHEDULES}, "
                         f"got {gamma_schedule!r}")
    if final_strategy not in FINAL_STRATEGIES:
        raise ValueError(f"final_strategy must be one of {FINAL_STRATEGIES}, "
                         f"got {final_strategy!r}")
    cps = np.asarray(checkpoints, dtype=np.int64)
    if cps.ndim != 1 or cps.size == 0 or cps[0] < 1 or np.any(np.diff(cps) <= 0):
        raise ValueError("checkpoints must be a non-empty increasing sequence of iteration "
                         f"counts >= 1, got {checks.shown(checkpoints)!r}")
    seed_array = np.asarray(seeds, dtype=np.int64)
    if seed_array.ndim != 1 or seed_array.size == 0:
        raise ValueError("seeds must be a non-empty 1-D sequence of integers (one per run)")
    e1 = np.zeros((seed_array.size, cps.size))
    nash_conv = np.zeros_like(e1)
    stats = np.zeros((4, max(flat.num_p1_slots, flat.num_p2_slots)))
    _run_searches(
        flat.kind, flat.value, flat.rows, flat.cols, flat.child_start, flat.children,
        flat.probs, flat.p1_offset, flat.p2_offset, flat.num_p1_slots, flat.num_p2_slots,
        flat.max_actions, flat.max_path, reward_units(flat), SELECTOR_CODES[base], mean_variant,
        (float(gamma), gamma_schedule == "decreasing",
         -1.0 if tie_tolerance is None else selectors.check_tie_tolerance(tie_tolerance)),
        float(c), final_strategy == "average",
        cps, seed_array,
        float(game_value), e1, nash_conv, stats)
    n1, n2 = flat.num_p1_slots, flat.num_p2_slots
    return Curves(cps, e1, nash_conv, stats[0, :n1].copy(), stats[1, :n2].copy(),
                  stats[2, :n1].copy(), stats[3, :n2].copy())


def reward_units(flat: trees.FlatTree) -> tuple[float, float, float]:
    """``(scale, lo, 1 / (hi - lo))``: regret matching's units and the map of the leaf range
    ``[lo, hi]`` onto the selectors' [0, 1] (see the module docstring)."""
    leaves = flat.value[flat.kind == LEAF]
    lo, hi = float(leaves.min()), float(leaves.max())
    return float(flat.scale), lo, 1.0 / (hi - lo) if hi > lo else 1.0


def exploitability(flat: trees.FlatTree, strategy_p1: np.ndarray, game_value: float) -> float:
    """e1 of a behaviour strategy of player 1 given per slot (``p1_offset`` layout).

    Each node's slice is normalised; an all-zero slice means uniform.
    """
    strategy = np.asarray(strategy_p1, dtype=np.float64)
    if strategy.shape != (flat.num_p1_slots,) or np.any(strategy < 0):
        raise ValueError(f"strategy_p1 must be {flat.num_p1_slots} non-negative weights "
                         f"(one per player-1 action slot), got shape {strategy.shape}")
    values = np.zeros(flat.num_nodes)
    dummy = np.zeros(flat.num_p2_slots)
    e1, _ = _exploitability(flat.kind, flat.value, flat.rows, flat.cols, flat.child_start,
                            flat.children, flat.probs, flat.p1_offset, flat.p2_offset,
                            strategy, dummy, float(game_value), values, values.copy(),
                            np.zeros(flat.max_actions))
    return float(e1)


# ----------------------------------------------------------------------------------------
# Compiled core.


@_inlined
def _normalised(weights, out):
    """``out = weights / sum`` (uniform when the sum is 0)."""
    n = len(weights)
    total = 0.0
    for a in range(n):
        total += weights[a]
    for a in range(n):
        out[a] = weights[a] / total if total > 0.0 else 1.0 / n
    return out


@numba.njit(cache=True, error_model="numpy")
def _exploitability(kind, value, rows, cols, child_start, children, probs, p1_offset,
                    p2_offset, weights1, weights2, game_value, v1, v2, scratch):
    """(e1, e2): v* - best-response value against player 1, and the same for player 2.

    ``v1[h]`` is the value of node h when player 1 plays ``weights1`` and player 2 best
    responds; ``v2[h]`` when player 2 plays ``weights2`` and player 1 best responds.
    """
    for h in range(len(kind) - 1, -1, -1):
        k = kind[h]
        if k == LEAF:
            v1[h] = value[h]
            v2[h] = value[h]
        elif k == CHANCE:
            s = child_start[h]
            a = 0.0
            b = 0.0
            for o in range(rows[h]):
                a += probs[s + o] * v1[children[s + o]]
                b += probs[s + o] * v2[children[s + o]]
            v1[h] = a
            v2[h] = b
        else:
            m = rows[h]
            n = cols[h]
            s = child_start[h]
            sigma1 = _normalised(weights1[p1_offset[h]:p1_offset[h] + m], scratch[:m])
            worst = np.inf
            for j in range(n):
                total = 0.0
                for i in range(m):
                    total += sigma1[i] * v1[children[s + i * n + j]]
                if total < worst:
                    worst = total
            v1[h] = worst
            sigma2 = _normalised(weights2[p2_offset[h]:p2_offset[h] + n], scratch[:n])
            best = -np.inf
            for i in range(m):
                total = 0.0
                for j in range(n):
                    total += sigma2[j] * v2[children[s + i * n + j]]
                if total > best:
                    best = total
            v2[h] = best
    return game_value - v1[0], v2[0] - game_value


@_inlined
def _rollout(node, kind, value, rows, cols, child_start, children, probs):
    """Uniformly random joint actions (chance by its probabilities) down to a leaf."""
    while kind[node] != LEAF:
        s = child_start[node]
        if kind[node] == MATRIX:
            node = children[s + np.random.randint(0, rows[node] * cols[node])]
        else:
            node = children[s + _sample_index(probs[s:s + rows[node]], np.random.random())]
    return value[node]


@_inlined
def _selector_probabilities(code, stat, counts, exploration, c, out):
    g, decreasing, _ = exploration
    if decreasing:
        visits = 0.0
        for a in range(len(counts)):
            visits += counts[a]
        g = _decreasing_gamma(g, visits + 1.0)
    return tree_arrays.probabilities(code, stat, counts, g, c, out)


@_inlined
def _update(h, i, j, u1, code, exploration, c, rewards, rows, cols, child_start, children,
            p1_offset, p2_offset, in_tree, x_sum, visits, stat1, stat2, counts1, counts2, avg1,
            avg2, probs1, probs2, fresh, track_average):
    """Update(h, i, j, u1) of Alg. 1 for both players' selectors at matrix node h.

    ``probs1`` / ``probs2`` (per action slot) hold the sampling distributions of h; they
    are recomputed unless ``fresh`` (h selected this iteration and has not changed since).
    """
    m = rows[h]
    n = cols[h]
    s = child_start[h]
    o1 = p1_offset[h]
    o2 = p2_offset[h]
    p1 = probs1[o1:o1 + m]
    p2 = probs2[o2:o2 + n]
    if not fresh:
        _selector_probabilities(code, stat1[o1:o1 + m], counts1[o1:o1 + m], exploration,
                                c, p1)
        _selector_probabilities(code, stat2[o2:o2 + n], counts2[o2:o2 + n], exploration,
                                c, p2)
    if track_average:
        for a in range(m):
            avg1[o1 + a] += p1[a]
        for b in range(n):
            avg2[o2 + b] += p2[b]
    scale, low, inv_range = rewards
    reward1 = u1 / scale
    reward2 = -reward1
    if code == 0:
        for a in range(m):
            child = children[s + a * n + j]
            if a != i and in_tree[child] and visits[child] > 0:
                stat1[o1 + a] += x_sum[child] / visits[child] / scale - reward1
        for b in range(n):
            child = children[s + i * n + b]
            if b != j and in_tree[child] and visits[child] > 0:
                stat2[o2 + b] += -x_sum[child] / visits[child] / scale - reward2
    else:
        reward1 = (u1 - low) * inv_range
        reward2 = 1.0 - reward1
        if code == 1:
            stat1[o1 + i] += reward1 / p1[i]
            stat2[o2 + j] += reward2 / p2[j]
        elif code == 3:
            _bandit_regret_update(stat1[o1:o1 + m], i, reward1, p1[i])
            _bandit_regret_update(stat2[o2:o2 + n], j, reward2, p2[j])
        else:
            stat1[o1 + i] += reward1
            stat2[o2 + j] += reward2
    counts1[o1 + i] += 1.0
    counts2[o2 + j] += 1.0


@_inlined
def _iteration(code, mean_variant, exploration, c, rewards, kind, value, rows, cols,
               child_start, children, probs, p1_offset, p2_offset, in_tree, expanded, x_sum, visits,
               stat1, stat2, counts1, counts2, avg1, avg2, probs1, probs2, path_node,
               path_i, path_j, track_average):
    """One simulation of Alg. 1 from the root, iteratively (descend, then back up).
    ``exploration``: (gamma, whether it decreases, UCB's tie tolerance). UCB takes its
    lowest maximiser, or with a tolerance >= 0 one of the bounds within it of the best at
    random. (31 arguments would be one too many for numba to inline the call.)"""
    depth = 0
    node = 0
    u = 0.0
    while True:
        k = kind[node]
        if k == LEAF:
            u = value[node]
            break
        s = child_start[node]
        if k == CHANCE:
            o = _sample_index(probs[s:s + rows[node]], np.random.random())
            child = children[s + o]
            in_tree[child] = True
            path_node[depth] = node
            depth += 1
            node = child
            continue
        m = rows[node]
        n = cols[node]
        if expanded[node] < m * n:
            # Expansion: a uniformly random joint action among those never selected.
            target = np.random.randint(0, m * n - expanded[node])
            a = 0
            while True:
                if not in_tree[children[s + a]]:
                    if target == 0:
                        break
                    target -= 1
                a += 1
            child = children[s + a]
            in_tree[child] = True
            expanded[node] += 1
            u = _rollout(child, kind, value, rows, cols, child_start, children, probs)
            x_sum[child] += u
            visits[child] += 1.0
            _update(node, a // n, a % n, u, code, exploration, c, rewards, rows, cols,
                    child_start, children, p1_offset, p2_offset, in_tree, x_sum, visits, stat1,
                    stat2, counts1, counts2, avg1, avg2, probs1, probs2, False, track_average)
            break
        o1 = p1_offset[node]
        o2 = p2_offset[node]
        i = _sample_index(_selector_probabilities(code, stat1[o1:o1 + m], counts1[o1:o1 + m],
                                                  exploration, c, probs1[o1:o1 + m]),
                          np.random.random())
        j = _sample_index(_selector_probabilities(code, stat2[o2:o2 + n], counts2[o2:o2 + n],
                                                  exploration, c, probs2[o2:o2 + n]),
                          np.random.random())
        ties = exploration[2]
        if code == 2 and ties >= 0.0:
            i = _ucb_index_random_ties(stat1[o1:o1 + m], counts1[o1:o1 + m], c, ties,
                                       np.random.random())
            j = _ucb_index_random_ties(stat2[o2:o2 + n], counts2[o2:o2 + n], c, ties,
                                       np.random.random())
        path_node[depth] = node
        path_i[depth] = i
        path_j[depth] = j
        depth += 1
        node = children[s + i * n + j]
    for d in range(depth - 1, -1, -1):
        h = path_node[d]
        x_sum[h] += u
        visits[h] += 1.0
        if kind[h] == MATRIX:
            _update(h, path_i[d], path_j[d], u, code, exploration, c, rewards, rows, cols,
                    child_start, children, p1_offset, p2_offset, in_tree, x_sum, visits,
                    stat1, stat2, counts1, counts2, avg1, avg2, probs1, probs2, True, track_average)
        if mean_variant:
            u = x_sum[h] / visits[h]
    return u


# Compiled without numba's reference counting (its NRT): every array slice in the loop would
# otherwise cost two atomic reference-count updates, which made up more than half of the
# time per iteration. The kernel therefore allocates nothing; _run_searches does.
# _nrt is a documented-in-source numba option that its type hints do not list.
@numba.njit(cache=True, error_model="numpy", _nrt=False)  # type: ignore[call-overload]
def _run_searches_kernel(kind, value, rows, cols, child_start, children, probs, p1_offset,
                         p2_offset, num_p1_slots, num_p2_slots, max_actions, max_path, rewards,
                         code, mean_variant, exploration, c, use_average, checkpoints, seeds,
                         game_value, out_e1, out_nash_conv, out_stats, in_tree, expanded, x_sum,
                         visits, stat1, stat2, counts1, counts2, avg1, avg2, probs1, probs2,
                         scratch, path_node, path_i, path_j, v1, v2):
    for r in range(len(seeds)):
        np.random.seed(seeds[r])
        in_tree[:] = False
        in_tree[0] = True
        expanded[:] = 0
        x_sum[:] = 0.0
        visits[:] = 0.0
        stat1[:] = 0.0
        stat2[:] = 0.0
        counts1[:] = 0.0
        counts2[:] = 0.0
        avg1[:] = 0.0
        avg2[:] = 0.0
        t = 0
        for cp in range(len(checkpoints)):
            while t < checkpoints[cp]:
                _iteration(code, mean_variant, exploration, c, rewards, kind, value, rows,
                           cols, child_start, children, probs, p1_offset, p2_offset, in_tree,
                           expanded, x_sum, visits, stat1, stat2, counts1, counts2, avg1, avg2,
                           probs1, probs2, path_node, path_i, path_j, use_average)
                t += 1
            if use_average:
                e1, e2 = _exploitability(kind, value, rows, cols, child_start, children, probs,
                                         p1_offset, p2_offset, avg1, avg2, game_value, v1, v2,
                                         scratch)
            else:
                e1, e2 = _exploitability(kind, value, rows, cols, child_start, children, probs,
                                         p1_offset, p2_offset, counts1, counts2, game_value,
                                         v1, v2, scratch)
            out_e1[r, cp] = e1
            out_nash_conv[r, cp] = e1 + e2
    for a in range(num_p1_slots):
        out_stats[0, a] = counts1[a]
        out_stats[2, a] = avg1[a]
    for b in range(num_p2_slots):
        out_stats[1, b] = counts2[b]
        out_stats[3, b] = avg2[b]


def _run_searches(kind, value, rows, cols, child_start, children, probs, p1_offset, p2_offset,
                  num_p1_slots, num_p2_slots, max_actions, max_path, rewards, code, mean_variant,
                  exploration, c, use_average, checkpoints, seeds, game_value, out_e1,
                  out_nash_conv, out_stats):
    """Allocate the per-run state and run every seed's search in the compiled kernel."""
    num_nodes = len(kind)
    in_tree = np.zeros(num_nodes, np.bool_)
    expanded = np.zeros(num_nodes, np.int64)
    x_sum = np.zeros(num_nodes)
    visits = np.zeros(num_nodes)
    stat1 = np.zeros(num_p1_slots)
    stat2 = np.zeros(num_p2_slots)
    counts1 = np.zeros(num_p1_slots)
    counts2 = np.zeros(num_p2_slots)
    avg1 = np.zeros(num_p1_slots)
    avg2 = np.zeros(num_p2_slots)
    probs1 = np.zeros(num_p1_slots)
    probs2 = np.zeros(num_p2_slots)
    scratch = np.zeros(max_actions)
    path_node = np.zeros(max_path, np.int64)
    path_i = np.zeros(max_path, np.int64)
    path_j = np.zeros(max_path, np.int64)
    v1 = np.zeros(num_nodes)
    v2 = np.zeros(num_nodes)
    _run_searches_kernel(kind, value, rows, cols, child_start, children, probs, p1_offset,
                         p2_offset, num_p1_slots, num_p2_slots, max_actions, max_path, rewards,
                         code, mean_variant, exploration, c, use_average, checkpoints, seeds,
                         game_value, out_e1, out_nash_conv, out_stats, in_tree, expanded, x_sum,
                         visits, stat1, stat2, counts1, counts2, avg1, avg2, probs1, probs2,
                         scratch, path_node, path_i, path_j, v1, v2)
