"""Hostile and careless use of the library: long budgets, foreign states, edited caches.

Issue 27's library findings: each test here failed on the code before its fix.
"""

import functools
import gc
import json
import logging
import os
import signal
import threading
import time

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import checks
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.bots.equilibrium_bot import EquilibriumBot
from smmcts_spiel.exact import exploitability, solver, turn_based
from smmcts_spiel.search.array_engine import ArraySMMCTS
from smmcts_spiel.search.evaluators import RandomRolloutEvaluator

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


@pytest.mark.parametrize("engine", ["kernel", "generic", "reference"])
def test_an_iteration_budget_beyond_int64_is_refused_and_the_largest_one_searches(engine):
    """iterations=2**63 used to raise OverflowError inside the kernel engine's move."""
    game = pyspiel.load_game(GOOFSPIEL_3)
    for huge in (2**63, 2**62 + 1, 10**20):
        with pytest.raises(ValueError, match=r"iterations must be at most 2\*\*62"):
            SMMCTSBot(game, 0, iterations=huge, engine=engine)
    state = game.new_initial_state()
    for largest in (2**62, np.int64(2**62)):
        bot = SMMCTSBot(game, 0, iterations=largest, time_limit=0.05, engine=engine, seed=0)
        assert bot.step(state) in state.legal_actions(0)
        assert 0 < bot.search.last_iterations < 2**62


def test_a_root_wider_than_the_first_arrays_is_searched_within_max_memory(monkeypatch):
    """blotto(coins=40,fields=5) (135,751 actions each) used to hang far over the memory
    cap on the generic engine: the root did not fit the first arrays, was made without
    actions, and every iteration descended forever, doubling the path buffer (19 GB)."""
    game = pyspiel.load_game("blotto(coins=40,fields=5)")
    limit = 64 << 20
    search = ArraySMMCTS(game, seed=0, max_memory=limit)
    growths = []
    grow_path = search._grow_path

    def counted():
        growths.append(1)
        assert len(growths) < 8, "the path buffer grows without bound"
        return grow_path()
    monkeypatch.setattr(search, "_grow_path", counted)
    root = search.run(game.new_initial_state(), iterations=None, time_limit=0.2)
    assert root.actions == tuple(tuple(game.new_initial_state().legal_actions(p))
                                 for p in (0, 1))
    assert search.full and not growths  # its 135,751**2 children do not fit: it stops
    assert _tree_bytes(search) <= limit


def test_the_path_buffer_grows_within_max_memory():
    game = pyspiel.load_game(GOOFSPIEL_3)
    limit = 4 << 20
    search = ArraySMMCTS(game, seed=0, max_memory=limit)
    while search._grow_path():
        pass
    assert search.full
    assert _tree_bytes(search) + search._ints.nbytes <= limit


def test_max_memory_is_checked():
    game = pyspiel.load_game(GOOFSPIEL_3)
    for bad in (0, -1, 1.5, "1GB", None):
        with pytest.raises(ValueError, match="max_memory"):
            SMMCTSBot(game, 0, engine="kernel", max_memory=bad)


@pytest.mark.parametrize("engine", ["kernel", "generic"])
def test_a_max_memory_too_small_for_the_root_is_refused_naming_the_minimum(engine):
    """max_memory=10 used to fail inside the first move: "only opened decision nodes list
    actions"; the minimum is the room of a few iterations."""
    game = pyspiel.load_game("goofspiel(num_cards=8,imp_info=False,points_order=descending)")
    with pytest.raises(ValueError, match=r"max_memory \(bytes\) must be an integer >= (\d+), "
                                         r"got 10$") as refused:
        SMMCTSBot(game, 0, iterations=None, time_limit=3600, engine=engine, max_memory=10)
    minimum = int(str(refused.value).split(">= ")[1].split(",")[0])
    bot = SMMCTSBot(game, 0, iterations=None, time_limit=3600, engine=engine,
                    max_memory=minimum)
    state = game.new_initial_state()
    assert bot.step(state) in state.legal_actions(0)
    assert bot.search.full


# -- Ctrl-C during a search ---------------------------------------------------------------

