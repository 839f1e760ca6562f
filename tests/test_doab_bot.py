"""The study's online DOAB: depth-limited pruned solves, iterative deepening, DOABBot."""

import math

import numpy as np
import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import bot_specs, match, tournament
from smmcts_spiel.bots import DOABBot
from smmcts_spiel.exact import depth_limit, iterative_deepening, solver
from smmcts_spiel.exact.alpha_beta import decision_actions, joint_child
from smmcts_spiel.exact.matrix_game import solve_matrix_game
from smmcts_spiel.exact.pruned_induction import METHODS
from smmcts_spiel.games import simultaneous
from smmcts_spiel.games.kernels import kernel_for
from smmcts_spiel.games.kernels.state_values import KernelStateValue

SMALL_GAMES = (
    "goofspiel(num_cards=4,imp_info=False,points_order=descending)",
    "goofspiel(num_cards=4,imp_info=False)",  # chance deals the prizes
    "oshi_zumo(coins=6,size=2,horizon=12,min_bid=1)",
    "smmcts_oshi_zumo(coins=5,size=2,horizon=10,min_bid=1,returns_type=position)",
    "smmcts_random_stacked_matrix(depth=3,branching=3,seed=4)",
    "smmcts_biased_rps",
)


def _root(game: pyspiel.Game) -> pyspiel.State:
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


def _guarantees(state: pyspiel.State, player: int, strategy: dict, child_value) -> float:
    """The least ``player`` gets from ``strategy`` at ``state`` against any pure reply, the
    children valued by ``child_value`` (player 1's values)."""
    rows, cols = decision_actions(state)
    own, other = (rows, cols) if player == 0 else (cols, rows)
    worst = math.inf
    for b in other:
        total = 0.0
        for a in own:
            child = joint_child(state, a, b) if player == 0 else joint_child(state, b, a)
            total += strategy.get(a, 0.0) * child_value(child)
        worst = min(worst, total if player == 0 else -total)
    return worst


def _limited_value(state: pyspiel.State, depth: int, evaluation) -> float:
    """Backward induction on the game cut off ``depth`` joint moves down, written out here
    (every child, every stage solved): what the pruned depth-limited solves must equal."""
    if state.is_terminal():
        return state.returns()[0]
    if state.is_chance_node():
        return sum(p * _limited_value(state.child(a), depth, evaluation)
                   for a, p in state.chance_outcomes())
    if depth == 0:
        return evaluation(state)
    rows, cols = decision_actions(state)
    matrix = np.array([[_limited_value(joint_child(state, a, b), depth - 1, evaluation)
                        for b in cols] for a in rows])
    return solve_matrix_game(matrix).value


# -- depth-limited solves --------------------------------------------------------------


@pytest.mark.parametrize("name", SMALL_GAMES)
def test_unlimited_depth_solves_the_root_exactly(name):
    game = pyspiel.load_game(name)
    solution = solver.solve(game)
    state = _root(game)
    value = solution.state_value(state)
    for method in METHODS:
        found = depth_limit.search(state, math.inf, method=method)
        assert found.complete and found.cut_offs == 0
        assert found.result.value == pytest.approx(value, abs=1e-9)
        for player in (0, 1):
            guaranteed = _guarantees(state, player, found.result.strategies[player],
                                     solution.state_value)
            own = value if player == 0 else -value
            assert guaranteed == pytest.approx(own, abs=1e-9), (method, player)


def test_unlimited_depth_finds_the_unique_equilibrium_of_random_games():
    for seed in range(4):
        game = pyspiel.load_game(
            f"smmcts_random_stacked_matrix(depth=3,branching=3,seed={seed})")
        exact = solver.solve(game)
        state = game.new_initial_state()
        found = depth_limit.search(state, math.inf, method="doab")
        for player in (0, 1):
            expected = exact.action_probabilities(state, player)
            got = found.result.strategies[player]
            assert got.keys() == expected.keys()
            assert [got[a] for a in got] == pytest.approx([expected[a] for a in got],
                                                          abs=1e-9)


@pytest.mark.parametrize("name", SMALL_GAMES[:5])
def test_a_heuristic_equal_to_the_exact_value_gives_the_exact_strategy(name):
    game = pyspiel.load_game(name)
    solution = solver.solve(game)
    state = _root(game)
    value = solution.state_value(state)
    for depth in (1, 2, 3):
        for method in METHODS:
            found = depth_limit.search(state, depth, solution.state_value, method)
            assert found.result.value == pytest.approx(value, abs=1e-9)
            for player in (0, 1):
                guaranteed = _guarantees(state, player, found.result.strategies[player],
                                         solution.state_value)
                assert guaranteed == pytest.approx(value if player == 0 else -value,
                                                   abs=1e-9), (depth, method, player)


