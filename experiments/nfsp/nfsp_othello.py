"""Exploitability vs wall time on small Othello: MC-NFSP against NFSP, over seeds.

* ``mc_nfsp``: :class:`smmcts_spiel.nfsp.mc_nfsp.MCNFSP` (PUCT best response);
* ``own_nfsp``: our DQN-NFSP, :class:`smmcts_spiel.nfsp.anfsp.ANFSP` without actors;
* ``nfsp``: OpenSpiel's ``open_spiel.python.jax.nfsp`` (DQN best response, kuhn_nfsp.py's
  settings), through :mod:`smmcts_spiel.nfsp.openspiel_nfsp` (same algorithm as
  ``own_nfsp``, about 40 times slower; not checkpointed).

For each seed of --seeds, the learners train for --budget seconds of wall time each, in
alternating rounds of --eval_every seconds (so that they see the same load); after each
round the average policy's exact exploitability (e1, e2, NashConv, player-1 units) is
computed on the whole game. Evaluation time is not counted. The main measurement plays
with win/loss returns (--returns_type=win_loss, the paper's value head is a probability of
winning), disc difference beside it.

  python experiments/nfsp/nfsp_othello.py --seeds=0,1,2 --budget=150 --eval_every=30
  python experiments/nfsp/nfsp_othello.py --returns_type=disc_difference --seeds=0,1,2 --budget=150
  python experiments/nfsp/nfsp_othello.py --preset=paper --seeds=0,1,2   # Sec. 3.3, conv networks
  python experiments/nfsp/nfsp_othello.py --seeds=0,1,2 --budget=14400 --eval_every=600 --resume

Writes <out>.csv (algorithm, seed, train_seconds, cpu_seconds, episodes, e1, e2, nash_conv:
one row per evaluation point), <out>.png (mean over the seeds with a 95% t band) and
<out>.json (parameters of every invocation); <out> is
results/nfsp/mc_nfsp_othello_<returns_type> unless given, and a path under the committed
results (experiments/, benchmarks/, docs/) needs --publish. Rows are written as they are
measured; after every round each checkpointed learner is saved to <checkpoint_dir>/<out's
name>_<algorithm>_ seed<seed>.npz (git-ignored results/). --resume continues every
(algorithm, seed) from its checkpoint to the new --budget (one without a checkpoint starts
afresh, one that reached the budget is left), keeps the CSV's rows its checkpoints cover and
appends: the same command can be run again after an interruption. Needs the nfsp extra.
"""

from __future__ import annotations

import json
import os

import pyspiel
from absl import app, flags
from open_spiel.python import policy as policy_lib

from smmcts_spiel import experiments, extras, nfsp
from smmcts_spiel.experiments import cli

# The committed results of this experiment (written with --publish).
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

_GAME = flags.DEFINE_string("game", "smmcts_othello(board_size=4)", "A game with exact "
                            "exploitability (perfect information, transposition keys).")
RETURNS_TYPES = ("win_loss", "disc_difference")
_RETURNS_TYPE = flags.DEFINE_enum("returns_type", None, list(RETURNS_TYPES), "Othello's "
                                  "returns [the game string's; smmcts_othello's default is "
                                  "win_loss].")
_BUDGET = flags.DEFINE_float("budget", 300.0, "Training seconds per algorithm and seed (in "
                             "total, with --resume).", lower_bound=1)
_EVAL_EVERY = flags.DEFINE_float("eval_every", 30.0, "Training seconds between evaluations.",
                                 lower_bound=1)
ALGORITHMS = ("mc_nfsp", "own_nfsp", "nfsp")
_ALGORITHMS = flags.DEFINE_list("algorithms", ["mc_nfsp", "own_nfsp"], ", ".join(ALGORITHMS))
_PRESET = flags.DEFINE_enum("preset", "tuned", ["paper", "tuned"], "Settings of mc_nfsp and "
                            "own_nfsp: the paper's (Sec. 3.3; its convolutional networks) or "
                            "ours (smmcts_spiel.nfsp.presets); nfsp keeps OpenSpiel's "
                            "kuhn_nfsp.py settings.")
