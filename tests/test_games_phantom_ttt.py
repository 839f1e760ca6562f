"""smmcts_phantom_ttt: agrees with OpenSpiel's phantom_ttt and with the poster's numbers."""

import numpy as np
import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers the games)


def assert_same_as_openspiel(num_trajectories, seed):
    """Random play in both games: same moves, outcomes and information partitions.

    Information states are compared as partitions: along the way, each of our strings
    must always meet the same OpenSpiel string and vice versa. Returns the outcome counts
    (player 0 losses, draws, wins).
    """
    ours, theirs = pyspiel.load_game("smmcts_phantom_ttt"), pyspiel.load_game("phantom_ttt")
    rng = np.random.default_rng(seed)
    ours_to_theirs, theirs_to_ours = [{}, {}], [{}, {}]
    outcomes = np.zeros(3, int)
    for _ in range(num_trajectories):
        a, b = ours.new_initial_state(), theirs.new_initial_state()
        while not a.is_terminal():
            assert not b.is_terminal()
            assert a.current_player() == b.current_player()
            assert a.legal_actions() == b.legal_actions()
            for player in range(2):
                x, y = a.information_state_string(player), b.information_state_string(player)
                assert ours_to_theirs[player].setdefault(x, y) == y
                assert theirs_to_ours[player].setdefault(y, x) == x
            action = int(rng.choice(a.legal_actions()))
            a.apply_action(action)
            b.apply_action(action)
        assert b.is_terminal()
        assert a.returns() == b.returns()
        outcomes[int(a.returns()[0]) + 1] += 1
    return outcomes


def test_agrees_with_openspiel_phantom_ttt_on_random_trajectories():
    assert_same_as_openspiel(num_trajectories=200, seed=1)


@pytest.mark.slow
def test_agrees_with_openspiel_phantom_ttt_on_1000_trajectories():
    assert_same_as_openspiel(num_trajectories=1000, seed=2)


def test_random_versus_random_matches_the_poster():
    # Poster olympiad: Random vs Random, first player 59% wins / 28% losses.
    losses, _, wins = assert_same_as_openspiel(num_trajectories=1000, seed=3) / 1000
    assert wins == pytest.approx(0.59, abs=0.04)
    assert losses == pytest.approx(0.28, abs=0.04)


def test_random_sim_test_with_serialization():
    game = pyspiel.load_game("smmcts_phantom_ttt")
    pyspiel.random_sim_test(game, num_sims=20, serialize=True, verbose=False)


def test_refused_move_is_revealed_to_the_mover_who_moves_again():
    state = pyspiel.load_game("smmcts_phantom_ttt").new_initial_state()
    state.apply_action(4)  # x takes the centre.
    assert state.current_player() == 1
    assert 4 in state.legal_actions()  # o does not know.
    state.apply_action(4)  # Refused.
    assert state.current_player() == 1
    assert 4 not in state.legal_actions()
    assert state.observation_string(1) == "...\n.x.\n..."
    assert state.information_state_string(1) == "...\n.x.\n...\n4!"
    state.apply_action(0)
    assert state.current_player() == 0
    assert state.observation_string(0) == "...\n.x.\n..."  # x sees only its own mark.
    assert state.information_state_string(1) == "o..\n.x.\n...\n4! 0"


def test_information_state_tensor_encodes_view_and_own_moves():
    game = pyspiel.load_game("smmcts_phantom_ttt")
    state = game.new_initial_state()
    for cell in (4, 4, 0):
        state.apply_action(cell)
    tensor = np.array(state.information_state_tensor(1))
    view = tensor[:27].reshape(3, 9)
    moves = tensor[27:].reshape(9, 10)
    np.testing.assert_array_equal(view.argmax(axis=0), [2, 0, 0, 0, 1, 0, 0, 0, 0])
    assert moves[0, 4] == 1 and moves[0, 9] == 1  # refused at the centre
    assert moves[1, 0] == 1 and moves[1, 9] == 0  # placed in the corner
    assert not moves[2:].any()
    assert len(state.observation_tensor(1)) == 27


def test_game_type_and_info():
    game = pyspiel.load_game("smmcts_phantom_ttt")
    game_type = game.get_type()
    assert game_type.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert game_type.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert game_type.utility == pyspiel.GameType.Utility.ZERO_SUM
    reference = pyspiel.load_game("phantom_ttt")
    assert game.num_distinct_actions() == reference.num_distinct_actions() == 9
    assert game.max_game_length() == reference.max_game_length()
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
