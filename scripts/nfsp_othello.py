"""Exploitability vs wall time on small Othello: MC-NFSP against OpenSpiel's JAX NFSP.

Both learners train for --budget seconds of wall time each (same machine, in alternating
rounds so that both see the same load); every --eval_every seconds of training the average
policy's exact exploitability (NashConv, player-1 units) is computed on the whole game.
Evaluation time is not counted.

  nice -n 10 python scripts/nfsp_othello.py --budget=300 --eval_every=30     # minutes
  python scripts/nfsp_othello.py --budget=14400 --eval_every=600             # hours

Writes <out>.csv (algorithm, seed, train_seconds, episodes, e1, e2, nash_conv), <out>.png
and <out>.json (parameters). Rows are written as they are measured; --resume continues
MC-NFSP from its checkpoint (<out>_mc_nfsp.pkl) after an interruption.
"""

from __future__ import annotations

import csv
import json
import os
import time

from absl import app, flags
from tqdm import tqdm

from smmcts_spiel.nfsp import exploitability
from smmcts_spiel.nfsp.mc_nfsp import MCNFSP, Config
from smmcts_spiel.nfsp.openspiel_nfsp import NFSPConfig, OpenSpielNFSP

_GAME = flags.DEFINE_string("game", "smmcts_othello(board_size=4)", "A game with exact "
                            "exploitability (perfect information, transposition keys).")
_BUDGET = flags.DEFINE_float("budget", 300.0, "Training seconds per algorithm.", lower_bound=1)
_EVAL_EVERY = flags.DEFINE_float("eval_every", 30.0, "Training seconds between evaluations.",
                                 lower_bound=1)
_ALGORITHMS = flags.DEFINE_list("algorithms", ["mc_nfsp", "nfsp"], "mc_nfsp and/or nfsp.")
_SIMULATIONS = flags.DEFINE_integer("num_simulations", 32, "MC-NFSP's searches per move.",
                                    lower_bound=1)
_SEED = flags.DEFINE_integer("seed", 0, "Seed of both learners.")
_OUT = flags.DEFINE_string("out", "docs/figures/nfsp_othello", "Output path prefix.")
_RESUME = flags.DEFINE_bool("resume", False, "Continue MC-NFSP from its checkpoint.")

FIELDS = ("algorithm", "seed", "train_seconds", "episodes", "e1", "e2", "nash_conv")


def learner(name: str):
    checkpoint = f"{_OUT.value}_mc_nfsp.pkl"
    if name == "mc_nfsp":
        if _RESUME.value and os.path.exists(checkpoint):
            return MCNFSP.load(checkpoint)
        return MCNFSP(Config(game=_GAME.value, num_simulations=_SIMULATIONS.value,
                             seed=_SEED.value))
    return OpenSpielNFSP(NFSPConfig(game=_GAME.value, seed=_SEED.value))


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    unknown = set(_ALGORITHMS.value) - {"mc_nfsp", "nfsp"}
    if unknown:
        raise app.UsageError(f"unknown algorithms {sorted(unknown)}; use mc_nfsp and/or nfsp")
    try:
        exploitability.positions(_GAME.value)
    except Exception as e:  # noqa: BLE001  (bad game string or a game without exact values)
        raise app.UsageError(f"--game={_GAME.value!r}: {e}") from None
    os.makedirs(os.path.dirname(_OUT.value) or ".", exist_ok=True)
    with open(f"{_OUT.value}.json", "w") as f:
        json.dump({flag.name: flag.value for flag in (_GAME, _BUDGET, _EVAL_EVERY, _ALGORITHMS,
                                                      _SIMULATIONS, _SEED)}, f, indent=1)
    mode = "a" if _RESUME.value and os.path.exists(f"{_OUT.value}.csv") else "w"
    with open(f"{_OUT.value}.csv", mode, newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if mode == "w":
            writer.writeheader()
        runs = {name: learner(name) for name in _ALGORITHMS.value}
        progress = tqdm(total=_BUDGET.value * len(runs), unit="s",
                        initial=sum(r.train_seconds for r in runs.values()))
        # Rounds alternate the learners, so both see the same load on a shared machine.
        while any(r.train_seconds < _BUDGET.value for r in runs.values()):
            for name, run in runs.items():
                if run.train_seconds >= _BUDGET.value:
                    continue
                before = run.train_seconds
                run.train(min(_EVAL_EVERY.value, _BUDGET.value - run.train_seconds))
                report = exploitability.evaluate(_GAME.value, run.average_policy())
                writer.writerow({"algorithm": name, "seed": _SEED.value,
                                 "train_seconds": round(run.train_seconds, 2),
                                 "episodes": run.episodes, "e1": report.e1, "e2": report.e2,
                                 "nash_conv": report.nash_conv})
                f.flush()
                if name == "mc_nfsp":
                    run.save(f"{_OUT.value}_mc_nfsp.pkl")
                progress.update(run.train_seconds - before)
                progress.set_postfix(algorithm=name, nash_conv=f"{report.nash_conv:.3f}",
                                     episodes=run.episodes)
        progress.close()
    plot(f"{_OUT.value}.csv", f"{_OUT.value}.png")


def plot(csv_path: str, png_path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(6, 4))
    for name in dict.fromkeys(r["algorithm"] for r in rows):
        mine = [r for r in rows if r["algorithm"] == name]
        ax.plot([float(r["train_seconds"]) for r in mine],
                [float(r["nash_conv"]) for r in mine], marker="o", label=name)
    ax.set_xlabel("training wall time (s)")
    ax.set_ylabel("NashConv of the average policy")
    ax.set_title(f"{_GAME.value}, {time.strftime('%Y-%m-%d')}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)


if __name__ == "__main__":
    app.run(main)
