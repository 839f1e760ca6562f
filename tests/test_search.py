"""The SM-MCTS engine: Alg. 1 updates, convergence to known equilibria, tree bookkeeping."""

import pyspiel
import pytest

from smmcts_spiel.search.evaluators import RandomRolloutEvaluator
from smmcts_spiel.search.smmcts import SMMCTS

BIASED_RPS = pyspiel.create_matrix_game(
    "biased_rps", "Biased RPS", ["R", "P", "S"], ["R", "P", "S"],
    [[0, -2, 1], [2, 0, -1], [-1, 1, 0]], [[0, 2, -1], [-2, 0, 1], [1, -1, 0]])
# (game, player 1's equilibrium, player 2's equilibrium), each unique.
KNOWN_EQUILIBRIA = {
    "matching_pennies": (pyspiel.load_game("matrix_mp"), [0.5, 0.5], [0.5, 0.5]),
    "rock_paper_scissors": (pyspiel.load_game("matrix_rps"), [1 / 3] * 3, [1 / 3] * 3),
    # By hand: (1/4, 1/4, 1/2) makes the opponent indifferent, for both players.
    "biased_rps": (BIASED_RPS, [0.25, 0.25, 0.5], [0.25, 0.25, 0.5]),
}
# Max deviation of the root empirical frequencies after 20,000 iterations (seeds 0-4).
# Over seeds 0-39 (one draw per expansion, 24 Nov 2026) RM deviated at most 0.014 and Exp3
# at most 0.056 (90% quantile 0.035; seed 0 on RPS gives 0.053).
BOUNDS = {"rm": 0.02, "rmm": 0.02, "exp3": 0.06, "exp3m": 0.06}


@pytest.mark.parametrize("selector", sorted(BOUNDS))
@pytest.mark.parametrize("game_name", sorted(KNOWN_EQUILIBRIA))
def test_root_frequencies_approach_the_equilibrium(game_name, selector):
    game, eq1, eq2 = KNOWN_EQUILIBRIA[game_name]
    for seed in range(5):
        root = SMMCTS(game, selector=selector, seed=seed).run(game.new_initial_state(), 20_000)
        deviation = max(max(abs(a - b) for a, b in zip(root.strategy(0), eq1)),
                        max(abs(a - b) for a, b in zip(root.strategy(1), eq2)))
        assert deviation < BOUNDS[selector], (seed, root.strategy(0), root.strategy(1))


@pytest.mark.parametrize("selector", ["ucb", "ucbm"])
def test_ucb_runs_but_has_no_convergence_guarantee(selector):
    # Decoupled UCT need not reach Nash (Shafiei et al. 2009); we only require it to run.
    game = pyspiel.load_game("matrix_rps")
    root = SMMCTS(game, selector=selector, seed=0).run(game.new_initial_state(), 2_000)
    assert sum(root.strategy(0)) == pytest.approx(1.0)


def test_regret_update_uses_child_means_for_actions_not_played():
    # Matching pennies in OpenSpiel: player 1 gets +1 on the diagonal, -1 off it.
    game = pyspiel.load_game("matrix_mp")
    search = SMMCTS(game, selector="rm", seed=3)
    root = search.run(game.new_initial_state(), 4)  # the four expansions
    assert root.untried == 0 and all(c.visits == 1 for c in root.children)
    before1 = list(root.selectors[0].regrets)
    before2 = list(root.selectors[1].regrets)
    # Suppose (row 0, column 1) was sampled and returned u1 = -1 (its exact value).
    search._update(root, 0, 1, -1.0)
    # Player 1: row 1 against column 1 has child mean +1, so its regret grows by 1 - (-1).
    assert root.selectors[0].regrets == pytest.approx([before1[0], before1[1] + 2.0])
    # Player 2 (reward -u1 = 1): column 0 against row 0 has mean +1, i.e. reward -1.
    assert root.selectors[1].regrets == pytest.approx([before2[0] - 2.0, before2[1]])
    # Each expansion counted one action per player; the update counts one more each.
    assert root.counts == ([3, 2], [2, 3])


def test_mean_propagation_changes_what_the_parents_learn():
    game = pyspiel.load_game("goofspiel(num_cards=3,imp_info=False,points_order=descending)")
    plain = SMMCTS(game, selector="rm", seed=1).run(game.new_initial_state(), 3_000)
    mean = SMMCTS(game, selector="rmm", seed=1).run(game.new_initial_state(), 3_000)
    assert plain.selectors[0].regrets != pytest.approx(mean.selectors[0].regrets)