_NETWORK = flags.DEFINE_enum("network", None, ["mlp", "conv"], "Network of mc_nfsp and "
                             "own_nfsp [the preset's: conv paper, mlp tuned].")
_SIMULATIONS = flags.DEFINE_integer("num_simulations", None, "MC-NFSP's searches per move "
                                    "[the preset's].", lower_bound=1)
_SEEDS = flags.DEFINE_list("seeds", ["0"], "Seeds: one run of every algorithm per seed.")
_OUT = flags.DEFINE_string("out", None, "Output path prefix [results/nfsp/mc_nfsp_othello_"
                           "<returns_type>, or experiments/nfsp/results/... with --publish].")
_PUBLISH = flags.DEFINE_bool("publish", False, "Write the committed results in experiments/"
                             "nfsp/results (replacing them).")
_RESUME = flags.DEFINE_bool("resume", False, "Continue every (algorithm, seed) from its "
                            "checkpoint and append to <out>.csv.")
_CHECKPOINT_DIR = flags.DEFINE_string("checkpoint_dir", "results/nfsp", "Where checkpoints "
                                      "go: <dir>/<out's name>_<algorithm>_seed<seed>.npz; a "
                                      "bot spec nfsp(file=...) plays its average policy.")


def _game() -> str:
    """--game with --returns_type applied (a UsageError if they disagree)."""
    game = pyspiel.load_game(_GAME.value)
    params = game.get_parameters()
    wanted = _RETURNS_TYPE.value
    if wanted is None or params.get("returns_type") == wanted:
        return str(game)
    if "returns_type" not in params:
        raise app.UsageError(f"--returns_type: {game.get_type().short_name} has no returns_type")
    if "returns_type" in _GAME.value:
        raise app.UsageError(f"--returns_type={wanted} but --game={_GAME.value!r} says "
                             f"returns_type={params['returns_type']}: give one of them")
    return str(pyspiel.load_game(game.get_type().short_name, {**params, "returns_type": wanted}))


def _seeds() -> list[int]:
    try:
        return nfsp.parse_seeds(_SEEDS.value)
    except ValueError as e:
        raise app.UsageError(str(e)) from None


def _config(name: str, game: str, seed: int):
    """The preset's configuration of ``name`` (mc_nfsp, own_nfsp) with the flags' overrides."""
    if name == "mc_nfsp":
        return presets.mc_nfsp(_PRESET.value, game, seed=seed, network=_NETWORK.value,
                               num_simulations=_SIMULATIONS.value)
    return presets.nfsp(_PRESET.value, game, seed=seed, network=_NETWORK.value)


def _learner(name: str, game: str, seed: int, checkpoint: str, resume: bool):
    """A new learner, or with ``resume`` the one saved at ``checkpoint`` if there is one."""
    if name == "nfsp":
        return OpenSpielNFSP(NFSPConfig(game=game, seed=seed))
    try:
        return race.resume_or_new(MCNFSP if name == "mc_nfsp" else ANFSP, checkpoint, resume,
                                  game, _config(name, game, seed))
    except ValueError as e:
        raise app.UsageError(f"--resume: {e}") from None


def _import_extra() -> None:
    """Import the nfsp extra into this module. main calls it after the flag checks that need
    none of it: importing jax and flax takes seconds, a bad flag should not wait for them.
    Without the extra the flags still parse, and this says what to install in one line."""
    global exploitability, presets, race, ANFSP, MCNFSP, NFSPConfig, OpenSpielNFSP
    with extras.script_needs("nfsp", "experiments/nfsp/nfsp_othello.py"):
        from smmcts_spiel.nfsp import exploitability, presets, race
        from smmcts_spiel.nfsp.anfsp import ANFSP
        from smmcts_spiel.nfsp.mc_nfsp import MCNFSP
        from smmcts_spiel.nfsp.openspiel_nfsp import NFSPConfig, OpenSpielNFSP


