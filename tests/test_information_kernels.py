"""Kernels of imperfect-information games play exactly as the pyspiel games, and their
information keys partition the states exactly as OpenSpiel's information state strings."""

import numpy as np
import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers smmcts_phantom_ttt)
from smmcts_spiel.games.kernels import information as kernels

WHOLE_TREE = ["kuhn_poker", "leduc_poker", "goofspiel(num_cards=4,imp_info=True)",
              "goofspiel(num_cards=3,imp_info=True,points_order=descending,"
              "returns_type=point_difference)"]
SAMPLED = ["goofspiel(num_cards=6,imp_info=True)",
           "goofspiel(num_cards=8,imp_info=True,returns_type=total_points)",
           "phantom_ttt", "smmcts_phantom_ttt"]


class Checker:
    """Compares a kernel with the turn-based pyspiel game state by state."""

    def __init__(self, game_string):
        self.game = pyspiel.load_game(game_string)
        self.search_game = (pyspiel.convert_to_turn_based(self.game)
                            if self.game.get_type().dynamics
                            == pyspiel.GameType.Dynamics.SIMULTANEOUS else self.game)
        self.kernel = kernels.information_kernel_for(self.game)
        assert self.kernel is not None
        k = self.kernel
        self.args = (k.code,)
        self.out = np.zeros(k.max_actions, np.int64)
        self.scratch = np.zeros(k.max_actions, np.int64)
        self.outcomes = np.zeros(k.max_chance_outcomes, np.int64)
        self.probs = np.zeros(k.max_chance_outcomes)
        self.key_of = {}  # (player, information state string) -> key
        self.string_of = {}  # key -> (player, string)

    def check(self, state, array, pending):
        k = self.kernel
        mover = kernels.to_move(k.code, array, k.params, k.data, pending, self.scratch)
        if state.is_terminal():
            assert mover == -2
            assert kernels.returns(k.code, array, k.params, k.data) == state.returns()[0]
            return
        if state.is_chance_node():
            assert mover == -1
            n = kernels.chance_outcomes(k.code, array, k.params, k.data, self.outcomes,
                                        self.probs)
            expected = state.chance_outcomes()
            assert self.outcomes[:n].tolist() == [a for a, _ in expected]
            assert self.probs[:n].tolist() == pytest.approx([p for _, p in expected])
            assert max(self.outcomes[:n]) < k.num_action_ids
            return
        player = state.current_player()
        assert mover == player
        n = kernels.legal_actions(k.code, array, k.params, k.data, player, self.out)
        assert self.out[:n].tolist() == state.legal_actions()
        assert n <= k.max_actions
        key = int(kernels.information_key(k.code, array, k.params, k.data, player))
        string = (player, state.information_state_string(player))
        assert self.key_of.setdefault(string, key) == key
        assert self.string_of.setdefault(key, string) == string
        assert len(state.history()) < k.max_depth

    def child(self, array, pending, state, action):
        k = self.kernel
        array = array.copy()
        mover = kernels.to_move(k.code, array, k.params, k.data, pending, self.scratch)
        pending = kernels.step(k.code, array, k.params, k.data, pending, mover, action,
                               self.scratch)
        return array, pending


@pytest.mark.parametrize("game_string", WHOLE_TREE)
def test_whole_tree_matches_pyspiel(game_string):
    checker = Checker(game_string)
    stack = [(checker.search_game.new_initial_state(), checker.kernel.initial_state(), -1)]
    visited = 0
    while stack:
        state, array, pending = stack.pop()
        checker.check(state, array, pending)
        visited += 1
        if state.is_terminal():
            continue
        actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                   else state.legal_actions())
        for a in actions:
            stack.append((state.child(a), *checker.child(array, pending, state, a)))
    assert visited > 50
    assert len(checker.key_of) == len(checker.string_of) > 10


@pytest.mark.parametrize("game_string", SAMPLED)
def test_random_trajectories_match_pyspiel(game_string):
    checker = Checker(game_string)
    rng = np.random.default_rng(0)
    for _ in range(300):
        state = checker.search_game.new_initial_state()
        array, pending = checker.kernel.initial_state(), -1
        while True:
            checker.check(state, array, pending)
            if state.is_terminal():
                break
            actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                       else state.legal_actions())
            a = int(actions[rng.integers(len(actions))])
            array, pending = checker.child(array, pending, state, a)
            state.apply_action(a)
    assert len(checker.key_of) == len(checker.string_of) > 300


def test_replay_reaches_the_state_of_a_pyspiel_history():
    checker = Checker("goofspiel(num_cards=5,imp_info=True)")
    k = checker.kernel
    rng = np.random.default_rng(1)
    state = checker.search_game.new_initial_state()
    array, pending = k.initial_state(), -1
    while not state.is_terminal():
        replayed, replayed_pending = kernels.replay(
            k.code, k.initial_state(), k.params, k.data,
            np.array(state.history(), np.int64), checker.scratch)
        assert replayed.tolist() == array.tolist() and replayed_pending == pending
        actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                   else state.legal_actions())
        a = int(actions[rng.integers(len(actions))])
        array, pending = checker.child(array, pending, state, a)
        state.apply_action(a)


@pytest.mark.parametrize("game_string", [
    "goofspiel(num_cards=9,imp_info=True)",       # information codes would overflow
    "goofspiel(num_cards=4,imp_info=False)",      # perfect information: other keys
    "leduc_poker(suit_isomorphism=True)",
    "kuhn_poker(players=3)",
    "phantom_ttt(obstype=reveal-numturns)",
    "tic_tac_toe",
])
def test_no_kernel_for_uncovered_games(game_string):
    assert kernels.information_kernel_for(pyspiel.load_game(game_string)) is None
