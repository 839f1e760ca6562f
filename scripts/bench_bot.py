"""Search speed of SMMCTSBot against OpenSpiel's Python MCTSBot, measured in one run.

Both search Goofspiel with 6 cards in descending point order from the initial state with
one random rollout per new leaf: ours the simultaneous game, OpenSpiel's its
``convert_to_turn_based`` version (its MCTSBot needs a sequential game). Each bot gets a
fresh tree per repeat. The two are timed alternately (ours, theirs, ours, ...) so that
a change in machine load hits both; the ratio is the median of the per-repeat ratios.
Last line: ``ratio=<float>``.
"""

import statistics
import time

import numpy as np
import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import mcts

from smmcts_spiel.search.smmcts import SMMCTS

_GAME = flags.DEFINE_string("game", "goofspiel(num_cards=6,points_order=descending,"
                            "imp_info=False)", "Simultaneous-move game to search.")
_ITERATIONS = flags.DEFINE_integer("iterations", 20_000, "Iterations per timed search.")
_REPEATS = flags.DEFINE_integer("repeats", 5, "Timed searches per bot (medians reported).",
                                lower_bound=1)
_SELECTOR = flags.DEFINE_string("selector", "rm", "Our selector.")


def rate(search, seed: int, iterations: int) -> float:
    start = time.perf_counter()
    search(seed)
    return iterations / (time.perf_counter() - start)


def main(argv):
    del argv
    game = pyspiel.load_game(_GAME.value)
    turn_based = pyspiel.convert_to_turn_based(game)
    n = _ITERATIONS.value

    def ours(seed):
        SMMCTS(game, selector=_SELECTOR.value, seed=seed).run(game.new_initial_state(), n)

    def openspiel(seed):
        rng = np.random.RandomState(seed)
        bot = mcts.MCTSBot(turn_based, 2.0, n, mcts.RandomRolloutEvaluator(random_state=rng),
                           solve=False, random_state=rng)
        bot.mcts_search(turn_based.new_initial_state())

    ours_rates, theirs_rates = [], []
    for seed in range(_REPEATS.value):
        ours_rates.append(rate(ours, seed, n))
        theirs_rates.append(rate(openspiel, seed, n))
    ratios = [a / b for a, b in zip(ours_rates, theirs_rates)]
    print(f"game: {_GAME.value}, {n} iterations per search, {_REPEATS.value} repeats each")
    print(f"SMMCTSBot ({_SELECTOR.value}) iterations/s, median:                    "
          f"{statistics.median(ours_rates):10.0f}")
    print(f"OpenSpiel Python MCTSBot (turn-based) simulations/s, median: "
          f"{statistics.median(theirs_rates):10.0f}")
    print("per-repeat ratios: " + ", ".join(f"{r:.2f}" for r in ratios))
    print(f"ratio={statistics.median(ratios):.2f}")


if __name__ == "__main__":
    app.run(main)
