"""Reproduce Fig. 3 of Lisy et al. (NIPS 2013): convergence on the empirically worst games.

1. Brute-force search over every depth-2, branching-2 game with utilities in {0, 0.5, 1},
   one game per class under row and column permutations at every stage (133,407 games),
   ranked by the mean exploitability e1 after --iterations of RM and of RMM (gamma 0.05).
   --protocol=paper (the default, the paper's): every game gets --confirm_runs (100) runs;
   the ranking (--ranking_top worst of each method with both exact floors, and where the
   games with the paper's floors rank) goes to <out>_ranking.csv/.md. --protocol=screen (a
   quick approximation): all games with --screen_runs runs, the --shortlist best of each
   method with --shortlist_runs, the --finalists best with --confirm_runs on fresh seeds.
   The worst game of each method, WC_RM and WC_RMM, goes to --data_dir as matrix-tree JSON.
2. RM, RMM, Exp3 and Exp3M for --curve_iterations on WC_RM and WC_RMM (--curve_runs each).
3. The floor of each worst game, computed exactly: e1 of the equilibrium mixed with gamma
   uniform exploration (the paper: 0.0119 and 0.0367), and the least e1 of any strategy
   that explores with gamma.

  python experiments/fig3/fig3.py --protocol=screen --max_games=2000 --curve_iterations=10000 \
      --curve_runs=10                     # a quick look
  python experiments/fig3/fig3.py            # the paper's protocol (2.7e10 iterations)
  python experiments/fig3/fig3.py --publish  # the same, replacing results/fig3.*, wc_*.json
  python experiments/fig3/fig3.py --publish --reuse_search  # curves only, committed worst games

Writes <out>.csv (game, method, t, mean_e1, standard_error), <out>_floors.csv, <out>.png and
<out>.json (parameters, run times, the search's ranking), by default as results/fig3/fig3.*
with the worst games in results/fig3/data/. Writing into the committed results
(experiments/, benchmarks/, docs/) needs --publish, and replacing a finished result of a
larger scale (more runs per class, iterations, ...) needs --force. Finished jobs are kept in
--results_dir, so an interrupted run resumes.
"""

from __future__ import annotations

import csv
import os
import time

import numpy as np
from absl import app, flags, logging

from smmcts_spiel import experiments, trees
from smmcts_spiel.exact import solver
from smmcts_spiel.experiments import cli, outputs
from smmcts_spiel.reports import plots
from smmcts_spiel.search import matrix_tree_engine as engine
from smmcts_spiel.search import selectors

# The committed results of this experiment (written with --publish).
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

PAPER_FLOORS = (0.0119, 0.0367)  # of WC_RM and WC_RMM, Lisy et al. (2013) Sec. 5
# A game "has the paper's floor" when its floor rounds to it (4 decimals as printed).
FLOOR_TOLERANCE = 5e-5

_PROTOCOL = flags.DEFINE_enum(
    "protocol", "paper", ["paper", "screen"],
    "screen: all games with --screen_runs, then the best with more runs (cheap); paper: "
    "every game with --confirm_runs runs (the paper's protocol, 2.7e10 iterations at 100).")
_METHODS = flags.DEFINE_list(
    "methods", ["rm", "rmm"],
    "The two selectors whose worst games are searched: rm, rmm (the paper's regret update) "
    "or rmb, rmbm (bandit regret matching, as GTLibrary).")
_RANKING_TOP = flags.DEFINE_integer("ranking_top", 50, "Games per method in the published "
                                    "ranking (--protocol=paper).", lower_bound=1)
_PRESCREEN_RUNS = flags.DEFINE_integer(
    "prescreen_runs", None, "--protocol=paper on a subset: first every game with this many "
    "runs (the first runs of the paper's seeds), then the paper's runs on the "
    "--prescreen_keep worst of each method only.", lower_bound=1)
_PRESCREEN_KEEP = flags.DEFINE_integer("prescreen_keep", 5000, "Games per method kept by "
                                       "the pre-screen.", lower_bound=1)
_ALL_FLOORS = flags.DEFINE_bool("all_floors", True, "--protocol=paper: the exact floor of "
                                 "every class (about 3 ms each), to find the games with the "
                                 "paper's floors; else only of the ranked games.")
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
                                "results/fig3/data, or experiments/fig3/results with --publish).")
