"""Double oracle on one zero-sum matrix game whose entries are costly and bounded.

The stage solve of the study's DO and DOAB (Bošanský et al., "Algorithms for computing
strategies in two-player simultaneous move games", AIJ 2016, Sections 4.3 and 4.3.1,
after McMahan et al. 2003): solve a restricted game of a few rows and columns, add each
player's best response to the other's restricted equilibrium, and stop when neither best
response improves on the restricted value. An entry (a child's value) is computed only
when a best response needs it, and not at all when its bounds show that the row (or
column) cannot be a best response: the row's optimistic value, the bounds of its other
entries weighted by the opponent's strategy, tells how much the entry must be worth
(``lambda`` of the paper's Algorithm 4); an entry whose upper bound is below that is
never computed, and a computed one is asked for no more than that
(:meth:`LazyMatrix.refine`'s window).

The game is also solved only as far as its caller's window ``[alpha, beta]`` needs: when a
best response shows that the value lies below ``alpha`` (or above ``beta``) the double
oracle stops with that bound, as alpha-beta search stops at a cut-off.

Values are the row player's (player 1's); rows maximise, columns minimise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from smmcts_spiel.exact.matrix_game import solve_matrix_game


class LazyMatrix(Protocol):
    """A matrix game whose entries have cheap bounds and costly values.

    A best response of the row player needs only upper bounds, of the column player only
    lower bounds: each side is asked for separately, so that a bound nobody needs is
    never computed.
    """

    def upper(self, i: int, j: int) -> float:
        """An upper bound on entry ``(i, j)``."""

    def lower(self, i: int, j: int) -> float:
        """A lower bound on entry ``(i, j)``."""

    def refine(self, i: int, j: int, alpha: float, beta: float) -> tuple[float, float]:
        """Bounds ``(lo, hi)`` on entry ``(i, j)`` after working on it as far as needed: its
        value (``hi - lo`` within the tolerance), or a proof that it is at most ``alpha``
        (``hi <= alpha + tolerance``) or at least ``beta`` (``lo >= beta - tolerance``)."""


@dataclass
class OracleCounts:
    """What the double oracles of a solve did (summed over every stage)."""

    restricted_games: int = 0  #: restricted games solved (one LP, or a closed form, each)
    pruned: int = 0  #: candidate best responses dropped by bounds before all entries were known


@dataclass
class OracleResult:
    """The outcome of :func:`double_oracle`.

    ``exact``: ``value`` is the game's value and ``row_strategy`` / ``col_strategy`` (over
    ``rows`` / ``cols``, the restricted actions) an equilibrium of the whole game.
    Otherwise the value lies in ``[lo, hi]``, outside the caller's window; ``rows`` and
    ``cols`` are where a later call may start again.
    """

    exact: bool
    lo: float
    hi: float
    rows: list[int]
    cols: list[int]
    value: float = math.nan
    row_strategy: np.ndarray = field(default_factory=lambda: np.ones(0))
    col_strategy: np.ndarray = field(default_factory=lambda: np.ones(0))


class _Transposed:
    """The column player's view of a :class:`LazyMatrix`: transposed and negated, so
    that one best-response routine (a maximising row player's) serves both players."""

    def __init__(self, matrix: LazyMatrix):
        self.matrix = matrix

    def upper(self, i: int, j: int) -> float:
        return -self.matrix.lower(j, i)

    def lower(self, i: int, j: int) -> float:
        return -self.matrix.upper(j, i)

    def refine(self, i: int, j: int, alpha: float, beta: float) -> tuple[float, float]:
        lo, hi = self.matrix.refine(j, i, -beta, -alpha)
        return -hi, -lo


def best_response(matrix: LazyMatrix, candidates: Sequence[int],
                  opponent: Sequence[tuple[int, float]], threshold: float, tolerance: float,
                  counts: OracleCounts) -> tuple[int | None, float]:
    """The row among ``candidates`` best against the column mix ``opponent`` (pairs
    ``(column, probability)``, probabilities above 0), if its value exceeds ``threshold``
    by more than ``tolerance``: ``(row, value)``; otherwise ``(None, threshold)``.

    Rows are tried in the order of their optimistic values, so that the best value found
    rises early and prunes the rest; an entry is computed only with the window the row
    needs to beat the best value so far (the paper's Algorithm 4).
    """
    opponent = sorted(opponent, key=lambda jq: -jq[1])

    def optimistic(i: int) -> float:
        return sum(q * matrix.upper(i, j) for j, q in opponent)

    ranked = sorted(((optimistic(i), i) for i in candidates), key=lambda vi: -vi[0])
    best, best_row = threshold, None
    for upper, i in ranked:
        if upper <= best + tolerance:
            counts.pruned += 1
            continue
        for j, q in opponent:
            rest = upper - q * matrix.upper(i, j)
            _, hi = matrix.refine(i, j, (best - rest) / q, math.inf)
            upper = rest + q * hi
            if upper <= best + tolerance:
                counts.pruned += 1
                break
        else:
            if upper > best + tolerance:
                best, best_row = upper, i
    return best_row, best


def double_oracle(matrix: LazyMatrix, num_rows: int, num_cols: int, *, lo: float, hi: float,
                  alpha: float = -math.inf, beta: float = math.inf,
                  rows: Sequence[int] = (0,), cols: Sequence[int] = (0,),
                  tolerance: float = 1e-12, counts: OracleCounts | None = None
                  ) -> OracleResult:
    """Solve the ``num_rows`` x ``num_cols`` game ``matrix`` by double oracle.

    Args:
      matrix: the entries (see :class:`LazyMatrix`).
      lo, hi: bounds already known on the game's value.
      alpha, beta: the window the caller needs: a value proved below ``alpha`` or above
        ``beta`` ends the solve with that bound.
      rows, cols: the restricted game to start from (e.g. the serialized searches' moves,
        or where an earlier call stopped).
      tolerance: how much a best response must improve to count, and the slack of every
        bound.
    """
    counts = counts if counts is not None else OracleCounts()
    restricted_rows, restricted_cols = list(dict.fromkeys(rows)), list(dict.fromkeys(cols))
    transposed = _Transposed(matrix)
    while True:
        values = np.empty((len(restricted_rows), len(restricted_cols)))
        for a, i in enumerate(restricted_rows):
            for b, j in enumerate(restricted_cols):
                low, high = matrix.refine(i, j, -math.inf, math.inf)
                values[a, b] = 0.5 * (low + high)
        solution = solve_matrix_game(values)
        counts.restricted_games += 1
        v, x, y = solution.value, solution.row_strategy, solution.col_strategy
        row_mix = [(i, p) for i, p in zip(restricted_rows, x.tolist()) if p > 0]
        col_mix = [(j, q) for j, q in zip(restricted_cols, y.tolist()) if q > 0]
        taken_rows, taken_cols = set(restricted_rows), set(restricted_cols)
        new_row, upper = best_response(
            matrix, [i for i in range(num_rows) if i not in taken_rows], col_mix,
            max(v, alpha), tolerance, counts)
        new_col, lower = best_response(
            transposed, [j for j in range(num_cols) if j not in taken_cols], row_mix,
            -min(v, beta), tolerance, counts)
        hi = min(hi, upper + tolerance)
        lo = max(lo, -lower - tolerance)
        if new_row is None and new_col is None and alpha - tolerance <= v <= beta + tolerance:
            return OracleResult(True, v, v, restricted_rows, restricted_cols, v, x, y)
        if hi <= alpha + tolerance or lo >= beta - tolerance:
            return OracleResult(False, lo, hi, restricted_rows, restricted_cols)
        if new_row is not None:
            restricted_rows.append(new_row)
        if new_col is not None:
            restricted_cols.append(new_col)
