"""smmcts_random_stacked_matrix and smmcts_matrix_tree: explicit trees as pyspiel games."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy
from open_spiel.python.algorithms import exploitability, sequence_form_lp

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import trees as mt
from smmcts_spiel.games import explicit_tree
from smmcts_spiel.games import matrix_tree as matrix_tree_game

RANDOM_GAMES = [
    "smmcts_random_stacked_matrix()",
    "smmcts_random_stacked_matrix(depth=1,branching=5,seed=3)",
    "smmcts_random_stacked_matrix(depth=3,branching_p1=2,branching_p2=3,utilities=grid3,seed=7)",
    "smmcts_random_stacked_matrix(depth=2,branching=2,chance_branching=3,seed=1)",
]
INLINE_GAMES = [
    "smmcts_matrix_tree(tree=[[1 0] [0 1]])",
    "smmcts_matrix_tree(tree={1/3:[[1 0] [0 1]] 2/3:[[0.25 [[1;0]]] [0.5 -2]]})",
    "smmcts_matrix_tree(tree=[[0 1 0.5]])",
]


@pytest.mark.parametrize("name", RANDOM_GAMES + INLINE_GAMES)
def test_random_sim_test_with_serialization(name):
    game = pyspiel.load_game(name)
    pyspiel.random_sim_test(game, num_sims=10, serialize=True, verbose=False)
    pyspiel.random_sim_test(pyspiel.convert_to_turn_based(game), num_sims=5, serialize=False,
                            verbose=False)


def test_same_parameters_give_the_generator_tree():
    game = pyspiel.load_game(
        "smmcts_random_stacked_matrix(depth=3,branching_p1=3,branching_p2=2,seed=11,"
        "utilities=grid3,chance_branching=2)")
    assert game.tree.root == mt.random_stacked_matrix(
        3, 3, 2, chance_branching=2, utilities="grid3", seed=11)
    again = pyspiel.load_game(str(game))
    assert again.tree == game.tree
    other_seed = pyspiel.load_game(str(game).replace("seed=11", "seed=12"))
    assert other_seed.tree != game.tree


def test_branching_sets_both_players_unless_given_per_player():
    assert pyspiel.load_game("smmcts_random_stacked_matrix(branching=3)").tree.root.shape == (3, 3)
    game = pyspiel.load_game("smmcts_random_stacked_matrix(branching=3,branching_p2=4)")
    assert game.tree.root.shape == (3, 4)
    assert game.num_distinct_actions() == 4


def test_rows_are_player_one_columns_player_two_outcomes_index_chance():
    game = pyspiel.load_game(RANDOM_GAMES[3])
    state = game.new_initial_state()
    assert state.node is game.tree.root
    state.apply_actions([1, 0])
    assert state.is_chance_node()
    assert state.node is game.tree.root.children[1][0]
    state.apply_action(2)
    assert state.node is game.tree.root.children[1][0].outcomes[2][1]
    assert state.is_simultaneous_node()
    state.apply_actions([0, 1])
    state.apply_action(0)
    leaf = game.tree.root.children[1][0].outcomes[2][1].children[0][1].outcomes[0][1]
    assert state.is_terminal()
    assert state.returns() == [leaf, -leaf]


def test_flat_joint_actions_use_openspiels_encoding():
    # Player 0 is the least significant digit: flat = row + rows * column.
    game = pyspiel.load_game("smmcts_random_stacked_matrix(branching_p1=3,branching_p2=2)")
    state = game.new_initial_state()
    assert state.legal_actions() == list(range(6))
    assert state.action_to_string(pyspiel.PlayerId.SIMULTANEOUS, 4) == "[row 1, column 1]"
    state.apply_action(5)
    assert state.node is game.tree.root.children[2][1]
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[-1])
    assert state.returns()[0] == -state.returns()[1]


def test_chance_outcomes_are_the_tree_probabilities():
    game = pyspiel.load_game(INLINE_GAMES[1])
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(0, pytest.approx(1 / 3)), (1, pytest.approx(2 / 3))]


def test_game_info_follows_the_tree():
    game = pyspiel.load_game(INLINE_GAMES[1])
    assert game.num_distinct_actions() == 2
    assert game.max_chance_outcomes() == 2
    assert game.max_game_length() == 3  # chance, matrix, matrix
    assert (game.min_utility(), game.max_utility()) == (-2.0, 2.0)
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    deterministic = pyspiel.load_game(INLINE_GAMES[0])
    assert deterministic.get_type().chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert deterministic.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert deterministic.utility_sum() == 0.0
    uniform = pyspiel.load_game("smmcts_random_stacked_matrix(depth=2,branching=4)")
    assert -1.0 <= uniform.min_utility() < 0 < uniform.max_utility() <= 1.0


def test_matching_pennies_has_value_one_half_by_sequence_form_lp():
    game = pyspiel.load_game("smmcts_matrix_tree(tree=[[1 0] [0 1]])")
    v0, v1, _, _ = sequence_form_lp.solve_zero_sum_game(pyspiel.convert_to_turn_based(game))
    assert v0 == pytest.approx(0.5, abs=1e-6)
    assert v1 == pytest.approx(-0.5, abs=1e-6)


def _uniform_value_and_best_responses(node):
    """(value when both play uniformly, player 1's best-response value, player 2's)."""
    if isinstance(node, mt.ChanceStage):
        parts = np.array([_uniform_value_and_best_responses(c) for _, c in node.outcomes])
        probs = np.array([p for p, _ in node.outcomes])
        return tuple(probs @ parts)
    if isinstance(node, mt.MatrixStage):
        parts = np.array([[_uniform_value_and_best_responses(c) for c in row]
                          for row in node.children])
        value = parts[:, :, 0].mean()
        br1 = parts[:, :, 1].mean(axis=1).max()  # player 2 uniform over columns
        br2 = parts[:, :, 2].mean(axis=0).max()  # player 1 uniform over rows
        return value, br1, br2
    return float(node), float(node), -float(node)


@pytest.mark.parametrize("name", [RANDOM_GAMES[0], RANDOM_GAMES[3], INLINE_GAMES[1]])
def test_nash_conv_of_uniform_on_turn_based_matches_backward_induction(name):
    game = pyspiel.load_game(name)
    turn_based = pyspiel.convert_to_turn_based(game)
    nash_conv = exploitability.nash_conv(turn_based, policy.UniformRandomPolicy(turn_based))
    value, br1, br2 = _uniform_value_and_best_responses(game.tree.root)
    assert nash_conv == pytest.approx((br1 - value) + (br2 + value), abs=1e-9)


def test_information_state_and_observation_are_the_public_path():
    game = pyspiel.load_game(RANDOM_GAMES[3])
    state = game.new_initial_state()
    state.apply_actions([1, 0])
    state.apply_action(2)
    for player in range(2):
        assert state.information_state_string(player) == "(1,0) c2"
        assert state.observation_string(player) == "(1,0) c2"
    tensor = np.array(state.information_state_tensor(0)).reshape(game.max_game_length(), -1)
    # Slot layout: rows (2), columns (2), chance outcomes (3).
    np.testing.assert_array_equal(tensor[0], [0, 1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(tensor[1], [0, 0, 0, 0, 0, 0, 1])
    assert not tensor[2:].any()
    assert state.observation_tensor(1) == state.information_state_tensor(1)


def test_serialization_round_trips_the_state_and_shares_nothing_mutable():
    game = pyspiel.load_game(RANDOM_GAMES[3])
    state = game.new_initial_state()
    state.apply_actions([0, 1])
    state.apply_action(1)
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert game2.tree == game.tree
    assert state2.history() == state.history()
    assert state2.node == state.node
    assert str(state2) == str(state)


def test_clone_does_not_copy_the_tree():
    game = pyspiel.load_game(RANDOM_GAMES[0])
    state = game.new_initial_state()
    clone = state.clone()
    assert clone.node is state.node is game.tree.root
    clone.apply_actions([0, 0])
    assert state.node is game.tree.root


def test_compact_form_round_trips_random_trees_exactly():
    for seed in range(5):
        root = mt.random_stacked_matrix(2, 3, 2, chance_branching=2 * (seed % 2), seed=seed)
        text = mt.format_compact(root)
        assert mt.parse_compact(text).root == root
        assert matrix_tree_game.load_tree_game(root).tree.root == root


def test_compact_form_accepts_semicolons_and_fractions():
    a = mt.parse_compact("{1/4:[[1;0];[0;1]];3/4:0.5}")
    b = mt.parse_compact("{0.25:[[1 0] [0 1]] 0.75:0.5}")
    assert a == b


def test_json_file_round_trip(tmp_path):
    tree = mt.MatrixTree(mt.random_stacked_matrix(2, 2, chance_branching=2, seed=5),
                         {"name": "example"})
    path = tmp_path / "game.json"
    mt.dump(tree, path)
    game = pyspiel.load_game(f"smmcts_matrix_tree(file={path})")
    assert game.tree == tree
    assert game.tree.metadata == {"name": "example"}
    _, state = pyspiel.deserialize_game_and_state(
        pyspiel.serialize_game_and_state(game, game.new_initial_state()))
    assert state.get_game().tree == tree
    pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


def test_tree_of_returns_the_tree_of_a_loaded_or_converted_game():
    game = pyspiel.load_game(RANDOM_GAMES[1])
    assert explicit_tree.tree_of(game) is game.tree
    assert explicit_tree.tree_of(pyspiel.convert_to_turn_based(game)) == game.tree
    with pytest.raises(ValueError, match="not an explicit-tree game"):
        explicit_tree.tree_of(pyspiel.load_game("matrix_mp"))


def test_load_tree_game_keeps_metadata():
    tree = mt.MatrixTree(mt.matrix_game([[1, 0], [0, 1]]), {"name": "pennies"})
    assert matrix_tree_game.load_tree_game(tree).tree.metadata == {"name": "pennies"}


@pytest.mark.parametrize("name, message", [
    ("smmcts_random_stacked_matrix(depth=0)", "depth must be an integer >= 1"),
    ("smmcts_random_stacked_matrix(branching=1)", "branching .* at least 2 joint actions"),
    ("smmcts_random_stacked_matrix(branching_p1=1,branching_p2=1)", "at least 2 joint"),
    ("smmcts_random_stacked_matrix(branching=0)", "branching must be an integer >= 1"),
    ("smmcts_random_stacked_matrix(utilities=normal)",
     "utilities must be one of uniform, grid3, edge_sum"),
    ("smmcts_random_stacked_matrix(chance_branching=1)", "chance_branching must be 0"),
    ("smmcts_random_stacked_matrix(seed=-1)", "seed must be an integer >= 0"),
    ("smmcts_matrix_tree", "exactly one of file=.* or tree="),
    ("smmcts_matrix_tree(file=/no/such/file.json)", "file: cannot read .*No such file"),
    ("smmcts_matrix_tree(tree=[[1 0] [0]])", "tree: root: matrix rows have different lengths"),
    ("smmcts_matrix_tree(tree=[[1 x] [0 1]])", "tree: leaf utility 'x' .* is not a number"),
    ("smmcts_matrix_tree(tree=[[1 0] [0 1]] 3)", "tree: unexpected '3' after the tree"),
    ("smmcts_matrix_tree(tree={1/2:1})", "tree: .*probabilities sum to 0.5"),
    ("smmcts_matrix_tree(tree=[0.5])", r"tree: expected .\]., found .0.5. at character 1"),
])
def test_bad_parameters_raise_a_clear_value_error(name, message):
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game(name)


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    ('{"format": "smmcts_matrix_tree", "version": 1}', 'missing "root"'),
    ('{"format": "other", "version": 1, "root": 1}', 'wrong "format"'),
])
def test_malformed_json_file_raises_naming_the_file(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=f"smmcts_matrix_tree: file: .*bad.json: .*{message}"):
        pyspiel.load_game(f"smmcts_matrix_tree(file={path})")
