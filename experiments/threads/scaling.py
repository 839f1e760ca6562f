"""Iterations per second by thread count, and where a shared tree stops scaling.

For every game of ``--games`` and every variant of ``--variants`` (bot specs without a budget:
``smmcts(threads=1)``, ``smmcts(threads=2,parallel=tree)``, ...), a bot kept from move to move
makes ``--repeats`` moves of ``--move_time`` seconds from the game's first decision state (its
tree cleared before each, its arrays and threads kept, as a player's bot is), the variants
taking turns so that a change in the machine's load hits all of them. A variant's rate is the
median of its moves' root iterations per second of wall time.

The model (README.md, "Where the shared tree stops scaling"): with N threads each thread
spends ``t_N = N / rate_N`` seconds per iteration, ``t_1`` alone; what sharing costs is
``c_N = t_N - t_1 = a + (N - 1) b``, a part ``a`` every thread pays once (atomics, claims,
reading the others' paths) and a part ``b`` per other thread (cache lines the threads pass
between them), so the speedup on M cores is ``S(M) = M t_1 / (t_1 + a + (M - 1) b)``. With
one count N > 1 measured (a 2-core machine) ``a`` and ``b`` are not separable, and the
prediction is given as the interval between ``b = 0`` (``S = M t_1 / (t_1 + c_N)``, the
optimistic end) and ``a = 0`` (``S = M t_1 / (t_1 + (M - 1) c_N / (N - 1))``); with two or
more counts N > 1 of the same variant (a machine with more cores) they are fitted by least
squares and the prediction is the fit's.

Writes into ``--results_dir``: ``rates.csv`` (per game and variant: the median rate, every
move's, the per-thread iteration time, the speedup over one thread, the cost of sharing, the
predicted speedups, the moves' median overshoot and the lost updates per million iterations,
:func:`smmcts_spiel.search.lost_updates.lost_updates`), ``scaling.md`` (the table),
``scaling.png`` (the cost of sharing against the iteration's length, and the predicted
speedups) and ``scaling.json`` (the flags, the cores, the load average before and after).

  python experiments/threads/scaling.py --games=blotto --repeats=2 --move_time=0.01   # a check
  python experiments/threads/scaling.py --publish                # README.md's run, quiet machine
"""

from __future__ import annotations

import csv
import math
import os
import statistics
import time

import numpy as np
from absl import flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import bot_specs, experiments
from smmcts_spiel.experiments import cli, game_sets
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.reports import plots, tables
from smmcts_spiel.search.lost_updates import lost_updates

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

_GAMES = flags.DEFINE_string("games", ";".join(game_sets.ALL_GAMES),
                             "Semicolon-separated game strings.")
_VARIANTS = flags.DEFINE_string(
    "variants", "smmcts(threads=1);smmcts(threads=2,parallel=tree)",
    "Semicolon-separated bot specs without a budget; one must have threads=1 (the baseline "
    "of the speedups).")
_MOVE_TIME = flags.DEFINE_float("move_time", 0.1, "Seconds per move.")
_REPEATS = flags.DEFINE_integer("repeats", 5, "Moves per variant and game.", lower_bound=1)
_PREDICT = flags.DEFINE_list("predict", ["4", "8", "16", "64"],
                             "Core counts the model predicts the speedup for.")
_SEED = cli.define_seed("Seed of every bot.")
_RESULTS_DIR = flags.DEFINE_string(
    "results_dir", None, "Output directory (default: results/threads/scaling, or "
    "experiments/threads/results/scaling with --publish).")
_PUBLISH = cli.define_publish("the committed results (experiments/threads/results/)")
flags.register_validator("move_time", cli.positive_finite,
                         "--move_time must be a positive, finite number of seconds")


def threads_of(spec: str) -> int:
    """The thread count a variant's spec names (1 if none; ``auto`` is refused: a
    measurement names its count)."""
    threads = bot_specs.parse_bot_spec(spec).get("threads", 1)
    if not isinstance(threads, int):
        raise ValueError(f"--variants: {spec!r} must name its thread count (threads=N)")
    return threads


def family_of(spec: str) -> str:
    """A variant's settings other than its thread count: the variants of one family differ
    only in threads, and the model is fitted over each family."""
    params = bot_specs.parse_bot_spec(spec)
    params.pop("threads", None)
    name = params.pop("name")
    return f"{name}({','.join(f'{k}={v}' for k, v in sorted(params.items()))})"


