"""Exploitability vs wall time on Kuhn / Leduc poker: ANFSP, NFSP, MC-NFSP, OpenSpiel's NFSP.

* ``anfsp``: :class:`smmcts_spiel.nfsp.anfsp.ANFSP` with --num_actors actors (local
  processes, or Ray actors with --backend=ray); with --preset=paper the paper's
  asynchronous actor-learners (Sec. 4.1), with the tuned preset our actors sending
  experience to one learner (--design chooses either);
* ``own_nfsp``: the same code with no actors (synchronous NFSP in one process);
* ``mc_nfsp``: :class:`smmcts_spiel.nfsp.mc_nfsp.MCNFSP`, the PUCT best response searching
  worlds drawn from the player's information set;
* ``openspiel_nfsp``: OpenSpiel's ``open_spiel.python.jax.nfsp`` (kuhn_nfsp.py's settings).

For each seed of --seeds, each trains for --budget seconds of wall time, in alternating
rounds of --eval_every seconds (so all see the same load); after each round OpenSpiel's
exact exploitability (``exploitability.nash_conv``: e1, e2, NashConv) of the average policy
is recorded, with the CPU seconds the learner's processes used. Anchors: OpenSpiel JAX NFSP
on Kuhn 0.107 at 650K episodes; Heinrich and Silver's NFSP on Leduc 0.1 after about 5 hours.

  python experiments/nfsp/nfsp_poker.py --game=kuhn_poker --budget=240 --eval_every=20
  python experiments/nfsp/nfsp_poker.py --game=leduc_poker --algorithms=anfsp,own_nfsp \\
      --seeds=0,1,2 --budget=180 --eval_every=30
  python experiments/nfsp/nfsp_poker.py --game=leduc_poker --algorithms=anfsp --preset=paper \\
      --seeds=0,1,2 --budget=180 --eval_every=30 --resume   # adds anfsp_paper's runs
  python experiments/nfsp/nfsp_poker.py ... --budget=2400 --resume        # longer, from checkpoints
  python experiments/nfsp/nfsp_poker.py --game=leduc_poker --algorithms=anfsp --preset=paper \\
      --overrides=epsilon_decay=10000 --budget=120 --eval_every=30 --resume
      # the paper's ANFSP with one setting swapped: anfsp_paper_epsilon_decay=10000
  python experiments/nfsp/nfsp_poker.py --game=leduc_poker --algorithms=anfsp --preset=paper \\
      --backend=ray --ray_address=auto --num_actors=16            # actors on a Ray cluster

Writes <out>.csv (algorithm, seed, train_seconds, cpu_seconds, episodes, e1, e2, nash_conv:
one row per evaluation point; the algorithm is labelled <name>_paper with the paper's
preset, ANFSP's also _<design> with --design, _num_actors=<n> with --num_actors, and
_<field>=<value> for each of --overrides), <out>.png (per-seed lines, the mean over the
seeds with a 95% t band) and <out>.json (parameters of every invocation); <out> is
results/nfsp/anfsp_<game> unless given, and a path under the committed results
(experiments/, benchmarks/, docs/) needs --publish. After every round each learner but
OpenSpiel's is checkpointed to <checkpoint_dir>/<out's name>_<label>_seed<seed>.npz
(git-ignored results/); --resume continues every (algorithm, seed) from its checkpoint to
the new --budget (one without a checkpoint starts afresh), keeps the CSV's rows its
checkpoints cover and appends. Needs the nfsp extra (and the ray extra for --backend=ray).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace

import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import exploitability

from smmcts_spiel import experiments, extras, nfsp
from smmcts_spiel.experiments import cli

# The committed results of this experiment (written with --publish).
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

ALGORITHMS = ("anfsp", "own_nfsp", "mc_nfsp", "openspiel_nfsp")
ANCHORS = {"kuhn_poker": {"OpenSpiel JAX NFSP, 650K episodes": 0.107},
           "leduc_poker": {"Heinrich & Silver NFSP, ~5 h": 0.1}}

_GAME = flags.DEFINE_string("game", "kuhn_poker", "kuhn_poker or leduc_poker (or another "
                            "two-player zero-sum game with information-state tensors).")
_BUDGET = flags.DEFINE_float("budget", 240.0, "Training seconds per algorithm (in total, "
                             "with --resume).", lower_bound=1)
_EVAL_EVERY = flags.DEFINE_float("eval_every", 20.0, "Training seconds between evaluations.",
                                 lower_bound=1)
_ALGORITHMS = flags.DEFINE_list("algorithms", ["anfsp", "own_nfsp", "openspiel_nfsp"],
                                ", ".join(ALGORITHMS))
_PRESET = flags.DEFINE_enum("preset", "tuned", ["paper", "tuned"], "Settings of anfsp, "
                            "own_nfsp and mc_nfsp: the paper's (Sec. 4.2; 3.3.1 for mc_nfsp) "
                            "or ours (smmcts_spiel.nfsp.presets); openspiel_nfsp keeps "
                            "OpenSpiel's kuhn_nfsp.py settings.")
_NUM_ACTORS = flags.DEFINE_integer("num_actors", None, "ANFSP's actor processes [the "
                                   "preset's: 4 paper, 2 tuned].", lower_bound=1)
_DESIGN = flags.DEFINE_enum("design", None, ["learner", "actor_learners"], "ANFSP's design: "
                            "actors send experience to one learner (ours), or asynchronous "
                            "actor-learners send gradients (the paper's, Sec. 4.1) [the "
                            "preset's: actor_learners paper, learner tuned].")
_BACKEND = flags.DEFINE_enum("backend", "processes", ["processes", "ray"], "Where ANFSP's "
                             "actors run: local processes, or Ray actors (the ray extra).")
_RAY_ADDRESS = flags.DEFINE_string("ray_address", None, "With --backend=ray: the Ray "
                                   "cluster's address [a local Ray].")
_OVERRIDES = flags.DEFINE_list("overrides", [], "Settings of anfsp and own_nfsp that replace "
                                "the preset's, name=value,... (fields of ANFSPConfig, e.g. "
                                "epsilon_decay=10000,sl_learning_rate=0.01: one setting swapped "
                                "at a time); labelled <label>_<name>=<value>. Not with mc_nfsp "
                                "or openspiel_nfsp.")
_SIMULATIONS = flags.DEFINE_integer("num_simulations", None, "MC-NFSP's simulations per move "
                                    "[the preset's].", lower_bound=1)
_SEEDS = flags.DEFINE_list("seeds", ["0"], "Seeds: one run of every algorithm per seed.")
_OUT = flags.DEFINE_string("out", None, "Output path prefix [results/nfsp/anfsp_<game>, or "
                           "experiments/nfsp/results/anfsp_<game> with --publish].")
_PUBLISH = flags.DEFINE_bool("publish", False, "Write the committed results in experiments/"
                             "nfsp/results (replacing them).")
_RESUME = flags.DEFINE_bool("resume", False, "Continue the learners from their checkpoints "
                            "and append to <out>.csv.")
_CHECKPOINT_DIR = flags.DEFINE_string("checkpoint_dir", "results/nfsp", "Where checkpoints "
                                      "go: <dir>/<out's name>_<algorithm>.npz.")


@dataclass(frozen=True)
class _Exploitability:
    """OpenSpiel's exploitability in the race's Report shape (e1 / e2 per player)."""

    e1: float
    e2: float

    @property
    def nash_conv(self) -> float:
        return self.e1 + self.e2


def _label(name: str) -> str:
    """The algorithm's name in the CSV and the checkpoints: with the paper's preset
    ``<name>_paper``, with --design ANFSP's ``anfsp[_paper]_<design>``, with --num_actors
    ``..._num_actors=<n>``, then each of --overrides as ``_<field>=<value>``."""
    label = name if _PRESET.value == "tuned" or name == "openspiel_nfsp" else f"{name}_paper"
    if name == "anfsp" and _DESIGN.value is not None:
        label = f"{label}_{_DESIGN.value}"
    if name == "anfsp" and _NUM_ACTORS.value is not None:  # not the preset's: another run
        label = f"{label}_num_actors={_NUM_ACTORS.value}"
    for field, value in _overrides().items():
        label += f"_{field}={value:g}" if isinstance(value, float) else f"_{field}={value}"
    return label


def _overrides() -> dict:
    """--overrides as ANFSPConfig fields (ValueError for a bad one: main checks first)."""
    return presets.parse_overrides(_OVERRIDES.value)


def _config(name: str, seed: int):
    """The preset's configuration of ``name`` with the flags that override it."""
    game, preset = _GAME.value, _PRESET.value
    if name == "mc_nfsp":
        return presets.mc_nfsp(preset, game, seed=seed, num_simulations=_SIMULATIONS.value)
    if name == "own_nfsp":
        return presets.nfsp(preset, game, seed=seed, **_overrides())
    return presets.anfsp(preset, game, seed=seed, num_actors=_NUM_ACTORS.value,
                         design=_DESIGN.value, backend=_BACKEND.value,
                         ray_address=_RAY_ADDRESS.value, **_overrides())


