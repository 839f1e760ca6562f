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
in a match, and the overshoot of every searched move is summarised (median, worst; a
forced move is played at once, without a search, and not counted).

The games without a kernel (``--generic_games``; by default OpenSpiel's C++ tic-tac-toe,
our Python-defined 4 x 4 Othello and OpenSpiel's Python-defined tic-tac-toe) run the
generic array engine and are compared with OpenSpiel's Python MCTSBot only. The last two
lines are ``generic_ratio_vs_python=<ours / Python MCTSBot on the first generic game>``
and ``ratio_vs_cpp=<min over kernel games of ours / C++ MCTSBot>``.

``--all_games`` measures instead every two-player zero-sum simultaneous-move game of
OpenSpiel with three parameter sets each (:data:`ALL_GAMES`; ``--only=<regex>`` picks some,
``--games`` names others):
per game, SMMCTSBot's iterations per second with each of ``--threads`` (the engine it
chooses: the kernel engine where a kernel covers the game, else the generic one, which
refuses more than one thread; ``--engine=generic``: the generic path everywhere) and
OpenSpiel's C++ MCTSBot's, or its Python MCTSBot's where the C++ bot refuses the game
(games with rewards along the way: the Python bot plays them through
``terminal_rewards_view``), timed alternately in the same run, their
ratios; then what a player sees: the root iterations of ``--move_time`` moves of one bot kept
from move to move (its tree cleared, its arrays and threads kept) against the C++ bot's at
the same time per move, the bots taking turns as in a match (the C++ bot's move is our
bot's opponent's turn, in which its tree threads go to sleep; a pause as long as a move
where the C++ bot refuses the game), the median of ``--repeats`` moves each and the ratio
the median of the per-round ratios (:func:`per_move_counts`); and the overshoot of
SMMCTSBot's moves at ``--overshoot_time`` in self-play with tree reuse (at most
``--overshoot_moves`` moves per game). The last lines are
``min_ratio_vs_cpp_threads<N>=`` (over the games the C++ bot plays) and
``max_median_overshoot_ms=``; ``--csv`` also writes the per-game rows.
"""

import csv
import re
import statistics
import time

import numpy as np
import open_spiel.python.games  # noqa: F401  (registers OpenSpiel's python_* games)
import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import mcts

from smmcts_spiel import experiments
from smmcts_spiel.bots import SMMCTSBot, openspiel_bots
from smmcts_spiel.experiments import cli, game_sets
from smmcts_spiel.games import kernels
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.search.thread_counts import check_threads

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
_SELECTOR = flags.DEFINE_string(
    "selector", None, "Our selector (default: the bot's own, per game: UCB on markov_soccer, "
    "RM elsewhere; bots/smmcts_bot.py GAME_DEFAULTS).")
_ENGINE = flags.DEFINE_enum("engine", "auto", ["auto", "generic"],
                            "SMMCTSBot's engine: auto (the kernel engine where a kernel covers "
                            "the game) or generic (the generic path on every game).")
_OVERSHOOT_TIME = flags.DEFINE_float(
    "overshoot_time", 0.05, "Seconds per move of the games that measure the overshoot.",
    lower_bound=0.001)
_OVERSHOOT_GAMES = flags.DEFINE_integer(
    "overshoot_games", 3, "Games of SMMCTSBot against itself per game, for the overshoot.",
    lower_bound=0)
_CPU_TIME = flags.DEFINE_bool(
    "cpu_time", False, "Time the searches in process CPU time instead of wall time (steadier "
    "ratios on a loaded machine; the per-move counts always use wall time).")
_ALL_GAMES = flags.DEFINE_bool(
    "all_games", False, "Measure every game of ALL_GAMES against the C++ MCTSBot (or the "
    "Python one where the C++ bot refuses the game), with each of --threads.")
_ONLY = flags.DEFINE_string("only", None, "With --all_games: only the games matching this "
                            "regular expression.")
_GAMES = flags.DEFINE_string("games", None, "With --all_games: these games (separated by "
                             "';') instead of ALL_GAMES, e.g. other parameter sets.")
_THREADS = flags.DEFINE_list("threads", ["1", "2"], "With --all_games: SMMCTSBot's thread "
                             "counts (threads=2 needs two cores: run it on a 2-core machine); "
                             "N: N trees (root parallelism), Ntree: N threads growing one tree "
                             "(tree parallelism), e.g. 1,2,2tree.")
_OVERSHOOT_MOVES = flags.DEFINE_integer(
    "overshoot_moves", 40, "With --all_games: at most this many moves per overshoot game.",
    lower_bound=1)
_CSV = flags.DEFINE_string("csv", None, "With --all_games: also write the rows to this CSV.")
_PUBLISH = cli.define_publish("--csv into the committed benchmarks")
_UCT_C = 2.0
_MEMORY_MB = 2_000
#: Every two-player zero-sum simultaneous-move game of OpenSpiel, three parameter sets each
#: (the default first), for --all_games; the thread experiments measure the same list.
ALL_GAMES = game_sets.ALL_GAMES


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


def thread_spec(spec: str) -> tuple[int, str]:
    """``--threads`` item ``N`` or ``Ntree``: the threads and how they share the search."""
    parallel = "tree" if spec.endswith("tree") else "root"
    count = spec.removesuffix("tree")
    if not count.isdigit() or int(count) < 1:
        raise app.UsageError(f"--threads items are N or Ntree with N >= 1 (e.g. 1,2,2tree), "
                             f"got {spec!r}", exitcode=2)
    try:
        return check_threads(int(count)), parallel
    except ValueError as e:
        raise app.UsageError(f"--threads={spec}: {e}", exitcode=2) from None


def ours(game, state, seed, iterations=None, time_limit=None, threads="1"):
    count, parallel = thread_spec(threads)
    bot = SMMCTSBot(game, 0, selector=_SELECTOR.value, iterations=iterations,
                    time_limit=time_limit, seed=seed, threads=count, parallel=parallel,
                    engine=_ENGINE.value)
    return bot, lambda: bot.step(state)


def baseline_for(turn_based) -> tuple[str | None, str]:
    """The OpenSpiel MCTSBot that plays the game ("cpp", "python", or None when both
    refuse it: they need rewards at the end only) and why the C++ one refuses ("")."""
    try:
        cpp(turn_based, turn_based.new_initial_state(), 0, 1)
        return "cpp", ""
    except pyspiel.SpielError as e:
        refused = str(e).strip().splitlines()[-1]
    try:
        python(turn_based, turn_based.new_initial_state(), 0, 1)
        return "python", refused
    except ValueError:
        return None, refused


def cpp(turn_based, state, seed, iterations, time_limit=-1.0):
    bot = pyspiel.MCTSBot(turn_based, pyspiel.RandomRolloutEvaluator(1, seed), _UCT_C,
                          iterations, _MEMORY_MB, False, seed, False,
                          pyspiel.ChildSelectionPolicy.UCT, time_limit)
    return bot, lambda: bot.mcts_search(state)


def python(turn_based, state, seed, iterations):
    rng = np.random.RandomState(seed)
    bot = mcts.MCTSBot(openspiel_bots.terminal_rewards_view(turn_based), _UCT_C, iterations,
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


def overshoot(game_string: str, threads: str = "1", max_moves: int | None = None
              ) -> list[float]:
    """Milliseconds over ``--overshoot_time`` of every searched move (more than one legal
    action) of SMMCTSBot self-play games (trees kept between moves; chance outcomes
    seeded), at most ``max_moves`` joint moves per game."""
    game = load(game_string)
    t = _OVERSHOOT_TIME.value
    rng = np.random.default_rng(0)
    over = []
    count, parallel = thread_spec(threads)
    for k in range(_OVERSHOOT_GAMES.value):
        bots = [SMMCTSBot(game, p, selector=_SELECTOR.value, iterations=None, time_limit=t,
                          seed=100 * k + p, threads=count, parallel=parallel,
                          engine=_ENGINE.value)
                for p in (0, 1)]
        state = game.new_initial_state()
        moves = 0
        while not state.is_terminal() and (max_moves is None or moves < max_moves):
            moves += 1
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            movers = [0, 1] if state.is_simultaneous_node() else [state.current_player()]
            actions = []
            for p in movers:
                start = time.perf_counter()
                actions.append(bots[p].step(state))
                if len(state.legal_actions(p)) > 1:  # a forced move is played at once
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


def per_move_counts(game, state, usable: list[str], cpp_move) -> dict[str, list[int]]:
    """Root iterations of ``--move_time`` moves from ``state``, in ``--repeats`` rounds of
    one move of each kept SMMCTSBot (one bot per thread count of ``usable``, kept from
    move to move: its tree cleared before each move, its arrays and threads kept) and one
    of a fresh C++ MCTSBot (``cpp_move(seed)``: its count; None where the C++ bot does not
    play the game, and then a pause as long as a move before each of ours instead).

    The bots take turns, as two players of a match do, so that each round's ratio compares
    moves a fraction of a second apart: this machine switches between speed levels about
    2x apart within a run (benchmarks/NOTES.md, runs 8 and 9), and all of our moves before
    all of the C++ bot's (as until 26 Nov 2026) compared one level with the other."""
    kept = {k: ours(game, state, 0, time_limit=_MOVE_TIME.value, threads=k) for k in usable}
    for _, step in kept.values():
        step()  # the arrays sized for a move
    counts: dict[str, list[int]] = {f"threads{k}": [] for k in usable}
    counts["baseline"] = []
    for seed in range(_REPEATS.value):
        if cpp_move is not None:  # the opponent's turn before ours
            counts["baseline"].append(cpp_move(seed))
        for k, (bot, step) in kept.items():
            bot.search.reset()
            if cpp_move is None:
                time.sleep(_MOVE_TIME.value)  # the opponent's turn
            step()
            counts[f"threads{k}"].append(bot.search.last_iterations)
    return counts