def measure_game(game_string: str, variants: list[str]) -> dict[str, dict]:
    """Per variant: every move's root iterations and wall seconds (see the docstring)."""
    game = cli.load_game(game_string, "--games")
    state = information_sets.first_decision_state(game)
    bots = {}
    for spec in variants:
        bot = bot_specs.make_bot(bot_specs.with_time_limit(spec, _MOVE_TIME.value), game, 0,
                                 _SEED.value)
        bot.step(state)  # the arrays sized for a move
        bots[spec] = bot
    moves: dict[str, dict] = {spec: {"iterations": [], "seconds": [], "lost": []}
                              for spec in variants}
    for _ in range(_REPEATS.value):
        for spec, bot in bots.items():
            bot.search.reset()
            start = time.perf_counter()
            bot.step(state)
            moves[spec]["seconds"].append(time.perf_counter() - start)
            moves[spec]["iterations"].append(bot.search.last_iterations)
            # (one tree: its lost updates; root parallelism's trees are one thread's each)
            one_tree = hasattr(bot.search, "nodes_i")
            moves[spec]["lost"].append(lost_updates(bot.search) if one_tree else 0)
    return moves


def model_rows(game: str, variants: list[str], moves: dict[str, dict],
               predict: list[int]) -> list[dict]:
    """The rates, speedups, costs of sharing and predicted speedups of one game."""
    rates = {s: statistics.median(n / t for n, t in zip(m["iterations"], m["seconds"]))
             for s, m in moves.items()}
    base = next(s for s in variants if threads_of(s) == 1)
    t1 = 1 / rates[base]
    costs: dict[str, list[tuple[int, float]]] = {}
    for spec in variants:
        n = threads_of(spec)
        if n > 1:
            costs.setdefault(family_of(spec), []).append((n, n / rates[spec] - t1))
    rows = []
    for spec in variants:
        n = threads_of(spec)
        per_thread = n / rates[spec]
        row = {"game": game, "variant": spec, "threads": n, "rate": rates[spec],
               "speedup": rates[spec] / rates[base], "per_thread_us": 1e6 * per_thread,
               "sharing_cost_us": 1e6 * (per_thread - t1),
               "cost_over_iteration": (per_thread - t1) / t1,
               "overshoot_median_ms": 1e3 * (statistics.median(moves[spec]["seconds"])
                                             - _MOVE_TIME.value),
               "lost_per_million": 1e6 * sum(moves[spec]["lost"])
               / max(sum(moves[spec]["iterations"]), 1),
               "moves": " ".join(f"{i / t:.0f}" for i, t in zip(moves[spec]["iterations"],
                                                               moves[spec]["seconds"]))}
        for m in predict:
            row[f"speedup_{m}_low"], row[f"speedup_{m}_high"] = (
                predicted(m, t1, costs[family_of(spec)]) if n > 1 else (math.nan, math.nan))
        rows.append(row)
    return rows


def predicted(cores: int, t1: float, costs: list[tuple[int, float]]) -> tuple[float, float]:
    """The model's speedup on ``cores`` from the costs of sharing ``(N, c_N)`` of one family:
    the least-squares ``a, b`` where two or more counts N were measured (both ends equal),
    else the interval between ``a = 0`` and ``b = 0`` (costs below 0, from noise, count 0)."""
    ns = sorted({n for n, _ in costs})
    if len(ns) >= 2:
        x = np.array([[1.0, n - 1.0] for n, _ in costs])
        a, b = np.maximum(np.linalg.lstsq(x, np.array([c for _, c in costs]), rcond=None)[0], 0)
        s = cores * t1 / (t1 + a + (cores - 1) * b)
        return s, s
    n, c = costs[0]
    c = max(c, 0.0)
    return cores * t1 / (t1 + (cores - 1) * c / (n - 1)), cores * t1 / (t1 + c)


