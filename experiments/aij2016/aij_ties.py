"""The AIJ 2016 study's Section 6.3, ours beside the paper's: decoupled UCT's tie-breaking
on biased rock-paper-scissors.

The paper runs SM-MCTS with UCT, Exp3 and regret matching on biased rock-paper-scissors
(payoffs / 100) for 1e8 iterations and reports that UCT's visit frequencies stay far from
the equilibrium when its selection is fully deterministic ("[0.5,0.8]") and come close
when the bounds "less than 0.01 apart" are tied and one is drawn at random ("[0.01,0.05]"),
which it then enables in every experiment. For every variant of
smmcts_spiel.experiments.aij2016.TIE_BREAKING (UCT-FIRST: the lowest maximiser; UCT-EQUAL:
equal bounds drawn at random, our UCB's default; UCT-0.01: the paper's tie gap; RM, EXP3)
and each exploration of the paper's figures (UCT's C 0, 0.2, 0.4, 1.4, 2; gamma 0.001 to
0.5), --seeds searches of the compiled explicit-tree engine record the exact NashConv of
the visit frequencies every half decade of iterations up to --iterations:

  python experiments/aij2016/aij_ties.py --iterations=100000 --seeds=2 --workers=1

Writes <out>.csv (one row per variant, exploration and checkpoint: the mean over seeds
with its 95% t interval, the paper's range beside UCT-FIRST and UCT-0.01), <out>.png and
<out>.json, by default results/aij2016/aij_ties.*; --publish writes the committed results
(experiments/aij2016/results/). Iteration budgets: the results do not depend on the
machine or its load. Finished searches stay in --results_dir (resumable).
"""

from __future__ import annotations

import os
import time

from absl import flags

from smmcts_spiel import experiments, reports
from smmcts_spiel.experiments import aij2016, cli

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PAPER_FIGURES = os.path.join(HERE, "paper_figures.csv")
SCALE = ("seeds", "iterations")

_VARIANTS = flags.DEFINE_list("variants", list(aij2016.TIE_BREAKING),
                              f"Variants, of {', '.join(aij2016.TIE_BREAKING)}.")
_ITERATIONS = flags.DEFINE_integer("iterations", 10_000_000, "Iterations of each search (the "
                                   "paper's: 100000000).", lower_bound=100)
_SEEDS = flags.DEFINE_integer("seeds", 10, "Searches per variant and exploration.",
                              lower_bound=1)
_RUNNER = cli.define_runner_flags("aij2016/tie_breaking_runs")
_OUT = flags.DEFINE_string("out", None, "Output prefix: writes .csv, .png, .json (default: "
                           "results/aij2016/aij_ties, or experiments/aij2016/results/aij_ties "
                           "with --publish).")
_PUBLISH = cli.define_publish("the committed results (experiments/aij2016/results)")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result of a larger scale.")

COLUMNS = ["variant", "selector", "tie_tolerance", "exploration", "iterations", "seeds",
           "nash_conv", "low", "high", "paper"]


def checkpoints(iterations: int) -> list[int]:
    """Every half decade from 100 iterations, and ``iterations`` itself."""
    marks, k = [], 4
    while round(10 ** (k / 2)) < iterations:
        marks.append(round(10 ** (k / 2)))
        k += 1
    return marks + [iterations]


def explorations(variant: str) -> tuple[float, ...]:
    selector, _ = aij2016.TIE_BREAKING[variant]
    return aij2016.TIE_BREAKING_C if selector == "ucb" else aij2016.TIE_BREAKING_GAMMA


def paper_range(figures: list[dict], variant: str) -> str:
    figure = aij2016.paper_figure(figures, "tie_breaking", aij2016.TIE_BREAKING_ROW, variant,
                                   "NashConv")
    if figure is None:
        return "-"
    low, high = figure["figure"] - figure["plus_minus"], figure["figure"] + figure["plus_minus"]
    return f"[{low:.2g}, {high:.2g}]"