_RUNNER = cli.define_runner_flags("fig3")
_OUT = flags.DEFINE_string("out", None, "Output prefix: .csv, _floors.csv, .png, .json "
                           "(default: results/fig3/fig3, or experiments/fig3/results/fig3 "
                           "with --publish).")
_PUBLISH = flags.DEFINE_bool("publish", False, "Write the committed results (experiments/fig3/"
                             "results); needed for any output under experiments/, "
                             "benchmarks/ or docs/.")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result of a larger scale.")
_REUSE_SEARCH = flags.DEFINE_bool(
    "reuse_search", False, "Skip the search (stage 1): take the worst games from --data_dir "
    "and the search's record (ranking, job counts, run time) from <out>.json, as a finished "
    "search with the same flags wrote them, and redo the curves and floors only (e.g. after a "
    "change that leaves RM and RMM, which rank the games, bit-identical).")
SCALE = ("max_games", "runs_every_class", "screen_runs", "shortlist_runs", "confirm_runs",
         "curve_iterations", "curve_runs")
flags.register_validator("gamma", lambda g: 0 < g <= 1, "gamma must be in (0, 1]")


JOB_COUNTS = {}


def wc_names() -> list[str]:
    """WC_RM, WC_RMM (or WC_RMB, WC_RMBM): the worst game of each searched method."""
    return [f"WC_{m.upper()}" for m in _METHODS.value]


def runs_every_class() -> int:
    """The runs every class gets: what makes a search by the paper's protocol larger than a
    pre-screened one, and either larger than a screen."""
    if _PROTOCOL.value == "screen":
        return _SCREEN_RUNS.value
    return _PRESCREEN_RUNS.value or _CONFIRM_RUNS.value


def search_command() -> str:
    """The flags of experiments/fig3/fig3.py that choose the search (for the records it writes)."""
    command = (f"experiments/fig3/fig3.py --protocol={_PROTOCOL.value} "
               f"--methods={','.join(_METHODS.value)}")
    if _PROTOCOL.value == "paper" and _PRESCREEN_RUNS.value is not None:
        command += (f" --prescreen_runs={_PRESCREEN_RUNS.value}"
                    f" --prescreen_keep={_PRESCREEN_KEEP.value}")
    return command


def paper_floor(name: str) -> float:
    return PAPER_FLOORS[wc_names().index(name)]


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


