"""Backward induction on pyspiel games, checked against OpenSpiel's own solvers and evaluators."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from open_spiel.python.algorithms import minimax, sequence_form_lp

from smmcts_spiel.exact import solver

GOOFSPIEL = "goofspiel(imp_info=False,num_cards={cards},points_order={order}{extra})"
SMALL_GAMES = [
    "matrix_mp",
    "matrix_rps",
    "oshi_zumo(coins=4,size=1,horizon=3)",
    GOOFSPIEL.format(cards=3, order="descending", extra=""),
    GOOFSPIEL.format(cards=3, order="random", extra=""),
    GOOFSPIEL.format(cards=4, order="descending", extra=""),
    GOOFSPIEL.format(cards=4, order="ascending", extra=",returns_type=point_difference"),
]


def all_states(state):
    """Every non-terminal state below ``state`` (by history: transpositions repeat)."""
    if state.is_terminal():
        return
    yield state
    if state.is_chance_node():
        for action, _ in state.chance_outcomes():
            yield from all_states(state.child(action))
        return
    rows, cols = solver.legal_actions(state, 0), solver.legal_actions(state, 1)
    for row in solver.joint_children(state, rows, cols):
        for child in row:
            yield from all_states(child)


@pytest.mark.parametrize("name", SMALL_GAMES)
def test_value_agrees_with_openspiel_sequence_form_lp(name):
    game = pyspiel.load_game(name)
    lp_value, _, _, _ = sequence_form_lp.solve_zero_sum_game(pyspiel.convert_to_turn_based(game))
    assert solver.game_value(game) == pytest.approx(lp_value, abs=1e-6)


@pytest.mark.slow
def test_value_agrees_with_sequence_form_lp_on_goofspiel_4_random_order():
    # About a minute in OpenSpiel's LP.
    game = pyspiel.load_game(GOOFSPIEL.format(cards=4, order="random", extra=""))
    lp_value, _, _, _ = sequence_form_lp.solve_zero_sum_game(pyspiel.convert_to_turn_based(game))
    assert solver.game_value(game) == pytest.approx(lp_value, abs=1e-6)


@pytest.mark.parametrize("name", SMALL_GAMES)
def test_equilibrium_policy_has_zero_nash_conv_in_openspiel(name):
    game = pyspiel.load_game(name)
    solution = solver.solve(game)
    tb_game = pyspiel.convert_to_turn_based(game)
    assert openspiel_exploitability.nash_conv(tb_game, solution.tabular_policy) < 1e-6


@pytest.mark.parametrize("name", [
    GOOFSPIEL.format(cards=4, order="random", extra=""),
    GOOFSPIEL.format(cards=4, order="random", extra=",returns_type=point_difference"),
    GOOFSPIEL.format(cards=4, order="ascending", extra=",egocentric=True"),
    "oshi_zumo(coins=3,size=1,horizon=6)",  # 0-0 bids repeat positions: the move number counts
    # chance nodes resolve the pending joint action; a goal takes two moves (horizon 4)
    pytest.param("markov_soccer(grid=A.\nOB,horizon=4)", marks=pytest.mark.slow),
])
def test_transposition_key_gives_the_value_of_every_state(name):
    # Goofspiel and Oshi-Zumo are symmetric, so the root value is 0 whatever the key does; the
    # subgames below it are not, and keyed and unkeyed solves must agree on every one of them.
    game = pyspiel.load_game(name)
    keyed = solver.solve(game)
    unkeyed = solver.solve(game, use_transpositions=False, max_states=None, max_seconds=None)
    assert len(keyed) < len(unkeyed)  # transpositions were actually shared
    values = [unkeyed.state_value(s) for s in all_states(game.new_initial_state())]
    # the check sees many different subgame values (markov_soccer's tiny grid: win, draw, loss)
    assert len(set(np.round(values, 9))) >= (3 if "soccer" in name else 4)
    for state in all_states(game.new_initial_state()):
        assert keyed.state_value(state) == pytest.approx(unkeyed.state_value(state), abs=1e-12)


def test_sequential_perfect_information_game_matches_alpha_beta():
    game = pyspiel.load_game("nim(pile_sizes=1;2;3)")
    solution = solver.solve(game)
    root_value, _ = minimax.alpha_beta_search(game, maximizing_player_id=0)
    assert solver.game_value(game) == solution.value == pytest.approx(root_value)
    for state in list(all_states(game.new_initial_state()))[::7]:
        expected, _ = minimax.alpha_beta_search(game, state=state.clone(), maximizing_player_id=0)
        assert solution.state_value(state) == pytest.approx(expected)


def test_strategies_are_distributions_over_legal_actions():
    game = pyspiel.load_game(GOOFSPIEL.format(cards=3, order="random", extra=""))
    solution = solver.solve(game)
    for state in all_states(game.new_initial_state()):
        if state.is_chance_node():
            continue
        for player in (0, 1):
            probs = solution.action_probabilities(state, player)
            assert set(probs) == set(state.legal_actions(player))
            assert sum(probs.values()) == pytest.approx(1.0)
            assert min(probs.values()) >= 0.0


def test_matching_pennies_equilibrium_is_uniform():
    game = pyspiel.load_game("matrix_mp")
    solution = solver.solve(game)
    state = game.new_initial_state()
    assert solution.value == pytest.approx(0.0)
    for player in (0, 1):
        assert solution.action_probabilities(state, player) == pytest.approx({0: 0.5, 1: 0.5})


def test_game_strings_are_loaded():
    assert solver.game_value("matrix_rps") == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("name,problem", [
    ("goofspiel(num_cards=3,imp_info=False,returns_type=total_points)", "zero-sum"),
    ("goofspiel(num_cards=3,imp_info=False,players=3)", "two-player"),
    ("goofspiel(num_cards=3,imp_info=True)", "imp_info=False"),
    ("kuhn_poker", "imperfect information"),
    ("matrix_pd", "zero-sum"),
])
def test_games_outside_the_solver_s_scope_are_refused(name, problem):
    with pytest.raises(ValueError, match=problem):
        solver.game_value(pyspiel.load_game(name))


def test_a_tree_given_to_the_game_solver_is_refused_with_a_pointer():
    from smmcts_spiel.trees import matrix_game
    with pytest.raises(ValueError, match="solve_tree"):
        solver.solve(matrix_game([[1.0, 0.0]]))


RANDOM_GAMES = [
    f"smmcts_random_stacked_matrix(depth={d},branching={b},seed={10 * d + b})"
    for d in (1, 2, 3) for b in (2, 3)
] + ["smmcts_random_stacked_matrix(depth=2,branching=2,chance_branching=2,seed=7)"]


@pytest.mark.parametrize("name", RANDOM_GAMES)
def test_random_stacked_matrix_value_agrees_with_sequence_form_lp(name):
    game = pyspiel.load_game(name)
    lp_value, _, _, _ = sequence_form_lp.solve_zero_sum_game(pyspiel.convert_to_turn_based(game))
    value = solver.game_value(game, use_explicit_tree=False)
    assert value == pytest.approx(lp_value, abs=1e-6)
    assert solver.game_value(game) == pytest.approx(value, abs=1e-12)  # solved on its tree


@pytest.mark.parametrize("name", RANDOM_GAMES)
def test_random_stacked_matrix_equilibrium_has_zero_nash_conv_in_openspiel(name):
    game = pyspiel.load_game(name)
    tabular = solver.solve(game).tabular_policy
    assert openspiel_exploitability.nash_conv(pyspiel.convert_to_turn_based(game), tabular) < 1e-6


def test_explicit_tree_games_solved_on_their_tree_and_by_states_agree_node_by_node():
    game = pyspiel.load_game("smmcts_random_stacked_matrix(depth=2,branching=3,"
                             "chance_branching=2,seed=4)")
    by_states = solver.solve(game, use_explicit_tree=False)
    on_tree = solver.solve(game)
    assert solver.game_value(game, use_explicit_tree=False) == pytest.approx(on_tree.value)
    tree_nodes = solver.solve_tree(game.tree).nodes
    for state in all_states(game.new_initial_state()):
        expected = by_states.state_solution(state)
        assert on_tree.state_value(state) == pytest.approx(expected.value, abs=1e-12)
        assert tree_nodes[solver.state_path(state)].value == pytest.approx(expected.value)
        for player in (0, 1):
            mine = on_tree.action_probabilities(state, player) if not state.is_chance_node() \
                else {}
            assert mine == pytest.approx(expected.strategies[player], abs=1e-12)


@pytest.mark.parametrize("params", ["num_cards=4,points_order=random,returns_type=point_difference",
                                    "num_cards=4,points_order=descending"])
def test_smmcts_goofspiel_uses_its_transposition_key_and_matches_openspiel(params):
    ours = pyspiel.load_game(f"smmcts_goofspiel({params})")
    theirs = pyspiel.load_game(f"goofspiel(imp_info=False,{params})")
    keyed = solver.solve(ours)
    reference = solver.solve(theirs, use_transpositions=False)
    ours_states = list(all_states(ours.new_initial_state()))
    theirs_states = list(all_states(theirs.new_initial_state()))
    assert len(keyed) < len(ours_states)  # transpositions were shared
    assert [s.history() for s in ours_states] == [s.history() for s in theirs_states]
    for mine, other in zip(ours_states, theirs_states, strict=True):
        assert keyed.state_value(mine) == pytest.approx(reference.state_value(other), abs=1e-12)


SAVED_GAMES = ["oshi_zumo(coins=4,size=1,horizon=6)",
               "goofspiel(num_cards=3,imp_info=False,points_order=random,returns_type=win_loss)",
               "smmcts_random_stacked_matrix(depth=2,branching=2,seed=3)",
               "matrix_mp"]


@pytest.mark.parametrize("name", SAVED_GAMES)
def test_a_saved_solution_reads_back_state_by_state(tmp_path, name):
    game = pyspiel.load_game(name)
    solution = solver.solve(game)
    solver.save_solution(solution, tmp_path / "s.json")
    loaded = solver.load_solution(game, tmp_path / "s.json")
    assert loaded.value == solution.value and len(loaded) == len(solution)
    state, rng = game.new_initial_state(), np.random.default_rng(0)
    while not state.is_terminal():  # one line of play, every state compared
        if state.is_chance_node():
            state.apply_action(state.legal_actions()[0])
            continue
        assert loaded.state_solution(state) == solution.state_solution(state)
        moves = [int(rng.choice(solver.legal_actions(state, p))) for p in (0, 1)]
        if state.is_simultaneous_node():
            state.apply_actions(moves)
        else:
            state.apply_action(moves[state.current_player()])


def test_saved_solutions_of_another_game_or_format_are_refused(tmp_path):
    game = pyspiel.load_game("oshi_zumo(coins=4,size=1,horizon=6)")
    path = tmp_path / "s.json"
    solver.save_solution(solver.solve(game), path)
    with pytest.raises(ValueError, match="not 'oshi_zumo"):
        solver.load_solution(pyspiel.load_game("oshi_zumo(coins=5,size=1,horizon=6)"), path)
    text = path.read_text()
    for bad, message in [("{not json", "cannot be read as JSON"),
                         (text.replace('"version": 1', '"version": 9'), "version 1"),
                         (text.replace('"states": [["(', '"states": [["__import__(\'os\')'
                                       '.system(\'true\')#('), "malformed"),
                         (text.replace('"key": "state"', '"key": "path"'), "no explicit tree"),
                         (text.replace('(False, ', '(True, '), "filed under other keys")]:
        path.write_text(bad)
        with pytest.raises(ValueError, match=message):
            solver.load_solution(game, path)