CORES = len(os.sched_getaffinity(0))
INTERRUPT_MODES = [
    ("kernel", 1, "root"), ("generic", 1, "root"), ("reference", 1, "root"),
    pytest.param("kernel", 2, "root", marks=pytest.mark.skipif(CORES < 2, reason="2 cores")),
    pytest.param("kernel", 2, "tree", marks=pytest.mark.skipif(CORES < 2, reason="2 cores")),
    pytest.param("kernel", 2, "tree_virtual_loss",
                 marks=pytest.mark.skipif(CORES < 2, reason="2 cores")),
]


def _work_done(search) -> list:
    """What a search's trees have grown so far (every tree of a root-parallel search)."""
    trees = getattr(search, "searches", [search])
    return [t.counters.tolist() if hasattr(t, "counters") else t.root and t.root.visits
            for t in trees]


@pytest.mark.parametrize("engine, threads, parallel", INTERRUPT_MODES)
@pytest.mark.parametrize("budget", [dict(iterations=10**9), dict(iterations=None,
                                                                   time_limit=120.0)])
def test_ctrl_c_during_a_search_surfaces_at_once_and_leaves_the_bot_usable(
        engine, threads, parallel, budget):
    """A SIGINT during a search used to surface only when the move ended: with two trees
    under a time limit, or under any iteration budget (compiled iterations, one long call),
    minutes later."""
    game = pyspiel.load_game("goofspiel(num_cards=6,imp_info=False,points_order=descending)")
    bot = SMMCTSBot(game, 0, engine=engine, threads=threads, parallel=parallel.split("_")[0],
                    virtual_loss=parallel.endswith("virtual_loss"), seed=0,
                    max_memory=256 << 20, **budget)
    state = game.new_initial_state()
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
    # A signal handled while a finalizer runs is lost ("Exception ignored in __del__"):
    # collect earlier tests' garbage now, and let no cyclic collection run in the search.
    gc.collect()
    gc.disable()
    timer = threading.Timer(0.3, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            bot.step(state)
        surfaced = time.perf_counter()
    finally:
        timer.cancel()
        gc.enable()
    assert surfaced - sent[0] < 0.5
    # No tree is still being searched, and the bot plays on.
    grown = _work_done(bot.search)
    time.sleep(0.2)
    assert _work_done(bot.search) == grown
    if getattr(bot.search, "virtual_loss", False):  # no iteration left in flight
        assert not bot.search.flights[:, 0].any()
    bot.iterations, bot.time_limit = 300, None
    assert bot.step(state) in state.legal_actions(0)


class _InterruptedEvaluator:
    """Random rollouts that raise KeyboardInterrupt at the ``at``-th leaf (a Ctrl-C there)."""

    def __init__(self, at: int):
        self.calls, self.at = 0, at
        self.rollouts = RandomRolloutEvaluator(seed=0)

    def evaluate(self, state):
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return self.rollouts.evaluate(state)


@pytest.mark.parametrize("engine", ["generic", "reference"])
def test_a_ctrl_c_in_the_leaf_evaluator_leaves_a_tree_that_searches_on(engine):
    """The generic engine dropped a node's pyspiel state before its last child was made: a
    KeyboardInterrupt in that child's evaluation left an untried joint action without a
    state ('NoneType' object has no attribute 'clone' in the next move)."""
    # 16 joint actions at the root (the 16th is its last child), 9 below each
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False,points_order=descending)")
    state = game.new_initial_state()
    leaves = _InterruptedEvaluator(0)  # never raises: how many leaves a move evaluates
    SMMCTSBot(game, 0, iterations=200, seed=0, engine=engine, evaluator=leaves).step(state)
    assert leaves.calls > 16
    for at in range(1, leaves.calls):
        evaluator = _InterruptedEvaluator(at)
        bot = SMMCTSBot(game, 0, iterations=200, seed=0, engine=engine, evaluator=evaluator)
        with pytest.raises(KeyboardInterrupt):
            bot.step(state)
        assert bot.step(state) in state.legal_actions(0), at


# -- policy(): turn-based and foreign states -----------------------------------------------


@functools.cache
def _searched_policy(game_string: str, engine: str, threads: int = 1):
    game = pyspiel.load_game(game_string)
    bot = SMMCTSBot(game, 0, iterations=3000, engine=engine, threshold=0.0, seed=4,
                    threads=threads)
    bot.step(game.new_initial_state())
    return game, bot.policy()


#: Every engine, and the merged trees of a multi-thread (root-parallel) search.
ENGINES_AND_THREADS = [("kernel", 1), ("kernel", 2), ("generic", 1), ("reference", 1)]


