"""The AIJ 2016 study's offline convergence, ours beside the paper's: each sampler's exact
NashConv (the paper's "error") after the same seconds of search from the root.

For every game of --games (smmcts_spiel.experiments.aij2016.OFFLINE_GAMES: Oshi-Zumo(10, 3,
1) and Goofspiel-5 by default; pursuit-evasion 4 x 4 depth 4 and Tron 5 x 6 too), every
sampler of --samplers (the paper's RM, EXP3 and UCT: SMMCTSBot's kernel engine with the
paper's constants; OOS: the paper's SM-OOS, epsilon 0.6, in Python; SMMCTS: our
SMMCTSBot with its tuned defaults) and --seeds seeds, the search runs until its thread has
used each of --checkpoints CPU seconds, and its strategy's NashConv is computed exactly
(smmcts_spiel.exact.exploitability) there. Per checkpoint: the mean over seeds with its 95%
t interval, beside the paper's figure after 500 s; the target (each sampler below the
paper's 500 s figure after 60 s) is "met" when the interval's top is below it.

  python experiments/aij2016/aij_convergence.py --games=gs5_fixed_wtl --samplers=RM \\
      --checkpoints=0.5 --seeds=2 --workers=1

Writes <out>.csv (one row per game, sampler and checkpoint), <out>.png (NashConv against
seconds, the paper's 500 s figures as crosses) and <out>.json, by default
results/aij2016/aij_convergence.*; --publish writes the committed results
(experiments/aij2016/results/). Finished searches stay in --results_dir (resumable). CPU
seconds do not count time spent waiting, but a loaded machine still slows a search: run
the full table on a quiet machine, one worker per free core.
"""

from __future__ import annotations

import os
import time

import pyspiel
from absl import flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import experiments, reports
from smmcts_spiel.exact import solver
from smmcts_spiel.experiments import aij2016, cli

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PAPER_FIGURES = os.path.join(HERE, "paper_figures.csv")
SCALE = ("seeds", "checkpoints")
TARGET_SECONDS = 60.0

_GAMES = flags.DEFINE_list("games", ["oz10_k3_wtl", "gs5_fixed_wtl"],
                           f"Games, of {', '.join(aij2016.OFFLINE_GAMES)}.")
_SAMPLERS = flags.DEFINE_list("samplers", list(aij2016.SAMPLERS),
                              f"Samplers, of {', '.join(aij2016.SAMPLERS)}.")
_CHECKPOINTS = flags.DEFINE_list("checkpoints", ["1", "10", "60"],
                                 "Cumulative search-thread CPU seconds (increasing).")
_SEEDS = flags.DEFINE_integer("seeds", 10, "Runs per game and sampler.", lower_bound=1)
_RUNNER = cli.define_runner_flags("aij2016/convergence_runs")
_OUT = flags.DEFINE_string("out", None, "Output prefix: writes .csv, .png, .json (default: "
                           "results/aij2016/aij_convergence, or experiments/aij2016/results/"
                           "aij_convergence with --publish).")
_PUBLISH = cli.define_publish("the committed results (experiments/aij2016/results)")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result of a larger scale.")

COLUMNS = ["game", "setting", "sampler", "seconds", "seeds", "iterations", "nash_conv",
           "low", "high", "paper_500s", "target"]


def checkpoints() -> list[float]:
    try:
        values = [float(x) for x in _CHECKPOINTS.value]
    except ValueError:
        raise ValueError(f"--checkpoints are seconds, got {_CHECKPOINTS.value}") from None
    if (not values or not all(map(cli.positive_finite, values))
            or any(b <= a for a, b in zip(values, values[1:]))):
        raise ValueError(f"--checkpoints must be positive, finite and increasing, got {values}")
    return values