def write_markdown(path: str, rows: list[dict], predict: list[int], params: dict) -> None:
    shared = [r for r in rows if r["threads"] > 1]
    lines = [f"Root iterations per second of {params['move_time']:g} s moves (median of "
             f"{params['repeats']}), {params['cores']} usable core(s), load average "
             f"{params['load_before']} before and {params['load_after']} after. Sharing cost: "
             "the per-thread iteration time minus one thread's; predicted speedup on M cores: "
             "the model's interval (README.md).", "",
             tables.markdown([[r["game"], r["variant"], f"{r['rate']:,.0f}",
                               f"{r['speedup']:.2f}", f"{r['per_thread_us']:.2f}",
                               f"{r['sharing_cost_us']:+.2f}" if r["threads"] > 1 else "",
                               *([f"{r[f'speedup_{m}_low']:.1f}-{r[f'speedup_{m}_high']:.1f}"
                                  for m in predict] if r["threads"] > 1 else [""] * len(predict))]
                              for r in rows],
                             ["game", "variant", "iterations/s", "speedup", "us/iteration "
                              "per thread", "sharing cost us", *(f"S({m})" for m in predict)])]
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    lines += ["", "Overshoot of the moves, median: " + ", ".join(
        f"{v} {max(r['overshoot_median_ms'] for r in rows if r['variant'] == v):.1f} ms "
        "(worst game)" for v in variants) + ". Lost updates of counts and visits per million "
        "iterations (search.lost_updates), worst game: " + ", ".join(
        f"{v} {max(r['lost_per_million'] for r in rows if r['variant'] == v):.2f}"
        for v in variants) + "."]
    if shared:
        worst = min(shared, key=lambda r: r["speedup"])
        lines += ["", f"Lowest speedup: {worst['speedup']:.2f} ({worst['game']}, "
                  f"{worst['variant']})."]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(path: str, rows: list[dict], predict: list[int]) -> None:
    """Left: the cost of sharing per iteration against one thread's iteration time, per
    game; right: the predicted speedup on the most cores of ``--predict``, its interval."""
    shared = [r for r in rows if r["threads"] > 1]
    if not shared:
        return
    t1 = {r["game"]: r["per_thread_us"] for r in rows if r["threads"] == 1}
    with plots.saved_figure(path, (11, 4.2)) as fig:
        left, right = fig.subplots(1, 2)
        for variant in dict.fromkeys(r["variant"] for r in shared):
            mine = [r for r in shared if r["variant"] == variant]
            x = [t1[r["game"]] for r in mine]
            left.plot(x, [r["cost_over_iteration"] for r in mine], "o", label=variant)
            m = predict[-1]
            low = np.array([r[f"speedup_{m}_low"] for r in mine])
            high = np.array([r[f"speedup_{m}_high"] for r in mine])
            right.errorbar(x, (low + high) / 2, yerr=(high - low) / 2, fmt="o", capsize=2,
                           label=variant)
        left.set_xscale("log")
        left.axhline(0, color="black", lw=0.5)
        left.set_xlabel("one thread's iteration time (us)")
        left.set_ylabel("sharing cost / one thread's iteration time")
        right.set_xscale("log")
        right.set_xlabel("one thread's iteration time (us)")
        right.set_ylabel(f"predicted speedup on {predict[-1]} cores")
        left.legend(fontsize=6)


def run() -> None:
    results_dir = _RESULTS_DIR.value or (os.path.join(RESULTS, "scaling") if _PUBLISH.value
                                         else "results/threads/scaling")
    experiments.check_output([results_dir], publish=_PUBLISH.value)
    games = cli.split(_GAMES.value)
    variants = cli.split(_VARIANTS.value)
    if not games or not variants:
        raise ValueError("--games and --variants must name at least one each")
    if len(set(variants)) != len(variants):
        raise ValueError("--variants names a variant twice")
    for spec in variants:
        if bot_specs.parse_bot_spec(spec)["name"] != "smmcts" or bot_specs.own_budget(spec):
            raise ValueError(f"--variants: {spec!r} must be an smmcts spec without a budget")
    if sum(threads_of(s) == 1 for s in variants) != 1:
        raise ValueError("--variants needs exactly one variant with threads=1 (the baseline)")
    try:
        predict = [int(m) for m in _PREDICT.value]
    except ValueError:
        raise ValueError(f"--predict takes core counts, got {_PREDICT.value}") from None
    if not predict or min(predict) < 1:
        raise ValueError("--predict takes core counts >= 1")
    for game in games:
        cli.load_game(game, "--games")
    experiments.outputs.make_dir(results_dir)
    params = {"games": games, "variants": variants, "move_time": _MOVE_TIME.value,
              "repeats": _REPEATS.value, "seed": _SEED.value, "predict": predict,
              "cores": len(os.sched_getaffinity(0)),
              "load_before": [round(x, 2) for x in os.getloadavg()]}
    start = time.perf_counter()
    rows = []
    for game in games:
        game_rows = model_rows(game, variants, measure_game(game, variants), predict)
        for r in game_rows:
            print(f"{game}  {r['variant']}: {r['rate']:,.0f}/s, speedup {r['speedup']:.2f}, "
                  f"sharing cost {r['sharing_cost_us']:+.2f} us", flush=True)
        rows += game_rows
    params["load_after"] = [round(x, 2) for x in os.getloadavg()]
    with open(os.path.join(results_dir, "rates.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    write_markdown(os.path.join(results_dir, "scaling.md"), rows, predict, params)
    plot(os.path.join(results_dir, "scaling.png"), rows, predict)
    experiments.write_params(os.path.join(results_dir, "scaling.json"), params,
                             wall_seconds=round(time.perf_counter() - start, 1))
    print(open(os.path.join(results_dir, "scaling.md")).read())


main = cli.main_of(run)

if __name__ == "__main__":
    cli.run(main)
