"""smmcts_tron: the AIJ 2016 study's Tron, its published state counts, its kernel, and
its values by hand and against OpenSpiel's sequence-form LP."""

import numba
import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import sequence_form_lp

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import solver
from smmcts_spiel.games import kernels
from smmcts_spiel.games.kernels import tron as kernel_module

NORTH, EAST, SOUTH, WEST = range(4)
PARAMETER_SETS = ["", "rows=2,cols=2", "rows=2,cols=7", "rows=5,cols=6", "rows=13,cols=13"]


def load(params: str) -> pyspiel.Game:
    return pyspiel.load_game(f"smmcts_tron({params})")


@pytest.mark.parametrize("params", PARAMETER_SETS)
def test_random_sim_test_with_serialization(params):
    game = load(params)
    pyspiel.random_sim_test(game, num_sims=10, serialize=True, verbose=False)
    pyspiel.random_sim_test(pyspiel.convert_to_turn_based(game), num_sims=3,
                            serialize=False, verbose=False)


@pytest.mark.parametrize("params", PARAMETER_SETS)
def test_kernel_plays_as_the_pyspiel_game(params):
    game = load(params)
    kernel = kernels.kernel_for(game)
    assert kernel is not None and kernel.module is kernel_module
    assert kernels.dispatch.MODULES[kernel.code] is kernel_module
    assert kernels.check_kernel(game, trajectories=500) is None


def test_a_one_round_grid_gets_its_own_kernel_not_the_one_shot_one():
    """2 x 2 Tron lasts one joint move, as a one-shot game does; the Tron kernel, which
    names it, is chosen over the one-shot kernel (which describes such games and would
    refuse it: its actions are not 0..k-1)."""
    assert kernels.kernel_for(load("rows=2,cols=2")).module is kernel_module


@pytest.mark.parametrize("params,message", [
    ("rows=1", "rows must be an integer from 2 to 20, got 1"),
    ("cols=21", "cols must be an integer from 2 to 20, got 21"),
])
def test_bad_grid_sizes_are_refused_naming_the_range(params, message):
    with pytest.raises(ValueError, match=message):
        load(params)


def test_the_papers_state_counts_by_depth(tree_layers):
    """Section 6.2's table (5 x 6): 1, 4, 16, 100, 574, 2,605 and 9,559 states (pure +
    mixed) at depths 0-6, counted here as tree nodes through transpositions."""
    totals = []
    for layer in tree_layers(load("rows=5,cols=6")):
        totals.append(sum(count for _, count in layer.values()))
        if len(totals) == 7:
            break
    assert totals == [1, 4, 16, 100, 574, 2_605, 9_559]


@numba.njit
def _tree_nodes(state, params, data):
    """(non-terminal, terminal) nodes of the kernel's tree below ``state``, by recursion."""
    if kernel_module.status(state, params, data) == kernels.TERMINAL:
        return 0, 1
    moves0, moves1 = np.empty(4, np.int64), np.empty(4, np.int64)
    n0 = kernel_module.legal_actions(state, params, data, 0, moves0)
    n1 = kernel_module.legal_actions(state, params, data, 1, moves1)
    inner, leaves = 1, 0
    for i in range(n0):
        for j in range(n1):
            child = state.copy()
            kernel_module.apply_actions(child, params, data, moves0[i], moves1[j])
            a, b = _tree_nodes(child, params, data)
            inner += a
            leaves += b
    return inner, leaves


def test_the_papers_whole_state_table_through_the_kernel():
    """The same table summed over all its depths (0-13): 354,218 non-terminal nodes,
    counted on the kernel's tree (the paper's pure + mixed states, every depth)."""
    paper = [1, 4, 16, 100, 574, 2_605, 9_559, 26_056, 54_410, 83_745, 87_083, 63_642,
             23_296, 3_127]
    kernel = kernels.kernel_for(load("rows=5,cols=6"))
    inner, _ = _tree_nodes(kernel.initial_state(), kernel.params, kernel.data)
    assert inner == sum(paper) == 354_218