@pytest.mark.parametrize("engine, threads", ENGINES_AND_THREADS)
@pytest.mark.parametrize("game_string", [GOOFSPIEL_3, OSHI_ZUMO])
def test_policy_answers_turn_based_states_as_their_simultaneous_states(game_string, engine,
                                                                       threads):
    """On convert_to_turn_based states player 2 used to get uniform strategies, so
    OpenSpiel's nash_conv there disagreed with the exact evaluation on the game itself."""
    game, policy = _searched_policy(game_string, engine, threads)
    for tb_state, state in turn_based.paired_states(game):
        player = tb_state.current_player()
        assert policy.action_probabilities(tb_state) == policy.action_probabilities(state,
                                                                                    player)
    tb_game = pyspiel.convert_to_turn_based(game)
    exact = exploitability.evaluate(game, policy, turn_based=False).nash_conv
    assert openspiel_exploitability.nash_conv(tb_game, policy) == pytest.approx(exact, abs=1e-9)


@pytest.mark.parametrize("engine, threads", ENGINES_AND_THREADS)
@pytest.mark.parametrize("foreign", [
    "goofspiel(num_cards=3,imp_info=False,points_order=descending,returns_type=point_difference)",
    "goofspiel(num_cards=4,imp_info=False,points_order=descending)",
    "matrix_rps",
    "kuhn_poker",
])
def test_policy_refuses_a_state_of_another_game(engine, threads, foreign):
    """It used to answer the root strategy of its own game for any foreign state."""
    _, policy = _searched_policy(GOOFSPIEL_3, engine, threads)
    state = pyspiel.load_game(foreign).new_initial_state()
    if state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(ValueError, match="answers for states of goofspiel"):
        policy.action_probabilities(state, 0)


# -- EquilibriumBot and solutions: other games' states, edited caches ------------------------


GOOFSPIEL_3_RANDOM = "goofspiel(num_cards=3,imp_info=False,points_order=random)"


@pytest.mark.parametrize("foreign", [
    "goofspiel(num_cards=3,imp_info=False,points_order=descending,returns_type=point_difference)",
    "goofspiel(num_cards=3,imp_info=False,points_order=ascending)",
    "matrix_mp",
])
def test_equilibrium_bot_refuses_a_state_of_another_game(foreign):
    """It used to play from its own solution wherever the other game's state key fitted."""
    bot = EquilibriumBot(pyspiel.load_game(GOOFSPIEL_3), 0, seed=0)
    state = pyspiel.load_game(foreign).new_initial_state()
    with pytest.raises(ValueError, match="EquilibriumBot was built for goofspiel"):
        bot.step(state)
    with pytest.raises(ValueError, match="EquilibriumBot was built for goofspiel"):
        bot.restart_at(state)
    with pytest.raises(ValueError, match="answers for states of goofspiel"):
        bot.solution.action_probabilities(state, 0)


def test_equilibrium_bot_refuses_the_solution_of_another_game():
    solution = solver.solve(OSHI_ZUMO)
    with pytest.raises(ValueError, match="given the solution of oshi_zumo"):
        EquilibriumBot(pyspiel.load_game(GOOFSPIEL_3), 1, solution=solution)


def test_a_solution_answers_turn_based_states_as_their_simultaneous_states():
    game = pyspiel.load_game(GOOFSPIEL_3_RANDOM)
    solution = solver.solve(game)
    for tb_state, state in turn_based.paired_states(game):
        player = tb_state.current_player()
        assert solution.action_probabilities(tb_state) == solution.action_probabilities(
            state, player)


def _edited(entries: list, edit: str) -> None:
    """Apply one hostile edit to the ``states`` of a saved solution, in place."""
    mixed = [e for e in entries if len(e[2]) >= 2]
    entry = mixed[0]
    if edit == "value":
        entry[1] += 0.25
    elif edit == "value_and_strategy":  # the edit: a pure move, a better value
        entry[1] = 1.0
        entry[2] = [[a, 1.0 if k == 0 else 0.0] for k, (a, _) in enumerate(entry[2])]
    elif edit == "sum_above_one":
        entry[2][0][1] += 0.2
    elif edit == "negative":
        entry[2][0][1], entry[2][1][1] = -0.5, entry[2][1][1] + entry[2][0][1] + 0.5
    elif edit == "missing_action":
        entry[2] = entry[2][1:]
    elif edit == "nan":
        entry[1] = float("nan")
    elif edit == "missing_state":
        entries.remove(entry)
    elif edit == "extra_state":
        entries.append(["(False, (99, 99))", 0.0, [], []])


