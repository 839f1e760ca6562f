"""SMMCTSBot as an OpenSpiel bot: plays OpenSpiel's games through evaluate_bots."""

import gc
import logging
import weakref

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import mcts
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import exploitability, solver
from smmcts_spiel.games import kernels
from smmcts_spiel.search.smmcts import reward_range

SELECTORS = ["rm", "rmm", "exp3", "exp3m", "ucb", "ucbm"]


def play(game, bots, seed):
    return evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(seed))


@pytest.mark.parametrize("game_string", [
    "goofspiel(num_cards=3,imp_info=False,points_order=descending)",
    "goofspiel(num_cards=4,imp_info=False,points_order=random)",
    "goofspiel(num_cards=5,imp_info=False,points_order=ascending,returns_type=point_difference)",
    "oshi_zumo(coins=10,size=2)",
    "matrix_rps",
    "matrix_mp",
    "tic_tac_toe",
])
@pytest.mark.parametrize("selector", ["rm", "exp3m", "ucb"])
@pytest.mark.parametrize("engine", ["auto", "generic"])  # auto: the kernel where there is one
def test_plays_full_games_through_evaluate_bots(game_string, selector, engine):
    game = pyspiel.load_game(game_string)
    bots = [SMMCTSBot(game, 0, selector=selector, iterations=100, seed=1, engine=engine),
            SMMCTSBot(game, 1, selector=selector, iterations=100, seed=2, engine=engine)]
    returns = play(game, bots, 0)
    assert sum(returns) == pytest.approx(game.utility_sum())


@pytest.mark.parametrize("engine", ["auto", "generic", "reference"])  # auto: the kernel
def test_same_seed_same_actions(engine):
    game = pyspiel.load_game("goofspiel(num_cards=5,imp_info=False)")

    def actions(seed):
        bots = [SMMCTSBot(game, p, selector="exp3", iterations=200, seed=seed + p,
                          engine=engine) for p in (0, 1)]
        state = game.new_initial_state()
        rng = np.random.RandomState(0)
        taken = []
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choice(outcomes, p=probs))
            else:
                joint = [bot.step(state) for bot in bots]
                taken.append(joint)
                state.apply_actions(joint)
        return taken

    assert actions(3) == actions(3)


@pytest.mark.parametrize("engine", ["auto", "generic", "reference"])  # auto: the kernel
def test_a_dropped_bot_is_freed_without_the_cycle_collector(engine):
    # The compiled engines freeze the objects alive when they load (gc.freeze): a search
    # in a reference cycle would never be reclaimed, and full collections are what they
    # keep out of timed moves.
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False,points_order=descending)")
    bot = SMMCTSBot(game, 0, iterations=50, seed=0, engine=engine)
    bot.step(game.new_initial_state())
    search = weakref.ref(bot.search)
    gc.disable()
    try:
        del bot
        assert search() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("engine", ["auto", "generic", "reference"])  # auto: the kernel
def test_a_forced_move_is_played_without_a_search_and_the_tree_kept(engine):
    # A 2x2 stage, then in every branch one where player 1 (seat 0) has a single action and
    # player 2 two, then a 2x2 stage again.
    forced = "[[ [[1 0] [0 1]] [[0 1] [1 0]] ]]"
    game = pyspiel.load_game(f"smmcts_matrix_tree(tree=[[{forced} {forced}] "
                             f"[{forced} {forced}]])")
    bot = SMMCTSBot(game, 0, iterations=2_000, seed=0, engine=engine)
    state = game.new_initial_state()
    bot.restart_at(state)
    first = bot.step(state)
    state.apply_actions([first, 1])
    assert state.legal_actions(0) == [0] and len(state.legal_actions(1)) == 2
    searched = bot.search.find(state).visits  # what the first move's search left here
    policy, action = bot.step_with_policy(state)
    assert (policy, action) == ([(0, 1.0)], 0)
    assert bot.search.find(state).visits == searched  # no iteration spent on it
    state.apply_actions([0, 1])
    kept = bot.search.find(state).visits
    assert kept > 0
    assert bot.step(state) in (0, 1)
    # The subtree the first search grew below the forced move is where the search went on.
    assert bot.search.root.visits > kept


