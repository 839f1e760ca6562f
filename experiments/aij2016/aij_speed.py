"""The AIJ 2016 study's offline speed, ours beside the paper's: iterations per second of
each sampler searching from the root, one thread (the kernel engine for SM-MCTS).

For every game of --games (smmcts_spiel.experiments.aij2016.OFFLINE_GAMES; Goofspiel-5, the
issue's target row, by default) and sampler of --samplers (RM, EXP3, UCT with the paper's
constants on SMMCTSBot's kernel engine; OOS, the paper's SM-OOS, in Python; SMMCTS, our
default), --repeats searches each run --warm_up search-thread CPU seconds, then --seconds
more: the rate is that of the second segment (kernels compiled, tree grown past its first
iterations). Beside it: the paper's rate and ours as a multiple of it (the target: 8x).

  python experiments/aij2016/aij_speed.py --seconds=0.5 --warm_up=0.2 --repeats=1

Writes <out>.csv (one row per game and sampler), <out>.png and <out>.json, by default
results/aij2016/aij_speed.*; --publish writes experiments/aij2016/results/. Speeds are
timing: quote them only from a quiet machine, one worker.
"""

from __future__ import annotations

import os
import time

from absl import flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import experiments, reports
from smmcts_spiel.experiments import aij2016, cli

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PAPER_FIGURES = os.path.join(HERE, "paper_figures.csv")
SCALE = ("repeats", "seconds")
TARGET_MULTIPLE = 8.0

_GAMES = flags.DEFINE_list("games", ["gs5_fixed_wtl"],
                           f"Games, of {', '.join(aij2016.OFFLINE_GAMES)}.")
_SAMPLERS = flags.DEFINE_list("samplers", list(aij2016.SAMPLERS),
                              f"Samplers, of {', '.join(aij2016.SAMPLERS)}.")
_SECONDS = flags.DEFINE_float("seconds", 10.0, "Timed search-thread CPU seconds per repeat.")
_WARM_UP = flags.DEFINE_float("warm_up", 1.0, "Untimed search-thread CPU seconds first.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Searches per game and sampler (seeds 0..).",
                                lower_bound=1)
_RUNNER = cli.define_runner_flags("aij2016/speed_runs")
_OUT = flags.DEFINE_string("out", None, "Output prefix: writes .csv, .png, .json (default: "
                           "results/aij2016/aij_speed, or experiments/aij2016/results/"
                           "aij_speed with --publish).")
_PUBLISH = cli.define_publish("the committed results (experiments/aij2016/results)")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result of a larger scale.")
for _name in ("seconds", "warm_up"):
    flags.register_validator(_name, cli.positive_finite,
                             f"--{_name} must be a positive, finite number of seconds")

COLUMNS = ["game", "sampler", "repeats", "iterations_per_second", "low", "high", "paper",
           "multiple_of_paper", "target"]


def main(argv):
    del argv
    try:
        games = cli.check_choices(_GAMES.value, aij2016.OFFLINE_GAMES, "--games")
        samplers = cli.check_choices(_SAMPLERS.value, aij2016.SAMPLERS, "--samplers")
        out = _OUT.value or (os.path.join(RESULTS, "aij_speed") if _PUBLISH.value
                             else os.path.join("results", "aij2016", "aij_speed"))
        experiments.check_output([out, _RUNNER.results_dir.value], publish=_PUBLISH.value)
        params = {"games": games, "samplers": samplers, "seconds": _SECONDS.value,
                  "warm_up": _WARM_UP.value, "repeats": _REPEATS.value,
                  "seed": _RUNNER.seed.value, **_RUNNER.execution()}
        experiments.check_not_smaller(out + ".json", params, SCALE, force=_FORCE.value)
        figures = aij2016.read_paper_figures(PAPER_FIGURES)
    except ValueError as e:
        cli.usage_error(str(e))
    start = time.time()
    marks = [_WARM_UP.value, _WARM_UP.value + _SECONDS.value]
    seeds = range(_RUNNER.seed.value, _RUNNER.seed.value + _REPEATS.value)
    jobs = aij2016.sampler_jobs(games, samplers, seeds, marks, dict.fromkeys(games))
    with experiments.exit_on_sigterm():
        results = experiments.run_jobs(aij2016.sampler_job, jobs,
                                       results_dir=_RUNNER.results_dir.value,
                                       desc="searches", **_RUNNER.run_jobs_kwargs())
    rows = []
    for key in games:
        for sampler in samplers:
            rates = [(r["iterations"][1] - r["iterations"][0])
                     / (r["cpu_seconds"][1] - r["cpu_seconds"][0])
                     for k, r in results.items() if k.rsplit("_", 1)[0] == f"{key}_{sampler}"]
            interval = reports.mean_interval(rates)
            paper = aij2016.paper_figure(figures, "speed", key, sampler, "iterations/s")
            multiple = interval.estimate / paper["figure"] if paper else None
            rows.append({"game": key, "sampler": sampler, "repeats": len(rates),
                         "iterations_per_second": round(interval.estimate),
                         "low": round(interval.low) if interval.defined else "",
                         "high": round(interval.high) if interval.defined else "",
                         "paper": aij2016.shown(paper),
                         "multiple_of_paper": "" if multiple is None else round(multiple, 2),
                         "target": "" if multiple is None else
                         ("met" if multiple >= TARGET_MULTIPLE else "missed")})
            print(f"{key} {sampler:6s} {interval.format(0)} iterations/s (paper "
                  f"{aij2016.shown(paper)}; x{rows[-1]['multiple_of_paper']})", flush=True)
    aij2016.write_table(out, COLUMNS, rows, lambda path: plot(rows, path), params,
                        wall_seconds=round(time.time() - start, 1))


def plot(rows: list[dict], path: str) -> None:
    from smmcts_spiel.reports import plots

    with plots.saved_figure(path, (max(5.0, 0.7 * len(rows) + 2), 4.0)) as figure:
        ax = figure.subplots()
        xs = range(len(rows))
        ax.bar(xs, [r["iterations_per_second"] for r in rows], label="ours")
        paper = [(x, float(r["paper"].lstrip("<>~ "))) for x, r in zip(xs, rows)
                 if r["paper"] != "-"]
        if paper:
            ax.scatter(*zip(*paper), marker="x", color="black", zorder=3, label="the paper")
        ax.set_xticks(list(xs), [f"{r['game']}\n{r['sampler']}" for r in rows], fontsize=7,
                      rotation=45)
        ax.set_yscale("log")
        ax.set_ylabel("iterations per search-thread CPU second")
        ax.legend(fontsize=7)


if __name__ == "__main__":
    cli.run(main)
