"""Reproduce Fig. 3 of Lisy et al. (NIPS 2013): convergence on the empirically worst games.

1. Brute-force search over every depth-2, branching-2 game with utilities in {0, 0.5, 1},
   one game per class under row and column permutations at every stage (133,407 games),
   ranked by the mean exploitability e1 after --iterations of RM and of RMM (gamma 0.05):
   all games with --screen_runs runs, the --shortlist best of each method with
   --shortlist_runs, the --finalists best with --confirm_runs (the paper's 100) on fresh
   seeds. The worst game of each method, WC_RM and WC_RMM, goes to data/ as matrix-tree JSON.
2. RM, RMM, Exp3 and Exp3M for --curve_iterations on WC_RM and WC_RMM (--curve_runs each).
3. The floor of each worst game, computed exactly: e1 of the equilibrium mixed with gamma
   uniform exploration (the paper: 0.0119 and 0.0367), and the least e1 of any strategy
   that explores with gamma.

  python scripts/fig3.py --max_games=2000 --curve_iterations=10000 --curve_runs=10
  python scripts/fig3.py                  # the paper's scale, into results/fig3/
  python scripts/fig3.py --publish        # the same, replacing docs/figures/fig3.*, data/wc_*

Writes <out>.csv (game, method, t, mean_e1, standard_error), <out>_floors.csv, <out>.png
and <out>.json (parameters, run times, the search's ranking), by default as
results/fig3/fig3.* with the worst games in results/fig3/data/. Writing into docs/ or data/
needs --publish, and replacing a finished result of a larger scale needs --force.
Finished jobs are kept in --results_dir, so an interrupted run resumes.
"""

from __future__ import annotations

import csv
import os
import time

import numpy as np
from absl import app, flags

from smmcts_spiel import experiments, trees
from smmcts_spiel.exact import solver
from smmcts_spiel.experiments import cli
from smmcts_spiel.search import matrix_tree_engine as engine

PAPER_FLOORS = {"WC_RM": 0.0119, "WC_RMM": 0.0367}

_GAMMA = flags.DEFINE_float("gamma", 0.05, "Exploration of every selector.")
_ITERATIONS = flags.DEFINE_integer("iterations", 1000, "Iterations of a search run.", lower_bound=1)
_SCREEN_RUNS = flags.DEFINE_integer("screen_runs", 2, "Runs per game and method, all games.",
                                    lower_bound=1)
_SHORTLIST = flags.DEFINE_integer("shortlist", 1000, "Games kept per method after screening.",
                                  lower_bound=1)
_SHORTLIST_RUNS = flags.DEFINE_integer("shortlist_runs", 20, "Runs on the shortlisted games.",
                                       lower_bound=1)
_FINALISTS = flags.DEFINE_integer("finalists", 50, "Games kept per method for confirmation.",
                                  lower_bound=1)
_CONFIRM_RUNS = flags.DEFINE_integer("confirm_runs", 100, "Runs that rank the finalists.",
                                     lower_bound=1)
_MAX_GAMES = flags.DEFINE_integer("max_games", None, "Search only the first N game classes.",
                                  lower_bound=1)
_BATCH = flags.DEFINE_integer("batch", 500, "Games per search job.", lower_bound=1)
_CURVE_METHODS = flags.DEFINE_list("curve_methods", ["rm", "rmm", "exp3", "exp3m"],
                                   "Methods of the convergence curves.")
_CURVE_ITERATIONS = flags.DEFINE_integer("curve_iterations", 1_000_000, "Iterations per run.",
                                         lower_bound=1)
_CURVE_RUNS = flags.DEFINE_integer("curve_runs", 100, "Runs per worst game and method.",
                                   lower_bound=1)
_CURVE_CHUNK = flags.DEFINE_integer("curve_chunk", 10, "Runs per curve job.", lower_bound=1)
_PER_DECADE = flags.DEFINE_integer("per_decade", 8, "Log-spaced checkpoints per decade.",
                                   lower_bound=1)
_DATA_DIR = flags.DEFINE_string("data_dir", None, "Where the worst games go (JSON; default: "
                                "results/fig3/data, or data with --publish).")
_RUNNER = cli.define_runner_flags("fig3")
_OUT = flags.DEFINE_string("out", None, "Output prefix: .csv, _floors.csv, .png, .json "
                           "(default: results/fig3/fig3, or docs/figures/fig3 with --publish).")
_PUBLISH = flags.DEFINE_bool("publish", False, "Write the committed results (docs/figures/fig3,"
                             " data/wc_*.json); needed for any output under docs/ or data/.")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result of a larger scale.")
SCALE = ("max_games", "screen_runs", "shortlist_runs", "confirm_runs", "curve_iterations",
         "curve_runs")