def all_games_row(game_string: str, thread_counts: list[str]) -> dict:
    """One game of --all_games: rates, ratios and overshoots (see the module docstring)."""
    game = load(game_string)
    turn_based = pyspiel.convert_to_turn_based(game)
    state = information_sets.first_decision_state(game)
    tb_state = turn_based_start(turn_based, state.history())
    baseline, refused = baseline_for(turn_based)
    engine = ("kernel" if _ENGINE.value == "auto" and kernels.kernel_for(game) is not None
              else "generic")
    usable = [n for n in thread_counts if n == "1" or engine == "kernel"]
    n = _PYTHON_ITERATIONS.value if baseline == "python" else _ITERATIONS.value
    for threads in usable:
        ours(game, state, 0, iterations=10, threads=threads)[1]()  # load the engine
    measured: dict[str, list[float]] = {f"threads{k}": [] for k in usable}
    measured["baseline"] = []
    for seed in range(_REPEATS.value):
        for threads in usable:
            measured[f"threads{threads}"].append(
                n / timed(ours(game, state, seed, n, threads=threads)[1]))
        if baseline == "cpp":
            measured["baseline"].append(n / timed(cpp(turn_based, tb_state, seed, n)[1]))
        elif baseline == "python":
            measured["baseline"].append(n / timed(python(turn_based, tb_state, seed, n)))
        else:
            measured["baseline"].append(np.nan)
    moves = per_move_counts(
        game, state, usable, None if baseline != "cpp" else lambda seed: cpp(
            turn_based, tb_state, seed, 10**9, _MOVE_TIME.value)[1]().explore_count)
    row = {"game": game_string, "engine": engine,
           "baseline": {"cpp": "C++ MCTSBot", "python": "Python MCTSBot"}.get(
               baseline, "none (OpenSpiel's MCTSBots refuse it)"),
           "baseline_rate": statistics.median(measured["baseline"])}
    for threads in thread_counts:
        key = f"threads{threads}"
        if threads not in usable:
            row.update({f"{key}_rate": np.nan, f"{key}_ratio": np.nan,
                        f"{key}_overshoot_median_ms": np.nan,
                        f"{key}_overshoot_worst_ms": np.nan, f"{key}_per_move": np.nan,
                        f"{key}_per_move_ratio": np.nan})
            continue
        over = overshoot(game_string, threads, _OVERSHOOT_MOVES.value)
        row.update({
            f"{key}_rate": statistics.median(measured[key]),
            f"{key}_ratio": statistics.median(
                a / b for a, b in zip(measured[key], measured["baseline"]))
            if baseline else np.nan,
            f"{key}_overshoot_median_ms": statistics.median(over) if over else np.nan,
            f"{key}_overshoot_worst_ms": max(over) if over else np.nan,
            f"{key}_per_move": statistics.median(moves[key]),
            f"{key}_per_move_ratio": statistics.median(
                a / b for a, b in zip(moves[key], moves["baseline"]))
            if moves["baseline"] else np.nan})
    row["baseline_per_move"] = (statistics.median(moves["baseline"]) if moves["baseline"]
                                else np.nan)
    row["cpp_refuses"] = refused or ""
    return row


