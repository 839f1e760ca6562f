"""The lost-update count of a tree (:func:`smmcts_spiel.search.lost_updates.lost_updates`):
0 where every update of counts and visits arrived, and each update taken away is counted."""

import os

import pyspiel
import pytest

from smmcts_spiel.search import tree_arrays as ta
from smmcts_spiel.search.array_engine import ArraySMMCTS
from smmcts_spiel.search.kernel_engine import KernelSMMCTS
from smmcts_spiel.search.lost_updates import lost_updates

GAMES = ["oshi_zumo(coins=10,size=3,horizon=20)", "markov_soccer(horizon=20)",
         "goofspiel(num_cards=5,points_order=random)"]


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("engine", [KernelSMMCTS, ArraySMMCTS])
def test_one_thread_loses_nothing_and_a_removed_update_is_counted(game_string, engine):
    game = pyspiel.load_game(game_string)
    search = engine(game, seed=1)
    state = game.new_initial_state()
    if state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    search.run(state, iterations=2000)
    assert lost_updates(search) == 0
    # a node below the root, selected from: one count lost, then one visit lost
    node = next(h for h in range(1, int(search.counters[ta.NUM_NODES]))
                if search.nodes_i[ta.KIND, h] == ta.DECISION and search.nodes_i[ta.CHILD, h] >= 0
                and search.nodes_f[ta.VISITS, h] > 5)
    search.slots[ta.COUNT, search.nodes_i[ta.SLOT, node]] -= 1
    assert lost_updates(search) == 1
    search.nodes_f[ta.VISITS, node] -= 1
    assert lost_updates(search) == 1  # player 1 now matches, player 2 is off by one


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="threads=2 needs two cores")
def test_a_shared_tree_with_atomic_updates_loses_nothing():
    game = pyspiel.load_game(GAMES[0])
    search = KernelSMMCTS(game, seed=2, threads=2)
    for _ in range(3):
        search.run(game.new_initial_state(), iterations=20_000)
        assert lost_updates(search) == 0
        search.reset()