def test_step_with_policy_reports_the_final_strategy():
    game = pyspiel.load_game("matrix_rps")
    bot = SMMCTSBot(game, 1, iterations=3_000, seed=0)
    policy, action = bot.step_with_policy(game.new_initial_state())
    assert [a for a, _ in policy] == [0, 1, 2]
    assert sum(p for _, p in policy) == pytest.approx(1.0)
    assert all(abs(p - 1 / 3) < 0.05 for _, p in policy)
    assert action in (0, 1, 2) and bot.provides_policy()


@pytest.mark.parametrize("engine", ["kernel", "generic", "reference"])
def test_threshold_drops_the_unlikely_actions_from_play_and_policy(engine):
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False,points_order=descending,"
                             "returns_type=win_loss)")
    state = game.new_initial_state()
    plain = SMMCTSBot(game, 0, iterations=300, seed=3, engine=engine, threshold=0.0)
    thresholded = SMMCTSBot(game, 0, iterations=300, seed=3, engine=engine, threshold=0.3)
    probs = [p for _, p in plain.step_with_policy(state)[0]]
    policy, action = thresholded.step_with_policy(state)
    # Same seed, same search: the thresholded strategy is the plain one cut at 0.3.
    kept = [p if p >= 0.3 else 0.0 for p in probs]
    assert [p for _, p in policy] == pytest.approx([k / sum(kept) for k in kept])
    assert dict(policy)[action] > 0
    assert thresholded.played_policy().action_probabilities(state, 0) == pytest.approx(
        dict(policy))
    # policy() is the search's own strategy, the same as the unthresholded bot's.
    assert thresholded.policy().action_probabilities(state, 0) == pytest.approx(
        dict(zip(dict(policy), probs)))


def test_policy_is_the_searchs_converging_strategy_and_played_policy_the_thresholded():
    # Biased rock-paper-scissors (utilities in [-50, 50]): the equilibrium plays rock 1/16,
    # which the default final-move threshold (0.1) drops from play; what the search
    # computes still converges to the equilibrium, and policy() is that.
    game = pyspiel.load_game("matrix_brps")
    state = game.new_initial_state()
    equilibrium = solver.solve(game).action_probabilities(state, 0)
    nash_conv = {}
    for iterations in (3_000, 100_000):
        bot = SMMCTSBot(game, 0, iterations=iterations, seed=0)
        reported = dict(bot.step_with_policy(state)[0])
        nash_conv[iterations] = exploitability.evaluate(game, bot.policy()).nash_conv
    assert nash_conv[100_000] < min(nash_conv[3_000], 0.25)  # 0.25% of the range
    assert bot.policy().action_probabilities(state, 0) == pytest.approx(equilibrium, abs=0.01)
    played = bot.played_policy().action_probabilities(state, 0)
    assert played[0] == 0.0
    assert exploitability.evaluate(game, bot.played_policy()).nash_conv > 5.0
    assert played == pytest.approx(reported)


def test_policy_export_covers_both_players():
    game = pyspiel.load_game("matrix_mp")
    bot = SMMCTSBot(game, 0, iterations=500, seed=0)
    bot.step(game.new_initial_state())
    probs = bot.policy().action_probabilities(game.new_initial_state(), 1)
    assert sum(probs.values()) == pytest.approx(1.0)


