"""Learners racing on wall time: alternate rounds, evaluate after each, one CSV row per point.

A learner has ``train(seconds)``, ``train_seconds``, ``cpu_seconds`` (CPU time of all its
processes while training: on a shared machine, how much of the cores it got), ``episodes``
and ``average_policy()``
(:class:`~smmcts_spiel.nfsp.mc_nfsp.MCNFSP`, :class:`~smmcts_spiel.nfsp.anfsp.ANFSP`,
:class:`~smmcts_spiel.nfsp.openspiel_nfsp.OpenSpielNFSP`). Rounds alternate the learners so
that on a shared machine all see the same load; evaluation time is not counted. Rows are
written and flushed as they are measured, so an interrupted race keeps its points.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable

import numpy as np
from tqdm import tqdm

from smmcts_spiel.experiments import outputs
from smmcts_spiel.reports import intervals, plots, tables
from smmcts_spiel.reports.intervals import Interval

FIELDS = ("algorithm", "seed", "train_seconds", "cpu_seconds", "episodes", "e1", "e2",
          "nash_conv")


def race(learners: dict, budget: float, eval_every: float, evaluate: Callable, csv_path: str,
         seed: int, after_round: Callable | None = None, append: bool = False) -> None:
    """Train every learner for ``budget`` seconds in rounds of ``eval_every`` seconds.

    ``evaluate(policy)`` returns a Report-like object (``e1``, ``e2``, ``nash_conv``);
    ``after_round(name, learner)`` runs after each row (e.g. a checkpoint).
    """
    with open(csv_path, "a" if append else "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if not append:
            writer.writeheader()
        progress = tqdm(total=budget * len(learners), unit="s",
                        initial=sum(min(r.train_seconds, budget) for r in learners.values()))
        while any(r.train_seconds < budget for r in learners.values()):
            for name, run in learners.items():
                if run.train_seconds >= budget:
                    continue
                before = run.train_seconds
                run.train(min(eval_every, budget - run.train_seconds))
                report = evaluate(run.average_policy())
                writer.writerow({"algorithm": name, "seed": seed,
                                 "train_seconds": round(run.train_seconds, 2),
                                 "cpu_seconds": round(run.cpu_seconds, 2),
                                 "episodes": run.episodes, "e1": report.e1, "e2": report.e2,
                                 "nash_conv": report.nash_conv})
                f.flush()
                if after_round is not None:
                    after_round(name, run)
                progress.update(run.train_seconds - before)
                progress.set_postfix(algorithm=name, nash_conv=f"{report.nash_conv:.3f}",
                                     episodes=run.episodes)
        progress.close()


def resume_or_new(kind, checkpoint: str, resume: bool, game, config):
    """``kind.load(checkpoint)`` (checked against ``game`` and ``config``'s network) with
    ``resume`` if the checkpoint exists, else a new ``kind(config)``."""
    if resume and os.path.exists(checkpoint):
        return kind.load(checkpoint, game, network=config)
    return kind(config)


def prepare_csv(path: str, learners: dict, resume: bool) -> None:
    """Start ``path`` with the rows the learners' states cover (``learners`` by (algorithm,
    seed)): with ``resume``, the rows of other (algorithm, seed) pairs and, for each one
    here, those up to its checkpoint's training time (a row written after the last
    checkpoint is measured again, and so is a row cut short by an interruption); else none.
    The file is replaced at once (:func:`~smmcts_spiel.experiments.replaced_file`), so an
    interruption here loses no row."""
    rows = []
    if resume and os.path.exists(path):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                try:
                    run = learners.get((row["algorithm"], int(row["seed"])))
                    measured, *_ = (float(row[k]) for k in FIELDS[2:])  # all numbers
                except (TypeError, ValueError):  # the last row, cut short: measured again
                    continue
                if run is None or measured <= round(run.train_seconds, 2):
                    rows.append(row)
    with outputs.replaced_file(path, newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def race_seeds(learners: dict, budget: float, eval_every: float, evaluate: Callable,
               csv_path: str, checkpoint: Callable[[str, int], str | None]) -> None:
    """:func:`race` of each seed's learners (``learners`` by (algorithm, seed)), appending
    to ``csv_path`` (see :func:`prepare_csv`); after each round a learner whose
    ``checkpoint(algorithm, seed)`` is a path is saved there."""
    seeds = list(dict.fromkeys(seed for _, seed in learners))

    def save(seed):
        def after_round(name, run):
            if (path := checkpoint(name, seed)) is not None:
                run.save(path)
        return after_round

    for seed in seeds:
        race({name: run for (name, other), run in learners.items() if other == seed},
             budget, eval_every, evaluate, csv_path, seed, save(seed), append=True)


def summary_table(csv_path: str | list[str]) -> str:
    """:func:`summary` as a text table."""
    return tables.text([(name, seeds, f"{seconds:.0f}", f"{episodes:.0f}", nash_conv.format(3))
                        for name, seeds, seconds, episodes, nash_conv in summary(csv_path)],
                       ["algorithm", "seeds", "train s", "episodes", "NashConv"])


def read_runs(csv_path: str | list[str]) -> dict[tuple[str, str], list[dict]]:
    """The rows of one or more race CSVs by (algorithm, seed), in the order measured."""
    runs: dict[tuple[str, str], list[dict]] = {}
    for path in [csv_path] if isinstance(csv_path, str) else csv_path:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                runs.setdefault((row["algorithm"], row["seed"]), []).append(row)
    return runs


def seed_means(runs: list[list[dict]], column: str) -> tuple[np.ndarray, list[Interval]]:
    """Over several seeds' runs of one algorithm, at each evaluation point all of them
    reached (the k-th row of each): the mean training time and the mean of ``column``
    with its 95% t interval."""
    points = min(len(run) for run in runs)
    x = np.array([np.mean([float(run[k]["train_seconds"]) for run in runs])
                  for k in range(points)])
    return x, [intervals.mean_interval([float(run[k][column]) for run in runs])
               for k in range(points)]


def summary(csv_path: str | list[str]) -> list[tuple]:
    """Per algorithm, its seeds' last evaluation: (algorithm, seeds, mean training
    seconds, mean episodes, mean final NashConv with its 95% t interval)."""
    by_algorithm: dict[str, list[dict]] = {}
    for (name, _), run in read_runs(csv_path).items():
        by_algorithm.setdefault(name, []).append(run[-1])
    return [(name, len(last), np.mean([float(r["train_seconds"]) for r in last]),
             np.mean([int(r["episodes"]) for r in last]),
             intervals.mean_interval([float(r["nash_conv"]) for r in last]))
            for name, last in by_algorithm.items()]


def plot(csv_path: str | list[str], png_path: str, title: str, *, scale: float = 1.0,
         ylabel: str = "NashConv of the average policy", log_y: bool = False,
         anchors: dict[str, float] | None = None, x: str = "train_seconds") -> None:
    """One curve per algorithm: ``scale * nash_conv`` against training wall time (or
    another column, e.g. ``x="episodes"``). An algorithm run with several seeds gets its
    seeds as thin lines and, against training time, their mean at the evaluation points
    all reached with a 95% t band (:func:`seed_means`)."""
    runs = read_runs(csv_path)
    with plots.saved_figure(png_path, (6.4, 4.2)) as fig:
        ax = fig.subplots()
        for name in dict.fromkeys(name for name, _ in runs):
            mine = [run for (other, _), run in runs.items() if other == name]
            several = len(mine) > 1
            colour = None
            for run in mine:
                line, = ax.plot([float(r[x]) for r in run],
                                [scale * float(r["nash_conv"]) for r in run], color=colour,
                                marker="o", markersize=2 if several else 3,
                                linewidth=0.6 if several else 1.5, alpha=0.4 if several else 1,
                                label=None if several else name)
                colour = line.get_color()
            if several and x == "train_seconds":
                mean_x, means = seed_means(mine, "nash_conv")
                plots.curve(ax, mean_x, [scale * m.estimate for m in means],
                            [scale * m.low for m in means], [scale * m.high for m in means],
                            label=f"{name}: mean of {len(mine)} seeds, 95% t band",
                            color=colour, marker="o", markersize=3)
            elif several:
                line.set_label(f"{name}: {len(mine)} seeds")
        for label, y in (anchors or {}).items():
            ax.axhline(y, color="grey", linestyle=":", linewidth=1)
            ax.text(0.01, y, label, transform=ax.get_yaxis_transform(), fontsize=7, color="grey",
                    verticalalignment="bottom")
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel({"train_seconds": "training wall time (s)",
                       "cpu_seconds": "CPU time of the learner's processes (s)"}.get(x, x))
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=8)