@pytest.mark.parametrize("name", ["oshi_zumo(coins=8,size=2,horizon=16,min_bid=1)",
                                  "goofspiel(num_cards=5,imp_info=False)",
                                  "smmcts_tron(rows=4,cols=4)"])
def test_depth_limited_values_equal_backward_induction_on_the_cut_off_game(name):
    game = pyspiel.load_game(name)
    heuristic = KernelStateValue(kernel_for(game))
    state = _root(game)
    for depth in (1, 2):
        expected = _limited_value(state, depth, heuristic)
        for method in METHODS:
            found = depth_limit.search(state, depth, heuristic, method)
            assert found.result.value == pytest.approx(expected, abs=1e-9), (depth, method)
            assert not found.complete


def test_the_deadline_stops_a_search_at_its_next_move():
    game = pyspiel.load_game("goofspiel(num_cards=5,imp_info=False)")
    ticks = iter(range(10**6))
    state = _root(game)
    heuristic = KernelStateValue(kernel_for(game))
    with pytest.raises(depth_limit.SearchTimeout):
        depth_limit.search(state, 3, heuristic, deadline=50, clock=lambda: next(ticks))
    assert next(ticks) == 52  # the check after the deadline was the last


def test_an_evaluation_outside_the_utility_range_is_refused():
    game = pyspiel.load_game("oshi_zumo(coins=6,size=2,horizon=12,min_bid=1)")
    with pytest.raises(ValueError, match=r"outside the game's utility range \[-1, 1\]"):
        depth_limit.search(_root(game), 1, lambda state: 2.0)
    with pytest.raises(ValueError, match="without an evaluation function"):
        depth_limit.search(_root(game), 1)


# -- iterative deepening with a fake clock ---------------------------------------------


class FakeSearch:
    """Depth ``d`` takes ``seconds[d - 1]`` on a fake clock; past its deadline it stops
    there with SearchTimeout, as the real search does at its next move."""

    def __init__(self, seconds, complete_at=None, lost_from=None):
        self.now = 0.0
        self.seconds = seconds
        self.complete_at = complete_at
        self.lost_from = lost_from
        self.calls = []

    def clock(self):
        return self.now

    def __call__(self, depth, deadline):
        self.calls.append((depth, deadline))
        end = self.now + self.seconds[depth - 1]
        if deadline is not None and end > deadline:
            self.now = deadline + 0.001
            raise depth_limit.SearchTimeout
        self.now = end
        return {"depth": depth, "complete": depth == self.complete_at,
                "lost": self.lost_from is not None and depth >= self.lost_from}

    def deepen(self, **kwargs):
        return iterative_deepening.deepen(self, clock=self.clock,
                                          complete=lambda r: r["complete"],
                                          lost=lambda r: r["lost"], **kwargs)


def test_deepening_stops_when_the_next_depth_is_predicted_not_to_fit():
    search = FakeSearch([1, 2, 4, 8, 16])
    out = search.deepen(time_limit=10)
    # After 1 + 2 + 4 = 7 s, depth 4 is predicted to take 4 * (4 / 2) = 8 > 3 s left.
    assert [d for d, _ in out.seconds] == [1, 2, 3]
    assert out.depth == 3 and out.stopped == "time" and search.now == 7
    assert iterative_deepening.predicted_seconds([1, 2, 4]) == 8
    assert iterative_deepening.predicted_seconds([3]) == 3
    assert iterative_deepening.predicted_seconds([4, 2]) == 2  # growth at least 1


def test_a_depth_running_past_the_deadline_is_dropped_with_a_small_overshoot():
    search = FakeSearch([1, 1, 50])  # depth 3 predicted at 1 s, takes 50
    out = search.deepen(time_limit=10)
    assert out.depth == 2 and out.stopped == "timeout"
    assert search.now == pytest.approx(10.001)
    assert search.calls == [(1, None), (2, 10), (3, 10)]  # depth 1: no result to fall back on


def test_the_first_depth_finishes_even_past_the_limit_when_nothing_else_is_known():
    search = FakeSearch([30, 1])
    out = search.deepen(time_limit=10)
    assert out.depth == 1 and out.stopped == "time" and search.calls == [(1, None)]


def test_a_fallback_lets_the_first_depth_stop_at_the_deadline():
    search = FakeSearch([1, 1, 30])
    out = search.deepen(time_limit=10, start_depth=3, fallback=("earlier", 2))
    assert out.result == "earlier" and out.depth == 2 and out.stopped == "timeout"
    assert search.calls == [(3, 10)]


