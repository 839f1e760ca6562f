"""Exploitability vs wall time on small Othello: MC-NFSP against NFSP.

* ``mc_nfsp``: :class:`smmcts_spiel.nfsp.mc_nfsp.MCNFSP` (PUCT best response);
* ``nfsp``: OpenSpiel's ``open_spiel.python.jax.nfsp`` (DQN best response, kuhn_nfsp.py's
  settings), through :mod:`smmcts_spiel.nfsp.openspiel_nfsp`;
* ``own_nfsp``: our DQN-NFSP, :class:`smmcts_spiel.nfsp.anfsp.ANFSP` without actors (same
  algorithm as ``nfsp``, a faster implementation).

Both learners train for --budget seconds of wall time each (same machine, in alternating
rounds so that both see the same load); every --eval_every seconds of training the average
policy's exact exploitability (NashConv, player-1 units) is computed on the whole game.
Evaluation time is not counted.

  nice -n 10 python scripts/nfsp_othello.py --budget=300 --eval_every=30     # minutes
  python scripts/nfsp_othello.py --preset=paper --algorithms=mc_nfsp,own_nfsp   # Sec. 3.3
  python scripts/nfsp_othello.py --budget=14400 --eval_every=600             # hours

Writes <out>.csv (algorithm, seed, train_seconds, episodes, e1, e2, nash_conv), <out>.png
and <out>.json (parameters); <out> is results/nfsp/nfsp_othello unless given, and a path
under docs/ or data/ (the committed results) needs --publish. Rows are written as they are
measured; --resume continues MC-NFSP from its checkpoint (--checkpoint, under the
git-ignored results/) and appends (with --algorithms=mc_nfsp if NFSP's rows are complete:
OpenSpiel's agents are not checkpointed here). Needs the nfsp extra.
"""

from __future__ import annotations

import json
import os

import pyspiel
from absl import app, flags
from open_spiel.python import policy as policy_lib

from smmcts_spiel import experiments, nfsp
from smmcts_spiel.experiments import cli

try:  # the nfsp extra: without it the flags still parse, and main says what to install
    from smmcts_spiel.nfsp import exploitability, presets, race
    from smmcts_spiel.nfsp.anfsp import ANFSP
    from smmcts_spiel.nfsp.mc_nfsp import MCNFSP
    from smmcts_spiel.nfsp.openspiel_nfsp import NFSPConfig, OpenSpielNFSP
except ImportError as error:
    _MISSING = error
else:
    _MISSING = None

_GAME = flags.DEFINE_string("game", "smmcts_othello(board_size=4)", "A game with exact "
                            "exploitability (perfect information, transposition keys).")
_BUDGET = flags.DEFINE_float("budget", 300.0, "Training seconds per algorithm.", lower_bound=1)
_EVAL_EVERY = flags.DEFINE_float("eval_every", 30.0, "Training seconds between evaluations.",
                                 lower_bound=1)
ALGORITHMS = ("mc_nfsp", "nfsp", "own_nfsp")
_ALGORITHMS = flags.DEFINE_list("algorithms", ["mc_nfsp", "nfsp"], ", ".join(ALGORITHMS))
_PRESET = flags.DEFINE_enum("preset", "tuned", ["paper", "tuned"], "Settings of mc_nfsp and "
                            "own_nfsp: the paper's (Sec. 3.3) or ours (smmcts_spiel.nfsp."
                            "presets); nfsp keeps OpenSpiel's kuhn_nfsp.py settings.")
_SIMULATIONS = flags.DEFINE_integer("num_simulations", None, "MC-NFSP's searches per move "
                                    "[the preset's].", lower_bound=1)
_SEED = flags.DEFINE_integer("seed", 0, "Seed of both learners.", lower_bound=0)
_OUT = flags.DEFINE_string("out", None, "Output path prefix [results/nfsp/nfsp_othello, "
                           "or docs/figures/nfsp_othello with --publish].")
_PUBLISH = flags.DEFINE_bool("publish", False, "Write the committed results under docs/ "
                             "(replacing them).")
_RESUME = flags.DEFINE_bool("resume", False, "Continue MC-NFSP from its checkpoint.")
_CHECKPOINT = flags.DEFINE_string("checkpoint", None, "MC-NFSP's checkpoint "
                                  "[results/nfsp/<out's name>_mc_nfsp.npz]; a bot spec "
                                  "nfsp(file=...) plays its average policy.")


def _mc_nfsp_config():
    return presets.mc_nfsp(_PRESET.value, _GAME.value, seed=_SEED.value,
                           num_simulations=_SIMULATIONS.value)


def main(argv):
    if message := nfsp.missing_extra(_MISSING):
        raise SystemExit(message)
    unknown = set(_ALGORITHMS.value) - set(ALGORITHMS)
    if unknown or not _ALGORITHMS.value:
        raise app.UsageError(f"--algorithms: use {', '.join(ALGORITHMS)}; got {_ALGORITHMS.value}")
    out = _OUT.value or ("docs/figures/nfsp_othello" if _PUBLISH.value
                         else "results/nfsp/nfsp_othello")
    checkpoint = _CHECKPOINT.value or os.path.join(
        "results", "nfsp", f"{os.path.basename(out)}_mc_nfsp.npz")
    try:
        experiments.check_output([out, checkpoint], publish=_PUBLISH.value)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    try:
        exploitability.positions(_GAME.value)
        _mc_nfsp_config()
    except Exception as e:  # noqa: BLE001  (a bad game string or a game without exact values)
        raise app.UsageError(f"--game={_GAME.value!r}: {e}") from None
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    os.makedirs(os.path.dirname(checkpoint) or ".", exist_ok=True)
    resume = _RESUME.value and os.path.exists(checkpoint)
    learners = {}
    for name in _ALGORITHMS.value:
        if name == "mc_nfsp":
            if resume:
                try:
                    learners[name] = MCNFSP.load(checkpoint, _GAME.value,
                                                 network=_mc_nfsp_config())
                except ValueError as e:
                    raise app.UsageError(f"--resume: {e}") from None
                continue
            learners[name] = MCNFSP(_mc_nfsp_config())
        elif name == "own_nfsp":
            learners[name] = ANFSP(presets.nfsp(_PRESET.value, _GAME.value, seed=_SEED.value))
        else:
            learners[name] = OpenSpielNFSP(NFSPConfig(game=_GAME.value, seed=_SEED.value))
    params = {flag.name: flag.value for flag in (_GAME, _BUDGET, _EVAL_EVERY, _ALGORITHMS,
                                                 _PRESET, _SIMULATIONS, _SEED)}
    params["configs"] = {name: repr(run.config) for name, run in learners.items()}
    with open(f"{out}.json", "w") as f:
        json.dump(params, f, indent=1)

    def checkpoint_mc_nfsp(name, run):
        if name == "mc_nfsp":
            run.save(checkpoint)

    race.race(learners, _BUDGET.value, _EVAL_EVERY.value,
              lambda policy: exploitability.evaluate(_GAME.value, policy),
              f"{out}.csv", _SEED.value, checkpoint_mc_nfsp, append=resume)
    uniform = exploitability.evaluate(
        _GAME.value, policy_lib.UniformRandomPolicy(pyspiel.load_game(_GAME.value)))
    race.plot(f"{out}.csv", f"{out}.png", f"{_GAME.value}: exact NashConv",
              anchors={"uniform random policy": uniform.nash_conv})


if __name__ == "__main__":
    cli.run(main)
