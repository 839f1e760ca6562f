"""Whole-game NashConv of OOS after a targeted search from each first decision of a game.

A fresh OOS search targets one information set (each player's first decision after every
deal of the game), runs --iterations iterations, and its average strategy is scored with
OpenSpiel's exploitability.nash_conv on the whole game; for every (delta, epsilon,
variant) of the grid, --seeds seeds per target. Iteration budgets: independent of the
machine's speed, it can run niced.

  python experiments/oos_parameters/oos_targeted_nashconv.py --game=kuhn_poker --iterations=30000 \\
      --deltas=0.5,0.7,0.9 --epsilons=0.4,0.6 --variants="gamma=0;gamma=0.01"

Prints a table (mean over targets and seeds, and the worst target's mean) and writes
<out>.csv (delta, epsilon, variant, target, seed, nash_conv) and <out>.json, by default
under results/oos_targeted_nashconv/; the committed results only with --publish.
"""

from __future__ import annotations

import csv
import itertools
import os
import time

import numpy as np
import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import exploitability

from smmcts_spiel import experiments
from smmcts_spiel.experiments import cli
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.imperfect.oos_kernel import outcome_sampling

_GAME = flags.DEFINE_string("game", "kuhn_poker", "A sequential game with a few deals.")
_ITERATIONS = flags.DEFINE_integer("iterations", 30_000, "OOS iterations per search.",
                                   lower_bound=1)
_DELTAS = flags.DEFINE_list("deltas", ["0.5", "0.7", "0.9"], "Targeting delta.")
_EPSILONS = flags.DEFINE_list("epsilons", ["0.4", "0.6"], "Exploration epsilon.")
_VARIANTS = flags.DEFINE_string("variants", "gamma=0;gamma=0.01",
                                "Semicolon-separated settings over gamma=0 (key=value,...; "
                                "gamma only: weighting is a constant factor within one "
                                "search, and the average strategy is what is scored).")
_SEEDS = flags.DEFINE_integer("seeds", 4, "Seeds per target.", lower_bound=1)
_OUT = flags.DEFINE_string("out", None, "Output prefix (default: "
                           "results/oos_targeted_nashconv/<game>).")
_PUBLISH = cli.define_publish()


def first_decisions(game: pyspiel.Game) -> list[tuple[pyspiel.State, int]]:
    """(state, player) of every player's first decision after every deal: the first
    decision of each branch below the opening chance moves, then each first decision of
    the other player below it."""
    targets = []
    for state, _ in information_sets.decision_states(game):
        own = [s.player for s in state.full_history() if s.player >= 0]
        if state.current_player() not in own:
            targets.append((state, state.current_player()))
    unique = {}
    for state, player in targets:
        unique.setdefault((player, state.information_state_string(player)), (state, player))
    return list(unique.values())


def main(argv):
    game = cli.load_game(_GAME.value, "--game")
    if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise app.UsageError("--game: a sequential game (the targets are its first "
                             "decisions)", exitcode=2)
    try:
        deltas = [float(d) for d in _DELTAS.value]
        epsilons = [float(e) for e in _EPSILONS.value]
        variants = {}
        for text in (v.strip() for v in _VARIANTS.value.split(";")):
            params = dict(pyspiel.game_parameters_from_string(f"oos({text})"))
            params.pop("name")
            if set(params) - {"gamma"}:
                raise ValueError(f"--variants: only gamma, got {text!r}")
            variants[text] = float(params.get("gamma", 0.0))
        out = _OUT.value or os.path.join("results", "oos_targeted_nashconv",
                                         "".join(c if c.isalnum() else "_" for c in
                                                 _GAME.value))
        experiments.check_output([out], publish=_PUBLISH.value)
        for d, e, g in itertools.product(deltas, epsilons, variants.values()):
            outcome_sampling(game, delta=d, epsilon=e, gamma=g)
    except (ValueError, pyspiel.SpielError) as e:
        raise app.UsageError(str(e), exitcode=2) from None
    start = time.time()
    targets = first_decisions(game)
    # The game's opening decision (no player has moved yet), after each deal.
    opening = [t for t, (state, _) in enumerate(targets)
               if all(step.player < 0 for step in state.full_history())]
    rows = []
    for (d, e, (text, g)) in itertools.product(deltas, epsilons, variants.items()):
        values = np.zeros((len(targets), _SEEDS.value))
        for (t, (state, player)), seed in itertools.product(enumerate(targets),
                                                             range(_SEEDS.value)):
            search = outcome_sampling(game, delta=d, epsilon=e, gamma=g, seed=seed)
            search.target(state, player)
            search.run(_ITERATIONS.value)
            values[t, seed] = exploitability.nash_conv(game, search.policy())
            rows.append({"delta": d, "epsilon": e, "variant": text, "target": t,
                         "seed": seed, "nash_conv": values[t, seed]})
        means = values.mean(axis=1)
        print(f"delta={d:g} epsilon={e:g} {text:<12} mean {values.mean():.4f}  worst target "
              f"{means.max():.4f}  opening decisions: mean {values[opening].mean():.4f}, "
              f"worst {means[opening].max():.4f}", flush=True)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    experiments.write_params(out + ".json", {
        "game": _GAME.value, "iterations": _ITERATIONS.value, "deltas": deltas,
        "epsilons": epsilons, "variants": variants, "seeds": _SEEDS.value,
        "targets": [(p, s.information_state_string(p)) for s, p in targets]},
        wall_seconds=round(time.time() - start, 1))
    print(f"{len(targets)} targets; wrote {out}.csv/.json")


if __name__ == "__main__":
    cli.run(main)
