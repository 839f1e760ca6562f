"""GTLibrary's SM-MCTS beside ours on the AIJ 2016 study's offline games, in one run.

Per repeat, game and selector, the two sides take turns (GTLibrary, ours, GTLibrary, ours,
...): GTLibrary's search runs in a JVM started from ``--gtlibrary_classpath`` (its sources
compiled with the small driver ``GtlibrarySide`` that ``GTLIBRARY.md`` beside this file
gives), ours in this process (``SMMCTSBot``, kernel engine, one thread, random rollouts as
GTLibrary's ``DefaultSimulator``). Each side searches until its search thread has used each
``--checkpoints`` CPU seconds in turn (GTLibrary's runner times its search by the same thread
CPU clock), so the machine's other load costs neither side iterations; process CPU and
wall seconds are counted over the searches too, without the evaluations. At each
checkpoint: iterations, iterations per CPU second (overall, and over the last segment, after
the JVM's and numba's warm-up), and with ``--nash_conv`` the NashConv of each side's tree
strategy measured by our exact evaluator (uniform where a tree never went), GTLibrary's
strategy read from the file its driver writes. GTLibrary's own measure (its runner's
"Precision", br0 + br1 of ``SQFBestResponseAlgorithm``) is printed beside it: it treats
sequences outside the tree as never played, so it differs from ours on young trees.

Selectors and constants are the paper's (RM and Exp3 gamma 0.1; UCT's C per game on
rewards in [-1, 1], ours ``c = C / 2`` on rewards in [0, 1]); the final strategy is the one
GTLibrary's ``MeanStratDist`` reads: RM's and Exp3's average strategy without exploration,
UCT's visit frequencies. The last lines are ``ratio <game> <selector> ours/gtlibrary=<median
of the per-repeat ratios of steady iterations per CPU second>``. Without
``--gtlibrary_classpath`` only our side runs.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass

import pyspiel
from absl import app, flags

from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import exploitability, solver
from smmcts_spiel.experiments import cli
from smmcts_spiel.experiments.aij2016 import PAPER_UCT_TIE_TOLERANCE


@dataclass(frozen=True)
class PaperGame:
    """One of the study's offline games on both sides, and its UCT constant."""

    ours: str
    gtlibrary: str
    uct_c: float  # the paper's C, on rewards in [-1, 1]
    to_action: int  # our action id = GTLibrary's action value + to_action


#: The study's offline convergence games: Goofspiel-5 with a fixed (descending) prize
#: sequence, GTLibrary's seed 1, cards 1..5 as OpenSpiel's; Oshi-Zumo(10, 3, 1). Win/tie/lose.
PAPER_GAMES = {
    "gs5": PaperGame("goofspiel(num_cards=5,points_order=descending,imp_info=False,"
                     "returns_type=win_loss)", "gs:5:1", 5.0, -1),
    "oz10": PaperGame("oshi_zumo(coins=10,size=3,min_bid=1)", "oz:10:3:1", 2.0, 0),
}
#: The paper's exploration of RM and Exp3.
PAPER_GAMMA = 0.1
SELECTORS = ("rm", "exp3", "uct")

_GAMES = flags.DEFINE_list("games", ["gs5", "oz10"], f"Games: {', '.join(PAPER_GAMES)}.")
_SELECTORS = flags.DEFINE_list("selectors", list(SELECTORS), "Selectors: rm, exp3, uct.")
_CHECKPOINTS = flags.DEFINE_list(
    "checkpoints", ["1", "3", "10"], "Cumulative search-thread CPU seconds at which each "
    "side reports (increasing).")
_REPEATS = flags.DEFINE_integer("repeats", 2, "Rounds of GTLibrary then ours.", lower_bound=1)
_NASH_CONV = flags.DEFINE_bool("nash_conv", True, "Measure NashConv at each checkpoint.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of repeat 0 (repeat r uses seed + r).",
                             lower_bound=0)