def all_games_main(thread_counts: list[str]) -> None:
    candidates = ALL_GAMES if _GAMES.value is None else _GAMES.value.split(";")
    games = [g for g in candidates if _ONLY.value is None or re.search(_ONLY.value, g)]
    if not games:
        raise app.UsageError(f"--only={_ONLY.value} matches none of the games", exitcode=2)
    print(f"{_REPEATS.value} repeats of {_ITERATIONS.value:,} iterations (Python MCTSBot "
          f"baseline: {_PYTHON_ITERATIONS.value:,}); selector "
          f"{_SELECTOR.value or 'per-game default'}; "
          f"{_MOVE_TIME.value} s per move for the kept bot's per-move counts; threads "
          f"{thread_counts}; overshoot at {_OVERSHOOT_TIME.value} s per move, "
          f"{_OVERSHOOT_GAMES.value} self-play games of at most {_OVERSHOOT_MOVES.value} moves")
    rows = []
    for game_string in games:
        row = all_games_row(game_string, thread_counts)
        rows.append(row)
        parts = [f"{game_string} [{row['engine']} engine] {row['baseline']}"
                 + ("" if np.isnan(row["baseline_rate"]) else
                    f" {row['baseline_rate']:,.0f}/s")
                 + ("" if np.isnan(row["baseline_per_move"]) else
                    f", {row['baseline_per_move']:,.0f} per {_MOVE_TIME.value} s move")
                 + (f" (the C++ bot refuses it: {row['cpp_refuses']})"
                    if row["cpp_refuses"] else "")]
        for threads in thread_counts:
            key = f"threads{threads}"
            if np.isnan(row[f"{key}_rate"]):
                parts.append(f"threads={threads}: refused ({row['engine']} engine)")
                continue
            parts.append(f"threads={threads}: {row[f'{key}_rate']:,.0f}/s, ratio "
                         f"{row[f'{key}_ratio']:.2f}; per {_MOVE_TIME.value} s move of a kept "
                         f"bot {row[f'{key}_per_move']:,.0f}, ratio "
                         f"{row[f'{key}_per_move_ratio']:.2f}; overshoot median "
                         f"{row[f'{key}_overshoot_median_ms']:.1f} ms, worst "
                         f"{row[f'{key}_overshoot_worst_ms']:.1f} ms")
        print("\n  ".join(parts), flush=True)
    if _CSV.value:
        with experiments.replaced_file(_CSV.value, newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    for threads in thread_counts:
        ratios = [r[f"threads{threads}_ratio"] for r in rows
                  if r["baseline"] == "C++ MCTSBot" and not np.isnan(r[f"threads{threads}_ratio"])]
        print(f"min_ratio_vs_cpp_threads{threads}={min(ratios, default=np.nan):.2f}")
        per_move = [r[f"threads{threads}_per_move_ratio"] for r in rows
                    if not np.isnan(r[f"threads{threads}_per_move_ratio"])]
        print(f"min_per_move_ratio_vs_cpp_threads{threads}={min(per_move, default=np.nan):.2f}")
    medians = [m for r in rows for k in thread_counts
               if not np.isnan(m := r[f"threads{k}_overshoot_median_ms"])]
    print(f"max_median_overshoot_ms={max(medians, default=np.nan):.2f}")  # nan: no games


def check_flags() -> None:
    """Usage errors for the flags before any game is timed: the output, --threads, --only."""
    if _CSV.value and not _ALL_GAMES.value:
        raise app.UsageError("--csv writes the rows of --all_games: add --all_games", exitcode=2)
    try:
        experiments.check_output([_CSV.value], publish=_PUBLISH.value)
        if _CSV.value:
            experiments.check_writable(_CSV.value, "--csv")
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None
    for spec in _THREADS.value:
        thread_spec(spec)
    try:
        re.compile(_ONLY.value or "")
    except re.error as e:
        raise app.UsageError(f"--only={_ONLY.value} is not a regular expression: {e}",
                             exitcode=2) from None


def main(argv):
    del argv
    check_flags()
    if _ALL_GAMES.value:
        all_games_main(list(_THREADS.value))
        return
    print(f"{_REPEATS.value} repeats; budgets: {_ITERATIONS.value} (ours vs C++), "
          f"{_PYTHON_ITERATIONS.value} (Python MCTSBot); selector "
          f"{_SELECTOR.value or 'per-game default'}; "
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