def test_two_by_three_by_hand():
    """Player 0 at (0,0), player 1 at (1,2). East/north: player 1 is boxed in at (0,2) and
    loses; south/west: player 0 is; east/west and south/north end in draws a move later."""
    game = load("rows=2,cols=3")
    solution = solver.solve(game)
    root = game.new_initial_state()
    assert root.legal_actions(0) == [EAST, SOUTH] and root.legal_actions(1) == [NORTH, WEST]
    values = {}
    for a in (EAST, SOUTH):
        for b in (NORTH, WEST):
            child = root.clone()
            child.apply_actions([a, b])
            values[a, b] = child.returns()[0] if child.is_terminal() else \
                solution.state_solution(child).value
    assert values == {(EAST, NORTH): 1.0, (EAST, WEST): 0.0, (SOUTH, NORTH): 0.0,
                      (SOUTH, WEST): -1.0}
    assert solution.value == 0.0


def test_head_on_and_double_enclosure_are_draws():
    state = load("rows=2,cols=2").new_initial_state()
    state.apply_actions([EAST, NORTH])  # both into (0,1)
    assert state.is_terminal() and state.returns() == [0.0, 0.0]
    assert "X" in str(state)
    state = load("rows=2,cols=2").new_initial_state()
    state.apply_actions([EAST, WEST])  # to (0,1) and (1,0): both boxed in
    assert state.is_terminal() and state.returns() == [0.0, 0.0]


@pytest.mark.parametrize("params", ["rows=2,cols=3", "rows=3,cols=3", "rows=2,cols=5"])
def test_value_equals_the_sequence_form_lp_on_the_turn_based_game(params):
    game = load(params)
    ours = solver.game_value(game)
    theirs = sequence_form_lp.solve_zero_sum_game(pyspiel.convert_to_turn_based(game))[0]
    assert ours == pytest.approx(theirs, abs=1e-6)


def test_transpositions_do_not_change_the_values():
    game = load("rows=3,cols=4")
    with_keys, without = solver.solve(game), solver.solve(game, use_transpositions=False)
    assert with_keys.value == pytest.approx(without.value)
    state = game.new_initial_state()
    state.apply_actions([EAST, WEST])
    assert with_keys.state_solution(state).value == pytest.approx(
        without.state_solution(state).value)


def test_kernel_heuristic_counts_the_cells_each_reaches_first():
    game = load("rows=3,cols=4")
    kernel = kernels.kernel_for(game)
    array = kernel.initial_state()
    # From (0,0) and (2,3) on an empty 3 x 4 grid: 5 cells closer to each, none tied.
    assert kernel.module.owned_cells(array.copy(), kernel.params) == (5, 5)
    kernel.module.apply_actions(array, kernel.params, kernel.data, SOUTH, NORTH)
    # Now at (1,0) and (1,3); walls at (0,0) and (2,3). Player 0 is first to (2,0), (2,1),
    # (1,1), (0,1); player 1 to (0,3), (0,2), (1,2), (2,2).
    assert kernel.module.owned_cells(array.copy(), kernel.params) == (4, 4)
    kernel.module.apply_actions(array, kernel.params, kernel.data, EAST, NORTH)
    # (1,1) and (0,3): player 0 first to (2,1), (2,0), (0,1), (1,2), (2,2); player 1 to
    # (0,2) only; none tied.
    assert kernel.module.owned_cells(array.copy(), kernel.params) == (5, 1)
    value = kernel.module.heuristic(array, kernel.params, kernel.data, np.random.default_rng(0))
    assert value == pytest.approx(np.tanh(4 / 5))


@pytest.mark.parametrize("evaluator", ["random_rollout", "heuristic"])
def test_smmcts_bot_plays_a_game_on_the_kernel_engine(evaluator):
    game = load("rows=5,cols=6")
    bots = [SMMCTSBot(game, p, iterations=300, seed=p, evaluator=evaluator, engine="kernel")
            for p in (0, 1)]
    state = game.new_initial_state()
    while not state.is_terminal():
        joint = [bot.step(state) for bot in bots]
        for p, action in enumerate(joint):
            assert action in state.legal_actions(p)
        state.apply_actions(joint)
    assert state.returns()[0] in (-1.0, 0.0, 1.0)
