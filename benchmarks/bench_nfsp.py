"""Where NFSP's time goes, and how many episodes per second ANFSP's actors add.

Part 1, the profile (CPU microseconds, this process, after a warm-up that starts learning):
acting per episode (numpy networks), and for comparison one jitted JAX forward pass per
state, as the actors did before; one learning step (both networks, then the numpy copies)
alone and in calls of ``steps_per_call`` steps (one jitted scan, as the learner takes them);
storing an episode; OpenSpiel's JAX NFSP's episode (its own loop). Part 2, throughput:
NFSP (``ANFSP`` without actors) and ANFSP with --num_actors actors, for each of --designs
(``learner``: actors send experience; ``actor_learners``: the paper's, actors send
gradients; each with the settings of its preset, ``paper`` and ``tuned``) and --backends
(local processes, Ray actors), each for --seconds of wall time
after a warm-up: episodes per second, CPU seconds of all their processes (the actors'
while playing and computing), episodes per CPU second (the cost of the parallelism:
messages, a learner process), the speed-up over NFSP and over the same design and backend
with the fewest actors, and Ray's episode rate over local processes'. Actor start-up is
not timed. On a machine with C free cores the speed-up is bounded by C times ANFSP's
episodes per CPU second over NFSP's.

  python benchmarks/bench_nfsp.py --game=leduc_poker --seconds=60
  python benchmarks/bench_nfsp.py --designs=actor_learners --backends=processes,ray \
      --num_actors=1,2 --seconds=30 --skip_profile

Prints a table; --out writes it as JSON too.
"""

from __future__ import annotations

import json
import time

import numpy as np
from absl import app, flags

from smmcts_spiel import experiments, extras
from smmcts_spiel.experiments import cli
from smmcts_spiel.reports import tables

_MISSING: extras.MissingExtraError | None = None
try:  # the nfsp extra: without it the flags still parse, and main says what to install
    with extras.required("nfsp", "benchmarks/bench_nfsp.py"):
        import jax

        from smmcts_spiel.nfsp import presets
        from smmcts_spiel.nfsp.anfsp import ANFSP, BACKENDS, DESIGNS, ANFSPConfig
        from smmcts_spiel.nfsp.openspiel_nfsp import NFSPConfig, OpenSpielNFSP
        from smmcts_spiel.nfsp.policy import state_tensor
except extras.MissingExtraError as error:
    _MISSING = error

_GAME = flags.DEFINE_string("game", "leduc_poker", "A poker game (information-state tensors).")
_SECONDS = flags.DEFINE_float("seconds", 30.0, "Wall time of each throughput run.",
                              lower_bound=1)
_NUM_ACTORS = flags.DEFINE_list("num_actors", ["1", "2"], "ANFSP's actor counts to run.")
_DESIGNS = flags.DEFINE_list("designs", ["learner"], "ANFSP's designs to run: learner, "
                             "actor_learners.")
_BACKENDS = flags.DEFINE_list("backends", ["processes"], "Where the actors run: processes, "
                              "ray (the ray extra).")
_SKIP_PROFILE = flags.DEFINE_bool("skip_profile", False, "Only the throughput part.")
_OUT = flags.DEFINE_string("out", None, "Also write the results as JSON here (under the "
                           "committed results only with --publish).")
_PUBLISH = flags.DEFINE_bool("publish", False, "Allow --out under experiments/, benchmarks/ or "
                             "docs/.")


def _cpu_us(f, n: int) -> float:
    """CPU microseconds per call of ``f`` (process time: all threads of this process)."""
    start = time.process_time()
    for _ in range(n):
        f()
    return (time.process_time() - start) / n * 1e6


def profile(game: str) -> dict:
    run = ANFSP(ANFSPConfig(game=game, num_actors=0, seed=0))
    while len(run.reservoir) < 2 * run.config.min_buffer_size_to_learn:
        run.self_play(1000)  # both networks learning
    acting = run.acting
    rl, sl = acting.play(1000, 0, run.episodes)
    transitions = len(rl[0]) / 1000
    state = acting.game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    forward = jax.jit(lambda p, x: acting.avg_net.apply(p, x))
    x = state_tensor(state, state.current_player())[None]
    np.asarray(forward(run.avg_params, x))

    def learn(steps: int):
        run.learn(steps)
        acting.set_params(run.q_params, run.avg_params)

    def store():
        run.replay.add_batch(rl)
        run.reservoir.add_batch(sl)

    calls = run.config.steps_per_call
    learn(calls)  # compiled
    theirs = OpenSpielNFSP(NFSPConfig(game=game, hidden=run.config.hidden, seed=0))
    result = {
        "transitions_per_episode": transitions,
        "acting_us_per_episode": _cpu_us(lambda: acting.play(1, 0, run.episodes), 3000),
        "numpy_forward_us": _cpu_us(lambda: acting.avg.logits(x[0]), 3000),
        "jax_forward_us": _cpu_us(lambda: np.asarray(forward(run.avg_params, x)[0]), 3000),
        "learn_step_us": _cpu_us(lambda: learn(1), 500),
        # in calls of steps_per_call steps (one jitted scan), as the learner takes them
        "learn_step_in_calls_us": _cpu_us(lambda: learn(calls), 50) / calls,
        "store_us_per_episode": _cpu_us(store, 50) / 1000,
        "openspiel_nfsp_us_per_episode": _cpu_us(theirs.play_episode, 300),
    }
    steps = transitions / run.config.learn_every
    result["learning_us_per_episode"] = steps * result["learn_step_in_calls_us"]
    result["nfsp_predicted_us_per_episode"] = (result["acting_us_per_episode"]
                                               + result["learning_us_per_episode"]
                                               + result["store_us_per_episode"])
    return result


