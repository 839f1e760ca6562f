"""Game kernels replay random trajectories move by move exactly as the pyspiel games do."""

import numpy as np
import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers smmcts_goofspiel)
from smmcts_spiel.games import kernels

COVERED = [
    "goofspiel(num_cards=4,imp_info=False,points_order=random)",
    "goofspiel(num_cards=5,imp_info=False,points_order=descending)",
    "goofspiel(num_cards=5,imp_info=False,points_order=ascending,returns_type=point_difference)",
    "goofspiel(num_cards=6,imp_info=False,points_order=random,returns_type=total_points)",
    "goofspiel(num_cards=1,imp_info=False,points_order=random)",
    "goofspiel(num_cards=2,imp_info=False,points_order=descending)",
    "smmcts_goofspiel(num_cards=4,points_order=random)",
    "smmcts_goofspiel(num_cards=5,points_order=ascending,returns_type=point_difference)",
    "smmcts_goofspiel(num_cards=3,points_order=descending,returns_type=total_points)",
    "oshi_zumo(coins=6,size=2,horizon=8)",
    "oshi_zumo(coins=10,size=3,horizon=20)",
    "oshi_zumo(coins=7,size=1,horizon=50,min_bid=2)",
    "oshi_zumo(coins=5,size=2,horizon=10,alesia=True)",
    "smmcts_random_stacked_matrix(depth=3,branching=3,seed=4)",
    "smmcts_random_stacked_matrix(depth=2,branching_p1=2,branching_p2=4,seed=1)",
    "smmcts_random_stacked_matrix(depth=3,branching=2,chance_branching=3,seed=2)",
    "smmcts_matrix_tree(tree={1/3:[[1 0] [0 1]] 2/3:[[0.25 [[1;0]]] [0.5 -2]]})",
    "smmcts_matrix_tree(tree=[[0 1 0.5]])",
]


@pytest.mark.parametrize("game_string", COVERED)
def test_kernel_replays_pyspiel_trajectories(game_string):
    game = pyspiel.load_game(game_string)
    kernel = kernels.kernel_for(game)
    assert kernel is not None
    rng = np.random.default_rng(0)
    out = np.zeros(kernel.max_actions, np.int64)
    outcomes = np.zeros(kernel.max_chance_outcomes, np.int64)
    probs = np.zeros(kernel.max_chance_outcomes)
    code, params, data = kernel.code, kernel.params, kernel.data
    for _ in range(30):
        state = game.new_initial_state()
        array = kernel.initial_state()
        depth = 1
        while True:
            status = kernels.status(code, array, params, data)
            if state.is_terminal():
                assert status == kernels.TERMINAL
                assert kernels.returns(code, array, params, data) == state.returns()[0]
                break
            depth += 1
            if state.is_chance_node():
                assert status == kernels.CHANCE
                k = kernels.chance_outcomes(code, array, params, data, outcomes, probs)
                expected = state.chance_outcomes()
                assert outcomes[:k].tolist() == [a for a, _ in expected]
                assert probs[:k].tolist() == pytest.approx([p for _, p in expected])
                action = expected[rng.integers(len(expected))][0]
                state.apply_action(action)
                kernels.apply_chance(code, array, params, data, action)
                continue
            assert status == kernels.DECISION
            joint = []
            for player in (0, 1):
                k = kernels.legal_actions(code, array, params, data, player, out)
                assert out[:k].tolist() == list(state.legal_actions(player))
                joint.append(int(out[rng.integers(k)]) if k else -1)
            state.apply_actions(joint)
            kernels.apply_actions(code, array, params, data, joint[0], joint[1])
        assert depth <= kernel.max_depth


@pytest.mark.parametrize("game_string", [
    "goofspiel(num_cards=4,imp_info=True)",
    "goofspiel(num_cards=4,imp_info=False,players=3)",
    "goofspiel(num_cards=4,imp_info=False,num_turns=2)",
    "tic_tac_toe",
    "smmcts_goofspiel(num_cards=4,imp_info=True)",
])
def test_no_kernel_for_uncovered_games(game_string):
    assert kernels.kernel_for(pyspiel.load_game(game_string)) is None