def screen(codes: np.ndarray, runs: int, seed: int, stage: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean e1 and its standard error (methods x games) of ``runs`` runs on each game."""
    jobs = {}
    for b, start in enumerate(range(0, len(codes), _BATCH.value)):
        jobs[f"batch{b:05d}"] = dict(
            codes=codes[start:start + _BATCH.value].tolist(), methods=_METHODS.value,
            gamma=_GAMMA.value, iterations=_ITERATIONS.value, runs=runs, base_seed=seed)
    results = run(experiments.screen_job, jobs, stage)
    mean = np.concatenate([results[k]["mean_e1"] for k in jobs], axis=1)
    sd = np.concatenate([results[k]["sd_e1"] for k in jobs], axis=1)
    return mean, sd / np.sqrt(runs)


def floors_of(codes: np.ndarray, stage: str) -> np.ndarray:
    """Exploration floors x games, as jobs: rows mixed equilibrium, best explorative, and
    the least and largest floor of any subgame-perfect equilibrium."""
    jobs = {f"batch{b:05d}": dict(codes=codes[start:start + 10 * _BATCH.value].tolist(),
                                  gamma=_GAMMA.value)
            for b, start in enumerate(range(0, len(codes), 10 * _BATCH.value))}
    columns = []
    for job, key in ((experiments.floors_job, "floors"),
                     (experiments.floor_ranges_job, "floor_ranges")):
        results = run(job, jobs, stage.replace("floors", key))
        columns.append(np.concatenate([results[k][key] for k in jobs], axis=1))
    return np.concatenate(columns)


def can_have_floor(floors: np.ndarray, target: float) -> np.ndarray:
    """Which games (columns of :func:`floors_of`) have the floor ``target`` (within
    FLOOR_TOLERANCE) for some subgame-perfect equilibrium."""
    return ((floors[2] <= target + FLOOR_TOLERANCE) & (floors[3] >= target - FLOOR_TOLERANCE))


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


def write_ranking(all_codes: np.ndarray, codes: np.ndarray, mean: np.ndarray, se: np.ndarray,
                  floors: np.ndarray, all_floors: np.ndarray | None,
                  prescreen: np.ndarray | None, added: np.ndarray, out: str) -> None:
    """The --ranking_top worst games of each method (CSV + markdown), and where the games
    with the paper's floors rank.

    ``codes`` (sorted) are the games that got the paper's runs (all, or those the
    pre-screen kept), ``mean`` / ``se`` / ``floors`` their results (floors: rows as
    :func:`floors_of`); ``all_floors`` (or
    None: not computed) and ``prescreen`` (mean e1 of the pre-screen runs, or None) cover
    ``all_codes``. ``added`` are ranked games the pre-screen had dropped: their rank among
    the ranked games is a lower bound of their rank among all.
    """
    methods = _METHODS.value
    runs = _CONFIRM_RUNS.value
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    rank = np.empty_like(mean, dtype=np.int64)  # 1 = the highest mean e1
    orders = []
    for m in range(len(methods)):
        order = np.lexsort((codes, -mean[m]))
        rank[m, order] = np.arange(1, len(codes) + 1)
        orders.append(order)
    pre_rank = None
    if prescreen is not None:
        pre_rank = np.empty_like(prescreen, dtype=np.int64)
        for m in range(len(methods)):
            pre_rank[m, np.lexsort((all_codes, -prescreen[m]))] = np.arange(1, len(all_codes) + 1)
    fields = ["method", "rank", "code", "mean_e1", "standard_error", "floor_mixed_equilibrium",
              "floor_best_explorative", "floor_equilibria_least", "floor_equilibria_largest"
              ] + [f"mean_e1_{o}" for o in methods]
    if pre_rank is not None:
        fields.append("prescreen_rank")
    rows = []
    for m, method in enumerate(methods):
        for k in orders[m][:_RANKING_TOP.value]:
            values = [method, rank[m, k], int(codes[k]), mean[m, k], se[m, k], *floors[:, k]
                      ] + [mean[o, k] for o in range(len(methods))]
            if pre_rank is not None:
                values.append(pre_rank[m, np.searchsorted(all_codes, codes[k])])
            rows.append(dict(zip(fields, values)))
    with open(out + "_ranking.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)

    def game(code) -> str:
        return "`" + describe(trees.grid_game(int(code))).replace("\n", " / ") + "`"

    def row(m: int, k: int) -> str:
        bound = "≥ " if codes[k] in added else ""
        least, largest = floors[2:, k]
        spread = (f"{least:.4f}" if largest - least < 5e-5 else f"{least:.4f} - {largest:.4f}")
        return (f"| {bound}{rank[m, k]} | {int(codes[k])} | {mean[m, k]:.4f} ± {se[m, k]:.4f} | "
                f"{floors[0, k]:.4f} | {floors[1, k]:.4f} | {spread} | {game(codes[k])} |")

    header = ("| rank | code | mean e1 ± s.e. | floor (mixed eq.) | floor (best) | "
              "floors (all eq.) | game |\n|---:|---:|---|---:|---:|---:|---|")
    lines = [f"# Fig. 3 search by the paper's protocol: {', '.join(m.upper() for m in methods)}",
             "",
             f"Classes of depth-2, branching-2 games with utilities in {{0, 0.5, 1}}: "
             f"{len(all_codes)}. Ranked: {len(codes)} games, each with {runs} runs of each "
             f"method, gamma {_GAMMA.value:g}, {_ITERATIONS.value} iterations, base seed "
             f"{_RUNNER.seed.value}; mean e1 of the empirical strategy with its standard error "
             "over the runs. The floors are exact (`exploration_floors`, "
             f"`equilibrium_floor_range`). Written by `{search_command()}`; the CSV is beside "
             "this file.", ""]
    if prescreen is not None:
        worst_kept = {method: max(r["prescreen_rank"] for r in rows if r["method"] == method)
                      for method in methods}
        lines += [f"Pre-screen: every class got the first {_PRESCREEN_RUNS.value} of its "
                  f"{runs} runs; the {_PRESCREEN_KEEP.value} worst of each method by that "
                  f"mean were kept (union {len(codes) - len(added)}) and got all {runs} runs "
                  "(the same seeds as the full protocol, so their results are the full "
                  "protocol's). "
                  + (f"The {len(added)} games it dropped that can have the paper's floors (with "
                     f"any equilibrium) got all {runs} runs too (ranks marked ≥: among the "
                     "ranked games only). "
                     if len(added) else "")
                  + "The worst pre-screen rank among each method's top "
                  f"{_RANKING_TOP.value}: " + ", ".join(
                      f"{method.upper()} {rank}" for method, rank in worst_kept.items()) + ".",
                  ""]
    for m, method in enumerate(methods):
        lines += [f"## {method.upper()}: the {_RANKING_TOP.value} worst games", "", header]
        lines += [row(m, k) for k in orders[m][:_RANKING_TOP.value]]
        lines.append("")
    lines += ["## The games with the paper's floors", "",
              f"Games whose mixed-equilibrium floor is within {FLOOR_TOLERANCE:g} of the "
              "paper's, with their rank under each method (1 = worst)"
              + (" (floors of the ranked games only: run with --all_floors for every class)"
                 if all_floors is None else "") + ".", ""]
    if all_floors is None:
        all_codes, all_floors = codes, floors

    def where_they_rank(target: float, matching: np.ndarray, shown: int) -> list[str]:
        """The ``shown`` best-ranked of the games ``matching`` under each method."""
        ranked = np.flatnonzero(np.isin(codes, matching))
        text = [f"### Floor {target}: {len(matching)} classes, {len(ranked)} of them ranked", ""]
        for m, method in enumerate(methods if len(ranked) else []):
            top = orders[m][0]
            text += [f"{method.upper()}, winner code {int(codes[top])} with "
                     f"{mean[m, top]:.4f} ± {se[m, top]:.4f}:", "", header]
            text += [row(m, k) for k in ranked[np.argsort(rank[m, ranked], kind="stable")][:shown]]
            text.append("")
        return text

    for target in PAPER_FLOORS:
        near = all_codes[np.abs(all_floors[0] - target) <= FLOOR_TOLERANCE]
        lines += where_they_rank(target, near, 10)
        dropped = np.setdiff1d(near, codes)
        if len(dropped) and prescreen is not None:
            idx = np.searchsorted(all_codes, dropped)
            lines += [f"Ruled out by the pre-screen ({len(dropped)}; best pre-screen ranks): "
                      + "; ".join(f"{method.upper()} {int(pre_rank[m, idx].min())}"
                                  for m, method in enumerate(methods)), ""]
    lines += ["## The games with the paper's floors under another equilibrium", "",
              "The mixed-equilibrium floor mixes our solver's subgame-perfect equilibrium with "
              "exploration; a game with several equilibria has a floor for each, and they fill "
              "the range of the column \"floors (all eq.)\" (`equilibrium_floor_range`). The "
              "best-ranked games whose range reaches the paper's floor (within "
              f"{FLOOR_TOLERANCE:g}):", ""]
    for target in PAPER_FLOORS:
        possible = can_have_floor(all_floors, target)
        lines += where_they_rank(target, all_codes[possible], 5)
        below, above = all_floors[3][all_floors[3] < target], all_floors[2][all_floors[2] > target]
        if not possible.any() and below.size and above.size:
            lines += [f"The nearest floors of any equilibrium: {below.max():.6f} "
                      f"({np.sum(np.abs(all_floors[3] - below.max()) < 1e-9)} classes) and "
                      f"{above.min():.6f} "
                      f"({np.sum(np.abs(all_floors[2] - above.min()) < 1e-9)} classes).", ""]
    with open(out + "_ranking.md", "w") as f:
        f.write("\n".join(lines))


def plot(rows, floors, games, path) -> None:
    with plots.saved_figure(path, (5.2 * len(games), 4.6)) as fig:
        axes = fig.subplots(1, len(games), sharey=True, squeeze=False)[0]
        for ax, (name, root) in zip(axes, games.items()):
            for method in _CURVE_METHODS.value:
                plots.exploitability_curve(ax, [r for r in rows if r["game"] == name
                                                and r["method"] == method], method)
            floor = floors[name]["mixed_equilibrium"]
            ax.axhline(floor, color="gray", linestyle=":",
                       label=f"floor {floor:.4f} (paper {paper_floor(name)})")
            plots.log_axes(ax)
            ax.set_title(name.replace("_", " "))
            ax.set_xlabel("t")
            ax.text(0.03, 0.03, describe(root), transform=ax.transAxes, fontsize=8,
                    family="monospace", va="bottom",
                    bbox=dict(facecolor="white", alpha=0.8, edgecolor="none"))
            ax.legend(fontsize=8, loc="upper right")
        axes[0].set_ylabel("Exploitability")
        fig.suptitle(f"Worst depth-2 BF-2 games, γ={_GAMMA.value:g}, {_CURVE_RUNS.value} runs",
                     fontsize=10)


def main(argv):
    if len(_METHODS.value) != 2 or any(
            selectors.parse_selector(m)[0] not in ("rm", "rmb") for m in _METHODS.value):
        raise app.UsageError(f"--methods needs two regret-matching selectors (rm, rmm, rmb, "
                             f"rmbm), got {_METHODS.value}", exitcode=2)
    start = time.time()
    params = {name: flags.FLAGS[name].value for name in (
        "protocol", "methods", "ranking_top", "gamma", "iterations", "screen_runs", "shortlist",
        "shortlist_runs", "finalists", "confirm_runs", "max_games", "batch", "curve_methods",
        "curve_iterations",
        "curve_runs", "curve_chunk", "per_decade", "seed")}
    if _PRESCREEN_RUNS.value is not None:
        params.update(prescreen_runs=_PRESCREEN_RUNS.value, prescreen_keep=_PRESCREEN_KEEP.value)
    out = _OUT.value or (os.path.join(RESULTS, "fig3") if _PUBLISH.value else "results/fig3/fig3")
    data_dir = _DATA_DIR.value or (RESULTS if _PUBLISH.value else "results/fig3/data")
    try:
        experiments.check_output([out, data_dir, _RUNNER.results_dir.value],
                                 publish=_PUBLISH.value)
        experiments.check_not_smaller(out + ".json", dict(params, runs_every_class=(
            runs_every_class())), SCALE, force=_FORCE.value)
        experiments.check_params(_RUNNER.results_dir.value, params)
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None
    timings = {}

    codes = trees.grid_game_codes()
    if _MAX_GAMES.value is not None:
        codes = codes[:_MAX_GAMES.value]
    if _REUSE_SEARCH.value:
        games, searched = reused_search(out, data_dir, params)
        timings.update(searched.pop("timings"))
    else:
        games, searched = search(codes, out, data_dir, timings)
    curves_and_outputs(games, searched, params, out, start, timings)


def reused_search(out: str, data_dir: str, params: dict) -> tuple[dict, dict]:
    """The worst games and the search's record of an earlier run with the same flags."""
    try:
        previous = outputs.read_json_object(out + ".json")
        games = {name: trees.load(os.path.join(data_dir, f"{name.lower()}.json")).root
                 for name in wc_names()}
    except (OSError, ValueError) as e:
        raise app.UsageError(f"--reuse_search needs a finished search's {out}.json and the "
                             f"worst games in {data_dir}: {e}", exitcode=2) from None
    changed = [k for k in ("protocol", "methods", "gamma", "iterations", "confirm_runs",
                           "max_games", "seed") if previous.get(k) != params.get(k)]
    if changed:
        raise app.UsageError(f"--reuse_search: {out}.json was searched with other "
                             f"{', '.join(changed)}; run the search again (without "
                             "--reuse_search)", exitcode=2)
    JOB_COUNTS.update({k: v for k, v in previous.get("job_counts", {}).items()
                       if k not in ("curves",)})
    return games, {"games_searched": previous["games_searched"],
                   "ranking": previous["ranking"],
                   "search_reused_from_run_written_at_utc": previous.get(
                       "search_reused_from_run_written_at_utc", previous.get("written_at_utc")),
                   "timings": {k: previous[k] for k in ("search_seconds", "floors_seconds")
                               if k in previous}}