EDITS = ["value", "value_and_strategy", "sum_above_one", "negative", "missing_action", "nan",
         "missing_state", "extra_state"]


def _edited_cache(path, game: pyspiel.Game, edit) -> None:
    """Save ``game``'s solution to ``path`` with ``edit(states)`` applied to its entries."""
    solver.save_solution(solver.solve(game), path)
    saved = json.loads(path.read_text())
    edited = edit(saved["states"])  # a new list, or None when edited in place
    if edited is not None:
        saved["states"] = edited
    path.write_text(json.dumps(saved))


@pytest.mark.parametrize("game_string", [GOOFSPIEL_3_RANDOM, "matrix_mp"])
@pytest.mark.parametrize("edit", EDITS)
def test_an_edited_solution_cache_is_refused_with_its_file_name(tmp_path, game_string, edit):
    """An edited cache used to be believed: equilibrium_loss then reported losses of -1
    against the "equilibrium". Now it must be an equilibrium of the game, state by state."""
    game = pyspiel.load_game(game_string)
    _edited_cache(tmp_path / "cache.json", game, lambda states: _edited(states, edit))
    with pytest.raises(ValueError, match="cache.json: .*(not an equilibrium|malformed|root entry)"):
        solver.load_solution(game, tmp_path / "cache.json")


def test_an_edited_matching_pennies_equilibrium_is_refused(tmp_path):
    game = pyspiel.load_game("matrix_mp")

    def edit(states):
        states[0][2] = [[0, 0.9], [1, 0.1]]  # a distribution, not an equilibrium

    _edited_cache(tmp_path / "mp.json", game, edit)
    with pytest.raises(ValueError, match="mp.json: .*not an equilibrium of its stage game"):
        solver.load_solution(game, tmp_path / "mp.json")


@pytest.mark.parametrize("game_string", [GOOFSPIEL_3_RANDOM, GOOFSPIEL_3, "matrix_mp"])
def test_a_cache_without_its_root_entry_says_the_root_entry_is_missing(tmp_path, game_string):
    """It used to say the states were "not filed under this game's keys"."""
    game = pyspiel.load_game(game_string)
    root_key = repr(solver.solution_key(game)(game.new_initial_state()))
    _edited_cache(tmp_path / "rootless.json", game,
                  lambda states: [e for e in states if e[0] != root_key])
    with pytest.raises(ValueError, match=r"rootless.json: the root entry .* is missing: .*"
                                         r"solve.*delete the file"):
        solver.load_solution(game, tmp_path / "rootless.json")


def test_a_cache_of_other_keys_says_so(tmp_path):
    game = pyspiel.load_game(GOOFSPIEL_3)
    _edited_cache(tmp_path / "keys.json", game,
                  lambda states: [[repr((False, k)), *rest] for k, (_, *rest) in enumerate(states)])
    with pytest.raises(ValueError, match="keys.json: .* filed under other keys"):
        solver.load_solution(game, tmp_path / "keys.json")


def test_a_refused_cache_prints_plain_numbers(tmp_path):
    """The equilibrium check used to print ``np.float64(1.0)``."""
    game = pyspiel.load_game(GOOFSPIEL_3_RANDOM)
    _edited_cache(tmp_path / "cache.json", game,
                  lambda states: _edited(states, "value_and_strategy"))
    with pytest.raises(ValueError, match=r"player 1 is sure of -?[0-9.e-]+, player 2 concedes "
                                         r"at most -?[0-9.e-]+;") as refused:
        solver.load_solution(game, tmp_path / "cache.json")
    assert "np." not in str(refused.value)


@pytest.mark.parametrize("check", [
    lambda: checks.check_probability(np.float64(1.5), "gamma"),
    lambda: checks.check_budget(None, np.float64(-1.0)),
    lambda: checks.check_budget(np.int64(0), None),
    lambda: checks.check_player_id(np.int64(2)),
    lambda: SMMCTSBot(pyspiel.load_game(OSHI_ZUMO), 0, iterations=10, gamma=np.float64(2.0)),
])
def test_argument_checks_print_numpy_numbers_as_plain_numbers(check):
    with pytest.raises(ValueError, match=r"got -?[0-9.]+$") as refused:
        check()
    assert "np." not in str(refused.value)


