"""The AIJ 2016 study's exact-solving table, ours beside the paper's: BI, DO, BIAB, DOAB.

Every row of --rows (smmcts_spiel.experiments.aij2016.EXACT_ROWS: Goofspiel 5-7 cards with
a fixed sequence and with chance, win/tie/lose and points; Oshi-Zumo K = 4 with 13 and 18
coins; pursuit-evasion 4 x 4 and 5 x 5 at depths 4-8; Tron; correlated random games with 4
actions) is solved by every method of --methods, each solve in a process of its own killed
after --max_seconds (the machinery of benchmarks/bench_exact.py), --instances instances of
the rows the paper averages (fixed card sequences points_seed=0.., random games seed=0..).
Every value found must equal every other method's on the same game. Times are the solve's
processor seconds; nodes evaluated (the paper's count), stage games and the other counts do
not depend on the machine. --notranspositions solves without our transposition table, as
the paper's solvers did (its node counts); rows that do not fit are listed, not solved.

  python experiments/aij2016/aij_exact.py --rows=gs5_fixed_wtl,oz13_k4_wtl --max_seconds=60

Writes <out>.csv (one row per game instance and method, the paper's seconds and nodes
beside), <out>.png (seconds per row and method, ours and the paper's) and <out>.json
(parameters, run time), by default results/aij2016/aij_exact.*; --publish writes the
committed results (experiments/aij2016/results/aij_exact.*). Finished solves stay in
--results_dir, so an interrupted run resumes (run on a quiet machine: times are compared).
"""

from __future__ import annotations

import math
import os
import time

from absl import flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import experiments
from smmcts_spiel.exact import pruned_induction
from smmcts_spiel.experiments import aij2016, cli

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PAPER_FIGURES = os.path.join(HERE, "paper_figures.csv")
#: The parameters that measure a run's size (a smaller run does not replace a larger one).
SCALE = ("instances", "max_seconds")
#: What the paper calls each method.
PAPER_NAMES = {"bi": "BI", "do": "DO", "biab": "BIAB", "doab": "DOAB"}
#: The rows a full run solves by default: every row that fits, up to Tron 7 x 7.
DEFAULT_ROWS = [key for key, row in aij2016.EXACT_ROWS.items() if not row.does_not_fit
                and not key.startswith(("tron7x8", "tron8", "tron9"))]

_ROWS = flags.DEFINE_list("rows", DEFAULT_ROWS,
                          "Rows of the table (smmcts_spiel.experiments.aij2016.EXACT_ROWS).")
_METHODS = flags.DEFINE_list("methods", list(pruned_induction.METHODS),
                             f"Methods, of {', '.join(pruned_induction.METHODS)}.")
_MAX_SECONDS = flags.DEFINE_float("max_seconds", 600.0, "Wall-clock budget of each solve.")
_INSTANCES = flags.DEFINE_integer("instances", 1, "Instances of the rows the paper averages "
                                  "(its 10 fixed card sequences: 10).", lower_bound=1)
_TRANSPOSITIONS = flags.DEFINE_bool("transpositions", True, "Solve with our transposition "
                                    "table (--notranspositions: as the paper's solvers).")
_RESULTS_DIR = flags.DEFINE_string("results_dir", "results/aij2016/exact_solves",
                                   "Finished solves, one file each (an interrupted run resumes).")
_OUT = flags.DEFINE_string("out", None, "Output prefix: writes .csv, .png, .json (default: "
                           "results/aij2016/aij_exact, or experiments/aij2016/results/"
                           "aij_exact with --publish).")
_PUBLISH = cli.define_publish("the committed results (experiments/aij2016/results)")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result of a larger scale.")
flags.register_validator("max_seconds", cli.positive_finite,
                         "--max_seconds must be a positive, finite number of seconds")

COLUMNS = ["row", "setting", "game", "method", "transpositions", "status", "value", "seconds",
           "nodes_evaluated", "matrix_games", "serialized_nodes", "settled_by_bounds",
           "states", "paper_seconds", "paper_nodes"]


def job_key(game: str, method: str, transpositions: bool) -> str:
    slug = "".join(c if c.isalnum() else "_" for c in game)
    return f"{slug}_{method}_{'t' if transpositions else 'nt'}"


