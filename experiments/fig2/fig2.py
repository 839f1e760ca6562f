"""Reproduce Fig. 2 of Lisy et al. (NIPS 2013): RM vs RMM on random stacked matrix games.

Exploitability e1 of player 1's empirical frequencies, averaged over random games (leaf
utilities U[0, 1]) and runs. Top panel: depth 2, branching factor 2 / 3 / 5, exploration
gamma 0.05 / 0.1 / 0.2. Bottom panel: branching factor 2, depth 2 / 3 / 4.

  python experiments/fig2/fig2.py --games=5 --runs=10 --iterations=1000   # a quick look
  python experiments/fig2/fig2.py                      # the paper's scale: 100 games x 100 runs
  python experiments/fig2/fig2.py --publish  # the same, replacing results/fig2.* beside it

Writes a CSV (setting, method, t, mean_e1, standard_error), a PNG laid out like the
paper's figure and the parameters (with run time) as JSON next to the CSV, by default as
results/fig2/fig2.*. Writing into the committed results (experiments/, benchmarks/, docs/)
needs --publish, and replacing a finished result of a larger scale (games, runs, iterations)
needs --force. Finished jobs are kept in
--results_dir, so an interrupted run resumes.
"""

from __future__ import annotations

import csv
import os
import time

from absl import app, flags, logging

from smmcts_spiel import experiments
from smmcts_spiel.experiments import cli
from smmcts_spiel.reports import plots
from smmcts_spiel.search import matrix_tree_engine as engine

# The committed results of this experiment (written with --publish).
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

_GAMES = flags.DEFINE_integer("games", 100, "Random games per setting.", lower_bound=1)
_RUNS = flags.DEFINE_integer("runs", 100, "Runs of each method per game.", lower_bound=1)
_ITERATIONS = flags.DEFINE_integer("iterations", 10_000, "Iterations per run.", lower_bound=1)
_PER_DECADE = flags.DEFINE_integer("per_decade", 8, "Log-spaced checkpoints per decade.",
                                   lower_bound=1)
_BRANCHINGS = flags.DEFINE_list("branchings", ["2", "3", "5"], "Top panel: branching factors.")
_GAMMAS = flags.DEFINE_list("gammas", ["0.05", "0.1", "0.2"], "Top panel: exploration gammas.")
_DEPTHS = flags.DEFINE_list("depths", ["2", "3", "4"], "Bottom panel: depths (branching 2).")
_BOTTOM_GAMMA = flags.DEFINE_float(
    "bottom_gamma", 0.05, "Bottom panel exploration (the paper does not state it).")
_METHODS = flags.DEFINE_list("methods", ["rm", "rmm"], "Selectors (rm, rmm, exp3, exp3m, ...).")
_RUNNER = cli.define_runner_flags("fig2")
_OUT = flags.DEFINE_string("out", None, "Output prefix: writes .csv, .png, .json (default: "
                           "results/fig2/fig2, or experiments/fig2/results/fig2 with --publish).")
_PUBLISH = flags.DEFINE_bool("publish", False, "Write the committed figure (experiments/fig2/"
                             "results/fig2 by default); needed for any output under "
                             "experiments/, benchmarks/ or docs/.")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result of a larger scale.")
SCALE = ("games", "runs", "iterations")


def _all_gammas(texts) -> bool:
    try:
        return all(0 < float(t) <= 1 for t in texts)
    except ValueError:
        return False


flags.register_validator("gammas", _all_gammas, "every gamma must be a number in (0, 1]")
flags.register_validator("bottom_gamma", lambda g: 0 < g <= 1, "bottom_gamma must be in (0, 1]")


def settings() -> list[tuple[str, int, int, float]]:
    """(panel, depth, branching, gamma) of every subplot, top panel first."""
    top = [("top", 2, int(b), float(g)) for g in _GAMMAS.value for b in _BRANCHINGS.value]
    bottom = [("bottom", int(d), 2, _BOTTOM_GAMMA.value) for d in _DEPTHS.value]
    return top + bottom


def setting_name(depth: int, branching: int, gamma: float) -> str:
    return f"depth={depth} bf={branching} gamma={gamma:g}"