_CLASSPATH = flags.DEFINE_string(
    "gtlibrary_classpath", None, "java -cp of GTLibrary's compiled classes, the driver and "
    "commons-lang3 and wicket-util (GTLIBRARY.md); unset: our side only.")
_JAVA = flags.DEFINE_string("java", "java", "The java command.")
_JAVA_OPTIONS = flags.DEFINE_string("java_options", "", "Extra JVM options, e.g. -Xmx2g.")


def checkpoints() -> list[float]:
    try:
        values = [float(x) for x in _CHECKPOINTS.value]
    except ValueError:
        raise app.UsageError(f"--checkpoints are seconds, got {_CHECKPOINTS.value}") from None
    if (not values or values[0] <= 0 or not all(map(math.isfinite, values))
            or any(b <= a for a, b in zip(values, values[1:]))):
        raise app.UsageError(f"--checkpoints must be positive, finite and increasing, got "
                             f"{values}")
    return values


def parse_fields(line: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in line.split()[1:] if "=" in item)


class TablePolicy:
    """A strategy read from GTLibrary's driver: per player, the earlier stages' actions
    (pyspiel's history of a game without chance) to a distribution; uniform elsewhere."""

    def __init__(self, path: str, to_action: int):
        self._table: dict[tuple[int, tuple[int, ...]], dict[int, float]] = {}
        with open(path) as lines:
            for line in lines:
                player, history, pairs = line.rstrip("\n").split("\t")
                key = tuple(int(v) + to_action for v in history.split(",") if v)
                probs = {int(a) + to_action: float(p)
                         for a, p in (pair.split(":") for pair in pairs.split(","))}
                self._table[(int(player), key)] = probs

    def __len__(self) -> int:
        return len(self._table)

    def action_probabilities(self, state, player_id=None):
        probs = self._table.get((player_id, tuple(state.history())))
        if probs is None:
            legal = state.legal_actions(player_id)
            return {a: 1 / len(legal) for a in legal}
        return probs


def run_gtlibrary(name: str, selector: str, seed: int, marks: list[float],
                  value: float) -> list[dict]:
    game = PAPER_GAMES[name]
    param = game.uct_c if selector == "uct" else PAPER_GAMMA
    with tempfile.TemporaryDirectory() as folder:
        prefix = os.path.join(folder, "strategy") if _NASH_CONV.value else "-"
        command = [_JAVA.value, *_JAVA_OPTIONS.value.split(), "-cp", _CLASSPATH.value,
                   "GtlibrarySide", game.gtlibrary, selector, str(param), str(seed),
                   ",".join(str(m) for m in marks), str(_NASH_CONV.value).lower(), prefix]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"GTLibrary's driver failed ({' '.join(command)}):\n"
                             f"{done.stderr.strip()}")
        rows = []
        for line in done.stdout.splitlines():
            if not line.startswith("gtlibrary "):
                continue
            fields = parse_fields(line)
            row = {"cpu_s": float(fields["cpu_s"]), "process_cpu_s": float(fields["process_cpu_s"]),
                   "wall_s": float(fields["wall_s"]), "iterations": int(fields["iterations"])}
            if _NASH_CONV.value:
                policy = TablePolicy(fields["strategy"], game.to_action)
                row["nash_conv"] = exploitability.evaluate(
                    pyspiel.load_game(game.ours), policy, value=value).nash_conv
                row["own_nash_conv"] = float(fields["nash_conv"])
            rows.append(row)
    return rows


