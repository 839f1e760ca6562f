"""SM-OOS, the AIJ 2016 study's Online Outcome Sampling for simultaneous-move games."""

import numpy as np
import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import bot_specs, match, tournament
from smmcts_spiel.bots import SMOOSBot
from smmcts_spiel.exact import exploitability, solver
from smmcts_spiel.experiments.online import online_exploitability
from smmcts_spiel.games.biased_rps import EQUILIBRIUM
from smmcts_spiel.imperfect.sm_oos import PRESETS, SMOOS


def _move_values(state: pyspiel.State, value) -> np.ndarray:
    """Player 1's ``value`` of the child after each joint move at a simultaneous
    ``state``, rows player 1's moves."""
    rows, cols = state.legal_actions(0), state.legal_actions(1)
    values = np.zeros((len(rows), len(cols)))
    for r, row in enumerate(rows):
        for c, col in enumerate(cols):
            child = state.clone()
            child.apply_actions([row, col])
            values[r, c] = value(child)
    return values


def _stage_nash_conv(values: np.ndarray, search: SMOOS, state: pyspiel.State) -> float:
    """NashConv of the search's strategies at ``state`` in the matrix game ``values`` of
    its moves (player 1's): max_r (A y)_r - min_c (x A)_c."""
    x, y = (np.array(search.average_strategy(state, p)[1]) for p in (0, 1))
    return float((values @ y).max() - (x @ values).min())


def _root_nash_conv(game: pyspiel.Game, search: SMOOS) -> float:
    """NashConv of the root strategies of a one-shot game, from the payoffs OpenSpiel's
    game gives (no code of ours)."""
    root = game.new_initial_state()
    return _stage_nash_conv(_move_values(root, lambda child: child.returns()[0]), search,
                            root)


#: A zero-sum matrix game of value 15/7 whose equilibrium is mixed and not uniform (rows
#: (3/7, 4/7), columns (2/7, 5/7)): a regret update off by a factor per action (a missing
#: importance weight) moves its fixed point, which games of value 0 would not show.
SHIFTED = [[5.0, 1.0], [0.0, 3.0]]


@pytest.mark.parametrize("name, iterations, bound", [
    ("matrix_mp", 20000, 0.05),      # matching pennies, payoffs +-1
    ("matrix_rps", 20000, 0.05),
    ("shifted", 20000, 0.15),  # payoffs up to 5
    ("smmcts_biased_rps", 30000, 1.0),  # payoffs up to 50
])
def test_the_root_strategy_of_a_matrix_game_has_a_low_nash_conv(name, iterations, bound):
    game = (pyspiel.create_matrix_game(SHIFTED, [[-u for u in row] for row in SHIFTED])
            if name == "shifted" else pyspiel.load_game(name))
    search = SMOOS(game, seed=0)
    search.run(1000)
    early = _root_nash_conv(game, search)
    search.run(iterations)
    assert _root_nash_conv(game, search) < bound < early


def test_the_average_strategy_of_biased_rps_is_its_equilibrium():
    game = pyspiel.load_game("smmcts_biased_rps")
    search = SMOOS(game, seed=0)
    search.run(30000)
    state = game.new_initial_state()
    for player in (0, 1):
        actions, strategy = search.average_strategy(state, player)
        assert actions == [0, 1, 2]
        assert strategy == pytest.approx(list(EQUILIBRIUM), abs=0.03)


@pytest.mark.parametrize("name", [
    "goofspiel(num_cards=4,imp_info=False,points_order=descending)",
    "oshi_zumo(coins=5,size=2,horizon=10,min_bid=1)",
])
def test_nash_conv_of_the_whole_game_falls_towards_zero(name):
    game = pyspiel.load_game(name)
    search = SMOOS(game, seed=1)
    search.run(2000)
    early = exploitability.evaluate(game, search.policy()).nash_conv
    search.run(48000)
    late = exploitability.evaluate(game, search.policy()).nash_conv
    assert late < 0.1 < early


def test_a_search_from_a_later_state_solves_the_subgame_below_it():
    """The counterfactual values are the subgame's, as if the game started at the root
    given: its strategies there approach an equilibrium of the subgame (the exact solver's
    values of the moves)."""
    game = pyspiel.load_game("oshi_zumo(coins=5,size=2,horizon=10,min_bid=1)")
    solution = solver.solve(game)
    state = game.new_initial_state()
    state.apply_actions([1, 2])
    search = SMOOS(game, seed=4)
    search.set_root(state)
    values = _move_values(state, solution.state_value)
    search.run(500)
    early = _stage_nash_conv(values, search, state)
    search.run(20000)
    assert _stage_nash_conv(values, search, state) < 0.05 < early


def test_an_exact_evaluation_in_place_of_the_playout_solves_the_root():
    """With the exact value as its evaluation function (the paper's Section 5.2 variant),
    the root strategies approach the root's equilibrium; a sign error for player 2's
    utility would drive them away from it."""
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False,points_order=descending)")
    solution = solver.solve(game)
    calls = []

    def exact(state):
        calls.append(state.is_terminal())
        return solution.state_value(state)

    search = SMOOS(game, evaluator=exact, seed=8)
    root = game.new_initial_state()
    values = _move_values(root, solution.state_value)
    search.run(300)
    early = _stage_nash_conv(values, search, root)
    search.run(5000)
    assert _stage_nash_conv(values, search, root) < 0.05 < early
    assert calls and not any(calls)  # terminal states are not evaluated
    pursuit = pyspiel.load_game("smmcts_pursuit_evasion")
    bot = SMOOSBot(pursuit, 0, iterations=50, evaluator="heuristic", seed=7)
    state = pursuit.new_initial_state()
    assert bot.step_with_policy(state)[1] in state.legal_actions(0)


