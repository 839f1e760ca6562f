"""Exact solution of one zero-sum matrix game: the stage solve of backward induction.

Player 1 (rows) maximises ``x^T A y``, player 2 (columns) minimises it. 1 x n, m x 1 and
2 x 2 games have closed forms (they are the bulk of the stages in Goofspiel and the paper's
games); everything else is one linear program solved by scipy's HiGHS.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import linprog


class MatrixGameSolution(NamedTuple):
    value: float
    row_strategy: np.ndarray
    col_strategy: np.ndarray


def solve_matrix_game(payoffs) -> MatrixGameSolution:
    """Value and an equilibrium (maximin row, minimax column strategy) of ``payoffs``."""
    a = np.asarray(payoffs, dtype=float)
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"payoffs must be a non-empty 2-D array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("payoffs must be finite")
    m, n = a.shape
    if m == 1 or n == 1:
        return _pure(a)
    saddle = _saddle_point(a)
    if saddle is not None:
        return saddle
    if m == 2 and n == 2:
        return _two_by_two_mixed(a)
    return _linear_program(a)


def _one_hot(size: int, index: int) -> np.ndarray:
    e = np.zeros(size)
    e[index] = 1.0
    return e


def _pure(a: np.ndarray) -> MatrixGameSolution:
    m, n = a.shape
    if m == 1:
        j = int(np.argmin(a[0]))
        return MatrixGameSolution(float(a[0, j]), np.ones(1), _one_hot(n, j))
    i = int(np.argmax(a[:, 0]))
    return MatrixGameSolution(float(a[i, 0]), _one_hot(m, i), np.ones(1))


def _saddle_point(a: np.ndarray) -> MatrixGameSolution | None:
    row_mins = a.min(axis=1)
    col_maxs = a.max(axis=0)
    i = int(np.argmax(row_mins))
    j = int(np.argmin(col_maxs))
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
