"""Training speed of MMCTS on Phantom Tic-Tac-Toe, against OpenSpiel baselines in the same run.

Measures, on OpenSpiel's ``phantom_ttt``:
  * the numba array engine (smmcts_spiel.imperfect.mmcts_phantom_ttt): training iterations
    per second;
  * the generic engine over pyspiel states (smmcts_spiel.imperfect.mmcts): iterations per second;
  * OpenSpiel's Python ISMCTSBot (random rollouts): simulations per second from the root.
One MMCTS iteration and one ISMCTS simulation are the same unit of work: one playout of
the game from the root that updates the searched tree(s).

The last line is ``iterations_per_second=<float>`` (the array engine).

  .venv/bin/python benchmarks/bench_mmcts.py --iterations=2000000
"""

import time

import numpy as np
from absl import app, flags
from open_spiel.python.algorithms import ismcts, mcts

from smmcts_spiel.experiments import cli
from smmcts_spiel.imperfect import mmcts
from smmcts_spiel.imperfect.mmcts_phantom_ttt import PhantomTTTMultipleTreeSearch

_ITERATIONS = flags.DEFINE_integer("iterations", 2_000_000,
                                   "MMCTS iterations timed on the array engine.", lower_bound=1)
_GENERIC_ITERATIONS = flags.DEFINE_integer("generic_iterations", 20_000,
                                           "Iterations timed on the generic engine.",
                                           lower_bound=1)
_ISMCTS_SIMULATIONS = flags.DEFINE_integer("ismcts_simulations", 5_000,
                                           "ISMCTS simulations timed (one search).",
                                           lower_bound=1)
_GAMMA = flags.DEFINE_float("gamma", 0.05, "Exp3 exploration probability.")
_SEED = cli.define_seed("Seed of every generator.")
flags.register_validator("gamma", lambda g: 0 < g <= 1, "--gamma must be in (0, 1]")
_GAME = flags.DEFINE_string("game", "phantom_ttt", "Game string (classical Phantom Tic-Tac-Toe).")


def _rate(work, run) -> float:
    start = time.perf_counter()
    run()
    return work / (time.perf_counter() - start)


def main(argv):
    del argv
    try:
        game = cli.load_game(_GAME.value)
        mmcts.check_game(game)
        if game.get_type().short_name != "phantom_ttt":
            raise ValueError(f"--game: the array engine plays phantom_ttt, not {game}")
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    PhantomTTTMultipleTreeSearch(game, _GAMMA.value, _SEED.value).train(1000)  # compile
    arrays = PhantomTTTMultipleTreeSearch(game, _GAMMA.value, _SEED.value)
    arrays_rate = _rate(_ITERATIONS.value, lambda: arrays.train(_ITERATIONS.value))
    generic = mmcts.MultipleTreeSearch(game, _GAMMA.value, _SEED.value)
    generic_rate = _rate(_GENERIC_ITERATIONS.value,
                         lambda: generic.train(_GENERIC_ITERATIONS.value))
    bot = ismcts.ISMCTSBot(
        game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(_SEED.value)), 2.0,
        _ISMCTS_SIMULATIONS.value, random_state=np.random.RandomState(_SEED.value))
    # At the root nothing is hidden: the only consistent world is the state itself.
    bot.set_resampler(lambda state, player: state.clone())
    root = game.new_initial_state()
    ismcts_rate = _rate(_ISMCTS_SIMULATIONS.value, lambda: bot.step(root))
    print(f"game: {game}  gamma={_GAMMA.value}  seed={_SEED.value}")
    print(f"array engine (numba):   {arrays_rate:12,.0f} iterations/s "
          f"({_ITERATIONS.value:,} iterations, nodes per tree {arrays.num_nodes.tolist()})")
    print(f"generic engine (pyspiel): {generic_rate:10,.0f} iterations/s "
          f"({_GENERIC_ITERATIONS.value:,} iterations)")
    print(f"OpenSpiel ISMCTSBot:    {ismcts_rate:12,.0f} simulations/s "
          f"({_ISMCTS_SIMULATIONS.value:,} simulations from the root)")
    print(f"ratio array engine / ISMCTSBot:    {arrays_rate / ismcts_rate:10.1f}")
    print(f"ratio array engine / generic engine: {arrays_rate / generic_rate:8.1f}")
    print(f"iterations_per_second={arrays_rate:.1f}")


if __name__ == "__main__":
    cli.run(main)