def search(codes: np.ndarray, out: str, data_dir: str, timings: dict) -> tuple[dict, dict]:
    """Stage 1: the search for the worst games (written to ``data_dir``), their ranking."""
    stage_start = time.time()
    if _PROTOCOL.value == "paper":
        # The same seeds as the full protocol: a game's runs do not depend on the subset.
        prescreen = None
        finalists = codes
        if _PRESCREEN_RUNS.value is not None:
            prescreen, _ = screen(codes, _PRESCREEN_RUNS.value, _RUNNER.seed.value, "prescreen")
            finalists = best(codes, prescreen, _PRESCREEN_KEEP.value)
        mean3, se3 = screen(finalists, _CONFIRM_RUNS.value, _RUNNER.seed.value, "paper")
    else:
        mean1, _ = screen(codes, _SCREEN_RUNS.value, _RUNNER.seed.value, "screen")
        shortlist = best(codes, mean1, _SHORTLIST.value)
        mean2, _ = screen(shortlist, _SHORTLIST_RUNS.value, _RUNNER.seed.value + 1, "shortlist")
        finalists = best(shortlist, mean2, _FINALISTS.value)
        mean3, se3 = screen(finalists, _CONFIRM_RUNS.value, _RUNNER.seed.value + 2, "confirm")
    timings["search_seconds"] = round(time.time() - stage_start, 1)
    if _PROTOCOL.value == "paper":
        stage_start = time.time()
        every = floors_of(codes, "floors") if _ALL_FLOORS.value else None
        ranked, mean_r, se_r, added = finalists, mean3, se3, np.zeros(0, dtype=np.int64)
        if every is not None and prescreen is not None:
            # The games with the paper's floors (under any equilibrium) that the pre-screen
            # dropped get all runs too (the same seeds), so the ranking can say where they
            # stand.
            near = np.any([can_have_floor(every, t) for t in PAPER_FLOORS], 0)
            added = np.setdiff1d(codes[near], finalists)
            if added.size:
                mean_x, se_x = screen(added, _CONFIRM_RUNS.value, _RUNNER.seed.value,
                                      "paper_floor_games")
                order = np.argsort(np.concatenate([finalists, added]))
                ranked = np.concatenate([finalists, added])[order]
                mean_r = np.concatenate([mean3, mean_x], axis=1)[:, order]
                se_r = np.concatenate([se3, se_x], axis=1)[:, order]
        floors = (every[:, np.searchsorted(codes, ranked)] if every is not None
                  else floors_of(ranked, "floors_ranked"))
        write_ranking(codes, ranked, mean_r, se_r, floors, every, prescreen, added, out)
        timings["floors_seconds"] = round(time.time() - stage_start, 1)

    games, ranking = {}, {}
    os.makedirs(data_dir, exist_ok=True)
    for m, name in enumerate(wc_names()):
        order = np.lexsort((finalists, -mean3[m]))
        code = int(finalists[order[0]])
        root = trees.grid_game(code)
        games[name] = root
        ranking[name] = [{"code": int(finalists[k]),
                          **{meth: float(mean3[i, k]) for i, meth in enumerate(_METHODS.value)}}
                         for k in order[:10]]
        k = order[0]
        trees.dump(trees.MatrixTree(root, {
            "name": name,
            "note": (f"Worst of {len(codes)} depth-2 BF-2 games with utilities in {{0, 0.5, 1}} "
                     f"(up to row/column permutations) for {name[3:]} with gamma "
                     f"{_GAMMA.value:g}: mean e1 after {_ITERATIONS.value} iterations over "
                     f"{_CONFIRM_RUNS.value} runs {_METHODS.value[0].upper()} {mean3[0, k]:.4f}, "
                     f"{_METHODS.value[1].upper()} {mean3[1, k]:.4f}. "
                     f"Found by {search_command()}."),
            "code": code}), os.path.join(data_dir, f"{name.lower()}.json"))

    return games, {"games_searched": len(codes), "ranking": ranking}


