"""smmcts_biased_rps: the paper's matrix, its analytic equilibrium, and its kernel."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import sequence_form_lp
from open_spiel.python.egt.utils import game_payoffs_array

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel.exact import solver
from smmcts_spiel.games import biased_rps, kernels
from smmcts_spiel.games.kernels import explicit_tree


def payoffs(game: pyspiel.Game) -> np.ndarray:
    """Player 0's payoff for each joint action, read by playing it."""
    table = np.zeros((3, 3))
    for a in range(3):
        for b in range(3):
            state = game.new_initial_state()
            state.apply_actions([a, b])
            assert state.is_terminal()
            table[a, b] = state.returns()[0]
    return table


def test_same_payoffs_as_openspiels_matrix_brps_and_scaled():
    theirs = game_payoffs_array(pyspiel.load_game("matrix_brps"))[0]
    np.testing.assert_array_equal(payoffs(pyspiel.load_game("smmcts_biased_rps")), theirs)
    np.testing.assert_allclose(payoffs(pyspiel.load_game("smmcts_biased_rps(scale=0.01)")),
                               theirs / 100)


def test_equilibrium_is_the_analytic_one():
    """Skew-symmetric, so value 0; (1/16, 10/16, 5/16) makes every pure reply earn 0, and
    the solver finds exactly it for both players."""
    table = np.array(biased_rps.PAYOFFS, float)
    np.testing.assert_allclose(np.array(biased_rps.EQUILIBRIUM) @ table, 0, atol=1e-12)
    game = pyspiel.load_game("smmcts_biased_rps(scale=0.01)")
    solution = solver.solve(game)
    assert solution.value == pytest.approx(0, abs=1e-12)
    state = game.new_initial_state()
    for player in (0, 1):
        strategy = solution.action_probabilities(state, player)
        np.testing.assert_allclose([strategy[a] for a in range(3)], biased_rps.EQUILIBRIUM,
                                   atol=1e-9)
    lp_value = sequence_form_lp.solve_zero_sum_game(pyspiel.convert_to_turn_based(game))[0]
    assert lp_value == pytest.approx(0, abs=1e-7)


def test_kernel_is_the_explicit_tree_kernel_and_plays_as_the_game():
    game = pyspiel.load_game("smmcts_biased_rps(scale=0.01)")
    kernel = kernels.kernel_for(game)
    assert kernel.module is explicit_tree
    assert (kernel.min_utility, kernel.max_utility) == (-0.5, 0.5)
    assert kernels.check_kernel(game, trajectories=300) is None


def test_serialization_and_random_sims():
    game = pyspiel.load_game("smmcts_biased_rps(scale=0.5)")
    pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


@pytest.mark.parametrize("scale", [0.0, -1.0, float("inf"), float("nan")])
def test_bad_scale_is_refused(scale):
    with pytest.raises(ValueError, match="scale must be a positive finite number"):
        pyspiel.load_game("smmcts_biased_rps", {"scale": scale})
