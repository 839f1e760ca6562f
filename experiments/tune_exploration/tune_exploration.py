"""Measure the exploration constants of Exp3 (gamma) and UCB (c) against exact solutions.

For each candidate value, at fixed iteration budgets (no clock involved):

* on games the solver solves (``--games``): the stage NashConv of SMMCTSBot's move (its
  engine and default evaluator) at ``--states`` sampled decision states, ``--seeds``
  searches each, under each final-move rule (``--thresholds``: 0 plays the empirical
  frequencies as they are, 0.1 is the bot's default);
* on the paper's random games (``--random_settings``, ``depthxbranching``): NashConv of the
  empirical frequencies of the whole tree, ``--random_games`` games x ``--random_runs`` runs.

Then, per selector, a score for each value: the mean over (game, budget) cells of its mean
NashConv divided by the best value's in that cell (1.0: best everywhere), on the primary
measure (the bot's default rule on the solved games, the empirical frequencies on the
random games). See NOTES.md beside this program for the registration of this measurement.

  python experiments/tune_exploration/tune_exploration.py --states=4 --seeds=1 \\
      --random_games=2 --checkpoints=1000,10000 --results_dir=results/tune_quick   # a quick look
  python experiments/tune_exploration/tune_exploration.py  # the registered run -> results/
                                                           # tune_exploration/

Writes ``<out>.csv`` (selector, parameter, value, game, iterations, rule, mean, standard
error, n), ``<out>_scores.md`` and ``<out>.png``, and the parameters as ``<out>.json``.
"""

from __future__ import annotations

import csv
import os
import time

import numpy as np
import pyspiel
from absl import app, flags

from smmcts_spiel.bots.smmcts_bot import DEFAULT_THRESHOLD
from smmcts_spiel.experiments import cli, exploration, outputs, runner

_GAMES = flags.DEFINE_string(
    "games", "goofspiel(num_cards=5,imp_info=False,points_order=random,returns_type=win_loss);"
    "goofspiel(num_cards=6,imp_info=False,points_order=descending,"
    "returns_type=point_difference);oshi_zumo(coins=10,size=3,horizon=20);"
    "smmcts_random_stacked_matrix(depth=4,branching=3,seed=1)",
    "Games with exact solutions, separated by ';'.")
_RANDOM_SETTINGS = flags.DEFINE_list("random_settings", ["2x5", "4x2"],
                                     "The paper's random games: depth x branching factor.")
_RANDOM_GAMES = flags.DEFINE_integer("random_games", 20, "Random games per setting.",
                                     lower_bound=1)
_RANDOM_RUNS = flags.DEFINE_integer("random_runs", 5, "Runs per random game.", lower_bound=1)
_STATES = flags.DEFINE_integer("states", 20, "Decision states per solved game.", lower_bound=1)
_SEEDS = flags.DEFINE_integer("seeds", 2, "Searches per state.", lower_bound=1)
_CHECKPOINTS = flags.DEFINE_list("checkpoints", ["1000", "10000", "100000"],
                                 "Iteration budgets (increasing).")
_EXP3_GAMMAS = flags.DEFINE_list("exp3_gammas", ["0.01", "0.02", "0.05", "0.1", "0.2", "0.3",
                                                 "0.5"], "Exp3's gamma values.")
_UCB_CS = flags.DEFINE_list("ucb_cs", ["0.1", "0.2", "0.35", "0.5", "0.7", "1", "1.4", "2"],
                            "UCB's c values.")
_THRESHOLDS = flags.DEFINE_list("thresholds", ["0", str(DEFAULT_THRESHOLD)],
                                "Final-move thresholds (rules) on the solved games.")
_SOLUTION_DIR = flags.DEFINE_string("solution_dir", "results/solutions",
                                    "Where exact solutions are cached (JSON).")
_SOLVER_LIMITS = cli.define_solver_limits()
_RUNNER = cli.define_runner_flags("tune_exploration")
_OUT = flags.DEFINE_string("out", None, "Output prefix (default: <results_dir>/tune).")
_PUBLISH = flags.DEFINE_bool("publish", False, "Allow the outputs under the committed results "
                             "(--out=experiments/tune_exploration/results/tune_exploration "
                             "--publish).")


