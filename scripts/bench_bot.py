"""Search speed of SMMCTSBot against OpenSpiel's C++ and Python MCTSBot, measured in one run.

Per game, each repeat times one search from a fresh bot at the start of the game (after
the first chance deal, where the game starts with one: MCTS bots do not move at chance
nodes): SMMCTSBot (the kernel engine where the game has a game kernel, the generic one
otherwise) on the simultaneous game, OpenSpiel's C++ ``pyspiel.MCTSBot`` and Python
``MCTSBot`` on its ``convert_to_turn_based`` version, all with one random rollout per new
leaf and the same budget (simulations = iterations). The bots are timed alternately so
that a change in machine load hits all of them; a ratio is the median of the per-repeat
ratios. Then each bot searches for ``--move_time`` seconds per move from the same state
(C++: ``max_wall_clock_time``) and the root iteration counts are printed, with how far our
moves overran the limit (median and worst; on a loaded machine the worst includes time the
process was not scheduled). Last, two SMMCTSBots play ``--overshoot_games`` games against
each other with ``--overshoot_time`` seconds per move, keeping their trees between moves as
in a match, and the overshoot of every move is summarised (median, worst).

The games without a kernel (``--generic_games``; by default OpenSpiel's C++ tic-tac-toe,
our Python-defined 4 x 4 Othello and OpenSpiel's Python-defined tic-tac-toe) run the
generic array engine and are compared with OpenSpiel's Python MCTSBot only. The last two
lines are ``generic_ratio_vs_python=<ours / Python MCTSBot on the first generic game>``
and ``ratio_vs_cpp=<min over kernel games of ours / C++ MCTSBot>``.
"""

import statistics
import time

import numpy as np
import open_spiel.python.games  # noqa: F401  (registers OpenSpiel's python_* games)
import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import mcts

from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.experiments import cli
from smmcts_spiel.games import kernels
from smmcts_spiel.imperfect import information_sets

_KERNEL_GAMES = flags.DEFINE_string(
    "kernel_games", "goofspiel(num_cards=6,points_order=descending,imp_info=False);"
    "goofspiel(num_cards=13,points_order=random,imp_info=False);"
    "oshi_zumo(coins=10,size=3,horizon=20)",
    "Games with a game kernel, separated by ';', compared with OpenSpiel's C++ MCTSBot.")
_GENERIC_GAMES = flags.DEFINE_string(
    "generic_games", "tic_tac_toe;smmcts_othello(board_size=4);python_tic_tac_toe",
    "Games without a kernel, separated by ';', compared with OpenSpiel's Python MCTSBot "
    "(the first one gives generic_ratio_vs_python).")
_ITERATIONS = flags.DEFINE_integer("iterations", 20_000, "Budget per timed search (kernel games).",
                                   lower_bound=1)
_PYTHON_ITERATIONS = flags.DEFINE_integer(
    "python_iterations", 2_000, "Budget per timed search with OpenSpiel's Python MCTSBot.",
    lower_bound=1)
_REPEATS = flags.DEFINE_integer("repeats", 5, "Timed searches per bot and game.", lower_bound=1)
_MOVE_TIME = flags.DEFINE_float("move_time", 0.1, "Seconds per move for the iteration counts.",
                                lower_bound=0.001)
_SELECTOR = flags.DEFINE_string("selector", "rm", "Our selector.")
_OVERSHOOT_TIME = flags.DEFINE_float(
    "overshoot_time", 0.05, "Seconds per move of the games that measure the overshoot.",
    lower_bound=0.001)
_OVERSHOOT_GAMES = flags.DEFINE_integer(
    "overshoot_games", 3, "Games of SMMCTSBot against itself per game, for the overshoot.",
    lower_bound=0)
_CPU_TIME = flags.DEFINE_bool(
    "cpu_time", False, "Time the searches in process CPU time instead of wall time (steadier "
    "ratios on a loaded machine; the per-move counts always use wall time).")
_UCT_C = 2.0
_MEMORY_MB = 2_000