def test_a_truncated_solution_cache_is_refused_with_its_file_name(tmp_path):
    game = pyspiel.load_game(GOOFSPIEL_3_RANDOM)
    path = tmp_path / "cut.json"
    solver.save_solution(solver.solve(game), path)
    path.write_text(path.read_text()[:len(path.read_text()) // 2])
    with pytest.raises(ValueError, match="cut.json: cannot be read as JSON"):
        solver.load_solution(game, path)


# -- sizes: refused before solving, not hours later ----------------------------------------


@pytest.mark.parametrize("game_string", [
    "oshi_zumo(coins=50,size=6,horizon=200)",
    "goofspiel(num_cards=13,imp_info=False,points_order=descending)",
    "goofspiel(num_cards=9,imp_info=False)",
])
def test_a_game_too_large_to_solve_is_refused_at_once_with_an_estimate(game_string):
    """These used to run on silently for hours."""
    game = pyspiel.load_game(game_string)
    for solve in (solver.game_value, solver.solve, lambda g: EquilibriumBot(g, 0)):
        with pytest.raises(ValueError, match=r"about [0-9.e+]+ states .* max_states=None"):
            solve(game)


def test_the_size_limit_can_be_lifted():
    game = pyspiel.load_game(OSHI_ZUMO)
    with pytest.raises(ValueError, match="more than the limit of 10"):
        solver.game_value(game, max_states=10)
    assert solver.game_value(game, max_states=None) == solver.game_value(game)


@pytest.mark.parametrize("game_string,refusal", [
    # one 1771 x 1771 stage: 3.1 million children held at once, then a dense LP
    ("blotto(coins=20,fields=4)", r"has a stage of 1771 x 1771 joint actions, more than the "
                                  r"limit of max_stage_cells=1e\+06: .* max_stage_cells=None"),
    # 1.85 million states (under the limit), stages up to 41 x 41: half an hour
    ("oshi_zumo(coins=40,size=5,horizon=100)",
     r"would take about [0-9.e+]+ minutes \([0-9.e+]+ states, [0-9.e+]+ stage-matrix cells, the "
     r"largest stage 41 x 41\), more than the limit of max_seconds=300; .* max_seconds=None"),
])
def test_a_game_too_slow_to_solve_is_refused_at_once_with_an_estimate(game_string, refusal):
    """These used to pass the state count and run for minutes (Blotto) or half an hour."""
    game = pyspiel.load_game(game_string)
    for solve in (solver.game_value, solver.solve, lambda g: EquilibriumBot(g, 0)):
        with pytest.raises(ValueError, match=refusal):
            solve(game)


def test_the_time_and_stage_limits_can_be_lifted():
    game = pyspiel.load_game(OSHI_ZUMO)
    with pytest.raises(ValueError, match="more than the limit of max_seconds=1e-06"):
        solver.solve(game, max_seconds=1e-6)
    with pytest.raises(ValueError, match="stage of 4 x 4 joint actions, more than the limit of "
                                         "max_stage_cells=15"):
        EquilibriumBot(game, 0, max_stage_cells=15)
    assert solver.game_value(game, max_seconds=None, max_stage_cells=None) == solver.game_value(
        game)
    EquilibriumBot(game, 0, max_seconds=None, max_stage_cells=16)
    assert solver.game_value(game, **solver.size_limits(False)) == solver.game_value(game)


def test_a_refused_solve_is_told_apart_from_other_bad_input():
    """Scripts catch :class:`solver.GameTooLarge` to name their own flag for the limits."""
    with pytest.raises(solver.GameTooLarge, match="1771 x 1771"):
        solver.solve(pyspiel.load_game("blotto(coins=20,fields=4)"))
    with pytest.raises(solver.GameTooLarge, match="max_states=None"):
        solver.solve(pyspiel.load_game(OSHI_ZUMO), max_states=10)


def _cells_solved(game: pyspiel.Game) -> tuple[int, int]:
    """(states, stage-matrix cells) of the solver's walk of ``game``, counted."""
    key, seen, cells = solver.solution_key(game), set(), 0

    def visit(state):
        nonlocal cells
        if state.is_terminal() or key(state) in seen:
            return
        seen.add(key(state))
        if state.is_chance_node():
            children = solver.successors(state, [a for a, _ in state.chance_outcomes()])
        else:
            rows, cols = solver.legal_actions(state, 0), solver.legal_actions(state, 1)
            children = [c for row in solver.joint_children(state, rows, cols) for c in row]
        cells += len(children)
        for child in children:
            visit(child)

    visit(game.new_initial_state())
    return len(seen), cells


@pytest.mark.parametrize("game_string", [GOOFSPIEL_3_RANDOM, OSHI_ZUMO,
                                         "oshi_zumo(coins=4,size=2,horizon=5,min_bid=1)",
                                         "smmcts_goofspiel(num_cards=3)", "matrix_mp"])
def test_the_size_estimates_bound_the_states_and_cells_solved(game_string):
    game = pyspiel.load_game(game_string)
    estimate = solver.estimate_size(game)
    assert estimate.states >= len(solver.solve(game))
    states, cells = _cells_solved(game)
    assert estimate.states >= states and estimate.cells >= cells


def test_an_astronomical_random_game_is_refused_without_overflow():
    """The size check itself used to raise OverflowError formatting 100**100 leaves."""
    for depth, branching in [(100, 100), (200, 10**6)]:
        with pytest.raises(ValueError, match=r"about 1e\+\d+ leaves, more than the limit"):
            pyspiel.load_game(f"smmcts_random_stacked_matrix(depth={depth},"
                              f"branching={branching})")


# -- messages ----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["garbage", "", "[Game]\nsmmcts_goofspiel()\n",
                                  "[State]\nhistory=\nmove_number=0\n__dict__=\n"])