def test_same_seed_same_tree():
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False)")
    roots = [SMMCTS(game, selector="exp3", seed=9).run(game.new_initial_state(), 500)
             for _ in range(2)]
    assert roots[0].total == roots[1].total
    assert roots[0].children.keys() == roots[1].children.keys()


def test_tree_is_reused_along_the_actual_history():
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False,points_order=descending)")
    search = SMMCTS(game, selector="rm", seed=0)
    state = game.new_initial_state()
    root = search.run(state, 2_000)
    state.apply_actions([0, 1])
    child = root.child((0, 1))
    visits_before = child.visits
    assert search.run(state, 10) is child
    assert child.visits > visits_before
    # An unrelated state starts a fresh tree.
    assert search.set_root(game.new_initial_state()) is not root


def test_policy_is_the_tree_strategy_and_uniform_off_tree():
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False,points_order=descending)")
    search = SMMCTS(game, selector="rm", seed=0, final_strategy="average")
    state = game.new_initial_state()
    root = search.run(state, 1_000)
    policy = search.policy()
    assert list(policy.action_probabilities(state, 1).values()) == pytest.approx(
        root.strategy(1, "average"))
    far = game.new_initial_state()
    for _ in range(2):
        far.apply_actions([far.legal_actions(0)[0], far.legal_actions(1)[-1]])
    shallow = SMMCTS(game, selector="rm", seed=0)
    shallow.run(state, 20)  # 16 expansions at the root, 4 one level down
    assert shallow.find(far) is None
    assert list(shallow.policy().action_probabilities(far, 0).values()) == [0.5, 0.5]


def test_chance_nodes_are_sampled_by_their_probabilities():
    game = pyspiel.load_game("goofspiel(num_cards=3,imp_info=False,points_order=random)")
    root = SMMCTS(game, selector="rm", seed=0).run(game.new_initial_state(), 3_000)
    assert root.is_chance
    shares = [root.children[a].visits / root.visits for a, _ in root.chance_outcomes]
    assert shares == pytest.approx([1 / 3] * 3, abs=0.03)


def test_accepts_an_openspiel_evaluator():
    import numpy as np
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("matrix_rps")
    evaluator = mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(0))
    root = SMMCTS(game, evaluator=evaluator, seed=0).run(game.new_initial_state(), 100)
    assert root.visits > 0


@pytest.mark.parametrize(
    "game_string, message",
    [("kuhn_poker", "imperfect information"), ("matrix_pd", "zero-sum"),
     ("goofspiel(players=3)", "two-player")],
)
def test_unsupported_games_are_refused(game_string, message):
    with pytest.raises(ValueError, match=message):
        SMMCTS(pyspiel.load_game(game_string))


def test_bad_budgets_and_terminal_states():
    game = pyspiel.load_game("matrix_mp")
    search = SMMCTS(game)
    with pytest.raises(ValueError, match="iterations must be a positive integer"):
        search.run(game.new_initial_state(), 0)
    with pytest.raises(ValueError, match="time_limit"):
        search.run(game.new_initial_state(), None, -1.0)
    state = game.new_initial_state()
    state.apply_actions([0, 0])
    with pytest.raises(ValueError, match="terminal"):
        search.run(state, 10)
    with pytest.raises(ValueError, match="final_strategy"):
        SMMCTS(game, final_strategy="best")
    with pytest.raises(ValueError, match="n_rollouts"):
        RandomRolloutEvaluator(0)


def test_time_limit_alone_stops_the_search():
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False)")
    root = SMMCTS(game, seed=0).run(game.new_initial_state(), None, 0.2)
    assert root.visits > 0


def test_same_search_on_our_goofspiel_and_openspiels():
    # Identical games and seeds give identical trees; this also runs rollouts through a
    # Python-defined simultaneous game (which takes per-player, not flat joint, actions).
    import smmcts_spiel  # noqa: F401

    roots = [SMMCTS(pyspiel.load_game(name), selector="rm", seed=5).run(
        pyspiel.load_game(name).new_initial_state(), 3_000)
        for name in ("goofspiel(num_cards=4,points_order=descending,imp_info=False)",
                     "smmcts_goofspiel(num_cards=4,points_order=descending)")]
    assert roots[0].strategy(0) == roots[1].strategy(0)
    assert roots[0].strategy(1) == roots[1].strategy(1)
    assert roots[0].total == roots[1].total