def main(argv):
    del argv
    try:
        games = cli.check_choices(_GAMES.value, aij2016.OFFLINE_GAMES, "--games")
        samplers = cli.check_choices(_SAMPLERS.value, aij2016.SAMPLERS, "--samplers")
        marks = checkpoints()
        out = _OUT.value or (os.path.join(RESULTS, "aij_convergence") if _PUBLISH.value
                             else os.path.join("results", "aij2016", "aij_convergence"))
        experiments.check_output([out, _RUNNER.results_dir.value], publish=_PUBLISH.value)
        params = {"games": games, "samplers": samplers, "checkpoints": marks,
                  "seeds": _SEEDS.value, "seed": _RUNNER.seed.value, **_RUNNER.execution()}
        experiments.check_not_smaller(out + ".json", params, SCALE, force=_FORCE.value)
        figures = aij2016.read_paper_figures(PAPER_FIGURES)
    except ValueError as e:
        cli.usage_error(str(e))
    start = time.time()
    values = {key: solver.game_value(pyspiel.load_game(aij2016.OFFLINE_GAMES[key].game))
              for key in games}
    seeds = range(_RUNNER.seed.value, _RUNNER.seed.value + _SEEDS.value)
    jobs = aij2016.sampler_jobs(games, samplers, seeds, marks, values)
    with experiments.exit_on_sigterm():
        results = experiments.run_jobs(aij2016.sampler_job, jobs,
                                       results_dir=_RUNNER.results_dir.value,
                                       desc="searches", **_RUNNER.run_jobs_kwargs())
    rows = []
    for key in games:
        for sampler in samplers:
            runs = [results[k] for k, job in jobs.items()
                    if job["game"] == aij2016.OFFLINE_GAMES[key].game
                    and job["sampler"] == sampler]
            paper = aij2016.paper_figure(figures, "convergence", key, sampler, "NashConv")
            for k, mark in enumerate(marks):
                interval = reports.mean_interval([r["nash_conv"][k] for r in runs])
                rows.append({
                    "game": key, "setting": aij2016.OFFLINE_GAMES[key].setting,
                    "sampler": sampler, "seconds": mark, "seeds": len(runs),
                    "iterations": round(sum(r["iterations"][k] for r in runs) / len(runs)),
                    "nash_conv": round(interval.estimate, 5),
                    "low": round(interval.low, 5), "high": round(interval.high, 5),
                    "paper_500s": aij2016.shown(paper),
                    "target": target(interval, paper) if mark == TARGET_SECONDS else ""})
                print(f"{key} {sampler:6s} {mark:g} s: NashConv {interval.format(4)} "
                      f"(paper at 500 s: {aij2016.shown(paper)}) {rows[-1]['target']}",
                      flush=True)
    aij2016.write_table(out, COLUMNS, rows, lambda path: plot(rows, games, figures, path),
                        params, wall_seconds=round(time.time() - start, 1))


def target(interval: reports.Interval, paper: dict | None) -> str:
    """The issue's target at 60 s: below the paper's 500 s figure
    (:func:`aij2016.below_paper_verdict`)."""
    if paper is None:
        return "no paper figure"
    if not interval.defined:
        return "undecided"
    return aij2016.below_paper_verdict(interval.low, interval.high, paper)


def plot(rows: list[dict], games: list[str], figures: list[dict], path: str) -> None:
    from smmcts_spiel.reports import plots

    with plots.saved_figure(path, (4.5 * len(games), 3.6)) as figure:
        for g, key in enumerate(games):
            ax = figure.add_subplot(1, len(games), g + 1)
            for sampler in dict.fromkeys(r["sampler"] for r in rows if r["game"] == key):
                mine = [r for r in rows if r["game"] == key and r["sampler"] == sampler]
                plots.curve(ax, [r["seconds"] for r in mine], [r["nash_conv"] for r in mine],
                            [r["low"] for r in mine], [r["high"] for r in mine],
                            label=sampler, marker="o")
                paper = aij2016.paper_figure(figures, "convergence", key, sampler, "NashConv")
                if paper is not None:
                    ax.scatter([500], [paper["figure"]], marker="x",
                               color=ax.lines[-1].get_color())
            aij2016.finish_log_panel(ax, key, "search-thread CPU seconds",
                                     "NashConv (x: the paper's at 500 s)", 7)


if __name__ == "__main__":
    cli.run(main)