def main(argv):
    unknown = set(_ALGORITHMS.value) - set(ALGORITHMS)
    if unknown or not _ALGORITHMS.value:
        raise app.UsageError(f"--algorithms: use {', '.join(ALGORITHMS)}; got {_ALGORITHMS.value}")
    if _RESUME.value and "nfsp" in _ALGORITHMS.value:
        raise app.UsageError("--resume: OpenSpiel's NFSP (nfsp) is not checkpointed; leave it "
                             "out of --algorithms")
    try:
        game = _game()
    except app.UsageError:
        raise
    except Exception as e:  # noqa: BLE001  (a bad game string)
        raise app.UsageError(f"--game={_GAME.value!r}: {e}") from None
    returns_type = pyspiel.load_game(game).get_parameters().get("returns_type", "returns")
    out = _OUT.value or os.path.join(RESULTS if _PUBLISH.value else "results/nfsp",
                                     f"mc_nfsp_othello_{returns_type}")
    try:  # before the position walk below, which takes a minute on a busy machine
        experiments.check_output([out, _CHECKPOINT_DIR.value], publish=_PUBLISH.value)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    seeds = _seeds()
    _import_extra()
    try:
        exploitability.positions(game)
        for name in set(_ALGORITHMS.value) - {"nfsp"}:
            _config(name, game, seeds[0])
    except Exception as e:  # noqa: BLE001  (a game without exact values, a bad config)
        raise app.UsageError(f"--game={_GAME.value!r}: {e}") from None
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    os.makedirs(_CHECKPOINT_DIR.value, exist_ok=True)

    def checkpoint(name: str, seed: int) -> str:
        return os.path.join(_CHECKPOINT_DIR.value,
                            f"{os.path.basename(out)}_{name}_seed{seed}.npz")

    learners = {(name, seed): _learner(name, game, seed, checkpoint(name, seed), _RESUME.value)
                for seed in seeds for name in _ALGORITHMS.value}
    params = {flag.name: flag.value for flag in (
        _GAME, _RETURNS_TYPE, _BUDGET, _EVAL_EVERY, _ALGORITHMS, _PRESET, _NETWORK,
        _SIMULATIONS, _SEEDS, _RESUME)}
    params["game_played"] = game
    params["configs"] = {f"{name}, seed {seed}": repr(run.config)
                         for (name, seed), run in learners.items()}
    invocations = []
    if _RESUME.value and os.path.exists(f"{out}.json"):
        with open(f"{out}.json") as f:
            invocations = json.load(f).get("invocations", [])
    with open(f"{out}.json", "w") as f:
        json.dump({"invocations": invocations + [params]}, f, indent=1)
    race.prepare_csv(f"{out}.csv", learners, _RESUME.value)
    try:
        race.race_seeds(learners, _BUDGET.value, _EVAL_EVERY.value,
                        lambda policy: exploitability.evaluate(game, policy), f"{out}.csv",
                        lambda name, seed: None if name == "nfsp" else checkpoint(name, seed))
    finally:
        for run in learners.values():
            if isinstance(run, ANFSP):
                run.close()
    uniform = exploitability.evaluate(
        game, policy_lib.UniformRandomPolicy(pyspiel.load_game(game)))
    loaded = pyspiel.load_game(game)
    shown = ",".join(f"{k}={v}" for k, v in loaded.get_parameters().items() if v != "")
    race.plot(f"{out}.csv", f"{out}.png", f"{loaded.get_type().short_name}({shown}):\nexact "
              f"NashConv, {_PRESET.value} preset", anchors={"uniform random policy":
                                                            uniform.nash_conv})
    print(f"{game}, uniform random policy: NashConv {uniform.nash_conv:.3f}; last evaluation "
          f"of each seed (mean, 95% t interval):")
    print(race.summary_table(f"{out}.csv"))


if __name__ == "__main__":
    cli.run(main)