def test_a_text_that_is_no_serialised_game_and_state_is_refused_naming_the_format(text):
    with pytest.raises(ValueError, match=r"not a serialised game and state: expected \[Game\]"):
        pyspiel.deserialize_game_and_state(text)


def test_an_action_on_a_finished_phantom_ttt_board_says_the_game_is_over():
    state = pyspiel.load_game("smmcts_phantom_ttt").new_initial_state()
    for cell in [0, 3, 1, 4, 2]:  # x takes the top row
        state.apply_action(cell)
    assert state.is_terminal()
    with pytest.raises(pyspiel.SpielError, match="the game is over") as refused:
        state.apply_action(5)
    assert "legal" not in str(refused.value)


OUR_GAMES = ["smmcts_goofspiel(num_cards=4)",
             "smmcts_goofspiel(num_cards=4,points_order=descending)",
             "smmcts_phantom_ttt", "smmcts_othello", "smmcts_random_stacked_matrix",
             "smmcts_matrix_tree(tree={1/2:[[1 0] [0 1]] 1/2:[[0 1] [1 0]]})"]


@pytest.mark.parametrize("game_string", OUR_GAMES)
@pytest.mark.parametrize("action", [-1, np.int64(-5), 1.5, "0", 2**70])
def test_an_invalid_action_on_our_games_names_it_and_the_legal_ones(game_string, action):
    """``apply_action(-1)`` used to give OpenSpiel's ``action_id != kInvalidAction``."""
    state = pyspiel.load_game(game_string).new_initial_state()
    before = str(state)
    with pytest.raises(ValueError, match=r"action .* is not legal; legal: .*\d") as refused:
        state.apply_action(action)
    assert "kInvalidAction" not in str(refused.value) and "np." not in str(refused.value)
    assert isinstance(refused.value, pyspiel.SpielError)  # as OpenSpiel's games raise
    if state.is_simultaneous_node():
        with pytest.raises(ValueError, match=r"joint action \[.*\] is not legal; legal: player "
                                             r"0: \[.*\]; player 1: \["):
            state.apply_actions([0, action])
    assert str(state) == before


@pytest.mark.parametrize("game_string", OUR_GAMES)
def test_an_action_at_a_terminal_state_of_our_games_says_the_game_is_over(game_string):
    state = pyspiel.load_game(game_string).new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        elif state.is_simultaneous_node():
            state.apply_actions([state.legal_actions(p)[0] for p in range(2)])
        else:
            state.apply_action(state.legal_actions()[0])
    with pytest.raises(ValueError, match="game is over"):
        state.apply_action(-1)