flags.register_validator("gamma", lambda g: 0 < g <= 1, "gamma must be in (0, 1]")


JOB_COUNTS = {}


def run(fn, jobs, stage):
    results_dir = os.path.join(_RUNNER.results_dir.value, stage)
    JOB_COUNTS[stage] = {"jobs": len(jobs),
                         "done_before_this_call": experiments.finished_jobs(results_dir, jobs)}
    try:
        return experiments.run_jobs(
            fn, jobs, results_dir=results_dir, **_RUNNER.run_jobs_kwargs(),
            desc=f"fig3 {stage}")
    except experiments.MixedResultsError as e:
        raise app.UsageError(str(e), exitcode=2) from None


def screen(codes: np.ndarray, runs: int, seed: int, stage: str) -> np.ndarray:
    """Mean e1 (methods rm, rmm x games) of ``runs`` runs on each game of ``codes``."""
    jobs = {}
    for b, start in enumerate(range(0, len(codes), _BATCH.value)):
        jobs[f"batch{b:05d}"] = dict(
            codes=codes[start:start + _BATCH.value].tolist(), methods=["rm", "rmm"],
            gamma=_GAMMA.value, iterations=_ITERATIONS.value, runs=runs, base_seed=seed)
    results = run(experiments.screen_job, jobs, stage)
    return np.concatenate([results[k]["mean_e1"] for k in jobs], axis=1)


def best(codes: np.ndarray, mean_e1: np.ndarray, count: int) -> np.ndarray:
    """The union of the ``count`` highest-e1 games of each method, in code order."""
    keep = set()
    for m in range(mean_e1.shape[0]):
        order = np.lexsort((codes, -mean_e1[m]))
        keep.update(codes[order[:count]].tolist())
    return np.array(sorted(keep), dtype=np.int64)