def test_bad_input_is_refused_clearly():
    game = pyspiel.load_game("matrix_mp")
    with pytest.raises(ValueError, match="unknown selector"):
        SMMCTSBot(game, 0, selector="cfr")
    with pytest.raises(ValueError, match="gamma"):
        SMMCTSBot(game, 0, gamma=0)
    for threshold in (-0.1, 1.0, "0.1"):
        with pytest.raises(ValueError, match="threshold must be a probability"):
            SMMCTSBot(game, 0, threshold=threshold)
    with pytest.raises(ValueError, match="iterations must be a positive integer"):
        SMMCTSBot(game, 0, iterations=-5)
    with pytest.raises(ValueError, match="time_limit"):
        SMMCTSBot(game, 0, time_limit=0)
    with pytest.raises(ValueError, match="player_id"):
        SMMCTSBot(game, 2)
    with pytest.raises(ValueError, match="zero-sum.*general-sum.*MCTSBot"):
        SMMCTSBot(pyspiel.load_game("matrix_pd"), 0)
    with pytest.raises(ValueError, match=r"two-player.*3 players \(load it with players=2\)"):
        SMMCTSBot(pyspiel.load_game("goofspiel(players=3)"), 0)
    with pytest.raises(ValueError, match=r"general-sum \(load it with zero_sum=true"):
        SMMCTSBot(pyspiel.load_game("laser_tag"), 0)
    state = game.new_initial_state()
    state.apply_actions([0, 1])
    with pytest.raises(ValueError, match="terminal"):
        SMMCTSBot(game, 0).step(state)
    ttt = pyspiel.load_game("tic_tac_toe")
    with pytest.raises(ValueError, match="player 0's turn"):
        SMMCTSBot(ttt, 1).step(ttt.new_initial_state())


def wins_and_losses_against_random(game, selector, num_games, iterations=500):
    # For scale: the exact equilibrium of this game scores +0.59 a game against random.
    wins = losses = 0
    for k in range(num_games):
        seat = k % 2
        bots = [None, None]
        bots[seat] = SMMCTSBot(game, seat, selector=selector, iterations=iterations, seed=k)
        bots[1 - seat] = pyspiel.make_uniform_random_bot(1 - seat, 1000 + k)
        result = play(game, bots, k)[seat]
        wins += result > 0
        losses += result < 0
    return wins, losses


@pytest.mark.parametrize("selector", SELECTORS)
def test_every_selector_beats_random_at_goofspiel_quick(selector):
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False)")
    wins, losses = wins_and_losses_against_random(game, selector, 20)
    assert wins >= 11 and wins >= 2 * losses


@pytest.mark.slow
@pytest.mark.parametrize("selector", SELECTORS)
def test_every_selector_beats_random_at_goofspiel(selector):
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False)")
    wins, losses = wins_and_losses_against_random(game, selector, 100, iterations=1_000)
    assert wins >= 55 and wins >= 2 * losses


def ucb_never_loses_to_random_as_first_player(num_games):
    game = pyspiel.load_game("tic_tac_toe")
    for k in range(num_games):
        bots = [SMMCTSBot(game, 0, selector="ucb", iterations=1_000, seed=k),
                pyspiel.make_uniform_random_bot(1, k)]
        assert play(game, bots, k)[0] >= 0, f"lost game {k}"


def test_ucb_never_loses_tic_tac_toe_to_random_quick():
    ucb_never_loses_to_random_as_first_player(10)


@pytest.mark.slow
def test_ucb_never_loses_tic_tac_toe_to_random():
    ucb_never_loses_to_random_as_first_player(100)


@pytest.mark.slow
def test_ucb_holds_its_own_against_openspiel_mcts_at_tic_tac_toe():
    game = pyspiel.load_game("tic_tac_toe")
    not_lost = 0
    num_games = 40
    for k in range(num_games):
        seat = k % 2
        ours = SMMCTSBot(game, seat, selector="ucb", iterations=1_000, seed=k)
        rng = np.random.RandomState(k)
        theirs = mcts.MCTSBot(game, 2.0, 1_000, mcts.RandomRolloutEvaluator(random_state=rng),
                              random_state=rng)
        bots = [ours, theirs] if seat == 0 else [theirs, ours]
        not_lost += play(game, bots, k)[seat] >= 0
    assert not_lost >= 0.8 * num_games


