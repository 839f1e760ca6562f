"""Stage solver: known equilibria and, for arbitrary games, the equilibrium certificate."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from smmcts_spiel.exact.matrix_game import solve_matrix_game


def assert_equilibrium(a, sol, tol=1e-7):
    """x guarantees at least v against every column, y concedes at most v to every row."""
    a = np.asarray(a, dtype=float)
    assert sol.row_strategy.sum() == pytest.approx(1.0)
    assert sol.col_strategy.sum() == pytest.approx(1.0)
    assert np.all(sol.row_strategy >= -tol) and np.all(sol.col_strategy >= -tol)
    assert (sol.row_strategy @ a).min() >= sol.value - tol
    assert (a @ sol.col_strategy).max() <= sol.value + tol


def test_matching_pennies_in_unit_utilities():
    sol = solve_matrix_game([[1, 0], [0, 1]])
    assert sol.value == pytest.approx(0.5)
    np.testing.assert_allclose(sol.row_strategy, [0.5, 0.5])
    np.testing.assert_allclose(sol.col_strategy, [0.5, 0.5])


def test_rock_paper_scissors():
    rps = [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]
    sol = solve_matrix_game(rps)
    assert sol.value == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(sol.row_strategy, [1 / 3] * 3, atol=1e-7)
    np.testing.assert_allclose(sol.col_strategy, [1 / 3] * 3, atol=1e-7)


def test_biased_rock_paper_scissors():
    # Paper beats rock for 2. By hand, x = (1, 1, 2) / 4 makes every column pay 0.
    a = [[0, -2, 1], [2, 0, -1], [-1, 1, 0]]
    sol = solve_matrix_game(a)
    np.testing.assert_allclose(sol.row_strategy, [0.25, 0.25, 0.5], atol=1e-7)
    assert sol.value == pytest.approx(0.0, abs=1e-9)
    assert_equilibrium(a, sol)


def test_pure_and_degenerate_shapes():
    assert solve_matrix_game([[3, 1, 2]]).value == 1
    assert solve_matrix_game([[3], [1], [2]]).value == 3
    saddle = solve_matrix_game([[2, 3], [1, 0]])
    assert saddle.value == 2 and saddle.row_strategy[0] == 1 and saddle.col_strategy[0] == 1


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 5)),
              elements=st.floats(-1, 1, allow_nan=False)))
def test_any_game_solution_is_an_equilibrium(a):
    assert_equilibrium(a, solve_matrix_game(a))


def test_bad_input():
    with pytest.raises(ValueError, match="2-D"):
        solve_matrix_game([1, 2])
    with pytest.raises(ValueError, match="finite"):
        solve_matrix_game([[np.nan, 1], [0, 1]])


@settings(max_examples=300, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(3, 7), st.integers(3, 7)),
              elements=st.sampled_from([0.0, 0.5, 1.0, 2.0])))
def test_small_simplex_agrees_with_highs_on_degenerate_games(a):
    # Few distinct payoffs make ties, degenerate pivots and non-unique equilibria.
    from smmcts_spiel.exact.matrix_game import _linear_program, _small_simplex

    fast = _small_simplex(a)
    assert fast is not None
    assert_equilibrium(a, fast, tol=1e-9)
    assert fast.value == pytest.approx(_linear_program(a).value, abs=1e-9)
