"""Benchmark: exact game values and exploitability against OpenSpiel's baselines.

In one run, on the same machine:

1. ``smmcts_spiel.exact.solver.game_value`` against OpenSpiel's sequence-form LP
   (``sequence_form_lp.solve_zero_sum_game``) on ``convert_to_turn_based(game)``, for
   Goofspiel with 4 cards and a depth-3, branching-3 random stacked matrix game;
2. the fast exploitability path against OpenSpiel's ``nash_conv`` (Python and C++ best
   responses) on the same random profile, given to us as a TabularPolicy of the turn-based
   game and as a strategy on the simultaneous game (like ``SMMCTSBot.policy()``; OpenSpiel
   gets its TabularPolicy conversion, built outside the timing);
3. the largest Goofspiel (descending prizes) solved exactly within ``--max_seconds``.

Every time is the best of ``--repeats`` runs. The last line is ``min_speedup=<float>``,
the smallest of the ratios OpenSpiel time / our time in parts 1 and 2 (against the
default, Python, best response; the C++ ratio is printed for information).

  python benchmarks/bench_solver.py
  python benchmarks/bench_solver.py --max_seconds=60 --output_csv=bench_solver.csv
"""

from __future__ import annotations

import csv
import time

import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from open_spiel.python.algorithms import sequence_form_lp

import smmcts_spiel  # noqa: F401  (registers the smmcts_ games)
from smmcts_spiel import experiments
from smmcts_spiel.exact import exploitability, solver
from smmcts_spiel.exact.random_strategies import (
    RandomInformationStateStrategy,
    random_tabular_policy,
)
from smmcts_spiel.experiments import cli

_GOOFSPIEL = flags.DEFINE_string(
    "goofspiel", "goofspiel(num_cards=4,points_order=descending,imp_info=False)",
    "Goofspiel instance of parts 1 and 2.")
_RANDOM_GAME = flags.DEFINE_string(
    "random_game", "smmcts_random_stacked_matrix(depth=3,branching=3,seed=0)",
    "Random stacked matrix game of parts 1 and 2.")
_REPEATS = flags.DEFINE_integer("repeats", 20, "Runs per timing of ours; the best is reported.",
                                lower_bound=1)
_OPENSPIEL_REPEATS = flags.DEFINE_integer("openspiel_repeats", 5,
                                          "Runs per timing of OpenSpiel's; the best counts.",
                                          lower_bound=1)
_MAX_SECONDS = flags.DEFINE_float("max_seconds", 60.0, "Time budget per Goofspiel size in part 3.")
flags.register_validator("max_seconds", cli.positive_finite,
                         "--max_seconds must be a positive, finite number of seconds")
_MIN_CARDS = flags.DEFINE_integer("min_cards", 3, "First Goofspiel size tried in part 3.",
                                  lower_bound=1)
_MAX_CARDS = flags.DEFINE_integer("max_cards", 8, "Last Goofspiel size tried in part 3.",
                                  lower_bound=1)
_SEED = cli.define_seed("Seed of the random policy of part 2.")
_OUTPUT_CSV = flags.DEFINE_string("output_csv", None,
                                  "Also write every measured time to this CSV file.")
_PUBLISH = cli.define_publish("--output_csv into the committed results")