def load(game_string: str) -> pyspiel.Game:
    try:
        return pyspiel.load_game(game_string)
    except pyspiel.SpielError as e:
        raise app.UsageError(f"cannot load game {game_string!r}: {e}", exitcode=2) from None


def turn_based_start(turn_based: pyspiel.Game, history: list[int]) -> pyspiel.State:
    state = turn_based.new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


def timed(search, clock=None) -> float:
    clock = clock or (time.process_time if _CPU_TIME.value else time.perf_counter)
    start = clock()
    search()
    return clock() - start


def ours(game, state, seed, iterations=None, time_limit=None):
    bot = SMMCTSBot(game, 0, selector=_SELECTOR.value, iterations=iterations,
                    time_limit=time_limit, seed=seed)
    return bot, lambda: bot.step(state)


def cpp(turn_based, state, seed, iterations, time_limit=-1.0):
    bot = pyspiel.MCTSBot(turn_based, pyspiel.RandomRolloutEvaluator(1, seed), _UCT_C,
                          iterations, _MEMORY_MB, False, seed, False,
                          pyspiel.ChildSelectionPolicy.UCT, time_limit)
    return bot, lambda: bot.mcts_search(state)


def python(turn_based, state, seed, iterations):
    rng = np.random.RandomState(seed)
    bot = mcts.MCTSBot(turn_based, _UCT_C, iterations,
                       mcts.RandomRolloutEvaluator(random_state=rng), solve=False,
                       random_state=rng)
    return lambda: bot.mcts_search(state)


def rates(game_string: str, with_cpp: bool) -> dict[str, float]:
    """Median searches/s of each bot, and median per-repeat ratios, on one game."""
    game = load(game_string)
    simultaneous = game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    turn_based = pyspiel.convert_to_turn_based(game) if simultaneous else game
    state = information_sets.first_decision_state(game)
    tb_state = turn_based_start(turn_based, state.history())
    n, n_py = _ITERATIONS.value, _PYTHON_ITERATIONS.value
    n_ours = n if with_cpp else n_py
    ours(game, state, 0, iterations=10)[1]()  # compile / load the kernel engine
    measured = {"ours": [], "cpp": [], "python": []}
    for seed in range(_REPEATS.value):
        measured["ours"].append(n_ours / timed(ours(game, state, seed, n_ours)[1]))
        if with_cpp:
            measured["cpp"].append(n / timed(cpp(turn_based, tb_state, seed, n)[1]))
        measured["python"].append(n_py / timed(python(turn_based, tb_state, seed, n_py)))
    result = {f"{k}_rate": statistics.median(v) for k, v in measured.items() if v}
    for other in ("cpp", "python"):
        if measured[other]:
            result[f"ratio_vs_{other}"] = statistics.median(
                a / b for a, b in zip(measured["ours"], measured[other]))
    # Iterations per move under a time limit (fresh bots, same state).
    t = _MOVE_TIME.value
    our_counts, elapsed = [], []
    for seed in range(_REPEATS.value):
        bot, step = ours(game, state, seed, time_limit=t)
        elapsed.append(timed(step, time.perf_counter))
        our_counts.append(bot.search.last_iterations)
    result["ours_per_move"] = statistics.median(our_counts)
    result["ours_overshoot_ms"] = 1000 * (statistics.median(elapsed) - t)
    result["ours_worst_overshoot_ms"] = 1000 * (max(elapsed) - t)
    if with_cpp:
        cpp_counts = []
        for seed in range(_REPEATS.value):
            _, search = cpp(turn_based, tb_state, seed, 10**9, t)
            cpp_counts.append(search().explore_count)
        result["cpp_per_move"] = statistics.median(cpp_counts)
    return result


