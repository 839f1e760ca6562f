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
from collections.abc import Callable
from typing import Any

from tqdm import tqdm

from smmcts_spiel.reports import plots

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


def plot(csv_path: str | list[str], png_path: str, title: str, *, scale: float = 1.0,
         ylabel: str = "NashConv of the average policy", log_y: bool = False,
         anchors: dict[str, float] | None = None, x: str = "train_seconds") -> None:
    """One curve per algorithm (and seed, if the CSVs hold several): ``scale * nash_conv``
    against training wall time (or another column, e.g. ``x="episodes"``)."""
    rows = []
    for path in [csv_path] if isinstance(csv_path, str) else csv_path:
        with open(path) as f:
            rows += list(csv.DictReader(f))
    seeds = len({r["seed"] for r in rows}) > 1
    colours: dict[str, Any] = {}  # matplotlib's colour type
    with plots.saved_figure(png_path, (6.4, 4.2)) as fig:
        ax = fig.subplots()
        for name, seed in dict.fromkeys((r["algorithm"], r["seed"]) for r in rows):
            mine = [r for r in rows if (r["algorithm"], r["seed"]) == (name, seed)]
            line, = ax.plot([float(r[x]) for r in mine],
                            [scale * float(r["nash_conv"]) for r in mine], marker="o",
                            markersize=3, color=colours.get(name),
                            linestyle="-" if seed == rows[0]["seed"] else "--",
                            label=f"{name}, seed {seed}" if seeds else name)
            colours.setdefault(name, line.get_color())
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
        ax.legend()
