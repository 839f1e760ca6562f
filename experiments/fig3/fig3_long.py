"""Fig. 3 to 10^7 iterations, with constant and with decreasing exploration.

The paper stopped its worst-case curves at 10^6 iterations and left open whether Exp3 and
Exp3M reach the exploration floor; the floor itself (about gamma times the depth) exists
only because gamma is constant. This script runs each method on the given grid games
(codes of :func:`smmcts_spiel.trees.grid_game_codes`) to --iterations with

* ``constant``: gamma = --gamma at every node (the paper's setting);
* ``decreasing``: gamma_t = min(1, --decreasing_gamma / sqrt(t)) at a node's t-th update
  (:func:`smmcts_spiel.search.selectors.decreasing_gamma`).

  python experiments/fig3/fig3_long.py --publish                    # 10^7 iterations, 20 runs
  python experiments/fig3/fig3_long.py --iterations=100000 --runs=4 # a quick look

Writes <out>.csv (code, method, schedule, t, mean_e1, standard_error), <out>.png and
<out>.json (parameters, each game's exact floor, run time). Finished jobs are kept in
--results_dir, so an interrupted run resumes.
"""

from __future__ import annotations

import csv
import os
import time

import numpy as np
from absl import app, flags, logging

from smmcts_spiel import experiments, trees
from smmcts_spiel.experiments import cli
from smmcts_spiel.reports import plots
from smmcts_spiel.search import matrix_tree_engine as engine
from smmcts_spiel.search import selectors

# The committed results of this experiment (written with --publish).
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

_CODES = flags.DEFINE_list("codes", ["102704"], "Grid game codes (default: the worst game "
                           "for RM and RMM by the paper's protocol, experiments/fig3/fig3.py, "
                           "experiments/fig3/results/wc_rm.json).")
_METHODS = flags.DEFINE_list("methods", ["rm", "rmm", "exp3", "exp3m"], "Selectors.")
_SCHEDULES = flags.DEFINE_list("schedules", list(engine.GAMMA_SCHEDULES),
                               "Exploration schedules: constant, decreasing.")
_GAMMA = flags.DEFINE_float("gamma", 0.05, "Constant exploration (and the floors' gamma).")
_DECREASING_GAMMA = flags.DEFINE_float("decreasing_gamma", 1.0,
                                       "c of gamma_t = min(1, c / sqrt(t)).")
_ITERATIONS = flags.DEFINE_integer("iterations", 10_000_000, "Iterations per run.",
                                   lower_bound=1)
_RUNS = flags.DEFINE_integer("runs", 20, "Runs per game, method and schedule.", lower_bound=2)
_PER_DECADE = flags.DEFINE_integer("per_decade", 8, "Log-spaced checkpoints per decade.",
                                   lower_bound=1)
_RUNNER = cli.define_runner_flags("fig3_long")
_OUT = flags.DEFINE_string("out", None, "Output prefix: .csv, .png, .json (default: results/"
                           "fig3_long/fig3_long, or experiments/fig3/results/fig3_long with "
                           "--publish).")
_PUBLISH = flags.DEFINE_bool("publish", False, "Write the committed figure (experiments/fig3/"
                             "results/fig3_long); without it nothing is written into "
                             "experiments/, benchmarks/ or docs/.")
flags.register_validator("gamma", lambda g: 0 < g <= 1, "gamma must be in (0, 1]")
flags.register_validator("decreasing_gamma", lambda g: 0 < g <= 1,
                         "decreasing_gamma must be in (0, 1]")
flags.register_validator("schedules", lambda s: set(s) <= set(engine.GAMMA_SCHEDULES),
                         f"schedules must be among {', '.join(engine.GAMMA_SCHEDULES)}")


def parse_codes(values: list[str]) -> list[int]:
    valid = set(trees.grid_game_codes().tolist())
    codes = []
    for v in values:
        if not v.strip().isdigit() or int(v) not in valid:
            raise app.UsageError(f"--codes: {v!r} is not a grid game code (one per class, see "
                                 "smmcts_spiel.trees.grid_game_codes)", exitcode=2)
        codes.append(int(v))
    return codes