@pytest.mark.parametrize("game_string", [
    "goofspiel(num_cards=5,imp_info=False,points_order=random)",
    "goofspiel(num_cards=5,imp_info=False,points_order=descending,returns_type=point_difference)",
    "oshi_zumo(coins=6,size=2,horizon=8)",
])
@pytest.mark.parametrize("evaluator", sorted(kernels.EVALUATORS))
def test_evaluators_are_exact_at_terminals_and_bounded(game_string, evaluator):
    game = pyspiel.load_game(game_string)
    kernel = kernels.kernel_for(game)
    code, params, data = kernel.code, kernel.params, kernel.data
    evaluator = kernels.EVALUATORS[evaluator]
    rng = np.random.default_rng(1)
    values = []
    for _ in range(200):
        start = kernel.initial_state()
        values.append(kernels.evaluate(code, evaluator, start.copy(), params, data, rng))
        terminal = start.copy()
        kernels.evaluate(code, 0, terminal, params, data, rng)  # a rollout plays to the end
        assert kernels.status(code, terminal, params, data) == kernels.TERMINAL
        assert kernels.evaluate(code, evaluator, terminal.copy(), params, data, rng) == \
            kernels.returns(code, terminal, params, data)
    assert game.min_utility() <= min(values) and max(values) <= game.max_utility()


def test_random_rollout_matches_pyspiel_random_play():
    """Mean rollout value from the start equals that of uniformly random pyspiel play."""
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False,points_order=random,"
                             "returns_type=point_difference)")
    kernel = kernels.kernel_for(game)
    rng = np.random.default_rng(2)
    ours = [kernels.evaluate(kernel.code, 0, kernel.initial_state(), kernel.params,
                              kernel.data, rng)
            for _ in range(4000)]
    py_rng = np.random.default_rng(3)
    theirs = []
    for _ in range(4000):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, p = zip(*state.chance_outcomes())
                state.apply_action(actions[py_rng.choice(len(actions), p=p)])
            else:
                state.apply_actions([py_rng.choice(state.legal_actions(q)) for q in (0, 1)])
        theirs.append(state.returns()[0])
    # Zero-mean by symmetry; both samples within 4 standard errors, and of each other.
    se = np.std(theirs) / np.sqrt(len(theirs))
    assert abs(np.mean(ours) - np.mean(theirs)) < 4 * np.sqrt(2) * se
    assert np.var(ours) == pytest.approx(np.var(theirs), rel=0.1)


@pytest.mark.parametrize("game_string", ["oshi_zumo(coins=10,size=3,horizon=20)",
                                         "oshi_zumo(coins=7,size=1,horizon=50,min_bid=2)"])
def test_oshi_zumo_heuristic_is_the_fitted_python_evaluator(game_string):
    """The compiled heuristic computes OshiZumoEvaluator's value on every visited state."""
    from smmcts_spiel.search.evaluators import OshiZumoEvaluator

    game = pyspiel.load_game(game_string)
    kernel = kernels.kernel_for(game)
    code, params, data = kernel.code, kernel.params, kernel.data
    python_evaluator = OshiZumoEvaluator(game)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(100):
        state, ours = game.new_initial_state(), kernel.initial_state()
        while not state.is_terminal():
            value = kernels.evaluate(code, kernels.EVALUATORS["heuristic"], ours.copy(),
                                     params, data, rng)
            assert value == pytest.approx(python_evaluator.evaluate(state)[0], abs=1e-12)
            checked += 1
            joint = [int(rng.choice(state.legal_actions(p))) for p in (0, 1)]
            state.apply_actions(joint)
            kernels.apply_actions(code, ours, params, data, *joint)
    assert checked > 100
