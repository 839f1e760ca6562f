"""Hostile and careless use of the library: long budgets, foreign states, edited caches.

Issue 27's library findings: each test here failed on the code before its fix.
"""

import functools
import logging

import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import exploitability, turn_based

GOOFSPIEL_3 = "goofspiel(num_cards=3,imp_info=False,points_order=descending)"
OSHI_ZUMO = "oshi_zumo(coins=3,size=1,horizon=3)"


def _tree_bytes(search) -> int:
    """What a compiled search's tree takes: both sets of arrays, the renumbering scratch
    and the estimate of its Python objects per node."""
    arrays = [search.nodes_i, search.nodes_f, search.pool, search.slots, search._scratch]
    arrays += list(search._spare or ())
    return (sum(a.nbytes for a in arrays)
            + search.nodes_i.shape[1] * search.python_bytes_per_node)


# -- long time budgets -------------------------------------------------------------------


@pytest.mark.parametrize("engine,game_string", [
    ("kernel", "goofspiel(num_cards=8,imp_info=False,points_order=descending)"),
    ("generic", "oshi_zumo(coins=10,size=3,horizon=20)"),
])
@pytest.mark.parametrize("time_limit", [3600, 1e9])
def test_long_time_budget_stops_at_max_memory_and_keeps_playing(engine, game_string,
                                                                 time_limit, caplog):
    """An hour (or 30 years) per move used to die at once allocating 1.25 x rate x time
    limit nodes (OSError); now the tree grows up to max_memory, then the move is played."""
    game = pyspiel.load_game(game_string)
    limit = 24 << 20
    bot = SMMCTSBot(game, 0, iterations=None, time_limit=time_limit, engine=engine,
                    max_memory=limit, seed=1)
    state = game.new_initial_state()
    with caplog.at_level(logging.WARNING):
        for _ in range(2):  # the second move re-roots and fills the tree again
            action = bot.step(state)
            assert action in state.legal_actions(0)
            assert bot.search.full
            assert _tree_bytes(bot.search) <= limit
            state.apply_actions([action, state.legal_actions(1)[0]])
    assert "reached max_memory=25165824 bytes" in caplog.text


def test_max_memory_is_checked():
    game = pyspiel.load_game(GOOFSPIEL_3)
    for bad in (0, -1, 1.5, "1GB", None):
        with pytest.raises(ValueError, match="max_memory"):
            SMMCTSBot(game, 0, engine="kernel", max_memory=bad)


# -- policy(): turn-based and foreign states -----------------------------------------------


@functools.cache
def _searched_policy(game_string: str, engine: str):
    game = pyspiel.load_game(game_string)
    bot = SMMCTSBot(game, 0, iterations=3000, engine=engine, threshold=0.0, seed=4)
    bot.step(game.new_initial_state())
    return game, bot.policy()


@pytest.mark.parametrize("engine", ["kernel", "generic", "reference"])
@pytest.mark.parametrize("game_string", [GOOFSPIEL_3, OSHI_ZUMO])
def test_policy_answers_turn_based_states_as_their_simultaneous_states(game_string, engine):
    """On convert_to_turn_based states player 2 used to get uniform strategies, so
    OpenSpiel's nash_conv there disagreed with the exact evaluation on the game itself."""
    game, policy = _searched_policy(game_string, engine)
    for tb_state, state in turn_based.paired_states(game):
        player = tb_state.current_player()
        assert policy.action_probabilities(tb_state) == policy.action_probabilities(state,
                                                                                    player)
    tb_game = pyspiel.convert_to_turn_based(game)
    exact = exploitability.evaluate(game, policy, turn_based=False).nash_conv
    assert openspiel_exploitability.nash_conv(tb_game, policy) == pytest.approx(exact, abs=1e-9)


@pytest.mark.parametrize("engine", ["kernel", "generic", "reference"])
@pytest.mark.parametrize("foreign", [
    "goofspiel(num_cards=3,imp_info=False,points_order=descending,returns_type=point_difference)",
    "goofspiel(num_cards=4,imp_info=False,points_order=descending)",
    "matrix_rps",
    "kuhn_poker",
])
def test_policy_refuses_a_state_of_another_game(engine, foreign):
    """It used to answer the root strategy of its own game for any foreign state."""
    _, policy = _searched_policy(GOOFSPIEL_3, engine)
    state = pyspiel.load_game(foreign).new_initial_state()
    if state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(ValueError, match="answers for states of goofspiel"):
        policy.action_probabilities(state, 0)