def main(argv):
    del argv
    try:
        rows = cli.check_choices(_ROWS.value, aij2016.EXACT_ROWS, "--rows")
        methods = [pruned_induction.check_method(m) for m in _METHODS.value]
        out = _OUT.value or (os.path.join(RESULTS, "aij_exact") if _PUBLISH.value
                             else os.path.join("results", "aij2016", "aij_exact"))
        experiments.check_output([out, _RESULTS_DIR.value], publish=_PUBLISH.value)
        params = {"rows": rows, "methods": methods, "max_seconds": _MAX_SECONDS.value,
                  "instances": _INSTANCES.value, "transpositions": _TRANSPOSITIONS.value}
        experiments.check_not_smaller(out + ".json", params, SCALE, force=_FORCE.value)
        experiments.check_params(_RESULTS_DIR.value, {"max_seconds": _MAX_SECONDS.value})
        figures = aij2016.read_paper_figures(PAPER_FIGURES)
        games = {key: aij2016.EXACT_ROWS[key].games(_INSTANCES.value) for key in rows
                 if not aij2016.EXACT_ROWS[key].does_not_fit}
        for key in games:
            cli.load_games(";".join(games[key]), "--rows")
    except ValueError as e:
        cli.usage_error(str(e))
    start, load_at_start = time.time(), os.getloadavg()[0]
    jobs = {job_key(g, m, _TRANSPOSITIONS.value): {
        "game": g, "method": m, "transpositions": _TRANSPOSITIONS.value,
        "max_seconds": _MAX_SECONDS.value} for key in games for g in games[key] for m in methods}
    with experiments.exit_on_sigterm():
        # One solve at a time, each in its own process: their times are compared.
        results = experiments.run_jobs(aij2016.exact_job, jobs, results_dir=_RESULTS_DIR.value,
                                       backend="serial", desc="solves")
    table = []
    for key in rows:
        row = aij2016.EXACT_ROWS[key]
        if row.does_not_fit:
            table.append({"row": key, "setting": row.setting, "game": row.game,
                          "status": f"does not fit: {row.does_not_fit}"})
            print(f"{key}: does not fit ({row.does_not_fit})")
            continue
        for game in games[key]:
            table += solved_rows(key, game, methods, results, figures)
    # The machine's load: times compare only between runs on a quiet machine.
    aij2016.write_table(out, COLUMNS, table, lambda path: plot(table, path), params,
                        wall_seconds=round(time.time() - start, 1),
                        load_average_at_start=load_at_start,
                        load_average_at_end=os.getloadavg()[0])


def solved_rows(key: str, game: str, methods: list[str], results: dict,
                figures: list[dict]) -> list[dict]:
    """The CSV rows of one game instance; RuntimeError if two methods disagree on its value."""
    rows, values = [], {}
    for method in methods:
        result = results[job_key(game, method, _TRANSPOSITIONS.value)]
        name = PAPER_NAMES[method]
        seconds = aij2016.paper_figure(figures, "exact", key, name, "s")
        nodes = aij2016.paper_figure(figures, "exact", key, name, "nodes")
        row = {"row": key, "setting": aij2016.EXACT_ROWS[key].setting, "game": game,
               "method": name, "transpositions": _TRANSPOSITIONS.value,
               "paper_seconds": aij2016.shown(seconds), "paper_nodes": aij2016.shown(nodes)}
        if not result["solved"]:
            row["status"] = f"not solved within {_MAX_SECONDS.value:g} s"
        else:
            values[name] = float(result["value"])
            row.update(status="solved", value=values[name],
                       **{k: int(result[k]) for k in ("nodes_evaluated", "matrix_games",
                                                       "serialized_nodes", "settled_by_bounds",
                                                       "states")},
                       seconds=round(float(result["seconds"]), 3))
        print(f"{key} {game} {name:4s} {row['status']:24s} {row.get('seconds', '-')!s:>9} s "
              f"(paper {row['paper_seconds']})  nodes {row.get('nodes_evaluated', '-')} "
              f"(paper {row['paper_nodes']})", flush=True)
        rows.append(row)
    if values and max(values.values()) - min(values.values()) > 1e-6:
        raise RuntimeError(f"{game}: the methods disagree on the value: {values}")
    return rows


def plot(table: list[dict], path: str) -> None:
    """Our seconds per row and method (mean over instances; hollow: not solved, at the
    budget), the paper's as crosses."""
    from smmcts_spiel.reports import plots

    keys = list(dict.fromkeys(r["row"] for r in table if r.get("method")))
    methods = list(PAPER_NAMES.values())
    with plots.saved_figure(path, (max(6.0, 0.7 * len(keys) + 2), 4.5)) as figure:
        ax = figure.subplots()
        for m, method in enumerate(methods):
            xs, ours, paper = [], [], []
            for k, key in enumerate(keys):
                mine = [r for r in table if r["row"] == key and r.get("method") == method]
                if not mine:
                    continue
                solved = [r["seconds"] for r in mine if r["status"] == "solved"]
                xs.append(k + (m - 1.5) * 0.18)
                ours.append(sum(solved) / len(solved) if len(solved) == len(mine)
                            else math.nan)
                shown = mine[0]["paper_seconds"].lstrip("<>~ ")
                paper.append(float(shown) if shown != "-" else math.nan)
            ax.scatter(xs, ours, label=f"{method} (ours)", marker="o")
            ax.scatter(xs, paper, marker="x", color="black", s=14)
        ax.set_yscale("log")
        ax.set_xticks(range(len(keys)), keys, rotation=60, fontsize=7)
        ax.set_ylabel("seconds (x: the paper's)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)


if __name__ == "__main__":
    cli.run(main)
