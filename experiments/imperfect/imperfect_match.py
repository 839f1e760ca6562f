"""Head-to-head matches of imperfect-information bots at equal time per move (issue 14).

Every pair of --bots plays --games_per_pair games (seats alternating) of --game; every
searching bot gets --time_limit seconds per move (OOS, information-set SM-MCTS with RM
and Exp3, OpenSpiel's ISMCTSBot, MMCTS). The Belief Sampler and MMCTS play only Phantom
Tic-Tac-Toe.

  python experiments/imperfect/imperfect_match.py --game='goofspiel(num_cards=6,imp_info=True)' \\
      --bots=oos,is_smmcts_rm,is_smmcts_exp3,ismcts,random
  python experiments/imperfect/imperfect_match.py --game=phantom_ttt

A pair's seed depends on --seed and the two bot names only, so runs with other --bots
reuse its finished games. Equal-time matches are timing-sensitive: run them on a quiet
machine, one process pinned to a core (e.g. ``taskset -c 1``), in pieces with
--max_new_jobs.

Writes <out>.csv (one row per pair: wins, draws, losses of bot A, mean return with its
normal 95% interval, search iterations per game), <out>.png (mean return of the row bot
against the column bot) and <out>.json (parameters, run time), by default under
results/imperfect_match/; writing into the committed results (experiments/, benchmarks/,
docs/) needs --publish, and replacing a finished result of more games per pair needs
--force. Finished pairs stay in --results_dir, so an interrupted run resumes.
"""

from __future__ import annotations

import csv
import itertools
import os
import time
import zlib

import numpy as np
import pyspiel
from absl import app, flags

from smmcts_spiel import experiments, reports
from smmcts_spiel.experiments import cli, imperfect_match
from smmcts_spiel.reports import plots

# The committed results of this experiment (written with --publish).
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

_GAME = flags.DEFINE_string("game", "phantom_ttt", "Two-player zero-sum imperfect-information "
                            "game with information state strings.")
_BOTS = flags.DEFINE_list("bots", list(imperfect_match.BOT_NAMES),
                          f"Bots, from: {', '.join(imperfect_match.BOT_NAMES)}.")
_GAMES_PER_PAIR = flags.DEFINE_integer("games_per_pair", 200, "Games per pair (even: both "
                                       "seats equally).", lower_bound=2)
_TIME_LIMIT = flags.DEFINE_float("time_limit", 0.1, "Seconds per move of the searching bots.",
                                 lower_bound=0.001)
_SEED = flags.DEFINE_integer("seed", 0, "Base seed of bots and chance.", lower_bound=0)
_RESULTS_DIR = flags.DEFINE_string("results_dir", None, "Finished pairs (default: "
                                   "results/imperfect_match/<game>).")
_OUT = flags.DEFINE_string("out", None, "Output prefix (default: "
                           "results/imperfect_match/<game>/imperfect_match, or "
                           "experiments/imperfect/results/imperfect_match_<game> with --publish).")
_PUBLISH = flags.DEFINE_bool("publish", False, "Write the committed results (experiments/"
                             "imperfect/results/imperfect_match_<game> by default); without it, "
                             "writing into experiments/, benchmarks/ or docs/ is refused.")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result of more games per pair.")
_PAIRS_WITH = flags.DEFINE_list("pairs_with", None, "Play only the pairs that include one of "
                                "these bots (default: every pair of --bots).")
_MAX_NEW_JOBS = flags.DEFINE_integer("max_new_jobs", None, "Play at most this many unfinished "
                                     "pairs, then stop (run again to go on): keeps each "
                                     "timed run short.", lower_bound=1)

flags.register_validator("bots", lambda b: len(b) >= 2 and set(b) <= set(
    imperfect_match.BOT_NAMES) and len(set(b)) == len(b),
    f"--bots: at least two distinct names from {', '.join(imperfect_match.BOT_NAMES)}")
#: What decides how large a finished result is (a smaller run does not replace it).
SCALE = ("games_per_pair",)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")


def plot(rows, bots, title, path) -> None:
    grid = np.full((len(bots), len(bots)), np.nan)
    for r in rows:
        i, j = bots.index(r["bot_a"]), bots.index(r["bot_b"])
        grid[i, j], grid[j, i] = r["mean_return_a"], -r["mean_return_a"]
    with plots.saved_figure(path, (1.2 * len(bots) + 2, 1.0 * len(bots) + 1.5)) as fig:
        ax = fig.subplots()
        image = ax.imshow(grid, cmap="RdBu", vmin=-1, vmax=1)
        ax.set_xticks(range(len(bots)), bots, rotation=30, ha="right")
        ax.set_yticks(range(len(bots)), bots)
        for i, j in itertools.product(range(len(bots)), repeat=2):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:+.2f}", ha="center", va="center", fontsize=8)
        fig.colorbar(image, ax=ax, label="mean return of row bot")
        ax.set_title(title, fontsize=9)


