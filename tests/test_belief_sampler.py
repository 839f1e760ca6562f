"""The Belief Sampler, the Tic-Tac-Toe solver it relies on, and ISMCTS world sampling."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import evaluate_bots, minimax

from smmcts_spiel.bots import BeliefSamplerBot
from smmcts_spiel.bots.belief_sampler import WorldResampler, sample_board
from smmcts_spiel.bots.openspiel_bots import ISMCTSBot
from smmcts_spiel.exact import tic_tac_toe
from smmcts_spiel.games import phantom_ttt_rules

PHANTOM = pyspiel.load_game("phantom_ttt")


def random_states(game, num_games, seed):
    rng = np.random.default_rng(seed)
    for _ in range(num_games):
        state = game.new_initial_state()
        while not state.is_terminal():
            yield state
            state = state.child(int(rng.choice(state.legal_actions())))


def test_solver_agrees_with_openspiel_alpha_beta_on_tic_tac_toe():
    game = pyspiel.load_game("tic_tac_toe")
    checked = 0
    for state in random_states(game, 60, seed=0):
        if len(state.history()) < 2:
            continue  # alpha-beta from (nearly) empty boards is slow in Python
        player = state.current_player()
        board = [0] * 9
        for turn, cell in enumerate(state.history()):
            board[cell] = turn % 2 + 1
        value, best = minimax.alpha_beta_search(game, state.clone(), maximizing_player_id=player)
        assert tic_tac_toe.value(tuple(board), player) == value
        assert best in tic_tac_toe.optimal_moves(board, player)
        checked += 1
    assert checked > 100


def test_empty_board_is_a_draw_where_every_opening_is_optimal():
    assert tic_tac_toe.value((0,) * 9, 0) == 0
    assert tic_tac_toe.optimal_moves([0] * 9, 0) == list(range(9))
    # x x . / o o . / . . . with x to move: only completing the top row keeps the win.
    assert tic_tac_toe.optimal_moves([1, 1, 0, 2, 2, 0, 0, 0, 0], 0) == [2]
    assert tic_tac_toe.value((1, 1, 0, 2, 2, 0, 0, 0, 0), 0) == 1


def test_true_board_is_always_among_the_consistent_boards():
    for state in random_states(PHANTOM, 200, seed=1):
        player = state.current_player()
        rep = phantom_ttt_rules.replay(state.history())
        known = phantom_ttt_rules.own_view_board(rep, player)
        boards = phantom_ttt_rules.consistent_boards(known, player)
        assert any(np.array_equal(b, rep.board) for b in boards)
        for b in boards:  # every candidate agrees with what the player knows
            assert np.all(b[known != 0] == known[known != 0])


@pytest.mark.parametrize("seat", [0, 1])
def test_belief_sampler_never_plays_a_cell_it_knows_is_taken(seat):
    bot = BeliefSamplerBot(PHANTOM, seat, seed=seat)
    rng = np.random.default_rng(2)
    moves = 0
    for _ in range(150):
        state = PHANTOM.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == seat:
                rep = phantom_ttt_rules.replay(state.history())
                action = bot.step(state)
                assert not rep.views[seat] >> action & 1
                moves += 1
            else:
                action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
    assert moves > 300


def test_belief_sampler_plays_optimally_when_it_knows_every_mark():
    checked = nontrivial = 0
    for seat in (0, 1):
        bot = BeliefSamplerBot(PHANTOM, seat, seed=10 + seat)
        for state in random_states(PHANTOM, 800, seed=3 + seat):
            if state.current_player() != seat:
                continue
            rep = phantom_ttt_rules.replay(state.history())
            known = phantom_ttt_rules.own_view_board(rep, seat)
            if not np.array_equal(known, rep.board):
                continue
            optimal = tic_tac_toe.optimal_moves(rep.board, seat)
            for _ in range(3):
                assert bot.step(state) in optimal
            checked += 1
            nontrivial += int(np.count_nonzero(rep.board) >= 3)
    assert checked > 500 and nontrivial > 100


def test_belief_sampler_randomises_among_optimal_moves_and_is_seeded():
    state = PHANTOM.new_initial_state()
    first = [BeliefSamplerBot(PHANTOM, 0, seed=4).step(state) for _ in range(3)]
    assert first == [BeliefSamplerBot(PHANTOM, 0, seed=4).step(state) for _ in range(3)]
    bot = BeliefSamplerBot(PHANTOM, 0, seed=4)
    assert len({bot.step(state) for _ in range(200)}) == 9


@pytest.mark.parametrize("name", ["phantom_ttt", "smmcts_phantom_ttt"])
def test_belief_sampler_works_through_evaluate_bots_and_beats_random(name):
    game = pyspiel.load_game(name)
    rng = np.random.RandomState(0)
    wins = 0
    for game_index in range(100):
        bots = [BeliefSamplerBot(game, 0, seed=game_index),
                pyspiel.make_uniform_random_bot(1, game_index)]
        wins += evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)[0] > 0
    assert wins > 65  # the poster: 79% (Random vs Random: 59%)


def test_world_resampler_gives_states_the_player_cannot_tell_apart():
    resampler = WorldResampler(PHANTOM, seed=0)
    rng = np.random.default_rng(5)
    for state in random_states(PHANTOM, 100, seed=6):
        player = state.current_player()
        world = resampler(state, player)
        assert world.current_player() == player
        assert world.information_state_string(player) == state.information_state_string(player)
        board = sample_board(state, player, rng)
        assert not phantom_ttt_rules.has_line(board, 1)


def test_ismcts_with_world_resampler_plays_phantom_ttt():
    bots = [ISMCTSBot(PHANTOM, 0, simulations=30, seed=1),
            BeliefSamplerBot(PHANTOM, 1, seed=2)]
    returns = evaluate_bots.evaluate_bots(PHANTOM.new_initial_state(), bots,
                                          np.random.RandomState(0))
    assert returns[0] in (-1, 0, 1)


@pytest.mark.parametrize("name", ["tic_tac_toe", "phantom_ttt(gameversion=abrupt)",
                                  "phantom_ttt(obstype=reveal-numturns)"])
def test_other_games_are_value_errors(name):
    with pytest.raises(ValueError, match="Phantom Tic-Tac-Toe"):
        BeliefSamplerBot(pyspiel.load_game(name), 0)


def test_bad_seat_and_bad_boards_are_value_errors():
    with pytest.raises(ValueError, match="player_id"):
        BeliefSamplerBot(PHANTOM, 2)
    with pytest.raises(ValueError, match="already over"):
        tic_tac_toe.optimal_moves([1, 1, 1, 2, 2, 0, 0, 0, 0], 1)
    with pytest.raises(ValueError, match="9 cells"):
        tic_tac_toe.optimal_moves([0] * 8, 0)


def test_sampling_for_a_player_not_to_move_is_a_value_error():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="not to move"):
        phantom_ttt_rules.sample_world([4], 0, rng)
    with pytest.raises(ValueError, match="illegal action"):
        phantom_ttt_rules.replay([4, 4, 4])  # o already knows 4 is taken
    with pytest.raises(ValueError, match="consistent"):
        known = np.array([2, 2, 0, 0, 0, 0, 0, 0, 0], np.int8)  # x to move, 2 o, 0 x
        phantom_ttt_rules.consistent_boards(known, 0)
