"""smmcts_pursuit_evasion: the AIJ 2016 study's game, its published state counts, its
kernel, and its values against OpenSpiel's sequence-form LP."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import sequence_form_lp

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import solver
from smmcts_spiel.exact.matrix_game import solve_matrix_game
from smmcts_spiel.games import kernels, pursuit_evasion
from smmcts_spiel.games.kernels import pursuit_evasion as kernel_module

PARAMETER_SETS = [
    "",
    "grid_size=2,depth=3",
    "grid_size=3,depth=2,evader_start=4,pursuer1_start=0,pursuer2_start=0",
    "grid_size=5,depth=6",
    "grid_size=10,depth=15,evader_start=45,pursuer1_start=0,pursuer2_start=99",
]


def load(params: str) -> pyspiel.Game:
    return pyspiel.load_game(f"smmcts_pursuit_evasion({params})")


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


def test_a_one_round_game_gets_its_own_kernel_not_the_one_shot_one():
    assert kernels.kernel_for(load("depth=1")).module is kernel_module


@pytest.mark.parametrize("params,message", [
    ("grid_size=1", "grid_size must be an integer from 2 to 16, got 1"),
    ("grid_size=17", "grid_size must be an integer from 2 to 16, got 17"),
    ("depth=0", "depth must be an integer from 1 to 100, got 0"),
    ("depth=101", "depth must be an integer from 1 to 100, got 101"),
    ("evader_start=16", "evader_start must be a cell from 0 to 15"),
    ("pursuer2_start=-2", "pursuer2_start must be a cell from 0 to 15"),
    ("evader_start=3,pursuer1_start=3", "cannot start on a pursuing unit's cell"),
])
def test_bad_parameters_are_refused_naming_the_range(params, message):
    with pytest.raises(ValueError, match=message):
        load(params)


def test_capture_on_a_cell_and_on_an_edge():
    north, east, south, west = range(4)
    # 3 x 3: the evader at (0,1), unit 1 at (0,2), unit 2 at (2,2).
    game = load("grid_size=3,depth=3,evader_start=1,pursuer1_start=2,pursuer2_start=8")
    state = game.new_initial_state()
    state.apply_actions([east, 4 * west + north])  # she and unit 1 swap along one edge
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]
    # The evader at (0,0), unit 1 at (1,1): both step onto (0,1), or they cross diagonally.
    game = load("grid_size=3,depth=3,evader_start=0,pursuer1_start=4,pursuer2_start=8")
    state = game.new_initial_state()
    state.apply_actions([east, 4 * north + north])
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]
    state = game.new_initial_state()
    state.apply_actions([south, 4 * north + north])
    assert not state.is_terminal() and state.returns() == [0.0, 0.0]


def test_escape_for_depth_rounds_wins():
    game = load("grid_size=4,depth=2,evader_start=0,pursuer1_start=15,pursuer2_start=15")
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_actions([state.legal_actions(0)[0], state.legal_actions(1)[0]])
    assert state.returns() == [1.0, -1.0]
    assert len(state.history()) == 2 * 2  # two rounds of two actions


def test_the_papers_state_counts_by_depth(tree_layers):
    """Section 6.2's table (4 x 4, depth 5): 1, 12, 324, 8,664 and 248,712 states at depths
    0-4 (pure + mixed), which the default start reproduces exactly. Of them, the stages
    with no pure equilibrium (no saddle point, by our exact solve) are the paper's mixed
    ones at depths 3 and 4; at depth 2 the paper's LP reported 63 mixed where 40 must be
    (a solver may return a mixed equilibrium where a pure one exists, never the reverse).
    """
    game = load("")
    solution = solver.solve(game)
    totals, no_saddle = [], []
    for layer in tree_layers(game):
        totals.append(sum(count for _, count in layer.values()))
        mixed = 0
        for state, count in layer.values():
            matrix = np.array([[_value(solution, state, a, b) for b in state.legal_actions(1)]
                               for a in state.legal_actions(0)])
            value = solve_matrix_game(matrix).value
            pure = np.isclose(matrix.min(axis=1).max(), value) and \
                np.isclose(matrix.max(axis=0).min(), value)
            mixed += 0 if pure else count
        no_saddle.append(mixed)
    assert totals == [1, 12, 324, 8_664, 248_712]
    paper_mixed = [0, 0, 63, 1_008, 6_726]
    assert no_saddle[3:] == paper_mixed[3:]
    assert all(ours <= theirs for ours, theirs in zip(no_saddle, paper_mixed))


def _value(solution, state, a, b):
    child = state.clone()
    child.apply_actions([a, b])
    return child.returns()[0] if child.is_terminal() else solution.state_solution(child).value


@pytest.mark.parametrize("params", [
    "grid_size=3,depth=2,evader_start=0,pursuer1_start=2,pursuer2_start=8",
    "grid_size=3,depth=2,evader_start=0,pursuer1_start=4,pursuer2_start=5",
    "grid_size=3,depth=2,evader_start=0,pursuer1_start=1,pursuer2_start=8",
    "grid_size=2,depth=3",
])
def test_value_equals_the_sequence_form_lp_on_the_turn_based_game(params):
    game = load(params)
    ours = solver.game_value(game)
    theirs = sequence_form_lp.solve_zero_sum_game(pyspiel.convert_to_turn_based(game))[0]
    assert ours == pytest.approx(theirs, abs=1e-6)


def test_some_lp_checked_instance_needs_mixed_strategies():
    """The LP comparison above means something: one of its games has a value strictly
    between a sure capture and a sure escape."""
    value = solver.game_value(
        load("grid_size=3,depth=2,evader_start=0,pursuer1_start=2,pursuer2_start=8"))
    assert value == pytest.approx(-1 / 3)


def test_transpositions_do_not_change_the_value():
    game = load("grid_size=3,depth=3,evader_start=4,pursuer1_start=0,pursuer2_start=1")
    assert solver.game_value(game) == pytest.approx(
        solver.game_value(game, use_transpositions=False))


def test_kernel_heuristic_is_the_papers_evaluation_function():
    game = load("grid_size=5,depth=8")
    kernel = kernels.kernel_for(game)
    rng = np.random.default_rng(0)
    for _ in range(50):
        state, array = game.new_initial_state(), kernel.initial_state()
        for _ in range(int(rng.integers(0, 8))):
            if state.is_terminal():
                break
            joint = [int(rng.choice(state.legal_actions(p))) for p in range(2)]
            state.apply_actions(joint)
            kernel.module.apply_actions(array, kernel.params, kernel.data, *joint)
        ours = kernel.module.heuristic(array, kernel.params, kernel.data, rng)
        assert ours == pytest.approx(pursuit_evasion.evaluation(state))
        assert -1 <= ours <= 1


@pytest.mark.parametrize("evaluator", ["random_rollout", "heuristic"])
def test_smmcts_bot_plays_a_game_on_the_kernel_engine(evaluator):
    game = load("grid_size=5,depth=6")
    bots = [SMMCTSBot(game, p, iterations=300, seed=p, evaluator=evaluator, engine="kernel")
            for p in (0, 1)]
    state = game.new_initial_state()
    while not state.is_terminal():
        joint = [bot.step(state) for bot in bots]
        for p, action in enumerate(joint):
            assert action in state.legal_actions(p)
        state.apply_actions(joint)
    assert state.returns()[0] in (-1.0, 0.0, 1.0)