def _learner(name: str, seed: int, checkpoint: str, game: pyspiel.Game):
    """A new learner, or with --resume the one saved at ``checkpoint`` if there is one."""
    if name == "openspiel_nfsp":
        return OpenSpielNFSP(NFSPConfig(game=_GAME.value, hidden=(128,), seed=seed))
    try:
        return race.resume_or_new(MCNFSP if name == "mc_nfsp" else ANFSP, checkpoint,
                                  _RESUME.value, game, _config(name, seed))
    except ValueError as e:
        raise app.UsageError(f"--resume: {e}") from None


def _import_extra() -> None:
    """Import the nfsp extra into this module. main calls it after the flag checks that need
    none of it: importing jax and flax takes seconds, a bad flag should not wait for them.
    Without the extra the flags still parse, and this says what to install in one line."""
    global presets, race, ANFSP, MCNFSP, NFSPConfig, OpenSpielNFSP
    with extras.script_needs("nfsp", "experiments/nfsp/nfsp_poker.py"):
        from smmcts_spiel.nfsp import presets, race
        from smmcts_spiel.nfsp.anfsp import ANFSP
        from smmcts_spiel.nfsp.mc_nfsp import MCNFSP
        from smmcts_spiel.nfsp.openspiel_nfsp import NFSPConfig, OpenSpielNFSP