def test_per_game_defaults_apply_and_explicit_settings_win():
    from smmcts_spiel.bots.smmcts_bot import BASE_DEFAULTS, GAME_DEFAULTS

    game = pyspiel.load_game("markov_soccer(horizon=10)")
    chosen = GAME_DEFAULTS[game.get_type().short_name]
    search = SMMCTSBot(game, 0, iterations=10, seed=0).search
    for key, value in {**BASE_DEFAULTS, **chosen}.items():
        if value is not None:
            assert getattr(search, key) == value, key
    # Every setting given explicitly overrides the game's default, one at a time.
    other = {"selector": "exp3", "final_strategy": "average", "threshold": 0.05}
    for key, value in other.items():
        assert getattr(SMMCTSBot(game, 0, iterations=10, seed=0, **{key: value}).search,
                       key) == value
    # A game without an entry gets the base defaults.
    plain = SMMCTSBot(pyspiel.load_game("matrix_mp"), 0, iterations=10, seed=0).search
    assert (plain.selector, plain.final_strategy, plain.threshold) == (
        BASE_DEFAULTS["selector"], BASE_DEFAULTS["final_strategy"], BASE_DEFAULTS["threshold"])


@pytest.mark.parametrize("game_string, engine", [
    ("blotto(coins=30,fields=5)", "ArraySMMCTS"),  # no kernel; a root too wide to open
    ("blotto(coins=20,fields=4)", "ArraySMMCTS"),  # the kernel needs 6.1 GB: generic
    ("blotto(coins=10,fields=3)", "KernelSMMCTS"),  # the kernel fits: kept
])
def test_the_default_bot_plays_every_game(game_string, engine, caplog):
    """blotto(coins=30,fields=5) used to fail ("only decision nodes the search has opened
    ... have strategies") and blotto(coins=20,fields=4) to be refused on a max_memory the
    user never set."""
    game = pyspiel.load_game(game_string)
    with caplog.at_level(logging.WARNING):
        bot = SMMCTSBot(game, 0, iterations=50, seed=0)
        assert type(bot.search).__name__ == engine
        state = game.new_initial_state()
        policy, action = bot.step_with_policy(state)
    assert action in state.legal_actions(0)
    assert [a for a, _ in policy] == state.legal_actions(0)
    assert sum(p for _, p in policy) == pytest.approx(1.0)
    if game_string.startswith("blotto(coins=30"):  # the search's strategy there: uniform
        assert set(p for _, p in policy) == {1 / len(policy)}
        assert "reached max_memory" in caplog.text
    if game_string.startswith("blotto(coins=20"):
        assert "the generic engine searches it" in caplog.text
    # An explicit kernel engine is refused with the minimum it needs.
    if engine == "ArraySMMCTS" and kernels.kernel_for(game) is not None:
        with pytest.raises(ValueError, match="max_memory"):
            SMMCTSBot(game, 0, engine="kernel")


ROW_PAYOFFS = np.array([[3.0, 1.0], [2.0, 4.0]])


@pytest.mark.parametrize("selector", SELECTORS)
@pytest.mark.parametrize("engine", ["auto", "generic"])  # auto: the normal-form kernel
def test_a_constant_sum_game_is_searched_as_its_zero_sum_version(selector, engine):
    """Player 2 paid 100 - A: pyspiel's utility range is both players' hull [1, 99], which
    squeezed player 1's rewards into 3% of [0, 1] (Exp3 played [0.058, 0.942], UCB [0.341,
    0.659]); the selectors' rewards now map each player's own range onto [0, 1]."""
    constant = pyspiel.create_matrix_game(ROW_PAYOFFS.tolist(), (100 - ROW_PAYOFFS).tolist())
    zero = pyspiel.create_matrix_game(ROW_PAYOFFS.tolist(), (-ROW_PAYOFFS).tolist())
    assert reward_range(constant) == (1.0, 4.0)
    state = constant.new_initial_state()
    solution = solver.solve(constant).state_solution(state)
    assert solution.value == pytest.approx(solver.solve(zero).value)
    # The equilibrium (the zero-sum version's): row [0.5, 0.5], column [0.75, 0.25].
    assert solution.strategies == solver.solve(zero).state_solution(
        zero.new_initial_state()).strategies
    bot = SMMCTSBot(constant, 0, selector=selector, iterations=20_000, seed=0, threshold=0.0,
                    engine=engine)
    bot.step(state)
    for player in (0, 1):
        assert bot.policy().action_probabilities(state, player) == pytest.approx(
            solution.strategies[player], abs=0.06), player