def candidates() -> list[tuple[str, str, float]]:
    """(selector, parameter, value) of every candidate."""
    return ([("exp3", "gamma", float(g)) for g in _EXP3_GAMMAS.value]
            + [("ucb", "c", float(c)) for c in _UCB_CS.value])


def jobs() -> dict[str, dict]:
    checkpoints = [int(x) for x in _CHECKPOINTS.value]
    if checkpoints != sorted(set(checkpoints)) or checkpoints[0] < 1:
        raise ValueError(f"--checkpoints must increase from 1 or more, got {checkpoints}")
    thresholds = [float(t) for t in _THRESHOLDS.value]
    seeds = [_RUNNER.seed.value * 1000 + s for s in range(_SEEDS.value)]
    out = {}
    lifted = cli.solver_limits_kwargs(_SOLVER_LIMITS)
    for g, game in enumerate(filter(None, _GAMES.value.split(";"))):
        loaded = pyspiel.load_game(game)
        # Solved (or read) here, before the jobs: the workers then read the cached file.
        cli.solve_game(loaded, _SOLUTION_DIR.value, _SOLVER_LIMITS.value)
        states = exploration.sample_states(loaded, _STATES.value, seed=_RUNNER.seed.value + g)
        for selector, parameter, value in candidates():
            out[f"g{g}_{selector}_{value:g}"] = dict(
                fn="stage", game=game, selector=selector, gamma=value if parameter == "gamma"
                else 0.05, c=value if parameter == "c" else 1.4, states=states,
                seeds=seeds, checkpoints=checkpoints, thresholds=thresholds,
                solution_dir=_SOLUTION_DIR.value, **lifted)
    for setting in _RANDOM_SETTINGS.value:
        depth, branching = (int(x) for x in setting.split("x"))
        for index in range(_RANDOM_GAMES.value):
            for selector, parameter, value in candidates():
                out[f"r{setting}_{index}_{selector}_{value:g}"] = dict(
                    fn="random", depth=depth, branching=branching, selector=selector,
                    gamma=value if parameter == "gamma" else 0.05,
                    c=value if parameter == "c" else 1.4, base_seed=_RUNNER.seed.value,
                    game_index=index, runs=_RANDOM_RUNS.value, checkpoints=checkpoints)
    return out


def run_job(fn: str, **kwargs) -> dict[str, np.ndarray]:
    if fn == "stage":
        return exploration.stage_nash_conv_job(**kwargs)
    return exploration.random_games_job(**kwargs)


def summarise(all_jobs: dict[str, dict], results: dict) -> list[dict]:
    """One row per (candidate, game, budget, rule): mean NashConv, standard error, n."""
    rows = []
    checkpoints = [int(x) for x in _CHECKPOINTS.value]
    thresholds = [float(t) for t in _THRESHOLDS.value]
    for selector, parameter, value in candidates():
        for g, game in enumerate(filter(None, _GAMES.value.split(";"))):
            data = results[f"g{g}_{selector}_{value:g}"]["nash_conv"]
            for k, budget in enumerate(checkpoints):
                for r, threshold in enumerate(thresholds):
                    x = data[:, :, k, r].ravel()
                    rows.append(dict(selector=selector, parameter=parameter, value=value,
                                     game=game, iterations=budget,
                                     rule=f"empirical@{threshold:g}", mean=x.mean(),
                                     standard_error=x.std(ddof=1) / np.sqrt(len(x))
                                     if len(x) > 1 else np.nan, n=len(x)))
        for setting in _RANDOM_SETTINGS.value:
            per_game = np.array([results[f"r{setting}_{i}_{selector}_{value:g}"]["nash_conv"]
                                 .mean(axis=0) for i in range(_RANDOM_GAMES.value)])
            for k, budget in enumerate(checkpoints):
                x = per_game[:, k]
                rows.append(dict(selector=selector, parameter=parameter, value=value,
                                 game=f"random games {setting}", iterations=budget,
                                 rule="empirical@0", mean=x.mean(),
                                 standard_error=x.std(ddof=1) / np.sqrt(len(x))
                                 if len(x) > 1 else np.nan, n=len(x)))
    return rows