def test_deepening_stops_at_a_complete_search_or_max_depth():
    search = FakeSearch([1] * 9, complete_at=4)
    out = search.deepen()
    assert out.depth == 4 and out.stopped == "complete"
    out = FakeSearch([1] * 9).deepen(max_depth=6)
    assert out.depth == 6 and out.stopped == "max_depth"


def test_a_deeper_search_that_sees_the_game_lost_keeps_the_shallower_result():
    out = FakeSearch([1] * 9, complete_at=5, lost_from=3).deepen()
    assert out.depth == 2 and out.stopped == "complete"
    out = FakeSearch([1] * 9, lost_from=1).deepen(max_depth=3)
    assert out.depth == 1  # nothing better known: the lost result is played


# -- the bot ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", SMALL_GAMES[:4])
def test_the_bot_with_unlimited_depth_plays_an_equilibrium_at_the_root(name):
    game = pyspiel.load_game(name)
    solution = solver.solve(game)
    state = _root(game)
    value = solution.state_value(state)
    for player in (0, 1):
        bot = DOABBot(game, player, seed=0)
        policy, action = bot.step_with_policy(state)
        strategy = dict(policy)
        assert action in state.legal_actions(player) and strategy[action] > 0
        assert sum(strategy.values()) == pytest.approx(1.0)
        guaranteed = _guarantees(state, player, strategy, solution.state_value)
        assert guaranteed == pytest.approx(value if player == 0 else -value, abs=1e-9)
        assert bot.last_deepening.stopped == "complete"


def test_the_bots_moves_are_sampled_from_the_root_strategy_and_seeded():
    game = pyspiel.load_game("smmcts_biased_rps")
    state = game.new_initial_state()
    moves = [DOABBot(game, 0, seed=s).step(state) for s in range(400)]
    counts = np.bincount(moves, minlength=3) / len(moves)
    assert counts == pytest.approx([1 / 16, 10 / 16, 5 / 16], abs=0.06)
    again = [DOABBot(game, 0, seed=s).step(state) for s in range(400)]
    assert moves == again


def test_the_bot_respects_its_time_limit_on_a_fake_clock():
    game = pyspiel.load_game("goofspiel(num_cards=6,imp_info=False)")
    bot = DOABBot(game, 0, time_limit=0.05, seed=0)
    now = [0.0]

    def clock():
        now[0] += 1e-4  # every reading (one per move of the search) costs 0.1 ms
        return now[0]

    bot.clock = clock
    state = _root(game)
    for _ in range(3):
        start = now[0]
        bot.step(state)
        deepening = bot.last_deepening
        assert now[0] - start <= 0.05 + 1e-3, deepening
        assert deepening.stopped in ("time", "timeout") and deepening.depth >= 1
        state.apply_actions([state.legal_actions(0)[-1], state.legal_actions(1)[0]])
        while state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])


def test_the_next_move_starts_at_the_depth_the_last_search_reached():
    game = pyspiel.load_game("oshi_zumo(coins=10,size=3,horizon=20,min_bid=1)")
    bot = DOABBot(game, 0, max_depth=3, method="bi", seed=0)  # bi: every child solved
    state = game.new_initial_state()
    bot.step(state)
    assert [d for d, _ in bot.last_deepening.seconds] == [1, 2, 3]
    state.apply_actions([2, 1])
    bot.step(state)
    assert [d for d, _ in bot.last_deepening.seconds] == [3]
    bot.restart_at(game.new_initial_state())
    bot.step(game.new_initial_state())
    assert [d for d, _ in bot.last_deepening.seconds] == [1, 2, 3]


def test_the_bot_plays_matches_and_tournaments_by_spec():
    game = pyspiel.load_game("oshi_zumo(coins=6,size=2,horizon=12,min_bid=1)")
    result = match.play_match(game, "doab(max_depth=2)", "random", 2, progress=False)
    assert len(result.returns) == 2
    assert bot_specs.with_time_limit("doab", 0.1) == "doab(time_limit=0.1)"
    assert bot_specs.with_time_limit("doab(max_depth=3)", 0.1) == "doab(max_depth=3)"
    jobs = tournament.tournament_jobs(
        ["goofspiel(num_cards=4,imp_info=False)"], ["doab(time_limit=0.05)", "random"], 2, 2,
        seed=0)
    for job in jobs.values():
        assert len(match.play_games(**job)) == 2
    bot = bot_specs.make_bot("doab(max_depth=2,method=do,evaluator=oshi_zumo)", game, 1, 3)
    assert isinstance(bot, DOABBot) and bot.max_depth == 2 and bot.method == "do"