def _run_pairs(jobs: dict, results_dir: str) -> dict:
    """The pairs' results (played now or found in ``results_dir``); a usage error if a
    finished pair there was played with other arguments."""
    try:
        return experiments.run_jobs(imperfect_match.pair_job, jobs, results_dir=results_dir,
                                    backend="serial", desc="pairs")
    except experiments.MixedResultsError as e:
        raise app.UsageError(str(e), exitcode=2) from None


def main(argv):
    unknown = sorted(set(_PAIRS_WITH.value or ()) - set(_BOTS.value))
    if unknown:
        raise app.UsageError(f"--pairs_with: {', '.join(unknown)} not among --bots "
                             f"({', '.join(_BOTS.value)}); name bots that play", exitcode=2)
    try:
        game = pyspiel.load_game(_GAME.value)
        for p in (0, 1):
            for name in _BOTS.value:
                imperfect_match.make_bot(name, game, p, _TIME_LIMIT.value, 0)
    except (ValueError, pyspiel.SpielError) as e:
        raise app.UsageError(f"--game={_GAME.value} with --bots: {e}", exitcode=2) from None
    start = time.time()
    slug = _slug(_GAME.value)
    results_dir = _RESULTS_DIR.value or os.path.join("results", "imperfect_match", slug)
    out = _OUT.value or (os.path.join(RESULTS, f"imperfect_match_{slug}")
                         if _PUBLISH.value
                         else os.path.join("results", "imperfect_match", slug, "imperfect_match"))
    params = {"game": _GAME.value, "games_per_pair": _GAMES_PER_PAIR.value,
              "time_limit": _TIME_LIMIT.value, "seed": _SEED.value}
    try:
        experiments.check_output([out, results_dir], publish=_PUBLISH.value)
        experiments.check_not_smaller(out + ".json", params, SCALE, force=_FORCE.value)
        experiments.check_params(results_dir, params)
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None
    pairs = [(a, b) for a, b in itertools.combinations(_BOTS.value, 2)
             if _PAIRS_WITH.value is None or a in _PAIRS_WITH.value or b in _PAIRS_WITH.value]
    jobs = {f"{a}__{b}": dict(game=_GAME.value, bot_a=a, bot_b=b,
                              num_games=_GAMES_PER_PAIR.value, time_limit=_TIME_LIMIT.value,
                              seed=_SEED.value + zlib.crc32(f"{a}__{b}".encode()) % 100_000)
            for a, b in pairs}
    todo = [k for k in jobs if not experiments.finished_jobs(results_dir, [k])]
    if _MAX_NEW_JOBS.value is not None and len(todo) > _MAX_NEW_JOBS.value:
        run_now = todo[:_MAX_NEW_JOBS.value]
        _run_pairs({k: jobs[k] for k in run_now}, results_dir)
        print(f"{len(todo) - len(run_now)} of {len(jobs)} pairs left: run again to go on")
        return
    results = _run_pairs(jobs, results_dir)
    rows = []
    for (a, b), key in zip(pairs, jobs):
        s = imperfect_match.summary(results[key]["returns"])
        it_a, it_b = (int(x) for x in results[key]["iterations"])
        rows.append({"bot_a": a, "bot_b": b, "games": s["games"], "wins_a": s["wins"],
                     "draws": s["draws"], "losses_a": s["losses"], "mean_return_a": s["mean"],
                     "ci95": s["ci95"],
                     "iterations_per_game_a": it_a / s["games"] if it_a >= 0 else "",
                     "iterations_per_game_b": it_b / s["games"] if it_b >= 0 else ""})
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, _BOTS.value, f"{_GAME.value}: {_GAMES_PER_PAIR.value} games per pair, "
         f"{_TIME_LIMIT.value:g} s per move", out + ".png")
    elapsed = time.time() - start
    experiments.write_params(out + ".json", dict(params, bots=_BOTS.value),
                             wall_seconds=round(elapsed, 1))
    for r, key in zip(rows, jobs):
        mean = reports.mean_interval(results[key]["returns"]).format(digits=2)
        print(f"{r['bot_a']:>15} vs {r['bot_b']:<15} W/D/L {r['wins_a']}/{r['draws']}/"
              f"{r['losses_a']}  mean {mean}")
    print(f"wrote {out}.csv/.png/.json in {elapsed:.0f} s")


if __name__ == "__main__":
    cli.run(main)
