"""OOS's targeting (delta) and exploration (epsilon), measured: online exploitability on a grid.

For every game, every (--deltas x --epsilons) and every variant of the other settings
(--variants, each a comma list of key=value over the --preset, e.g. final_strategy=average
or gamma=0,weighting=false), the NashConv of the strategy OOS plays online with --budget
iterations per move, assembled by the paper's full stitching
(smmcts_spiel/experiments/imperfect.py), over --seeds seeds. An iteration budget, so the
result does not depend on the machine's speed or load: it can run niced beside other work.

  python experiments/oos_parameters/oos_parameters.py --games=kuhn_poker,leduc_poker \\
      --budget=1000 \\
      --deltas=0.5,0.75,0.9,0.99 --epsilons=0.2,0.4,0.6,0.8 \\
      --variants="final_strategy=current;final_strategy=average"

Writes <out>.csv (game, variant, delta, epsilon, seed, nash_conv), <out>.png (mean NashConv
per game and variant over the grid) and <out>.json (parameters), by default under
results/oos_parameters/; the committed results only with --publish. Finished jobs stay in
--results_dir, so an interrupted run resumes.
"""

from __future__ import annotations

import csv
import itertools
import os
import time

import numpy as np
import pyspiel
from absl import app, flags

from smmcts_spiel import bot_specs, experiments
from smmcts_spiel.experiments import cli, imperfect
from smmcts_spiel.imperfect import oos

# The committed results of this experiment (written with --publish).
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

_GAMES = flags.DEFINE_string("games", "kuhn_poker;leduc_poker",
                             "Two-player zero-sum games with information state strings, "
                             "separated by ';' (or ',').")
_DELTAS = flags.DEFINE_list("deltas", ["0.5", "0.75", "0.9", "0.99"], "Targeting delta.")
_EPSILONS = flags.DEFINE_list("epsilons", ["0.2", "0.4", "0.6", "0.8"], "Exploration epsilon.")
_PRESET = flags.DEFINE_enum("preset", "paper", list(oos.PRESETS), "The settings the "
                            "grid and the variants change.")
_VARIANTS = flags.DEFINE_string("variants", "final_strategy=current;final_strategy=average",
                                "Semicolon-separated variants, each key=value,... over "
                                "--preset (keys: gamma, weighting, final_strategy); '' for "
                                "the preset itself.")
_BUDGET = flags.DEFINE_integer("budget", 1000, "OOS iterations per move.", lower_bound=1)
_SEEDS = flags.DEFINE_integer("seeds", 2, "Runs (seeds 0..seeds-1) per point.", lower_bound=1)
_WORKERS = flags.DEFINE_integer("workers", 1, "Worker processes.", lower_bound=1)
_MAX_NEW_JOBS = flags.DEFINE_integer("max_new_jobs", None, "Run at most this many unfinished "
                                     "jobs, then stop (run again to go on).", lower_bound=1)
_RESULTS_DIR = flags.DEFINE_string("results_dir", "results/oos_parameters/jobs",
                                   "Finished jobs (one file each).")
_OUT = flags.DEFINE_string("out", None, "Output prefix (default: "
                           "results/oos_parameters/oos_parameters, or "
                           "experiments/oos_parameters/results/oos_parameters with --publish).")
_PUBLISH = flags.DEFINE_bool("publish", False, "Write the committed results "
                             "(results/oos_parameters beside this program by default).")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result with more seeds.")
_SETTINGS = ("gamma", "weighting", "final_strategy")


def parse_variant(text: str) -> dict:
    """``"gamma=0,weighting=false"`` -> ``{"gamma": 0.0, "weighting": False}``, checked."""
    params = dict(pyspiel.game_parameters_from_string(f"oos({text})")) if text else {}
    params.pop("name", None)
    unknown = set(params) - set(_SETTINGS)
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)} (known: {', '.join(_SETTINGS)})")
    if "gamma" in params:
        params["gamma"] = float(params["gamma"])
    return oos.preset_settings(_PRESET.value, **params)


def _float_list(texts, name):
    try:
        return [float(t) for t in texts]
    except ValueError:
        raise app.UsageError(f"--{name}: numbers, got {texts}", exitcode=2) from None