def throughput(game: str, num_actors: int, seconds: float, design: str = "learner",
               backend: str = "processes") -> dict:
    # each design with the settings the Leduc comparison runs it with: the paper's with the
    # paper preset (e.g. its 32 episodes per message), ours with the tuned one
    preset = "paper" if design == "actor_learners" else "tuned"
    config = presets.anfsp(preset, game, num_actors=num_actors, seed=0, design=design,
                           backend=backend)
    with ANFSP(config) as run:
        while run.steps < 100 or run.train_seconds < 3:  # warm-up: learning under way
            run.train(2.0)
        before = (run.episodes, run.train_seconds, run.cpu_seconds, run.actor_cpu_seconds,
                  run.wait_seconds)
        run.train(seconds)
        episodes, wall, cpu, actor_cpu, wait = (
            now - then for now, then in zip((run.episodes, run.train_seconds, run.cpu_seconds,
                                             run.actor_cpu_seconds, run.wait_seconds), before))
    return {"design": design, "backend": backend if num_actors else "-",
            "num_actors": num_actors, "episodes_per_second": episodes / wall,
            "cpu_seconds_per_second": cpu / wall, "episodes_per_cpu_second": episodes / cpu,
            "actors_cpu_seconds_per_second": actor_cpu / wall,
            "learner_waiting": wait / wall}


def main(argv):
    try:
        experiments.check_output([_OUT.value], publish=_PUBLISH.value)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    if _MISSING is not None:
        raise SystemExit(str(_MISSING))
    try:
        actor_counts = [int(k) for k in _NUM_ACTORS.value]
    except ValueError:
        raise app.UsageError(f"--num_actors: integers, got {_NUM_ACTORS.value}") from None
    if not actor_counts or any(k < 1 for k in actor_counts):
        raise app.UsageError(f"--num_actors: at least 1, got {actor_counts}")
    for flag, allowed in ((_DESIGNS, DESIGNS), (_BACKENDS, BACKENDS)):
        if not flag.value or set(flag.value) - set(allowed):
            raise app.UsageError(f"--{flag.name}: use {', '.join(allowed)}; got {flag.value}")
    if "ray" in _BACKENDS.value:
        with extras.script_needs("ray", "--backends=ray"):
            import ray  # noqa: F401
    result: dict = {"game": _GAME.value}
    if not _SKIP_PROFILE.value:
        result["profile"] = profile(_GAME.value)
        print(f"profile on {_GAME.value} (CPU microseconds):")
        for name, value in result["profile"].items():
            print(f"  {name:34s} {value:10.1f}")
    runs = [throughput(_GAME.value, 0, _SECONDS.value)]
    for design in _DESIGNS.value:
        for backend in _BACKENDS.value:
            runs += [throughput(_GAME.value, k, _SECONDS.value, design, backend)
                     for k in actor_counts]
    synchronous = runs[0]
    fewest = {}
    for r in runs:
        r["speed_up"] = r["episodes_per_second"] / synchronous["episodes_per_second"]
        base = fewest.setdefault((r["design"], r["backend"]), r)
        r["speed_up_over_fewest_actors"] = r["episodes_per_second"] / base["episodes_per_second"]
        local = [p for p in runs if p["backend"] == "processes" and p["design"] == r["design"]
                 and p["num_actors"] == r["num_actors"]]
        if r["backend"] == "ray" and local:
            r["ray_over_processes"] = r["episodes_per_second"] / local[0]["episodes_per_second"]
    print(f"throughput on {_GAME.value}, {_SECONDS.value:g} s each (design learner with 0 "
          f"actors: NFSP in one process):")
    print(tables.text([(r["design"], r["backend"], r["num_actors"],
                        f"{r['episodes_per_second']:.0f}", f"{r['cpu_seconds_per_second']:.2f}",
                        f"{r['episodes_per_cpu_second']:.0f}", f"{r['speed_up']:.2f}",
                        f"{r['speed_up_over_fewest_actors']:.2f}",
                        f"{r['ray_over_processes']:.2f}" if "ray_over_processes" in r else "",
                        f"{r['actors_cpu_seconds_per_second']:.2f}",
                        f"{100 * r['learner_waiting']:.0f}%")
                       for r in runs],
                      ["design", "backend", "actors", "episodes/s", "CPU s/s", "episodes/CPU s",
                       "x NFSP", "x fewest actors", "Ray / processes", "actors' CPU s/s",
                       "learner waiting"]))
    result["throughput"] = runs
    if _OUT.value:
        with open(_OUT.value, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    cli.run(main)
