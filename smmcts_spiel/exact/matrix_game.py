"""Exact solution of one zero-sum matrix game: the stage solve of backward induction.

Player 1 (rows) maximises ``x^T A y``, player 2 (columns) minimises it. 1 x n, m x 1 and
2 x 2 games have closed forms (they are the bulk of the stages in Goofspiel and the paper's
games). Other small games go through a dense simplex on the column player's LP: scipy's
``linprog`` spends about 2 ms per call on set-up and checks, 20-50 times the time of the
few pivots a 3 x 3 or 6 x 6 stage needs, and backward induction makes one call per stage.
Its answer is accepted only with a certificate (each strategy guarantees the value to
1e-9); anything else, and every large game, is solved by scipy's HiGHS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Games with at most this many rows and columns try :func:`_small_simplex` before HiGHS.
SMALL_GAME_SIZE = 12
#: Largest gap between the two strategies' guarantees for an equilibrium certificate,
#: relative to the largest absolute payoff (or 1).
CERTIFICATE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class MatrixGameSolution:
    """Player 1's value and an equilibrium: both players' mixed strategies."""

    value: float
    row_strategy: np.ndarray
    col_strategy: np.ndarray


def solve_matrix_game(payoffs) -> MatrixGameSolution:
    """Value and an equilibrium (maximin row, minimax column strategy) of ``payoffs``."""
    a = np.asarray(payoffs, dtype=float)
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"payoffs must be a non-empty 2-D array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError("payoffs must be finite")
    m, n = a.shape
    if m == 1 or n == 1:
        return _pure(a)
    saddle = _saddle_point(a)
    if saddle is not None:
        return saddle
    if m == 2 and n == 2:
        return _two_by_two_mixed(a)
    if max(m, n) <= SMALL_GAME_SIZE:
        solution = _small_simplex(a)
        if solution is not None:
            return solution
    return _linear_program(a)


def _one_hot(size: int, index: int) -> np.ndarray:
    e = np.zeros(size)
    e[index] = 1.0
    return e


def _pure(a: np.ndarray) -> MatrixGameSolution:
    m, n = a.shape
    if m == 1:
        j = int(a[0].argmin())
        return MatrixGameSolution(float(a[0, j]), np.ones(1), _one_hot(n, j))
    i = int(a[:, 0].argmax())
    return MatrixGameSolution(float(a[i, 0]), _one_hot(m, i), np.ones(1))


def _saddle_point(a: np.ndarray) -> MatrixGameSolution | None:
    row_mins = a.min(axis=1)
    col_maxs = a.max(axis=0)
    i = int(row_mins.argmax())
    j = int(col_maxs.argmin())
    if row_mins[i] == col_maxs[j]:
        return MatrixGameSolution(float(a[i, j]), _one_hot(a.shape[0], i), _one_hot(a.shape[1], j))
    return None


def _two_by_two_mixed(a: np.ndarray) -> MatrixGameSolution:
    # Without a saddle point both players mix and make the other indifferent.
    (p, q), (r, s) = a
    d = p - q - r + s
    x0 = (s - r) / d
    y0 = (s - q) / d
    v = (p * s - q * r) / d
    return MatrixGameSolution(float(v), np.array([x0, 1 - x0]), np.array([y0, 1 - y0]))


def _small_simplex(a: np.ndarray) -> MatrixGameSolution | None:
    """Bland's-rule simplex on ``max 1^T q s.t. B q <= 1, q >= 0`` with ``B = a + shift > 0``.

    ``q / sum(q)`` is player 2's minimax strategy, the slack columns' reduced costs
    ``p / sum(p)`` player 1's maximin strategy. Plain Python lists: on tableaux this small
    numpy's per-call overhead costs more than the arithmetic (measured 3-7x slower).
    Returns None (the caller falls back to HiGHS) unless the strategies certify each
    other within :data:`CERTIFICATE_TOLERANCE`.
    """
    m, n = a.shape
    rows = a.tolist()
    shift = 1.0 - float(a.min())
    tableau = []
    for i, row in enumerate(rows):
        line = [v + shift for v in row] + [0.0] * m + [1.0]
        line[n + i] = 1.0
        tableau.append(line)
    objective = [-1.0] * n + [0.0] * (m + 1)
    basis = list(range(n, n + m))
    eps = 1e-12
    for _ in range(50 * (m + n)):
        j = next((k for k in range(n + m) if objective[k] < -eps), -1)
        if j < 0:
            break
        leaving, best = -1, 0.0
        for i in range(m):
            if tableau[i][j] > eps:
                ratio = tableau[i][-1] / tableau[i][j]
                if (leaving < 0 or ratio < best - eps
                        or (ratio <= best + eps and basis[i] < basis[leaving])):
                    leaving, best = i, ratio
        if leaving < 0:
            return None
        pivot_row = tableau[leaving]
        pivot = pivot_row[j]
        pivot_row = [v / pivot for v in pivot_row]
        tableau[leaving] = pivot_row
        for i in range(m):
            factor = tableau[i][j]
            if i != leaving and factor != 0.0:
                tableau[i] = [u - factor * v for u, v in zip(tableau[i], pivot_row)]
        factor = objective[j]
        objective = [u - factor * v for u, v in zip(objective, pivot_row)]
        basis[leaving] = j
    else:
        return None
    q = [0.0] * n
    for i, b in enumerate(basis):
        if b < n:
            q[b] = max(tableau[i][-1], 0.0)
    p = [max(v, 0.0) for v in objective[n:n + m]]
    total_p, total_q = sum(p), sum(q)
    if total_p <= 0 or total_q <= 0:
        return None
    x = [v / total_p for v in p]
    y = [v / total_q for v in q]
    lower = min(sum(x[i] * rows[i][j] for i in range(m)) for j in range(n))
    upper = max(sum(v * y[j] for j, v in enumerate(row)) for row in rows)
    if upper - lower > CERTIFICATE_TOLERANCE * max(1.0, float(np.abs(a).max())):
        return None
    return MatrixGameSolution(0.5 * (lower + upper), np.array(x), np.array(y))


def _linear_program(a: np.ndarray) -> MatrixGameSolution:
    """max_x min_j (x^T a)_j as an LP over (x, v); the column strategy is its dual.

    The duals of the constraints ``v <= (x^T a)_j`` form player 2's minimax strategy, so
    one HiGHS solve gives both players' strategies.
    """
    m, n = a.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0  # maximise v
    a_ub = np.hstack([-a.T, np.ones((n, 1))])  # v - x^T a[:, j] <= 0
    a_eq = np.zeros((1, m + 1))
    a_eq[0, :m] = 1.0
    bounds = [(0, None)] * m + [(None, None)]
    from scipy.optimize import linprog  # imported when used: it takes a second to import

    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(n), A_eq=a_eq, b_eq=[1.0], bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"LP for a {m} x {n} matrix game failed: {res.message}")
    x = _normalised(res.x[:m])
    y = _normalised(-res.ineqlin.marginals)
    return MatrixGameSolution(float((x @ a).min()), x, y)


def _normalised(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 0.0, None)
    return p / p.sum()
