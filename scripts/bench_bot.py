"""Search speed of SMMCTSBot against OpenSpiel's Python MCTSBot, measured in one run.

Both search Goofspiel with 6 cards in descending point order from the initial state with
one random rollout per new leaf: ours the simultaneous game, OpenSpiel's its
``convert_to_turn_based`` version (its MCTSBot needs a sequential game). Each bot gets a
fresh tree per repeat; the median rate is reported. Last line: ``ratio=<float>``.
"""

import statistics
import time

import numpy as np
import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import mcts

from smmcts_spiel.search import SMMCTS

_GAME = flags.DEFINE_string("game", "goofspiel(num_cards=6,points_order=descending,"
                            "imp_info=False)", "Simultaneous-move game to search.")
_ITERATIONS = flags.DEFINE_integer("iterations", 20_000, "Iterations per timed search.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed searches per bot (median reported).")
_SELECTOR = flags.DEFINE_string("selector", "rm", "Our selector.")


def rate(search, repeats: int, iterations: int) -> float:
    rates = []
    for seed in range(repeats):
        start = time.perf_counter()
        search(seed)
        rates.append(iterations / (time.perf_counter() - start))
    return statistics.median(rates)


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

    ours_rate = rate(ours, _REPEATS.value, n)
    theirs_rate = rate(openspiel, _REPEATS.value, n)
    print(f"game: {_GAME.value}, {n} iterations per search, median of {_REPEATS.value}")
    print(f"SMMCTSBot ({_SELECTOR.value}) iterations/s:                    {ours_rate:10.0f}")
    print(f"OpenSpiel Python MCTSBot (turn-based) simulations/s: {theirs_rate:10.0f}")
    print(f"ratio={ours_rate / theirs_rate:.2f}")


if __name__ == "__main__":
    app.run(main)
