"""Benchmark: the AIJ 2016 study's exact solvers (BI, DO, BIAB, DOAB) side by side.

Each game is solved by each method (``smmcts_spiel.exact.pruned_induction.solve_value``)
in a fresh process, stopped after ``--max_seconds``; the value is checked against
backward induction's (``solver.game_value``, also timed) and the study's statistics are
printed: nodes evaluated, stage games solved, serialized-search nodes, states settled by
the serialized bounds, best-response candidates pruned. Times are processor seconds of
the solve alone (the process start and the game's loading excluded).

  python benchmarks/bench_exact.py
  python benchmarks/bench_exact.py --methods=biab,doab --max_seconds=600 \
      --games="goofspiel(num_cards=7,imp_info=False,points_order=descending)"
"""

from __future__ import annotations

import csv
import dataclasses
import time

import pyspiel
from absl import app, flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_ games)
from smmcts_spiel import experiments
from smmcts_spiel.exact import pruned_induction, solver
from smmcts_spiel.experiments import cli

_GAMES = flags.DEFINE_string(
    "games", "goofspiel(num_cards=5,imp_info=False,points_order=descending);"
    "goofspiel(num_cards=5,imp_info=False,points_order=random);"
    "oshi_zumo(coins=13,size=4,horizon=20,min_bid=1);"
    "smmcts_random_stacked_matrix(depth=3,branching=4,seed=0)",
    "Games to solve: game strings separated by ';' (or ',' outside parentheses).")
_METHODS = flags.DEFINE_list("methods", list(pruned_induction.METHODS),
                             f"Methods, of {', '.join(pruned_induction.METHODS)}.")
_MAX_SECONDS = flags.DEFINE_float("max_seconds", 120.0, "Budget per solve (wall-clock seconds).")
flags.register_validator("max_seconds", cli.positive_finite,
                         "--max_seconds must be a positive, finite number of seconds")
_OUTPUT_CSV = flags.DEFINE_string("output_csv", None, "Also write every row to this CSV file.")
_PUBLISH = cli.define_publish("--output_csv into the committed results")


def _solve(name: str, method: str | None):
    """``(value, seconds, statistics)`` of one solve (``method`` None: ``solver.game_value``,
    without statistics)."""
    game = pyspiel.load_game(name)
    limits = solver.size_limits(enforced=False)
    if method is None:
        start = time.process_time()
        value = solver.game_value(game, **limits)
        return value, time.process_time() - start, None
    result = pruned_induction.solve_value(game, method, **limits)
    return result.value, result.statistics.seconds, result.statistics


def solve_within(name: str, method: str | None, seconds: float):
    """:func:`_solve` in its own process, or None past the budget."""
    return experiments.call_within(_solve, (name, method), seconds)


def main(argv):
    try:
        if _OUTPUT_CSV.value:
            experiments.outputs.prepare_output_file(_OUTPUT_CSV.value, "--output_csv",
                                                    publish=_PUBLISH.value)
        for method in _METHODS.value:
            pruned_induction.check_method(method)
        games = cli.load_games(_GAMES.value, "--games", check=solver.check_game)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    rows = []
    fields = [f.name for f in dataclasses.fields(pruned_induction.SolveStatistics)]
    for name in games:
        print(name, flush=True)
        reference = solve_within(name, None, _MAX_SECONDS.value)
        if reference is None:
            print(f"  solver.game_value: not solved within {_MAX_SECONDS.value:g} s")
        else:
            print(f"  solver.game_value: value {reference[0]:.9f} in {reference[1]:.2f} s")
            rows.append({"game": name, "method": "game_value", "value": reference[0],
                         "seconds": reference[1]})
        for method in _METHODS.value:
            outcome = solve_within(name, method, _MAX_SECONDS.value)
            if outcome is None:
                print(f"  {method:5s} not solved within {_MAX_SECONDS.value:g} s", flush=True)
                continue
            value, seconds, statistics = outcome
            if reference is not None and abs(value - reference[0]) > 1e-6:
                raise RuntimeError(f"{name}: {method} found {value}, BI {reference[0]}")
            row = {"game": name, **dataclasses.asdict(statistics), "value": value}
            rows.append(row)
            print(f"  {method:5s} {seconds:8.2f} s  nodes {statistics.nodes_evaluated:>9,}  "
                  f"stage games {statistics.matrix_games:>9,}  serialized "
                  f"{statistics.serialized_nodes:>9,}  settled {statistics.settled_by_bounds:>8,}"
                  f"  pruned {statistics.pruned:>9,}  states {statistics.states:>9,}", flush=True)
    if _OUTPUT_CSV.value and rows:
        with open(_OUTPUT_CSV.value, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["game", *fields, "value"])
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    cli.run(main)
