"""Speed of information-set SM-MCTS, compiled and in Python, against OpenSpiel's ISMCTS.

For each game, iterations per second (one iteration = one world drawn from the searching
player's information set and played to the end; OpenSpiel's ISMCTS: one simulation, the
same unit) from one decision a few moves deep, the trees empty at the start, of:
  * IS-SM-MCTS compiled on the game's information kernel (smmcts_spiel.imperfect.
    is_smmcts_kernel), with RM and with Exp3;
  * IS-SM-MCTS over pyspiel states (smmcts_spiel.imperfect.is_smmcts), the same two;
  * OpenSpiel's Python ISMCTSBot (UCT, one random rollout per simulation), drawing its
    worlds from the same information set (smmcts_spiel.bots.openspiel_bots.ISMCTSBot).
All in the same run; ratios against OpenSpiel's ISMCTS and compiled / Python. A warm-up
compiles numba first. Timing-sensitive: run it on a quiet machine, pinned to one core
(e.g. ``taskset -c 1``).

  python benchmarks/bench_is_smmcts.py --seconds=2
"""

from __future__ import annotations

import time

import numpy as np
import pyspiel
from absl import app, flags

import smmcts_spiel  # noqa: F401
from smmcts_spiel.bots.openspiel_bots import ISMCTSBot
from smmcts_spiel.experiments import cli
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.imperfect.is_smmcts import InformationSetSMMCTS
from smmcts_spiel.imperfect.is_smmcts_kernel import KernelInformationSetSMMCTS

_GAMES = flags.DEFINE_string("games", "kuhn_poker;leduc_poker;goofspiel(num_cards=6,imp_info=True);"
                             "phantom_ttt",
                             "Games with an information kernel, separated by ';' (or ',').")
_SECONDS = flags.DEFINE_float("seconds", 2.0, "Seconds timed per row.", lower_bound=0.01)
_DEPTH = flags.DEFINE_integer("depth", 2, "Actions before the searched decision.",
                              lower_bound=0)
_SEED = cli.define_seed("Seed of every generator.")


def decision(game: pyspiel.Game, rng: np.random.Generator) -> tuple[pyspiel.State, int]:
    """A state of ``game`` where a player decides, about --depth actions deep, and that
    player (the first mover of a simultaneous round)."""
    search_game = information_sets.check_sequential_search_game(game, "the benchmark")
    target = information_sets.random_decision_state(search_game, rng, _DEPTH.value)
    history = target.history()
    if search_game is not game and target.current_player() == 1:
        history = history[:-1]  # the round's hidden first move
    return information_sets.replay(game, history), target.current_player()


def search_rate(cls, game, state, player, selector, seconds) -> float:
    search = cls(game, selector, gamma=0.1, seed=_SEED.value)
    worlds = search.worlds(state, player)
    start = time.perf_counter()
    done = search.run(worlds, None, seconds)
    return done / (time.perf_counter() - start)


def ismcts_rate(game, state, player, seconds) -> float:
    search_game = information_sets.check_sequential_search_game(game, "the benchmark")
    decision_state = information_sets.decision_state(search_game, state, player)
    simulations, elapsed = 100, 0.0
    done = 0
    while elapsed < seconds:
        bot = ISMCTSBot(search_game, player, simulations=simulations, seed=_SEED.value + done,
                        worlds="information_set")
        start = time.perf_counter()
        bot.step_with_policy(decision_state)
        elapsed += time.perf_counter() - start
        done += simulations
    return done / elapsed


def main(argv):
    del argv
    try:  # the compiled search refuses a game without an information kernel
        games = cli.load_games(_GAMES.value, check=KernelInformationSetSMMCTS)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    seconds = _SECONDS.value
    rng = np.random.default_rng(_SEED.value)
    print(f"{'game':<40} {'compiled RM':>11} {'Exp3':>9} {'python RM':>10} {'Exp3':>7} "
          f"{'ISMCTS':>7} {'compiled/python':>15} {'compiled/ISMCTS':>15}")
    for game_string, game in games.items():
        state, player = decision(game, rng)
        for selector in ("rm", "exp3"):  # warm-up: loads (or compiles) the numba code
            search_rate(KernelInformationSetSMMCTS, game, state, player, selector, 0.05)
        rates = {}
        for name, cls in (("compiled", KernelInformationSetSMMCTS),
                          ("python", InformationSetSMMCTS)):
            for selector in ("rm", "exp3"):
                rates[name, selector] = search_rate(cls, game, state, player, selector, seconds)
        rates["ismcts"] = ismcts_rate(game, state, player, seconds)
        print(f"{game_string:<40} {rates['compiled', 'rm']:>11,.0f} "
              f"{rates['compiled', 'exp3']:>9,.0f} {rates['python', 'rm']:>10,.0f} "
              f"{rates['python', 'exp3']:>7,.0f} {rates['ismcts']:>7,.0f} "
              f"{rates['compiled', 'rm'] / rates['python', 'rm']:>15.1f} "
              f"{rates['compiled', 'rm'] / rates['ismcts']:>15.1f}", flush=True)


if __name__ == "__main__":
    cli.run(main)
