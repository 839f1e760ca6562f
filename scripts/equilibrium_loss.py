"""Bots scored move by move with a game's exact values (smmcts_spiel.experiments.equilibrium_loss).

  .venv/bin/python scripts/equilibrium_loss.py --game="oshi_zumo(coins=10,size=3,horizon=20)" \
      --bots="smmcts;mcts(engine=cpp)" --time_limit=0.1 --num_games=100 \
      --rules="empirical;empirical@0.1;most_visited" --results_dir=results/eq_loss

Every bot plays ``--num_games`` games (seats alternate) against ``--opponent`` (default the
exact equilibrium). At each state the exact solver scores the strategy the bot played: its
loss against the equilibrium (zero inside the equilibrium's support; summed over a game
against the equilibrium it is an unbiased, low-noise estimate of the shortfall that the
game's outcome measures) and against a best reply at that stage (how exploitable the move
is); the opponent's loss against the equilibrium; and the bot's gain over the state's value
given both strategies, whose sum plus the game's value estimates the bot's expected return
without the noise of sampling and chance. With ``--rules``, an ``smmcts`` bot's tree is
also scored under other final-move rules, ``name`` or ``name@threshold`` (see
``SMMCTSBot``'s ``final_strategy`` and ``threshold``), on the same states. Rules named
``average...`` need a bot spec with ``final_strategy=average...`` (which tracks them).

Resumable chunks of games under ``results_dir/games/``; writes ``moves.csv`` (one row per
state) and ``summary.md`` (per bot and rule, per game with 95% intervals: loss against the
equilibrium and against a best reply, the opponent's loss, the return estimated from the
exact values, with the standard interval and the seat-stratified one, and the return the
games gave). Timing-sensitive with ``--time_limit``: run
on a quiet core (e.g. ``taskset -c 1``) with ``--num_workers=1``. Writing into
the committed results (experiments/, benchmarks/, docs/) needs ``--publish``.
"""

from __future__ import annotations

import csv
import os
import time

import numpy as np
from absl import app, flags, logging

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import bot_specs, experiments, match, reports
from smmcts_spiel.exact import solver
from smmcts_spiel.experiments import cli
from smmcts_spiel.experiments import equilibrium_loss as el
from smmcts_spiel.reports import tables
from smmcts_spiel.search.smmcts import FINAL_STRATEGIES

_GAME = flags.DEFINE_string("game", "oshi_zumo(coins=10,size=3,horizon=20)",
                            "A game the exact solver solves.")
_BOTS = flags.DEFINE_string("bots", "smmcts;mcts(engine=cpp)", "Semicolon-separated bot specs.")
_OPPONENT = flags.DEFINE_string("opponent", "equilibrium", "The bot every bot plays (a spec).")
_RULES = flags.DEFINE_string("rules", "", "Semicolon-separated final-move rules to score on "
                             "smmcts bots' trees: name or name@threshold.")
_TIME_LIMIT = flags.DEFINE_float("time_limit", 0.1, "Seconds per move of every searching bot "
                                 "whose spec names no budget of its own.")
_NUM_GAMES = flags.DEFINE_integer("num_games", 100, "Games per bot.", lower_bound=1)
_CHUNK = flags.DEFINE_integer("chunk", 10, "Games per job.", lower_bound=1)
_SEED = cli.define_seed("Base seed.")
_WORKERS = flags.DEFINE_integer("num_workers", 1, "Worker processes.", lower_bound=1)
_SOLUTIONS_DIR = flags.DEFINE_string(
    "solutions_dir", "results/solutions", "Where exact solutions are cached (solved once).")
_SOLVE_ONLY = flags.DEFINE_bool(
    "solve_only", False, "Only solve the game into --solutions_dir (run this under nice "
    "before a timed run, so that the timed run does not spend its CPU slot solving).")
_SOLVER_LIMITS = cli.define_solver_limits()
_RESULTS_DIR = flags.DEFINE_string("results_dir", "results/equilibrium_loss",
                                   "Output directory.")
_PUBLISH = cli.define_publish("into a --results_dir (or --solutions_dir) under the "
                              "committed results (experiments/tournaments/results/...)")
flags.register_validator("time_limit", cli.positive_finite,
                         "--time_limit must be a positive, finite number of seconds")


def parse_rules(text: str) -> tuple[tuple[str, float], ...]:
    rules = []
    for item in cli.split(text):
        name, _, threshold = item.partition("@")
        if name not in FINAL_STRATEGIES:
            raise ValueError(f"rule {item!r}: the name must be one of "
                             f"{', '.join(FINAL_STRATEGIES)}")
        try:
            value = float(threshold) if threshold else 0.0
        except ValueError:
            raise ValueError(f"rule {item!r}: the threshold after @ must be a number") from None
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"rule {item!r}: the threshold must be in [0, 1]")
        rules.append((name, value))
    return tuple(rules)


def rule_label(rule: tuple[str, float]) -> str:
    return rule[0] + (f"@{rule[1]:g}" if rule[1] else "")


def main(argv):
    try:
        run()
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None


