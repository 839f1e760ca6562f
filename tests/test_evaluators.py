"""Leaf evaluators: the interface, exact values where the game is decided, and accuracy
against the exact solver's values (an independent check of the heuristics)."""

import numpy as np
import pyspiel
import pytest

from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import solver
from smmcts_spiel.search import evaluators

GOOF_WL = "goofspiel(num_cards=4,imp_info=False,points_order=random,returns_type=win_loss)"
GOOF_PD = "goofspiel(num_cards=4,imp_info=False,points_order=descending," \
          "returns_type=point_difference)"
OSHI = "oshi_zumo(coins=5,size=2,horizon=10)"


def decision_states(game, limit=3000):
    """Decision states of ``game``, one per transposition class, depth first."""
    key = solver.transposition_key(game)
    seen, stack, out = set(), [game.new_initial_state()], []
    while stack and len(out) < limit:
        state = stack.pop()
        if state.is_terminal() or (state.is_chance_node(), key(state)) in seen:
            continue
        seen.add((state.is_chance_node(), key(state)))
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        out.append(state)
        for a in state.legal_actions(0):
            for b in state.legal_actions(1):
                child = state.clone()
                child.apply_actions([a, b])
                stack.append(child)
    return out


@pytest.mark.parametrize("name", [GOOF_WL, GOOF_PD, OSHI])
def test_game_aware_evaluators_beat_a_rollout_at_predicting_exact_values(name):
    game = pyspiel.load_game(name)
    solution = solver.solve(game)
    states = decision_states(game)
    exact = np.array([solution.state_value(s) for s in states])
    aware = evaluators.make_evaluator(evaluators.game_aware_evaluator(game), game)
    rollout = evaluators.make_evaluator("rollout", game, seed=0)
    values = np.array([aware.evaluate(s) for s in states])
    sampled = np.array([rollout.evaluate(s)[0] for s in states])
    assert np.allclose(values.sum(axis=1), game.utility_sum())  # both players' values
    assert np.abs(values[:, 0]).max() <= game.max_utility() + 1e-12
    assert np.corrcoef(values[:, 0], exact)[0, 1] > np.corrcoef(sampled, exact)[0, 1]


def test_goofspiel_evaluator_reads_points_and_hands():
    game = pyspiel.load_game(GOOF_PD)
    evaluator = evaluators.GoofspielEvaluator(game, hand_weight=0.0)
    state = game.new_initial_state()
    state.apply_actions([3, 0])  # player 1 wins the 4 with its 4
    # Without the hands' weight the prizes left split evenly: half of 4 - 0 points.
    assert evaluator.evaluate(state) == [2.0, -2.0]
    # Player 1 keeps {1,2,3} against {2,3,4}: the weaker hand lowers its expectation.
    assert evaluators.GoofspielEvaluator(game).evaluate(state)[0] < 2.0
    while not state.is_terminal():
        state.apply_actions([state.legal_actions(0)[0], state.legal_actions(1)[0]])
    assert evaluator.evaluate(state) == state.returns()


def test_oshi_zumo_evaluator_sees_a_broke_opponent_lose():
    game = pyspiel.load_game("oshi_zumo(coins=4,size=1,horizon=10)")
    evaluator = evaluators.OshiZumoEvaluator(game)
    state = game.new_initial_state()
    state.apply_actions([0, 4])  # player 2 spends everything and pushes one step
    c0, c1, offset = evaluator.features(state)
    assert (c0, c1, offset) == (4, 0, -1)
    assert evaluator.evaluate(state) == [1.0, -1.0]  # 4 coins buy the 3 steps to the edge
    assert solver.solve(game).state_value(state) == 1.0  # the exact solver agrees


@pytest.mark.parametrize("factory, game, message", [
    (evaluators.GoofspielEvaluator, "oshi_zumo", "goofspiel"),
    (evaluators.GoofspielEvaluator, "goofspiel(num_cards=4,imp_info=True)", "imp_info=False"),
    (evaluators.GoofspielEvaluator, "goofspiel(num_cards=4,imp_info=False,"
     "returns_type=total_points)", "zero-sum"),
    (evaluators.OshiZumoEvaluator, "matrix_mp", "oshi_zumo"),
    (evaluators.OshiZumoEvaluator, "oshi_zumo(alesia=True)", "alesia"),
])
def test_evaluators_refuse_games_they_do_not_read(factory, game, message):
    with pytest.raises(ValueError, match=message):
        factory(pyspiel.load_game(game))


def test_make_evaluator_names():
    game = pyspiel.load_game(OSHI)
    with pytest.raises(ValueError, match="evaluator must be one of"):
        evaluators.make_evaluator("nn", game)
    assert isinstance(evaluators.make_evaluator("rollout", game, rollouts=3),
                      evaluators.RandomRolloutEvaluator)
    assert isinstance(evaluators.make_evaluator("oshi_zumo", game),
                      evaluators.OshiZumoEvaluator)


def test_a_users_own_evaluator_plugs_into_the_bot():
    class Counting:
        """Scores every leaf as a draw and counts the calls."""

        calls = 0

        def evaluate(self, state):
            Counting.calls += 1
            return [0.0, 0.0]

        def prior(self, state):
            return []

    game = pyspiel.load_game(OSHI)
    bot = SMMCTSBot(game, 0, iterations=50, seed=0, evaluator=Counting())
    assert bot.step(game.new_initial_state()) in game.new_initial_state().legal_actions(0)
    assert Counting.calls > 0