def run_ours(name: str, selector: str, seed: int, marks: list[float], value: float) -> list[dict]:
    game_info = PAPER_GAMES[name]
    game = pyspiel.load_game(game_info.ours)
    if selector == "uct":
        options = dict(selector="ucb", c=game_info.uct_c / 2, final_strategy="empirical",
                       tie_tolerance=PAPER_UCT_TIE_TOLERANCE)
    else:
        options = dict(selector=selector, gamma=PAPER_GAMMA,
                       final_strategy="average_no_exploration")
    bot = SMMCTSBot(game, 0, engine="kernel", evaluator="random_rollout", threshold=0.0,
                    seed=seed, threads=1, **options)
    root = game.new_initial_state()
    rows, iterations, cpu, process, wall, chunk = [], 0, 0.0, 0.0, 0.0, 256
    for mark in marks:
        while cpu < mark:
            start, process_start = time.thread_time(), time.process_time()
            wall_start = time.perf_counter()
            bot.search.run(root, chunk)
            spent = time.thread_time() - start
            cpu += spent
            process += time.process_time() - process_start
            wall += time.perf_counter() - wall_start
            iterations += chunk
            # about 50 ms per call keeps the Python overhead per call small
            chunk = max(256, min(4 * chunk, int(chunk * 0.05 / max(spent, 1e-4))))
        row = {"cpu_s": cpu, "process_cpu_s": process,
               "wall_s": wall, "iterations": iterations}
        if _NASH_CONV.value:
            row["nash_conv"] = exploitability.evaluate(game, bot.policy(), value=value).nash_conv
        rows.append(row)
    return rows


def warm_up(names: list[str], selectors: list[str]) -> None:
    """Compile our kernels for every game and selector before any timing."""
    for name in names:
        for selector in selectors:
            game = pyspiel.load_game(PAPER_GAMES[name].ours)
            bot = SMMCTSBot(game, 0, selector="ucb" if selector == "uct" else selector,
                            engine="kernel", evaluator="random_rollout", iterations=100, seed=0)
            bot.step(game.new_initial_state())


def report(side: str, name: str, selector: str, repeat: int, rows: list[dict]) -> list[float]:
    """Print one line per checkpoint; return the steady rates (last segment)."""
    steady, previous = [], {"cpu_s": 0.0, "iterations": 0}
    for row in rows:
        segment = (row["iterations"] - previous["iterations"]) / (row["cpu_s"] - previous["cpu_s"])
        steady.append(segment)
        extra = ""
        if "nash_conv" in row:
            extra = f" nash_conv={row['nash_conv']:.4f}"
            if "own_nash_conv" in row:
                extra += f" gtlibrary_own_nash_conv={row['own_nash_conv']:.4f}"
        print(f"{side:9s} {name} {selector:4s} repeat={repeat} cpu_s={row['cpu_s']:.2f} "
              f"process_cpu_s={row['process_cpu_s']:.2f} wall_s={row['wall_s']:.1f} "
              f"iterations={row['iterations']} per_cpu_s={row['iterations'] / row['cpu_s']:.4g} "
              f"segment_per_cpu_s={segment:.4g}{extra}", flush=True)
        previous = row
    return steady


def main(argv):
    del argv  # cli.run refuses positional arguments
    unknown = [g for g in _GAMES.value if g not in PAPER_GAMES]
    if unknown:
        raise app.UsageError(f"--games: unknown {unknown}; choose from {', '.join(PAPER_GAMES)}")
    bad = [s for s in _SELECTORS.value if s not in SELECTORS]
    if bad:
        raise app.UsageError(f"--selectors: unknown {bad}; choose from {', '.join(SELECTORS)}")
    marks = checkpoints()
    values = {name: solver.game_value(pyspiel.load_game(PAPER_GAMES[name].ours))
              for name in _GAMES.value}
    warm_up(_GAMES.value, _SELECTORS.value)
    ratios: dict[tuple[str, str], list[float]] = {}
    for repeat in range(_REPEATS.value):
        seed = _SEED.value + repeat
        for name in _GAMES.value:
            for selector in _SELECTORS.value:
                theirs = None
                if _CLASSPATH.value:
                    theirs = report("gtlibrary", name, selector, repeat,
                                    run_gtlibrary(name, selector, seed, marks, values[name]))
                ours = report("ours", name, selector, repeat,
                              run_ours(name, selector, seed, marks, values[name]))
                if theirs:
                    ratios.setdefault((name, selector), []).append(ours[-1] / theirs[-1])
    for (name, selector), values_ in ratios.items():
        print(f"ratio {name} {selector} ours/gtlibrary={statistics.median(values_):.3g}")


if __name__ == "__main__":
    cli.run(main)