def plot(rows, floors, codes, path) -> None:
    with plots.saved_figure(path, (5.6 * len(codes), 4.6)) as fig:
        axes = fig.subplots(1, len(codes), sharey=True, squeeze=False)[0]
        for ax, code in zip(axes, codes):
            for method in _METHODS.value:
                for schedule in _SCHEDULES.value:
                    plots.exploitability_curve(
                        ax, [r for r in rows if r["code"] == code and r["method"] == method
                             and r["schedule"] == schedule], method,
                        label=f"{plots.selector_label(method)} {schedule}",
                        style="-" if schedule == "constant" else ":", alpha=0.15)
            ax.axhline(floors[code]["mixed_equilibrium"], color="gray", linestyle="--",
                       label=f"floor γ={_GAMMA.value:g}: "
                             f"{floors[code]['mixed_equilibrium']:.4f}")
            plots.log_axes(ax)
            ax.set_title(f"grid game {code}")
            ax.set_xlabel("t")
            ax.legend(fontsize=7, loc="lower left")
        axes[0].set_ylabel("Exploitability e1")
        fig.suptitle(f"constant γ={_GAMMA.value:g} (solid), decreasing\n"
                     f"γ_t=min(1, {_DECREASING_GAMMA.value:g}/√t) per node (dotted); "
                     f"{_RUNS.value} runs", fontsize=10)


def main(argv):
    codes = parse_codes(_CODES.value)
    for method in _METHODS.value:
        try:
            selectors.parse_selector(method)
        except ValueError as e:
            raise app.UsageError(f"--methods: {e}", exitcode=2) from None
    start = time.time()
    params = {name: flags.FLAGS[name].value for name in (
        "codes", "methods", "schedules", "gamma", "decreasing_gamma", "iterations", "runs",
        "per_decade", "seed")}
    out = _OUT.value or (os.path.join(RESULTS, "fig3_long") if _PUBLISH.value
                         else "results/fig3_long/fig3_long")
    try:  # games, methods, schedules and runs are in the job keys: more of them reuse jobs
        experiments.check_output([out, _RUNNER.results_dir.value], publish=_PUBLISH.value)
        experiments.check_params(_RUNNER.results_dir.value, {
            k: v for k, v in params.items()
            if k in ("gamma", "decreasing_gamma", "iterations", "per_decade", "seed")})
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None
    checkpoints = engine.log_checkpoints(_ITERATIONS.value, _PER_DECADE.value).tolist()
    jobs = {}
    for code in codes:
        game = {"json": trees.to_json(trees.grid_game(code))}
        for method in _METHODS.value:
            for schedule in _SCHEDULES.value:
                gamma = _GAMMA.value if schedule == "constant" else _DECREASING_GAMMA.value
                for r in range(_RUNS.value):  # one run per job: 10^7 iterations take seconds
                    jobs[f"{code}_{method}_{schedule}_run{r:04d}"] = dict(
                        game=game, method=method, gamma=gamma, checkpoints=checkpoints,
                        base_seed=_RUNNER.seed.value, game_index=code, runs=1, first_run=r,
                        gamma_schedule=schedule)
    results = experiments.run_jobs(
        experiments.curves_job, jobs, results_dir=_RUNNER.results_dir.value,
        **_RUNNER.run_jobs_kwargs(), desc="fig3 long")

    rows = []
    for code in codes:
        for method in _METHODS.value:
            for schedule in _SCHEDULES.value:
                e1 = np.concatenate([results[f"{code}_{method}_{schedule}_run{r:04d}"]["e1"]
                                     for r in range(_RUNS.value)])
                mean, se = experiments.mean_curve([e1])
                rows += [{"code": code, "method": method, "schedule": schedule, "t": t,
                          "mean_e1": m, "standard_error": e}
                         for t, m, e in zip(checkpoints, mean, se)]
    floors = {code: experiments.exploration_floors(trees.grid_game(code), _GAMMA.value)
              for code in codes}
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, floors, codes, out + ".png")
    elapsed = time.time() - start
    experiments.write_params(out + ".json",
                             dict(params, floors={str(c): f for c, f in floors.items()}),
                             wall_seconds=round(elapsed, 1), **_RUNNER.execution())
    for r in rows:
        if r["t"] == checkpoints[-1]:
            print(f"{r['code']} {r['method']:6s} {r['schedule']:10s} e1 at t={r['t']}: "
                  f"{r['mean_e1']:.5f} ± {r['standard_error']:.5f} "
                  f"(floor {floors[r['code']]['mixed_equilibrium']:.4f})")
    logging.info("wrote %s.csv/.png/.json in %.0f s", out, elapsed)


if __name__ == "__main__":
    cli.run(main)