def overshoot(game_string: str) -> list[float]:
    """Milliseconds over ``--overshoot_time`` of every move of SMMCTSBot self-play games
    (trees kept between moves; chance outcomes seeded)."""
    game = load(game_string)
    t = _OVERSHOOT_TIME.value
    rng = np.random.default_rng(0)
    over = []
    for k in range(_OVERSHOOT_GAMES.value):
        bots = [SMMCTSBot(game, p, selector=_SELECTOR.value, iterations=None, time_limit=t,
                          seed=100 * k + p) for p in (0, 1)]
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            movers = [0, 1] if state.is_simultaneous_node() else [state.current_player()]
            actions = []
            for p in movers:
                start = time.perf_counter()
                actions.append(bots[p].step(state))
                over.append(1000 * (time.perf_counter() - start - t))
            if state.is_simultaneous_node():
                state.apply_actions(actions)
            else:
                state.apply_action(actions[0])
    return over


def per_move_lines(game_string: str, r: dict[str, float], baseline: str) -> str:
    """The per-move iteration counts, our overshoot there, and the self-play overshoot."""
    lines = (f"  root iterations per {_MOVE_TIME.value} s move: ours {r['ours_per_move']:,.0f}, "
             f"{baseline}; our overshoot median {r['ours_overshoot_ms']:.1f} ms, worst "
             f"{r['ours_worst_overshoot_ms']:.1f} ms")
    if _OVERSHOOT_GAMES.value:
        over = overshoot(game_string)
        lines += (f"\n  overshoot at {_OVERSHOOT_TIME.value} s per move over {len(over)} moves "
                  f"of {_OVERSHOOT_GAMES.value} self-play games (tree reuse): median "
                  f"{statistics.median(over):.1f} ms, worst {max(over):.1f} ms, "
                  f"{sum(x >= 5 for x in over)} moves over by 5 ms or more")
    return lines


def main(argv):
    del argv
    print(f"{_REPEATS.value} repeats; budgets: {_ITERATIONS.value} (ours vs C++), "
          f"{_PYTHON_ITERATIONS.value} (Python MCTSBot); selector {_SELECTOR.value}; "
          f"{'CPU' if _CPU_TIME.value else 'wall'} time; per-move counts at "
          f"{_MOVE_TIME.value} s")
    cpp_ratios = []
    for game_string in filter(None, _KERNEL_GAMES.value.split(";")):
        if kernels.kernel_for(load(game_string)) is None:
            raise app.UsageError(f"{game_string} has no game kernel; give it as "
                                 "--generic_games instead", exitcode=2)
        r = rates(game_string, with_cpp=True)
        cpp_ratios.append(r["ratio_vs_cpp"])
        print(f"{game_string} [kernel]\n"
              f"  iterations/s: ours {r['ours_rate']:,.0f}, C++ MCTSBot {r['cpp_rate']:,.0f}, "
              f"Python MCTSBot {r['python_rate']:,.0f}\n"
              f"  ratio vs C++ {r['ratio_vs_cpp']:.2f}, vs Python {r['ratio_vs_python']:.1f}\n"
              + per_move_lines(game_string, r, f"C++ {r['cpp_per_move']:,.0f}"), flush=True)
    generic_ratios = []
    for game_string in filter(None, _GENERIC_GAMES.value.split(";")):
        if kernels.kernel_for(load(game_string)) is not None:
            raise app.UsageError(f"{game_string} has a game kernel; --generic_games must "
                                 "be games without one", exitcode=2)
        r = rates(game_string, with_cpp=False)
        generic_ratios.append(r["ratio_vs_python"])
        print(f"{game_string} [generic]\n"
              f"  iterations/s: ours {r['ours_rate']:,.0f}, Python MCTSBot "
              f"{r['python_rate']:,.0f}; ratio vs Python {r['ratio_vs_python']:.2f}\n"
              + per_move_lines(game_string, r, "Python MCTSBot at its rate "
                               f"{r['python_rate'] * _MOVE_TIME.value:,.0f}"), flush=True)
    # nan where a list of games was left empty (a run of some games only).
    print(f"generic_ratio_vs_python={generic_ratios[0] if generic_ratios else np.nan:.2f}")
    print(f"ratio_vs_cpp={min(cpp_ratios, default=np.nan):.2f}")


if __name__ == "__main__":
    cli.run(main)
