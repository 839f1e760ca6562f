"""Speed of the fast explicit-tree engine against the engines over pyspiel states, in one run.

All engines search the same registered game, ``smmcts_random_stacked_matrix`` (depth 2,
branching 2 by default): the fast engine (:mod:`smmcts_spiel.search.matrix_tree_engine`) on
its explicit tree, the generic array engine (:class:`smmcts_spiel.search.array_engine.
ArraySMMCTS`) and the reference engine (:class:`smmcts_spiel.search.smmcts.SMMCTS`) on
pyspiel states, and OpenSpiel's Python ``MCTSBot`` on its ``convert_to_turn_based`` version (a
second baseline: it needs a sequential game). Rates are iterations per second of CPU time
of this single-threaded process (so other load on the machine does not distort them);
each is the median of --repeats timed searches after a warm-up. Last line:
``iterations_per_second=<float>`` (the fast engine).
"""

import statistics
import time

import numpy as np
import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import mcts

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import trees
from smmcts_spiel.exact import solver
from smmcts_spiel.experiments import cli
from smmcts_spiel.search import matrix_tree_engine as engine
from smmcts_spiel.search.array_engine import ArraySMMCTS
from smmcts_spiel.search.smmcts import SMMCTS

_DEPTH = flags.DEFINE_integer("depth", 2, "Depth of the random stacked matrix game.",
                              lower_bound=1)
_BRANCHING = flags.DEFINE_integer("branching", 2, "Actions per player per stage.",
                                  lower_bound=1)
_SEED = cli.define_seed("Seed of the game's utilities and of the searches.")
_SELECTOR = flags.DEFINE_string("selector", "rm", "Selector of both SM-MCTS engines.")
_FAST_ITERATIONS = flags.DEFINE_integer("fast_iterations", 2_000_000,
                                        "Iterations per timed fast search.", lower_bound=1)
_ITERATIONS = flags.DEFINE_integer("iterations", 20_000,
                                   "Iterations per timed pyspiel-state / OpenSpiel search.",
                                   lower_bound=1)
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed searches per engine (median reported).",
                                lower_bound=1)


def rate(search, iterations: int, repeats: int) -> float:
    rates = []
    for seed in range(repeats):
        start = time.process_time()
        search(seed)
        rates.append(iterations / (time.process_time() - start))
    return statistics.median(rates)


def main(argv):
    try:
        game = pyspiel.load_game("smmcts_random_stacked_matrix",
                                 {"depth": _DEPTH.value, "branching": _BRANCHING.value,
                                  "seed": _SEED.value})
    except ValueError as e:
        raise app.UsageError(f"--depth, --branching: {e}") from None
    flat = trees.flatten(game.tree)
    value = solver.tree_value(game.tree)
    turn_based = pyspiel.convert_to_turn_based(game)

    def fast_search(seed, iterations=_FAST_ITERATIONS.value):
        engine.exploitability_curves(flat, _SELECTOR.value, checkpoints=[iterations],
                                   seeds=[_SEED.value * 1000 + seed], game_value=value)

    def generic_search(seed):
        ArraySMMCTS(game, selector=_SELECTOR.value, seed=seed).run(game.new_initial_state(),
                                                                   _ITERATIONS.value)

    def reference_search(seed):
        SMMCTS(game, selector=_SELECTOR.value, seed=seed).run(game.new_initial_state(),
                                                              _ITERATIONS.value)

    def openspiel_search(seed):
        rng = np.random.RandomState(seed)
        bot = mcts.MCTSBot(turn_based, 2.0, _ITERATIONS.value,
                           mcts.RandomRolloutEvaluator(random_state=rng), solve=False,
                           random_state=rng)
        bot.mcts_search(turn_based.new_initial_state())

    fast_search(0, 1000)  # compile (or load numba's cache) outside the timing
    ArraySMMCTS(game)
    fast_rate = rate(fast_search, _FAST_ITERATIONS.value, _REPEATS.value)
    generic_rate = rate(generic_search, _ITERATIONS.value, _REPEATS.value)
    reference_rate = rate(reference_search, _ITERATIONS.value, _REPEATS.value)
    openspiel_rate = rate(openspiel_search, _ITERATIONS.value, _REPEATS.value)
    print(f"game: {game}, selector {_SELECTOR.value}, median of {_REPEATS.value} searches, "
          "per second of CPU time")
    print(f"fast engine (matrix_tree_engine) iterations/s:       {fast_rate:12.0f}")
    print(f"generic array engine (ArraySMMCTS) iterations/s:     {generic_rate:12.0f}")
    print(f"reference engine (SMMCTS) iterations/s:              {reference_rate:12.0f}")
    print(f"OpenSpiel Python MCTSBot (turn-based) simulations/s: {openspiel_rate:12.0f}")
    print(f"ratio fast / generic: {fast_rate / generic_rate:.1f}, fast / reference: "
          f"{fast_rate / reference_rate:.1f}")
    print(f"ratio fast / OpenSpiel MCTSBot: {fast_rate / openspiel_rate:.1f}")
    print(f"iterations_per_second={fast_rate:.1f}")


if __name__ == "__main__":
    cli.run(main)
