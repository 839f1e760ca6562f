"""Start-up time: from a new process to the first move, beside OpenSpiel's C++ bots.

Per row (a bot and a game), a new Python process imports pyspiel and the bot, builds it
with a 1,000-iteration budget and makes one move from the first decision (after the first
chance outcome where the game starts with one): cold, with an empty numba cache folder
(``NUMBA_CACHE_DIR``, so every compiled function the bot needs is compiled), then
``--repeats`` times warm, with the folder that run filled. Beside it in the same run, in
new processes as well, OpenSpiel's C++ ``pyspiel.MCTSBot`` (1,000 simulations, one random
rollout) on the game's ``convert_to_turn_based`` version (its Python ``MCTSBot`` on the
Python-defined ``smmcts_*`` games, which the C++ bot cannot play), or its C++ ``ISMCTSBot``
on an imperfect-information game ("nan" where it refuses the game). Wall seconds
(``time.perf_counter`` around the process) and CPU seconds (user + system of the process,
``RUSAGE_CHILDREN``), the warm ones as medians.
The last lines are ``max_warm_cpu=`` and ``max_cold_cpu=`` over the rows.

    python benchmarks/bench_startup.py                       every row: several minutes
    python benchmarks/bench_startup.py --rows="SMMCTSBot:blotto" --nocold
"""

from __future__ import annotations

import csv
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from absl import flags

from smmcts_spiel import experiments
from smmcts_spiel.experiments import cli

#: bot:game rows measured by default: one game per built-in kernel, the generic engine's
#: tic-tac-toe and the information-set searches on Leduc poker.
ROWS = (
    "SMMCTSBot:goofspiel(imp_info=False)", "SMMCTSBot:oshi_zumo",
    "SMMCTSBot:smmcts_random_stacked_matrix", "SMMCTSBot:blotto", "SMMCTSBot:matrix_rps",
    "SMMCTSBot:markov_soccer", "SMMCTSBot:capture_the_flag",
    "SMMCTSBot:laser_tag(zero_sum=true)", "SMMCTSBot:smmcts_pursuit_evasion",
    "SMMCTSBot:smmcts_tron", "SMMCTSBot:tic_tac_toe", "OOSBot:leduc_poker",
    "ISSMMCTSBot:leduc_poker",
)

_ROWS = flags.DEFINE_list("rows", list(ROWS), "bot:game pairs; bot one of SMMCTSBot, OOSBot, "
                          "ISSMMCTSBot.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Warm processes per row (median).",
                                lower_bound=1)
_COLD = flags.DEFINE_bool("cold", True, "Also one process per row with an empty numba cache.")
_CSV = flags.DEFINE_string("csv", None, "Also write the rows to this CSV.")
_PUBLISH = cli.define_publish("--csv into the committed benchmarks")

_FIRST_MOVE = """
import sys
import pyspiel
if sys.argv[1].startswith("smmcts_"):
    import smmcts_spiel  # registers the smmcts_* games
game = pyspiel.load_game(sys.argv[1])


def first_decision_state(game):  # here, not imported: the probe imports only what it times
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state
"""
OURS = _FIRST_MOVE + """
from smmcts_spiel import bots
bot = getattr(bots, sys.argv[2])(game, 0, iterations=1000, seed=0)
bot.step(first_decision_state(game))
"""
OPENSPIEL = _FIRST_MOVE + """
evaluator = pyspiel.RandomRolloutEvaluator(1, 0)
kind = game.get_type()
if kind.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
    game = pyspiel.convert_to_turn_based(game)
if sys.argv[1].startswith("smmcts_"):  # a Python-defined game: the C++ bot cannot play it
    import numpy as np
    from open_spiel.python.algorithms import mcts
    bot = mcts.MCTSBot(game, 2.0, 1000, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)),
                       random_state=np.random.RandomState(0))
elif (kind.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
        or kind.information == pyspiel.GameType.Information.PERFECT_INFORMATION):
    bot = pyspiel.MCTSBot(game, evaluator, 2.0, 1000, 2000, False, 0, False)
else:
    bot = pyspiel.ISMCTSBot(0, evaluator, 2.0, 1000)
bot.step(first_decision_state(game))
"""


def timed(code: str, args: list[str], cache_dir: str) -> tuple[float, float]:
    """(wall, CPU) seconds of a new Python process running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                            text=True, env={**os.environ, "NUMBA_CACHE_DIR": cache_dir})
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"the first move of {args} failed:\n{result.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(bot: str, game: str, repeats: int, cold: bool) -> dict:
    row: dict = {"bot": bot, "game": game}
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        if cold:
            row["cold_wall"], row["cold_cpu"] = timed(OURS, [game, bot], cache)
        else:
            timed(OURS, [game, bot], cache)
        warm = [timed(OURS, [game, bot], cache) for _ in range(repeats)]
        try:
            theirs = [timed(OPENSPIEL, [game], cache) for _ in range(repeats)]
        except RuntimeError:  # e.g. the C++ bot refuses rewards along the way (laser_tag)
            theirs = [(math.nan, math.nan)]
    row["warm_wall"] = statistics.median(w for w, _ in warm)
    row["warm_cpu"] = statistics.median(c for _, c in warm)
    row["openspiel_wall"] = statistics.median(w for w, _ in theirs)
    row["openspiel_cpu"] = statistics.median(c for _, c in theirs)
    return row


def run_benchmark() -> None:
    rows = []
    for spec in _ROWS.value:
        bot, sep, game = spec.partition(":")
        if not sep or bot not in ("SMMCTSBot", "OOSBot", "ISSMMCTSBot"):
            raise ValueError(f"--rows: {spec!r} is not bot:game with bot one of "
                             "SMMCTSBot, OOSBot, ISSMMCTSBot")
        rows.append((bot, game))
    if _CSV.value:
        experiments.check_output([_CSV.value], publish=_PUBLISH.value)
    print(f"load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, Python "
          f"{sys.version.split()[0]}")
    print("| bot | game | cold wall | cold CPU | warm wall | warm CPU | OpenSpiel wall | CPU |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    measured = []
    for bot, game in rows:
        row = measure(bot, game, _REPEATS.value, _COLD.value)
        measured.append(row)
        cold = (f"{row['cold_wall']:.1f} | {row['cold_cpu']:.1f}" if _COLD.value else "- | -")
        print(f"| {bot} | `{game}` | {cold} | {row['warm_wall']:.2f} | {row['warm_cpu']:.2f} | "
              f"{row['openspiel_wall']:.2f} | {row['openspiel_cpu']:.2f} |", flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")
    print(f"max_warm_cpu={max(r['warm_cpu'] for r in measured):.2f}")
    if _COLD.value:
        print(f"max_cold_cpu={max(r['cold_cpu'] for r in measured):.1f}")
    if _CSV.value:
        with open(_CSV.value, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(measured[0]))
            writer.writeheader()
            writer.writerows(measured)


if __name__ == "__main__":
    cli.run(cli.main_of(run_benchmark))