def scores(rows: list[dict]) -> dict[str, list[tuple[float, float]]]:
    """Per selector, ``(value, score)`` sorted by score: the mean over (game, budget) cells
    of the primary measure divided by the cell's best value."""
    primary = f"empirical@{DEFAULT_THRESHOLD:g}"
    out = {}
    for selector in sorted({r["selector"] for r in rows}):
        mine = [r for r in rows if r["selector"] == selector and (
            r["rule"] == primary or r["game"].startswith("random games"))]
        cells = {(r["game"], r["iterations"]) for r in mine}
        ratios: dict[float, list[float]] = {}
        for cell in cells:
            in_cell = [r for r in mine if (r["game"], r["iterations"]) == cell]
            best = min(r["mean"] for r in in_cell)
            for r in in_cell:
                ratios.setdefault(r["value"], []).append(r["mean"] / best if best > 0 else 1.0)
        out[selector] = sorted(((v, float(np.mean(x))) for v, x in ratios.items()),
                               key=lambda p: p[1])
    return out


def write_scores(path: str, rows: list[dict], ranked: dict) -> None:
    lines = ["| selector | value | score (1 = best in every cell) |", "| --- | ---: | ---: |"]
    for selector, pairs in ranked.items():
        parameter = next(r["parameter"] for r in rows if r["selector"] == selector)
        lines += [f"| {selector} | {parameter} = {v:g} | {s:.3f} |" for v, s in pairs]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    primary = f"empirical@{DEFAULT_THRESHOLD:g}"
    games = list(dict.fromkeys(r["game"] for r in rows))
    selectors = list(dict.fromkeys(r["selector"] for r in rows))
    fig, axes = plt.subplots(len(selectors), len(games), figsize=(3.2 * len(games),
                             3.0 * len(selectors)), squeeze=False)
    for a, selector in enumerate(selectors):
        for b, game in enumerate(games):
            ax = axes[a][b]
            for budget in sorted({r["iterations"] for r in rows}):
                mine = sorted((r for r in rows if r["selector"] == selector
                               and r["game"] == game and r["iterations"] == budget
                               and (r["rule"] == primary or game.startswith("random"))),
                              key=lambda r: r["value"])
                ax.errorbar([r["value"] for r in mine], [r["mean"] for r in mine],
                            yerr=[1.96 * r["standard_error"] for r in mine], marker="o",
                            ms=3, capsize=2, label=f"{budget:,} it.")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.xaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
            ax.set_xlabel(mine[0]["parameter"] if mine else "")
            ax.set_title(game if len(game) < 40 else game[:37] + "...", fontsize=7)
            if b == 0:
                ax.set_ylabel(f"{selector}: NashConv")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv):
    del argv
    out = _OUT.value or os.path.join(_RUNNER.results_dir.value, "tune")
    try:
        outputs.check_output([out + ext for ext in (".csv", ".png", ".json", "_scores.md")]
                             + [_RUNNER.results_dir.value, _SOLUTION_DIR.value],
                             publish=_PUBLISH.value)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    all_jobs = jobs()
    params = {name: flags.FLAGS[name].value for name in (
        "games", "random_settings", "random_games", "random_runs", "states", "seeds",
        "checkpoints", "exp3_gammas", "ucb_cs", "thresholds", "seed")}
    runner.check_params(_RUNNER.results_dir.value, params)
    start = time.time()
    results = runner.run_jobs(run_job, all_jobs, results_dir=_RUNNER.results_dir.value,
                              desc="tuning jobs", **_RUNNER.run_jobs_kwargs())
    rows = summarise(all_jobs, results)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    ranked = scores(rows)
    write_scores(out + "_scores.md", rows, ranked)
    plot(rows, out + ".png")
    runner.write_params(out + ".json", {**params, **_RUNNER.execution()},
                        seconds=time.time() - start)
    for selector, pairs in ranked.items():
        print(f"{selector}: " + ", ".join(f"{v:g} -> {s:.3f}" for v, s in pairs))
    print(f"wrote {out}.csv/.png/.json/_scores.md")


if __name__ == "__main__":
    cli.run(main)