@pytest.mark.parametrize("spec, game, message", [
    ("doab(time_limit=0.1)", "goofspiel(num_cards=4,imp_info=True)",
     "perfect information between stages.*use oos or is_smmcts"),
    ("doab(time_limit=0.1)",
     "goofspiel(num_cards=4,imp_info=False,returns_type=total_points)", "zero-sum"),
    ("doab(time_limit=0.1)", "blotto",
     "no heuristic evaluation function.*or max_depth=None and no time_limit"),
    ("doab(max_depth=2,evaluator=goofspiel)", "oshi_zumo", "evaluates goofspiel states"),
    ("doab(max_depth=2,evaluator=rollout)", "oshi_zumo", "must be one of heuristic"),
    ("doab", "goofspiel(num_cards=13,imp_info=False)", "give it a time_limit or a max_depth"),
    ("doab(max_depth=0)", "oshi_zumo", "max_depth must be an integer >= 1"),
    ("doab(time_limit=0)", "oshi_zumo", "time_limit must be a positive"),
    ("doab(max_depth=2,method=ab)", "oshi_zumo", "method must be one of"),
])
def test_bad_input_is_refused_clearly(spec, game, message):
    with pytest.raises(ValueError, match=message):
        bot_specs.check_spec(spec, pyspiel.load_game(game))


def test_the_bot_refuses_states_it_cannot_play():
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False)")
    bot = DOABBot(game, 0, max_depth=1)
    with pytest.raises(ValueError, match="called at a chance node"):
        bot.step(game.new_initial_state())  # chance deals first
    other = pyspiel.load_game("goofspiel(num_cards=5,imp_info=False)")
    with pytest.raises(ValueError, match="DOABBot"):
        bot.step(_root(other))


# -- the kernel's heuristic on pyspiel states ------------------------------------------


@pytest.mark.parametrize("name", ["goofspiel(num_cards=5,imp_info=False)",
                                  "smmcts_goofspiel(num_cards=5,points_order=shuffled)",
                                  "oshi_zumo(coins=10,size=3,horizon=20,min_bid=1)",
                                  "smmcts_tron(rows=4,cols=5)", "smmcts_pursuit_evasion"])
def test_the_kernel_heuristic_of_a_state_is_that_of_its_kernel_state(name):
    game = pyspiel.load_game(name)
    kernel = kernel_for(game)
    kept, fresh = KernelStateValue(kernel), KernelStateValue(kernel)
    module, params, data = kernel.module, kernel.params, kernel.data
    rng = np.random.default_rng(1)
    for trajectory in range(3):
        state = game.new_initial_state()
        lockstep = kernel.initial_state()  # the same moves, made on the kernel directly
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                outcome = int(rng.choice(actions, p=probs))
                state.apply_action(outcome)
                module.apply_chance(lockstep, params, data, outcome)
                continue
            legal = [state.legal_actions(p) for p in (0, 1)]
            index = [int(rng.integers(len(moves))) if moves else -1 for moves in legal]
            joint = [moves[i] if moves else -1 for moves, i in zip(legal, index)]
            if trajectory == 0 and state.is_simultaneous_node():
                # a flat joint action (player 0 the low digit): one history entry of a
                # Python game, two of a C++ game
                state.apply_action(index[0] + len(legal[0]) * index[1])
            elif state.is_simultaneous_node():
                state.apply_actions(joint)
            else:
                state.apply_action(joint[state.current_player()])
            module.apply_actions(lockstep, params, data, joint[0], joint[1])
            assert np.array_equal(kept.kernel_state(state), lockstep)
            fresh.reset()
            assert kept(state) == fresh(state)
        assert kept(state) == pytest.approx(state.returns()[0])


def test_a_state_given_flat_joint_actions_is_searched_as_the_same_state():
    game = pyspiel.load_game("smmcts_tron(rows=4,cols=5)")
    flat, joint = game.new_initial_state(), game.new_initial_state()
    for a0, a1 in [(2, 3), (2, 3)]:
        legal = [flat.legal_actions(p) for p in (0, 1)]
        flat.apply_action(legal[0].index(a0) + len(legal[0]) * legal[1].index(a1))
        joint.apply_actions([a0, a1])
    assert str(flat) == str(joint) and flat.history() != joint.history()
    copy = simultaneous.per_player_history(flat)
    assert copy.history() == joint.history()
    heuristic = KernelStateValue(kernel_for(game))
    assert (depth_limit.search(flat, 2, heuristic).result.strategies ==
            depth_limit.search(joint, 2, heuristic).result.strategies)