def plot(rows: list[dict], path: str) -> None:
    top = [s for s in settings() if s[0] == "top"]
    bottom = [s for s in settings() if s[0] == "bottom"]
    gammas = sorted({s[3] for s in top})
    branchings = sorted({s[2] for s in top})

    def draw(ax, depth, branching, gamma):
        name = setting_name(depth, branching, gamma)
        for method in _METHODS.value:
            plots.exploitability_curve(ax, [r for r in rows if r["setting"] == name
                                            and r["method"] == method], method, alpha=0.25)
        plots.log_axes(ax)

    with plots.saved_figure(path, (10, 11)) as fig:
        grid = fig.add_gridspec(len(gammas) + 2, len(branchings),
                                height_ratios=[1] * len(gammas) + [0.12, 1.3])
        axes = {}
        for r, gamma in enumerate(gammas):
            for c, branching in enumerate(branchings):
                ax = fig.add_subplot(grid[r, c], sharey=axes.get((r, 0)))
                axes[(r, c)] = ax
                draw(ax, 2, branching, gamma)
                if r == 0:
                    ax.set_title(f"BF={branching}")
                if c == len(branchings) - 1:
                    ax.yaxis.set_label_position("right")
                    ax.set_ylabel(f"γ={gamma:g}")
                elif c == 0:
                    ax.set_ylabel("Exploitability")
                if r == len(gammas) - 1:
                    ax.set_xlabel("t")
        first = None
        for c, (_, depth, branching, gamma) in enumerate(bottom):
            ax = fig.add_subplot(grid[len(gammas) + 1, c], sharey=first)
            first = first or ax
            draw(ax, depth, branching, gamma)
            ax.set_title(f"Depth={depth}")
            ax.set_xlabel("t")
            if c == 0:
                ax.set_ylabel("Exploitability")
        axes[(0, 0)].legend(title="Method", fontsize=8, title_fontsize=8, loc="lower left")
        fig.suptitle(f"Exploitability of RM / RMM empirical frequencies on random games "
                     f"({_GAMES.value} games x {_RUNS.value} runs, ±1 s.e.)\n"
                     f"top: depth 2; bottom: BF 2, γ={_BOTTOM_GAMMA.value:g}", fontsize=10)


def main(argv):
    start = time.time()
    out = _OUT.value or (os.path.join(RESULTS, "fig2") if _PUBLISH.value else "results/fig2/fig2")
    checkpoints = engine.log_checkpoints(_ITERATIONS.value, _PER_DECADE.value).tolist()
    params = {
        "games": _GAMES.value, "runs": _RUNS.value, "iterations": _ITERATIONS.value,
        "checkpoints": checkpoints, "methods": _METHODS.value, "seed": _RUNNER.seed.value,
        "settings": [list(s) for s in settings()], "final_strategy": "empirical",
        "utilities": "uniform [0, 1]",
    }
    try:
        experiments.check_output([out, _RUNNER.results_dir.value], publish=_PUBLISH.value)
        experiments.check_not_smaller(out + ".json", params, SCALE, force=_FORCE.value)
        # A job's result does not depend on how many games or which settings there are,
        # so those may change between runs sharing --results_dir (e.g. to add games).
        experiments.check_params(_RUNNER.results_dir.value, {
            k: v for k, v in params.items() if k not in ("settings", "games")})
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None
    jobs = {}
    # Game by game, so that a partial run covers every setting with its first games.
    for g in range(_GAMES.value):
        for _, depth, branching, gamma in settings():
            for method in _METHODS.value:
                key = f"d{depth}_b{branching}_g{gamma:g}_{method}_game{g:04d}"
                jobs[key] = dict(
                    game={"random": dict(depth=depth, branching=branching,
                                         base_seed=_RUNNER.seed.value, game_index=g)},
                    method=method, gamma=gamma, checkpoints=checkpoints,
                    base_seed=_RUNNER.seed.value, game_index=g, runs=_RUNS.value)
    already_done = experiments.finished_jobs(_RUNNER.results_dir.value, jobs)
    try:
        results = experiments.run_jobs(
            experiments.curves_job, jobs, results_dir=_RUNNER.results_dir.value,
            **_RUNNER.run_jobs_kwargs(), desc="fig2 jobs")
    except experiments.MixedResultsError as e:
        raise app.UsageError(str(e), exitcode=2) from None
    rows = []
    done = set()
    for _, depth, branching, gamma in settings():
        name = setting_name(depth, branching, gamma)
        if name in done:
            continue
        done.add(name)
        for method in _METHODS.value:
            per_game = [results[f"d{depth}_b{branching}_g{gamma:g}_{method}_game{g:04d}"]["e1"]
                        for g in range(_GAMES.value)]
            mean, se = experiments.mean_curve(per_game)
            for t, m, e in zip(checkpoints, mean, se):
                rows.append({"setting": name, "method": method, "t": t, "mean_e1": m,
                             "standard_error": e})
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, out + ".png")
    elapsed = time.time() - start
    experiments.write_params(out + ".json", params, wall_seconds=round(elapsed, 1),
                             jobs=len(jobs), jobs_done_before_this_call=already_done,
                             **_RUNNER.execution())
    for name in sorted(done):
        last = [r for r in rows if r["setting"] == name and r["t"] == checkpoints[-1]]
        print(name, " ".join(f"{r['method']}={r['mean_e1']:.4f}" for r in last))
    logging.info("wrote %s.csv/.png/.json in %.0f s", out, elapsed)


if __name__ == "__main__":
    cli.run(main)