def test_a_new_root_keeps_the_tree_below_it_and_drops_the_rest():
    game = pyspiel.load_game("oshi_zumo(coins=5,size=2,horizon=10,min_bid=1)")
    search = SMOOS(game, seed=2)
    search.run(3000)
    child = game.new_initial_state()
    child.apply_actions([1, 2])
    below = {k: nodes for k, nodes in search.tree.items() if k[:2] == (1, 2)}
    assert below and len(below) < len(search.tree)
    search.set_root(child)
    assert search.tree == below
    before = search.average_strategy(child, 0)
    search.run(10)
    assert search.root.history() == [1, 2] and search.average_strategy(child, 0) != before


def test_the_same_seed_builds_the_same_tree_and_another_seed_another():
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False)")

    def tables(seed):
        search = SMOOS(game, seed=seed)
        search.run(500)
        return {k: [(n.regrets, n.strategy_sums) for n in nodes if n is not None]
                for k, nodes in search.tree.items()}

    assert tables(5) == tables(5) != tables(6)


def test_the_bot_plays_by_spec_reproducibly_in_matches_and_round_robins():
    game = pyspiel.load_game("oshi_zumo(coins=6,size=2,horizon=12,min_bid=1)")
    first = match.play_match(game, "sm_oos(iterations=300)", "random", 4, progress=False)
    again = match.play_match(game, "sm_oos(iterations=300)", "random", 4, progress=False)
    assert first.returns == again.returns
    goofspiel = pyspiel.load_game("goofspiel(num_cards=5,imp_info=False)")
    result = match.play_match(goofspiel, "sm_oos(time_limit=0.02,evaluator=goofspiel)",
                              "sm_oos(iterations=200,epsilon=0.3)", 2, progress=False)
    assert len(result.returns) == 2
    jobs = tournament.tournament_jobs(["goofspiel(num_cards=4,imp_info=False)"],
                                      ["sm_oos(iterations=100)", "random"], 2, 2, seed=0)
    for job in jobs.values():
        assert len(match.play_games(**job)) == 2
    assert bot_specs.with_time_limit("sm_oos", 0.1) == "sm_oos(time_limit=0.1)"
    bot = bot_specs.make_bot("sm_oos(time_limit=0.1)", game, 0, 0)
    assert isinstance(bot, SMOOSBot) and bot.iterations is None
    assert bot.search.epsilon == PRESETS["paper"]["epsilon"]
    assert bot_specs.make_bot("sm_oos(epsilon=0.2)", game, 0, 0).search.epsilon == 0.2


def test_the_bots_strategy_is_the_searchs_average_at_its_state():
    game = pyspiel.load_game("smmcts_biased_rps")
    bot = SMOOSBot(game, 1, iterations=5000, seed=3)
    policy, action = bot.step_with_policy(game.new_initial_state())
    actions, probs = bot.search.average_strategy(game.new_initial_state(), 1)
    assert policy == list(zip(actions, probs)) and action in actions
    assert bot.policy().action_probabilities(game.new_initial_state(), 1) == dict(policy)


@pytest.mark.parametrize("spec, game, message", [
    ("sm_oos", "goofspiel(num_cards=4,imp_info=True)",
     "perfect information between stages.*use oos"),
    ("sm_oos(epsilon=0)", "oshi_zumo", "epsilon must be above 0"),
    ("sm_oos(epsilon=1.5)", "oshi_zumo", "epsilon must be a probability"),
    ("sm_oos(evaluator=heuristic)", "blotto",
     "no heuristic evaluation function.*or evaluator=random_rollout"),
    ("sm_oos(evaluator=rollout)", "oshi_zumo", "must be one of random_rollout"),
    ("sm_oos(evaluator=goofspiel)", "oshi_zumo", "evaluates goofspiel states"),
    ("sm_oos(preset=aamas)", "oshi_zumo", "preset must be one of paper"),
    ("sm_oos(iterations=0)", "oshi_zumo", "iterations must be"),
])
def test_bad_input_is_refused_clearly(spec, game, message):
    with pytest.raises(ValueError, match=message):
        bot_specs.check_spec(spec, pyspiel.load_game(game))


def test_the_bot_refuses_states_it_cannot_play():
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False)")
    bot = SMOOSBot(game, 0, iterations=10)
    with pytest.raises(ValueError, match="called at a chance node"):
        bot.step(game.new_initial_state())  # chance deals first
    other = pyspiel.load_game("goofspiel(num_cards=5,imp_info=False)")
    with pytest.raises(ValueError, match="SMOOSBot"):
        bot.step(other.new_initial_state())
    sequential = pyspiel.load_game("tic_tac_toe")
    with pytest.raises(ValueError, match=r"\(player 1\) has no move here: it is player 0's turn"):
        SMOOSBot(sequential, 1, iterations=10).step(sequential.new_initial_state())


def test_the_strategy_the_bot_plays_move_by_move_approaches_an_equilibrium():
    """The exact exploitability of its answers at every decision point (each a fresh search
    from that point, the study's online setting) falls with the iterations per move."""
    game = "goofspiel(num_cards=3,imp_info=False,points_order=descending)"
    few, many = (online_exploitability(game, f"sm_oos(iterations={n})", samples=4, seed=0,
                                       progress=False).nash_conv for n in (200, 5000))
    assert many < 0.02 < few