def main(argv):
    del argv
    try:
        variants = cli.check_choices(_VARIANTS.value, aij2016.TIE_BREAKING, "--variants")
        out = _OUT.value or (os.path.join(RESULTS, "aij_ties") if _PUBLISH.value
                             else os.path.join("results", "aij2016", "aij_ties"))
        experiments.check_output([out, _RUNNER.results_dir.value], publish=_PUBLISH.value)
        params = {"game": aij2016.TIE_BREAKING_GAME, "variants": variants,
                  "iterations": _ITERATIONS.value, "seeds": _SEEDS.value,
                  "seed": _RUNNER.seed.value, **_RUNNER.execution()}
        experiments.check_not_smaller(out + ".json", params, SCALE, force=_FORCE.value)
        figures = aij2016.read_paper_figures(PAPER_FIGURES)
    except ValueError as e:
        cli.usage_error(str(e))
    start = time.time()
    marks = checkpoints(_ITERATIONS.value)
    seeds = list(range(_RUNNER.seed.value, _RUNNER.seed.value + _SEEDS.value))
    jobs = {f"{variant}_{x:g}": {"variant": variant, "exploration": x, "checkpoints": marks,
                                 "seeds": seeds}
            for variant in variants for x in explorations(variant)}
    with experiments.exit_on_sigterm():
        results = experiments.run_jobs(aij2016.tie_breaking_job, jobs,
                                       results_dir=_RUNNER.results_dir.value,
                                       desc="searches", **_RUNNER.run_jobs_kwargs())
    rows = []
    for key, job in jobs.items():
        selector, tolerance = aij2016.TIE_BREAKING[job["variant"]]
        nash_conv = results[key]["nash_conv"]
        for k, mark in enumerate(marks):
            interval = reports.mean_interval(list(nash_conv[:, k]))
            rows.append({
                "variant": job["variant"], "selector": selector,
                "tie_tolerance": "first" if tolerance is None else tolerance,
                "exploration": job["exploration"], "iterations": mark, "seeds": len(seeds),
                "nash_conv": round(interval.estimate, 5), "low": round(interval.low, 5),
                "high": round(interval.high, 5),
                "paper": paper_range(figures, job["variant"]) if k == len(marks) - 1 else ""})
        print(f"{job['variant']:9s} {'C' if selector == 'ucb' else 'gamma'}="
              f"{job['exploration']:<5g} NashConv after {mark:.0e} iterations "
              f"{interval.format(4, sign=False, style='[]')} (the paper: {rows[-1]['paper']})",
              flush=True)
    aij2016.write_table(out, COLUMNS, rows, lambda path: plot(rows, variants, figures, path),
                        params, wall_seconds=round(time.time() - start, 1))


def plot(rows: list[dict], variants: list[str], figures: list[dict], path: str) -> None:
    from smmcts_spiel.reports import plots

    with plots.saved_figure(path, (3.6 * len(variants), 3.4)) as figure:
        for v, variant in enumerate(variants):
            ax = figure.add_subplot(1, len(variants), v + 1)
            mine = [r for r in rows if r["variant"] == variant]
            for x in dict.fromkeys(r["exploration"] for r in mine):
                curve = [r for r in mine if r["exploration"] == x]
                plots.curve(ax, [r["iterations"] for r in curve], [r["nash_conv"] for r in curve],
                            [r["low"] for r in curve], [r["high"] for r in curve],
                            label=f"{'C' if curve[0]['selector'] == 'ucb' else 'gamma'} {x:g}")
            paper = aij2016.paper_figure(figures, "tie_breaking", aij2016.TIE_BREAKING_ROW,
                                         variant, "NashConv")
            if paper is not None:
                ax.axhspan(paper["figure"] - paper["plus_minus"],
                           paper["figure"] + paper["plus_minus"], color="0.85",
                           label="the paper's range")
            aij2016.finish_log_panel(ax, variant, "iterations", "NashConv", 6)


if __name__ == "__main__":
    cli.run(main)
