"""The demo: SM-MCTS against OpenSpiel's MCTS on a simultaneous-move game, with intervals.

  ./scripts/demo                      # sets up .venv, then runs this
  python scripts/demo.py --num_games=100 --results_dir=results/demo_100

A round robin on Oshi-Zumo (coins 10, size 3, horizon 20; both players bid coins at once)
between our SMMCTSBot, OpenSpiel's C++ MCTSBot (searching the turn-based conversion from the
start of each round, where the second mover's nodes follow the first mover's bid; in play
neither seat sees the other's bid) and a uniform random bot, at an equal number of
iterations per move, both seats alternating. Every bot and chance event is seeded, so two
runs print the same table. Writes into --results_dir (the previous demo's files there are
replaced): results.csv (one row per pair: games, wins, draws, losses, mean return of bot A
with its 95% interval), demo.png (the same as a figure) and demo.json (the parameters).
"""

from __future__ import annotations

import csv
import itertools
import os
import threading
import time

import pyspiel
from absl import app, flags
from tqdm.auto import tqdm

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import experiments, match
from smmcts_spiel.experiments import cli
from smmcts_spiel.reports import plots

_GAME = flags.DEFINE_string("game", "oshi_zumo(coins=10,size=3,horizon=20)",
                            "Any two-player zero-sum pyspiel game string.")
_ITERATIONS = flags.DEFINE_integer("iterations", 1000, "Search iterations per move of both "
                                   "searching bots.", lower_bound=1)
_NUM_GAMES = flags.DEFINE_integer("num_games", 50, "Games per pair (seats alternate).",
                                  lower_bound=2)
_SEED = flags.DEFINE_integer("seed", 0, "Base seed of every bot and chance event.",
                             lower_bound=0)
_RESULTS_DIR = flags.DEFINE_string("results_dir", "results/demo", "Output folder.")
_PUBLISH = cli.define_publish("into a --results_dir of the committed results")


def bots(iterations: int) -> list[str]:
    return [f"smmcts(iterations={iterations})", f"mcts(engine=cpp,iterations={iterations})",
            "random"]


def load_compiled_code(game: pyspiel.Game, specs: list[str]) -> float:
    """Build each bot once, so numba compiles (first run) or loads (later runs) its code
    here, under a progress bar rather than silently inside the first game; seconds taken."""
    done = threading.Event()
    start = time.perf_counter()

    def build() -> None:
        try:
            match.load_compiled_code(game, specs)
        finally:
            done.set()

    worker = threading.Thread(target=build, daemon=True)
    worker.start()
    with tqdm(desc="compiling kernels, once (cached afterwards)", bar_format="{desc}: {elapsed}",
              leave=True) as bar:
        while not done.wait(0.5):
            bar.refresh()
    worker.join()
    return time.perf_counter() - start


def write_figure(path: str, results: list[match.MatchResult], title: str) -> bool:
    """Mean return of bot A per pair with its 95% interval; False without matplotlib."""
    try:
        import matplotlib  # noqa: F401
    except ModuleNotFoundError:
        return False
    intervals = [r.interval for r in results]
    below = [i.estimate - i.low if i.defined else 0.0 for i in intervals]
    above = [i.high - i.estimate if i.defined else 0.0 for i in intervals]
    with plots.saved_figure(path, figsize=(8, 4), dpi=120) as figure:
        ax = figure.subplots()
        ax.barh([f"{r.bot_a}\nvs {r.bot_b}" for r in results], [i.estimate for i in intervals],
                xerr=[below, above], capsize=4, color="#4c72b0")
        ax.axvline(0.0, color="grey", linewidth=1)
        ax.set_xlim(-1.05, 1.05)
        ax.invert_yaxis()
        ax.set_xlabel("mean return of the first-named bot (95% interval); +1 = always wins")
        ax.set_title(title, fontsize=10)
    return True


def main(argv):
    del argv
    start = time.perf_counter()
    try:
        experiments.check_output([_RESULTS_DIR.value], publish=_PUBLISH.value)
        game = cli.load_game(_GAME.value)
        match.check_match_game(game)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    specs = bots(_ITERATIONS.value)
    compile_seconds = load_compiled_code(game, specs)
    results = []
    for k, (a, b) in enumerate(itertools.combinations(specs, 2)):
        results.append(match.play_match(game, a, b, _NUM_GAMES.value, seed=_SEED.value + k))
    out = _RESULTS_DIR.value
    os.makedirs(out, exist_ok=True)
    with experiments.replaced_file(os.path.join(out, "results.csv"), newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["bot_a", "bot_b", "games", "wins", "draws", "losses", "mean",
                         "ci95_low", "ci95_high"])
        for r in results:
            writer.writerow([r.bot_a, r.bot_b, r.games, r.wins, r.draws, r.losses,
                             f"{r.mean:.4f}", f"{r.interval.low:.4f}", f"{r.interval.high:.4f}"])
    title = (f"{_GAME.value}\n{_NUM_GAMES.value} games per pair, seats alternating, "
             f"{_ITERATIONS.value} iterations per move")
    figure = write_figure(os.path.join(out, "demo.png"), results, title)
    experiments.write_params(os.path.join(out, "demo.json"),
                             {"game": _GAME.value, "bots": specs, "num_games": _NUM_GAMES.value,
                              "iterations": _ITERATIONS.value, "seed": _SEED.value})
    print(f"\n{title}:\n")
    print(match.format_table(results))
    ours = results[0].interval  # smmcts against OpenSpiel's MCTSBot
    verdict = ("separated from 0 by its 95% interval" if ours.low > 0 or ours.high < 0
               else "NOT separated from 0 at this number of games: add --num_games")
    print(f"\nSMMCTSBot against OpenSpiel's MCTSBot: {ours.format(2, style='[]')}, {verdict}.")
    files = ["results.csv", "demo.json"] + (["demo.png"] if figure else [])
    print(f"Results: {', '.join(os.path.join(out, f) for f in files)}"
          + ("" if figure else "  (no figure: install the 'plot' extra)"))
    print(f"Time: {time.perf_counter() - start:.0f} s, of which {compile_seconds:.0f} s "
          "compiling or loading the kernels (this line varies; the results do not).")


if __name__ == "__main__":
    cli.run(main)