def best_time(fn, repeats: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _goofspiel_value(cards: int) -> tuple[float, float]:
    game = pyspiel.load_game(
        f"goofspiel(num_cards={cards},points_order=descending,imp_info=False)")
    start = time.perf_counter()
    value = solver.game_value(game)
    return value, time.perf_counter() - start


def solve_goofspiel_within(cards: int, seconds: float):
    """(value, seconds) of Goofspiel with ``cards`` cards, or None past the budget."""
    return experiments.call_within(_goofspiel_value, (cards,), seconds)


def main(argv):
    try:
        if _OUTPUT_CSV.value:
            experiments.outputs.prepare_output_file(_OUTPUT_CSV.value, "--output_csv",
                                                    publish=_PUBLISH.value)
        for flag, name in (("--goofspiel", _GOOFSPIEL.value),
                           ("--random_game", _RANDOM_GAME.value)):
            solver.check_game(cli.load_game(name, flag))
        if _MIN_CARDS.value > _MAX_CARDS.value:
            raise ValueError(f"--min_cards={_MIN_CARDS.value} is above "
                             f"--max_cards={_MAX_CARDS.value}")
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    rows = []
    value_ratios, exploitability_ratios = [], []

    def record(part, game_name, what, ours, theirs, label):
        ratio = theirs / ours
        rows.append({"part": part, "game": game_name, "what": what, "ours_s": ours,
                     "openspiel_s": theirs, "speedup": ratio})
        print(f"  {label}: ours {ours * 1e3:9.2f} ms, OpenSpiel {theirs * 1e3:9.2f} ms, "
              f"ratio {ratio:8.1f}x", flush=True)
        return ratio

    print("1. Game value: solver.game_value vs sequence_form_lp on convert_to_turn_based")
    for name in (_GOOFSPIEL.value, _RANDOM_GAME.value):
        game = pyspiel.load_game(name)
        tb_game = pyspiel.convert_to_turn_based(game)
        ours, value = best_time(lambda game=game: solver.game_value(game), _REPEATS.value)
        theirs, lp = best_time(lambda tb=tb_game: sequence_form_lp.solve_zero_sum_game(tb),
                               _OPENSPIEL_REPEATS.value)
        if abs(value - lp[0]) > 1e-6:
            raise RuntimeError(f"{name}: game_value {value} disagrees with the LP's {lp[0]}")
        print(f"{name}: value {value:.9f} (LP {lp[0]:.9f})")
        value_ratios.append(record(1, name, "game_value", ours, theirs, "game value"))

    print("2. Exploitability (NashConv, e1, e2): fast path vs OpenSpiel's nash_conv")
    for name in (_GOOFSPIEL.value, _RANDOM_GAME.value):
        game = pyspiel.load_game(name)
        tb_game = pyspiel.convert_to_turn_based(game)
        value = solver.game_value(game)
        simultaneous = RandomInformationStateStrategy(_SEED.value)
        for kind, ours_strategy, tabular in (
                ("TabularPolicy on the turn-based game", None,
                 random_tabular_policy(tb_game, _SEED.value)),
                ("strategy on the simultaneous game", simultaneous,
                 exploitability.to_turn_based_tabular_policy(game, simultaneous))):
            strategy = tabular if ours_strategy is None else ours_strategy
            ours, report = best_time(
                lambda g=game, s=strategy, v=value: exploitability.evaluate(g, s, value=v),
                _REPEATS.value)
            theirs, nash_conv = best_time(
                lambda tb=tb_game, p=tabular: openspiel_exploitability.nash_conv(tb, p),
                _OPENSPIEL_REPEATS.value)
            theirs_cpp, nash_conv_cpp = best_time(
                lambda tb=tb_game, p=tabular: openspiel_exploitability.nash_conv(
                    tb, p, use_cpp_br=True),
                _OPENSPIEL_REPEATS.value)
            for reference in (nash_conv, nash_conv_cpp):
                if abs(report.nash_conv - reference) > 1e-9:
                    raise RuntimeError(f"{name}: NashConv {report.nash_conv} disagrees with "
                                       f"OpenSpiel's {reference}")
            print(f"{name}, random {kind}: e1 {report.e1:.6f}, e2 {report.e2:.6f}, "
                  f"NashConv {report.nash_conv:.6f}")
            what = "tabular" if ours_strategy is None else "simultaneous"
            exploitability_ratios.append(record(2, name, f"nash_conv_{what}_python_br", ours,
                                                theirs, "vs Python best response"))
            record(2, name, f"nash_conv_{what}_cpp_br", ours, theirs_cpp, "vs C++ best response")

    print(f"3. Largest Goofspiel (descending, imp_info=False) solved within "
          f"{_MAX_SECONDS.value:g} s")
    largest = None
    for cards in range(_MIN_CARDS.value, _MAX_CARDS.value + 1):
        outcome = solve_goofspiel_within(cards, _MAX_SECONDS.value)
        if outcome is None:
            print(f"  {cards} cards: not solved within {_MAX_SECONDS.value:g} s", flush=True)
            break
        value, seconds = outcome
        largest = cards
        rows.append({"part": 3, "game": f"goofspiel(num_cards={cards})", "what": "game_value",
                     "ours_s": seconds, "openspiel_s": "", "speedup": ""})
        print(f"  {cards} cards: value {value:.9f} in {seconds:.2f} s", flush=True)
    print(f"largest_goofspiel_cards={largest}")

    if _OUTPUT_CSV.value:
        with open(_OUTPUT_CSV.value, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    print(f"min_game_value_speedup={min(value_ratios):.2f}")
    print(f"min_exploitability_speedup={min(exploitability_ratios):.2f}")
    print(f"min_speedup={min(value_ratios + exploitability_ratios):.2f}")


if __name__ == "__main__":
    cli.run(main)