def plot(rows, games, variants, deltas, epsilons, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(games), len(variants), squeeze=False,
                             figsize=(3.6 * len(variants) + 1, 3.2 * len(games)))
    for (g, game), (v, variant) in itertools.product(enumerate(games), enumerate(variants)):
        grid = np.array([[np.mean([r["nash_conv"] for r in rows if r["game"] == game
                                   and r["variant"] == variant and r["delta"] == d
                                   and r["epsilon"] == e]) for e in epsilons] for d in deltas])
        ax = axes[g][v]
        image = ax.imshow(grid, cmap="viridis_r", aspect="auto")
        ax.set_xticks(range(len(epsilons)), [f"{e:g}" for e in epsilons])
        ax.set_yticks(range(len(deltas)), [f"{d:g}" for d in deltas])
        ax.set_xlabel("epsilon")
        ax.set_ylabel("delta")
        ax.set_title(f"{game}\n{variant or _PRESET.value}", fontsize=8)
        for i, j in itertools.product(range(len(deltas)), range(len(epsilons))):
            ax.text(j, i, f"{grid[i, j]:.3g}", ha="center", va="center", fontsize=7,
                    color="white")
        fig.colorbar(image, ax=ax, label="NashConv")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    deltas = _float_list(_DELTAS.value, "deltas")
    epsilons = _float_list(_EPSILONS.value, "epsilons")
    variants = [v.strip() for v in _VARIANTS.value.split(";")]
    games = cli.split_games(_GAMES.value)
    if not games:
        raise app.UsageError("--games: no game given", exitcode=2)
    try:
        settings = {v: parse_variant(v) for v in variants}
        for game in games:
            for d, e in itertools.product(deltas, epsilons):
                bot_specs.make_bot(f"oos(delta={d},epsilon={e},iterations=1)",
                                   pyspiel.load_game(game), 0, 0)
    except (ValueError, pyspiel.SpielError) as e:
        raise app.UsageError(str(e), exitcode=2) from None
    start = time.time()
    out = _OUT.value or (os.path.join(RESULTS, "oos_parameters") if _PUBLISH.value
                         else "results/oos_parameters/oos_parameters")
    params = {"games": games, "deltas": deltas, "epsilons": epsilons,
              "preset": _PRESET.value, "variants": {v: settings[v] for v in variants},
              "budget": _BUDGET.value, "seeds": _SEEDS.value, "online": "full stitching"}
    jobs, variant_of = {}, {}
    for seed, game, v, d, e in itertools.product(range(_SEEDS.value), games,
                                                 variants, deltas, epsilons):
        name = "".join(c if c.isalnum() else "_" for c in f"{game}__{v}__d{d}_e{e}")
        variant_of[f"{name}__s{seed}"] = v
        jobs[f"{name}__s{seed}"] = dict(game=game, method="oos", budgets=[_BUDGET.value],
                                        kind="iterations", seed=seed,
                                        params=dict(settings[v], delta=d, epsilon=e))
    try:
        experiments.check_output([out, _RESULTS_DIR.value], publish=_PUBLISH.value)
        experiments.check_not_smaller(out + ".json", params, ("seeds",), force=_FORCE.value)
        experiments.check_params(_RESULTS_DIR.value, {"budget": _BUDGET.value,
                                                      "online": "full stitching"})
        todo = [k for k in jobs if not experiments.finished_jobs(_RESULTS_DIR.value, [k])]
        run_now = todo if _MAX_NEW_JOBS.value is None else todo[:_MAX_NEW_JOBS.value]
        results = experiments.run_jobs(
            imperfect.exploitability_job, {k: jobs[k] for k in jobs if k not in todo
                                           or k in run_now},
            results_dir=_RESULTS_DIR.value, workers=_WORKERS.value,
            backend="serial" if _WORKERS.value == 1 else "process", desc="OOS grid jobs")
    except ValueError as e:  # MixedResultsError included
        raise app.UsageError(str(e), exitcode=2) from None
    if len(run_now) < len(todo):
        print(f"{len(todo) - len(run_now)} of {len(jobs)} jobs left: run again to go on")
        return
    rows = [{"game": job["game"], "variant": variant_of[key], "delta": job["params"]["delta"],
             "epsilon": job["params"]["epsilon"], "seed": job["seed"],
             "nash_conv": float(results[key]["nash_conv"][0])}
            for key, job in jobs.items()]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, games, variants, deltas, epsilons, out + ".png")
    experiments.write_params(out + ".json", params, wall_seconds=round(time.time() - start, 1))
    for game, v in itertools.product(games, variants):
        best = min(((d, e) for d in deltas for e in epsilons), key=lambda de: np.mean(
            [r["nash_conv"] for r in rows if r["game"] == game and r["variant"] == v
             and (r["delta"], r["epsilon"]) == de]))
        print(f"{game} [{v or _PRESET.value}]: lowest mean NashConv at delta={best[0]:g}, "
              f"epsilon={best[1]:g}")
    print(f"wrote {out}.csv/.png/.json")


if __name__ == "__main__":
    cli.run(main)