def curves_and_outputs(games: dict, searched: dict, params: dict, out: str, start: float,
                       timings: dict) -> None:
    """Stages 2 and 3 (curves, floors) and the outputs."""
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
                         "floor_best_explorative", "paper"]
                        + [f"final_{m}" for m in _METHODS.value])
        for name, root in games.items():
            final = {r["method"]: r["mean_e1"] for r in rows
                     if r["game"] == name and r["t"] == checkpoints[-1]}
            writer.writerow([name, _GAMMA.value, solver.tree_value(root),
                             floors[name]["mixed_equilibrium"], floors[name]["best_explorative"],
                             paper_floor(name)] + [final.get(m) for m in _METHODS.value])
    plot(rows, floors, games, out + ".png")
    elapsed = time.time() - start
    experiments.write_params(out + ".json", dict(params, runs_every_class=runs_every_class(),
                                                 **searched, floors=floors,
                                                 job_counts=JOB_COUNTS),
                             wall_seconds=round(elapsed, 1),
                             **_RUNNER.execution(),
                             **timings)
    for name, root in games.items():
        final = {r["method"]: round(r["mean_e1"], 4) for r in rows
                 if r["game"] == name and r["t"] == checkpoints[-1]}
        print(f"{name}:\n{describe(root)}\n  floors {floors[name]} (paper {paper_floor(name)})"
              f"\n  e1 at t={checkpoints[-1]}: {final}")
    logging.info("wrote %s.csv/_floors.csv/.png/.json in %.0f s", out, elapsed)


if __name__ == "__main__":
    cli.run(main)