def main(argv):
    if _BACKEND.value == "ray":
        with extras.script_needs("ray", "--backend=ray"):
            import ray  # noqa: F401
    unknown = set(_ALGORITHMS.value) - set(ALGORITHMS)
    if unknown or not _ALGORITHMS.value:
        raise app.UsageError(f"--algorithms: use {', '.join(ALGORITHMS)}; got {_ALGORITHMS.value}")
    if _RESUME.value and "openspiel_nfsp" in _ALGORITHMS.value:
        raise app.UsageError("--resume: OpenSpiel's NFSP is not checkpointed; leave "
                             "openspiel_nfsp out of --algorithms")
    try:
        seeds = nfsp.parse_seeds(_SEEDS.value)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    try:
        game = pyspiel.load_game(_GAME.value)
    except Exception as e:  # noqa: BLE001  (a bad game string)
        raise app.UsageError(f"--game={_GAME.value!r}: {e}") from None
    out = _OUT.value or os.path.join(RESULTS if _PUBLISH.value else "results/nfsp",
                                     f"anfsp_{game.get_type().short_name}")
    try:  # before the extra's import and the learners below, which set up their networks
        experiments.check_output([out, _CHECKPOINT_DIR.value], publish=_PUBLISH.value)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    _import_extra()
    if _OVERRIDES.value:
        others = set(_ALGORITHMS.value) - {"anfsp", "own_nfsp"}
        if others:
            raise app.UsageError(f"--overrides sets ANFSP's fields (anfsp, own_nfsp); run "
                                 f"{', '.join(sorted(others))} without it")
        try:
            _overrides()
        except ValueError as e:
            raise app.UsageError(f"--overrides: {e}") from None
    try:
        configs = {name: _config(name, seeds[0]) for name in _ALGORITHMS.value
                   if name != "openspiel_nfsp"}
        ANFSP(presets.nfsp("tuned", _GAME.value)).close()
    except Exception as e:  # noqa: BLE001  (an unsupported game)
        raise app.UsageError(f"--game={_GAME.value!r}: {e}") from None
    overridden = sorted(set(configs) & {"anfsp", "own_nfsp"}) if _OVERRIDES.value else []
    for name in overridden:
        try:  # without actors: the sizes the overrides set are checked, nothing is started
            ANFSP(replace(configs[name], num_actors=0)).close()
        except ValueError as e:
            raise app.UsageError(f"--overrides: {e}") from None
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    os.makedirs(_CHECKPOINT_DIR.value, exist_ok=True)

    def checkpoint(label: str, seed: int) -> str:
        return os.path.join(_CHECKPOINT_DIR.value,
                            f"{os.path.basename(out)}_{label}_seed{seed}.npz")

    learners = {(_label(name), seed): _learner(name, seed, checkpoint(_label(name), seed), game)
                for seed in seeds for name in _ALGORITHMS.value}
    params = {flag.name: flag.value for flag in (
        _GAME, _BUDGET, _EVAL_EVERY, _ALGORITHMS, _PRESET, _DESIGN, _BACKEND, _RAY_ADDRESS,
        _NUM_ACTORS, _OVERRIDES, _SIMULATIONS, _SEEDS, _RESUME)}
    params["configs"] = {f"{label}, seed {seed}": repr(run.config)
                         for (label, seed), run in learners.items()}
    invocations = []
    if _RESUME.value and os.path.exists(f"{out}.json"):
        with open(f"{out}.json") as f:
            invocations = json.load(f).get("invocations", [])
    with open(f"{out}.json", "w") as f:
        json.dump({"invocations": invocations + [params]}, f, indent=1)

    def evaluate(policy):
        conv = exploitability.nash_conv(game, policy, return_only_nash_conv=False)
        gains = conv.player_improvements  # gains[p]: what player p wins by best-responding
        return _Exploitability(e1=float(gains[1]), e2=float(gains[0]))

    race.prepare_csv(f"{out}.csv", learners, _RESUME.value)
    try:
        race.race_seeds(learners, _BUDGET.value, _EVAL_EVERY.value, evaluate, f"{out}.csv",
                        lambda label, seed: (None if label == "openspiel_nfsp"
                                             else checkpoint(label, seed)))
    finally:
        for run in learners.values():
            if isinstance(run, ANFSP):
                run.close()
    race.plot(f"{out}.csv", f"{out}.png", f"{_GAME.value}: exploitability (NashConv / 2)",
              scale=0.5, ylabel="exploitability of the average policy",
              log_y=True, anchors=ANCHORS.get(game.get_type().short_name))
    print(f"{_GAME.value}: last evaluation of each algorithm (NashConv; mean over the seeds, "
          f"95% t interval):")
    print(race.summary_table(f"{out}.csv"))


if __name__ == "__main__":
    cli.run(main)
