"""Speed of Online Outcome Sampling, against OpenSpiel's C++ outcome sampling in the same run.

For each game, iterations per second (one iteration = one sampled episode from the root of
the game, update players alternating, the same unit for every row) of:
  * OOS compiled on the game's information kernel (smmcts_spiel.imperfect.oos_kernel),
    untargeted (delta=0) and targeted (delta=0.9) at an information set a few moves deep;
  * OOS over pyspiel states (smmcts_spiel.imperfect.oos, the generic engine), the same two;
  * OpenSpiel's C++ OutcomeSamplingMCCFRSolver (no targeting, no incremental tree: its
    tables hold every information set it has met), on the same (turn-based) game.
Timed runs start from empty tables; a warm-up compiles numba first. Ratios are printed
against the C++ solver. Timing-sensitive: run it on a quiet machine, pinned to one core
(e.g. ``taskset -c 1``).

  .venv/bin/python benchmarks/bench_oos.py --seconds=2
"""

from __future__ import annotations

import time

import numpy as np
import pyspiel
from absl import app, flags

import smmcts_spiel  # noqa: F401
from smmcts_spiel.experiments import cli
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.imperfect.oos import OutcomeSampling
from smmcts_spiel.imperfect.oos_kernel import KernelOutcomeSampling

_GAMES = flags.DEFINE_string("games", "kuhn_poker;leduc_poker;goofspiel(num_cards=4,imp_info=True);"
                             "goofspiel(num_cards=6,imp_info=True);phantom_ttt",
                             "Games with an information kernel, separated by ';' (or ',').")
_SECONDS = flags.DEFINE_float("seconds", 2.0, "Seconds timed per row.", lower_bound=0.01)
_DEPTH = flags.DEFINE_integer("depth", 4, "Actions before the targeted information set.",
                              lower_bound=0)
_SEED = cli.define_seed("Seed of every generator.")


def _oos_rate(cls, game, delta, target, seconds) -> float:
    search = cls(game, delta=delta, seed=_SEED.value)
    if target is not None:
        search.target(target)
    start = time.perf_counter()
    done = search.run(None, seconds)
    return done / (time.perf_counter() - start)


def _cpp_rate(game, seconds, seed) -> float:
    solver = pyspiel.OutcomeSamplingMCCFRSolver(game, 0.6, seed)
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            solver.run_iteration()
        done += 100
    return done / (time.perf_counter() - start)


def main(argv):
    del argv
    try:  # KernelOutcomeSampling refuses a game without an information kernel
        games = cli.load_games(_GAMES.value, check=KernelOutcomeSampling)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    seconds = _SECONDS.value
    rng = np.random.default_rng(_SEED.value)
    print(f"{'game':<40} {'compiled':>10} {'targeted':>10} {'python':>9} {'targeted':>9} "
          f"{'C++ OS':>9} {'compiled/C++':>12}  {'python/C++':>10}")
    for game_string, game in games.items():
        KernelOutcomeSampling(game, seed=0).run(100)  # compile
        search_game = KernelOutcomeSampling(game, seed=0).search_game
        target = information_sets.random_decision_state(search_game, rng, _DEPTH.value)
        rates = {}
        for name, cls in (("compiled", KernelOutcomeSampling), ("python", OutcomeSampling)):
            budget = seconds if name == "compiled" else seconds / 2
            rates[name] = _oos_rate(cls, game, 0.0, None, budget)
            rates[name + "_targeted"] = _oos_rate(cls, game, 0.9, target, budget)
        rates["cpp"] = _cpp_rate(search_game, seconds, _SEED.value)
        print(f"{game_string:<40} {rates['compiled']:>10,.0f} {rates['compiled_targeted']:>10,.0f} "
              f"{rates['python']:>9,.0f} {rates['python_targeted']:>9,.0f} {rates['cpp']:>9,.0f} "
              f"{rates['compiled'] / rates['cpp']:>12.1f}  {rates['python'] / rates['cpp']:>10.2f}",
              flush=True)


if __name__ == "__main__":
    cli.run(main)
