"""smmcts_othello: OpenSpiel's othello rules on N x N boards, checked against the C++ game."""

import random

import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel.exact import solver


def test_8x8_matches_openspiel_move_by_move():
    """Random trajectories (with passes) through both games: same states, moves, returns."""
    reference = pyspiel.load_game("othello")
    game = pyspiel.load_game("smmcts_othello(board_size=8)")
    rng = random.Random(0)
    passes = 0
    for _ in range(60):
        a, b = reference.new_initial_state(), game.new_initial_state()
        while not a.is_terminal():
            assert str(a) == str(b)
            assert not b.is_terminal()
            assert a.current_player() == b.current_player()
            assert a.legal_actions() == b.legal_actions()
            for p in (0, 1):
                assert a.observation_tensor(p) == b.observation_tensor(p)
                assert a.observation_string(p) == b.observation_string(p)
            action = rng.choice(a.legal_actions())
            player = a.current_player()
            assert a.action_to_string(player, action) == b.action_to_string(player, action)
            passes += action == 64
            a.apply_action(action)
            b.apply_action(action)
        assert b.is_terminal()
        assert str(a) == str(b)
        assert a.returns() == b.returns()
    assert passes > 0  # the pass rule was exercised


@pytest.mark.parametrize("n", [4, 6])
def test_small_boards_are_consistent(n):
    game = pyspiel.load_game(f"smmcts_othello(board_size={n})")
    assert game.num_distinct_actions() == n * n + 1
    assert game.observation_tensor_shape() == [3, n, n]
    rng = random.Random(n)
    for _ in range(30):
        state = game.new_initial_state()
        plies = 0
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            plies += 1
        assert plies <= game.max_game_length()
        black, white = state.discs()
        assert state.returns()[0] == (black > white) - (black < white)


@pytest.mark.slow
def test_4x4_is_won_11_to_3_by_white():
    """4x4 Othello is a known win for White (the second player), 11 discs to 3: a difference
    of 8 discs (the solver does not award empty squares)."""
    disc_game = pyspiel.load_game("smmcts_othello(returns_type=disc_difference)")
    assert solver.game_value(disc_game) == pytest.approx((3 - 11) / 16)


@pytest.mark.parametrize("size", [2, 5, 10, "4"])
def test_bad_board_size_is_refused(size):
    with pytest.raises((ValueError, pyspiel.SpielError), match="board_size"):
        pyspiel.load_game("smmcts_othello", {"board_size": size})


def test_bad_returns_type_is_refused():
    with pytest.raises(ValueError, match="returns_type must be one of win_loss, disc_diff"):
        pyspiel.load_game("smmcts_othello(returns_type=score)")


def test_illegal_moves_are_refused():
    state = pyspiel.load_game("smmcts_othello").new_initial_state()
    with pytest.raises(pyspiel.SpielError, match="not legal"):
        state.apply_action(0)  # a corner: flips nothing
    with pytest.raises(pyspiel.SpielError, match="not legal"):
        state.apply_action(16)  # pass while a placement exists


def test_opening_starts_the_game_after_its_moves():
    game = pyspiel.load_game("smmcts_othello(opening=b1-a1-a2)")
    played = pyspiel.load_game("smmcts_othello").new_initial_state()
    for move in ("b1", "a1", "a2"):
        played.apply_action(next(a for a in played.legal_actions()
                                 if played.action_to_string(a) == move))
    state = game.new_initial_state()
    assert str(state) == str(played) and state.current_player() == played.current_player() == 1
    assert state.legal_actions() == played.legal_actions() and state.history() == []
    state.apply_action(state.legal_actions()[0])
    again = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[1]
    assert str(again) == str(state)


@pytest.mark.parametrize("opening, message", [
    ("b1-z9", "'z9' is not a square"), ("b1-b1", "move 2 .'b1'. is not legal"),
    ("b1,a1", "'b1,a1' is not a square")])
def test_bad_opening_is_refused(opening, message):
    with pytest.raises((ValueError, pyspiel.SpielError), match=message):
        pyspiel.load_game("smmcts_othello", {"opening": opening})
