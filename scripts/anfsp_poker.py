"""Exploitability vs wall time on Kuhn / Leduc poker: ANFSP, NFSP, OpenSpiel's JAX NFSP.

* ``anfsp``: :class:`smmcts_spiel.nfsp.anfsp.ANFSP` with --num_actors actor processes;
* ``own_nfsp``: the same code with no actors (synchronous NFSP in one process);
* ``openspiel_nfsp``: OpenSpiel's ``open_spiel.python.jax.nfsp`` (kuhn_nfsp.py's settings).

Each trains for --budget seconds of wall time, in alternating rounds of --eval_every
seconds (so all see the same load); after each round OpenSpiel's exact exploitability
(NashConv / 2, OpenSpiel's ``exploitability.exploitability``) of the average policy is
recorded. Anchors: OpenSpiel JAX NFSP on Kuhn 0.107 at 650K episodes; Heinrich and Silver's
NFSP on Leduc 0.1 after about 5 hours.

  nice -n 10 python scripts/anfsp_poker.py --game=kuhn_poker --budget=240 --eval_every=20
  python scripts/anfsp_poker.py --game=leduc_poker --budget=18000 --eval_every=600

Writes <out>.csv (algorithm, seed, train_seconds, episodes, e1, e2, nash_conv), <out>.png
and <out>.json (parameters).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import exploitability

from smmcts_spiel.experiments import cli
from smmcts_spiel.nfsp import race
from smmcts_spiel.nfsp.anfsp import ANFSP, ANFSPConfig
from smmcts_spiel.nfsp.openspiel_nfsp import NFSPConfig, OpenSpielNFSP

ALGORITHMS = ("anfsp", "own_nfsp", "openspiel_nfsp")
ANCHORS = {"kuhn_poker": {"OpenSpiel JAX NFSP, 650K episodes": 0.107},
           "leduc_poker": {"Heinrich & Silver NFSP, ~5 h": 0.1}}

_GAME = flags.DEFINE_string("game", "kuhn_poker", "kuhn_poker or leduc_poker (or another "
                            "two-player zero-sum game with information-state tensors).")
_BUDGET = flags.DEFINE_float("budget", 240.0, "Training seconds per algorithm.", lower_bound=1)
_EVAL_EVERY = flags.DEFINE_float("eval_every", 20.0, "Training seconds between evaluations.",
                                 lower_bound=1)
_ALGORITHMS = flags.DEFINE_list("algorithms", list(ALGORITHMS), ", ".join(ALGORITHMS))
_NUM_ACTORS = flags.DEFINE_integer("num_actors", 2, "ANFSP's actor processes.", lower_bound=1)
_SEED = flags.DEFINE_integer("seed", 0, "Seed of every learner.")
_OUT = flags.DEFINE_string("out", None, "Output path prefix [docs/figures/anfsp_<game>].")


@dataclass(frozen=True)
class _Exploitability:
    """OpenSpiel's exploitability in the race's Report shape (e1 / e2 per player)."""

    e1: float
    e2: float

    @property
    def nash_conv(self) -> float:
        return self.e1 + self.e2


def main(argv):
    unknown = set(_ALGORITHMS.value) - set(ALGORITHMS)
    if unknown or not _ALGORITHMS.value:
        raise app.UsageError(f"--algorithms: use {', '.join(ALGORITHMS)}; got {_ALGORITHMS.value}")
    try:
        game = pyspiel.load_game(_GAME.value)
        ANFSPConfig(game=_GAME.value, num_actors=_NUM_ACTORS.value)
        ANFSP(ANFSPConfig(game=_GAME.value, num_actors=0)).close()
    except Exception as e:  # noqa: BLE001  (a bad game string or an unsupported game)
        raise app.UsageError(f"--game={_GAME.value!r}: {e}") from None
    out = _OUT.value or f"docs/figures/anfsp_{game.get_type().short_name}"
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    learners = {}
    for name in _ALGORITHMS.value:
        if name == "openspiel_nfsp":
            learners[name] = OpenSpielNFSP(NFSPConfig(game=_GAME.value, hidden=(128,),
                                                      seed=_SEED.value))
        else:
            learners[name] = ANFSP(ANFSPConfig(
                game=_GAME.value, seed=_SEED.value,
                num_actors=_NUM_ACTORS.value if name == "anfsp" else 0))
    params = {flag.name: flag.value for flag in (_GAME, _BUDGET, _EVAL_EVERY, _ALGORITHMS,
                                                 _NUM_ACTORS, _SEED)}
    params["configs"] = {name: repr(run.config) for name, run in learners.items()}
    with open(f"{out}.json", "w") as f:
        json.dump(params, f, indent=1)

    def evaluate(policy):
        conv = exploitability.nash_conv(game, policy, return_only_nash_conv=False)
        gains = conv.player_improvements  # gains[p]: what player p wins by best-responding
        return _Exploitability(e1=float(gains[1]), e2=float(gains[0]))

    try:
        race.race(learners, _BUDGET.value, _EVAL_EVERY.value, evaluate, f"{out}.csv",
                  _SEED.value)
    finally:
        for run in learners.values():
            if isinstance(run, ANFSP):
                run.close()
    race.plot(f"{out}.csv", f"{out}.png", f"{_GAME.value}: exploitability (NashConv / 2)",
              scale=0.5, ylabel="exploitability of the average policy",
              log_y=True, anchors=ANCHORS.get(game.get_type().short_name))


if __name__ == "__main__":
    cli.run(main)