def run() -> None:
    results_dir = _RESULTS_DIR.value
    experiments.check_output([_SOLUTIONS_DIR.value] + ([] if _SOLVE_ONLY.value else
                                                       [results_dir]), publish=_PUBLISH.value)
    bots = [bot_specs.with_time_limit(s, _TIME_LIMIT.value) for s in cli.split(_BOTS.value)]
    if not bots:
        raise ValueError("--bots is empty")
    opponent = bot_specs.with_time_limit(_OPPONENT.value, _TIME_LIMIT.value)
    rules = parse_rules(_RULES.value)
    game = cli.load_game(_GAME.value)
    solver.check_game(game)
    if not _SOLVE_ONLY.value:  # the bots play nothing then: only the solver is asked
        match.warn_about_bots(bots + [opponent], [game], _TIME_LIMIT.value)
    # Solved (or read) here, before any timed job: the workers then read the cached file.
    cli.solve_game(game, _SOLUTIONS_DIR.value, _SOLVER_LIMITS.value)
    if _SOLVE_ONLY.value:
        logging.info("solved %s into %s", _GAME.value, _SOLUTIONS_DIR.value)
        return
    lifted = cli.solver_limits_kwargs(_SOLVER_LIMITS)
    jobs = {}
    for b, spec in enumerate(bots):
        bot_rules = rules if spec.startswith("smmcts") else ()
        for start in range(0, _NUM_GAMES.value, _CHUNK.value):
            stop = min(start + _CHUNK.value, _NUM_GAMES.value)
            jobs[f"bot{b}_games{start}-{stop}"] = dict(
                game=_GAME.value, spec=spec, base_seed=_SEED.value + 10**6 * b, start=start,
                stop=stop, opponent=opponent, rules=[list(r) for r in bot_rules],
                solutions_dir=_SOLUTIONS_DIR.value, **lifted)
    params = {"game": _GAME.value, "bots": bots, "opponent": opponent,
              "rules": [list(r) for r in rules],
              "time_limit": _TIME_LIMIT.value, "num_games": _NUM_GAMES.value,
              "chunk": _CHUNK.value, "seed": _SEED.value}
    experiments.check_params(results_dir, params)
    start = time.perf_counter()
    results = experiments.run_jobs(el.play_games, jobs, results_dir=os.path.join(
        results_dir, "games"), workers=_WORKERS.value, desc="chunks of games")
    write_outputs(results_dir, bots, opponent, rules, jobs, results)
    experiments.write_params(os.path.join(results_dir, "equilibrium_loss.json"), params,
                             wall_seconds=round(time.perf_counter() - start, 1))
    print(open(os.path.join(results_dir, "summary.md")).read())


def _mean_ci(x: np.ndarray) -> str:
    return reports.mean_interval(x).format(sign=False)


def _stratified_ci(x: np.ndarray, seats: np.ndarray) -> str:
    try:
        mean, half = el.seat_stratified_interval(x, seats)
    except ValueError:
        return "(too few games per seat)"
    if not np.isfinite(half):
        return f"{mean:.3f} (no spread: no interval)"
    return reports.Interval(mean, mean - half, mean + half, len(x)).format(sign=False)


def write_outputs(results_dir, bots, opponent, rules, jobs, results) -> None:
    per_bot = {spec: [] for spec in bots}
    with experiments.replaced_file(os.path.join(results_dir, "moves.csv"), newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["bot", "game", "seat", "state", "loss", "best_reply_loss",
                         "opponent_loss", "gain"] + [f"loss[{rule_label(r)}]" for r in rules])
        for key, job in jobs.items():
            r = results[key]
            per_bot[job["spec"]].append(r)
            for k in range(len(r["move"])):
                extra = list(r["rule_loss"][k]) if r["rule_loss"].shape[1] else []
                writer.writerow([job["spec"], int(r["game"][k]), int(r["seat"][k]),
                                 int(r["move"][k]), *(f"{r[x][k]:.6f}" for x in (
                                     "loss", "best_reply_loss", "opponent_loss", "gain")),
                                 *(f"{x:.6f}" for x in extra)])
    lines = [f"{_GAME.value} against {opponent}, scored with the exact values: per game, "
             "the bot's summed loss against the equilibrium and against a best reply, the "
             "opponent's summed loss against the equilibrium, the bot's return estimated "
             "as value + summed gains (also with its seat-stratified interval: the mean of "
             "the two seats' means, variance (sum of per-seat variance / games) / 4, free "
             "of the seat's game value), and the return the games gave (each +- its 95% "
             "t interval).", ""]
    rows = []
    for spec in bots:
        parts = per_bot[spec]
        games = np.concatenate([p["game"] for p in parts])
        ids = np.unique(np.concatenate([np.arange(jobs[k]["start"], jobs[k]["stop"])
                                        for k in jobs if jobs[k]["spec"] == spec]))

        def per_game(values, games=games, ids=ids):
            return np.array([values[games == g].sum() for g in ids])

        def joined(key, parts=parts):
            return np.concatenate([p[key] for p in parts])

        estimate = joined("game_values") + per_game(joined("gain"))
        rows.append([spec, "played", len(ids), _mean_ci(per_game(joined("loss"))),
                     _mean_ci(per_game(joined("best_reply_loss"))),
                     _mean_ci(per_game(joined("opponent_loss"))), _mean_ci(estimate),
                     _stratified_ci(estimate, ids % 2), _mean_ci(joined("game_returns"))])
        if spec.startswith("smmcts"):
            rule_loss, rule_br = joined("rule_loss"), joined("rule_best_reply_loss")
            for k, rule in enumerate(rules):
                rows.append(["", f"{rule_label(rule)} (same trees)", len(ids),
                             _mean_ci(per_game(rule_loss[:, k])),
                             _mean_ci(per_game(rule_br[:, k])), "", "", "", ""])
    lines.append(tables.markdown(
        rows, ["bot", "final-move rule", "games", "loss vs equilibrium", "loss vs best reply",
               "opponent's loss", "estimated return", "estimated return, seat-stratified",
               "mean return"], align=["left", "left"] + ["right"] * 7))
    with experiments.replaced_file(os.path.join(results_dir, "summary.md")) as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    cli.run(main)