def describe(root: trees.MatrixStage) -> str:
    lines = []
    for row in root.children:
        cells = ["[" + "; ".join(" ".join(f"{v:g}" for v in r) for r in sub.children) + "]"
                 for sub in row]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def plot(rows, floors, games, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(games), figsize=(5.2 * len(games), 4.6), sharey=True)
    styles = {"rm": ("tab:red", "-"), "rmm": ("tab:red", "--"), "exp3": ("tab:blue", "-"),
              "exp3m": ("tab:blue", "--")}
    for ax, (name, root) in zip(np.atleast_1d(axes), games.items()):
        for method in _CURVE_METHODS.value:
            pts = [r for r in rows if r["game"] == name and r["method"] == method]
            color, dash = styles.get(method, (None, "-"))
            t = np.array([r["t"] for r in pts])
            mean = np.array([r["mean_e1"] for r in pts])
            err = np.array([r["standard_error"] for r in pts])
            ax.plot(t, mean, dash, color=color, label=method.upper().replace("EXP", "Exp"))
            ax.fill_between(t, mean - err, mean + err, color=color, alpha=0.2, linewidth=0)
        floor = floors[name]["mixed_equilibrium"]
        ax.axhline(floor, color="gray", linestyle=":",
                   label=f"floor {floor:.4f} (paper {PAPER_FLOORS[name]})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name.replace("_", " "))
        ax.set_xlabel("t")
        ax.grid(True, alpha=0.3)
        ax.text(0.03, 0.03, describe(root), transform=ax.transAxes, fontsize=8,
                family="monospace", va="bottom",
                bbox=dict(facecolor="white", alpha=0.8, edgecolor="none"))
        ax.legend(fontsize=8, loc="upper right")
    np.atleast_1d(axes)[0].set_ylabel("Exploitability")
    fig.suptitle(f"Worst depth-2 BF-2 games, γ={_GAMMA.value:g}, {_CURVE_RUNS.value} runs",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    start = time.time()
    params = {name: flags.FLAGS[name].value for name in (
        "gamma", "iterations", "screen_runs", "shortlist", "shortlist_runs", "finalists",
        "confirm_runs", "max_games", "batch", "curve_methods", "curve_iterations",
        "curve_runs", "curve_chunk", "per_decade", "seed")}
    out = _OUT.value or ("docs/figures/fig3" if _PUBLISH.value else "results/fig3/fig3")
    data_dir = _DATA_DIR.value or ("data" if _PUBLISH.value else "results/fig3/data")
    try:
        experiments.check_output([out, data_dir, _RUNNER.results_dir.value],
                                 publish=_PUBLISH.value)
        experiments.check_not_smaller(out + ".json", params, SCALE, force=_FORCE.value)
        experiments.check_params(_RUNNER.results_dir.value, params)
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None
    timings = {}

    codes = trees.grid_game_codes()
    if _MAX_GAMES.value is not None:
        codes = codes[:_MAX_GAMES.value]
    stage_start = time.time()
    mean1 = screen(codes, _SCREEN_RUNS.value, _RUNNER.seed.value, "screen")
    shortlist = best(codes, mean1, _SHORTLIST.value)
    mean2 = screen(shortlist, _SHORTLIST_RUNS.value, _RUNNER.seed.value + 1, "shortlist")
    finalists = best(shortlist, mean2, _FINALISTS.value)
    mean3 = screen(finalists, _CONFIRM_RUNS.value, _RUNNER.seed.value + 2, "confirm")
    timings["search_seconds"] = round(time.time() - stage_start, 1)

    games, ranking = {}, {}
    os.makedirs(data_dir, exist_ok=True)
    for m, name in enumerate(["WC_RM", "WC_RMM"]):
        order = np.lexsort((finalists, -mean3[m]))
        code = int(finalists[order[0]])
        root = trees.grid_game(code)
        games[name] = root
        ranking[name] = [{"code": int(finalists[k]), "rm": float(mean3[0, k]),
                          "rmm": float(mean3[1, k])} for k in order[:10]]
        k = order[0]
        trees.dump(trees.MatrixTree(root, {
            "name": name,
            "note": (f"Worst of {len(codes)} depth-2 BF-2 games with utilities in {{0, 0.5, 1}} "
                     f"(up to row/column permutations) for {name[3:]} with gamma "
                     f"{_GAMMA.value:g}: mean e1 after {_ITERATIONS.value} iterations over "
                     f"{_CONFIRM_RUNS.value} runs RM {mean3[0, k]:.4f}, RMM {mean3[1, k]:.4f}. "
                     "Found by scripts/fig3.py."),
            "code": code}), os.path.join(data_dir, f"{name.lower()}.json"))

    floors = {name: experiments.exploration_floors(root, _GAMMA.value)
              for name, root in games.items()}

    stage_start = time.time()
    checkpoints = engine.log_checkpoints(_CURVE_ITERATIONS.value, _PER_DECADE.value).tolist()
    jobs = {}
    for g, (name, root) in enumerate(games.items()):
        for method in _CURVE_METHODS.value:
            for first in range(0, _CURVE_RUNS.value, _CURVE_CHUNK.value):
                jobs[f"{name}_{method}_runs{first:05d}"] = dict(
                    game={"json": trees.to_json(root)}, method=method, gamma=_GAMMA.value,
                    checkpoints=checkpoints, base_seed=_RUNNER.seed.value + 3, game_index=g,
                    runs=min(_CURVE_CHUNK.value, _CURVE_RUNS.value - first), first_run=first)
    results = run(experiments.curves_job, jobs, "curves")
    timings["curves_seconds"] = round(time.time() - stage_start, 1)

    rows = []
    for name in games:
        for method in _CURVE_METHODS.value:
            e1 = np.concatenate([results[k]["e1"] for k in jobs
                                 if k.startswith(f"{name}_{method}_runs")])
            mean, se = experiments.mean_curve([e1])
            rows += [{"game": name, "method": method, "t": t, "mean_e1": m, "standard_error": e}
                     for t, m, e in zip(checkpoints, mean, se)]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with open(out + "_floors.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["game", "gamma", "game_value", "floor_mixed_equilibrium",
                         "floor_best_explorative", "paper", "final_rm", "final_rmm"])
        for name, root in games.items():
            final = {r["method"]: r["mean_e1"] for r in rows
                     if r["game"] == name and r["t"] == checkpoints[-1]}
            writer.writerow([name, _GAMMA.value, solver.tree_value(root),
                             floors[name]["mixed_equilibrium"], floors[name]["best_explorative"],
                             PAPER_FLOORS[name], final.get("rm"), final.get("rmm")])
    plot(rows, floors, games, out + ".png")
    elapsed = time.time() - start
    experiments.write_params(out + ".json", dict(params, games_searched=len(codes),
                             ranking=ranking, floors=floors, job_counts=JOB_COUNTS),
                             wall_seconds=round(elapsed, 1),
                             **_RUNNER.execution(),
                             **timings)
    for name, root in games.items():
        final = {r["method"]: round(r["mean_e1"], 4) for r in rows
                 if r["game"] == name and r["t"] == checkpoints[-1]}
        print(f"{name}:\n{describe(root)}\n  floors {floors[name]} (paper {PAPER_FLOORS[name]})"
              f"\n  e1 at t={checkpoints[-1]}: {final}")
    print(f"wrote {out}.csv/_floors.csv/.png/.json in {elapsed:.0f} s")


if __name__ == "__main__":
    app.run(main)
