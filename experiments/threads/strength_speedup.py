"""Strength at equal time: a bot with N threads at T seconds per move against one thread at k T.

For every game of ``--games``, every bot of ``--bots`` (the treatments, e.g.
``smmcts(threads=2,parallel=tree)``) and every ratio k of ``--ratios``: the treatment at
``--time_limit`` seconds per move plays ``--baseline`` (``smmcts(threads=1)``) at k times
that, ``--num_games`` games per ordered pair (both seats, so twice as many per cell),
duplicate deals by default. The games of ``--level_games`` are played at k = 1 only, with
``--level_num_games`` games per ordered pair (the "never behind at equal time" check).
``experiments/threads/README.md`` is the registered protocol and its decision rule.

The games are the tournament runner's (:func:`smmcts_spiel.tournament.tournament_jobs`,
:func:`smmcts_spiel.match.play_games`): resumable chunks of ``--chunk`` games in
``results_dir/games/``, so an interrupted run resumes where it stopped, and a run with other
flags is refused. A game string has the same seeds in every cell, so the cells of one game
see the same deals (common random numbers across ratios and bots). The chunks run in the
order that keeps every cell at about the same number of deals: the ``--games`` cells first,
then the ``--level_games`` cells, each stage interleaved chunk by chunk.

Writes into ``--results_dir``:

  games.csv     one row per game: game, bot, ratio, first and second bot, game index,
                seed, returns, seconds;
  cells.csv     per game, bot and ratio: deals, the treatment's mean return over both seats
                with its 95% t interval over deals, wins / draws / losses, the verdict
                (ahead, level, behind);
  speedup.csv   per game and bot of ``--games``: the strength-speedup (the ratio k at which
                the treatment's mean return crosses 0, interpolated in log k) and the
                largest ratio at which it is not behind;
  summary.md    the tables and the registered targets; strength_speedup.png  the means with
                their intervals against k; strength_speedup.json  the flags and run time.

  python experiments/threads/strength_speedup.py --games=blotto --level_games= \\
      --ratios=1,2 --num_games=2 --chunk=1 --time_limit=0.01          # a check, a minute
  python experiments/threads/strength_speedup.py --publish            # README.md's run
"""

from __future__ import annotations

import csv
import math
import os
import time

import numpy as np
from absl import flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import bot_specs, experiments, match, reports, tournament
from smmcts_spiel.experiments import cli, game_sets
from smmcts_spiel.reports import plots, tables

# The committed results of this experiment (written with --publish).
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
GAMES_CSV_FIELDS = ["game", "bot", "ratio", "first", "second", "game_index", "seed",
                    "return_first", "return_second", "seconds"]
VERDICTS = ("ahead", "level", "behind")

_GAMES = flags.DEFINE_string(
    "games", ";".join(game_sets.THREAD_GAMES),
    "Semicolon-separated game strings played at every ratio of --ratios.")
_LEVEL_GAMES = flags.DEFINE_string(
    "level_games", ";".join(g for g in game_sets.ALL_GAMES if g not in game_sets.THREAD_GAMES),
    "Semicolon-separated game strings played at ratio 1 only (empty: none).")
_BOTS = flags.DEFINE_string(
    "bots", "smmcts(threads=2,parallel=tree)",
    "Semicolon-separated specs of the treatment bots, without a budget (each plays at "
    "--time_limit seconds per move).")
_BASELINE = flags.DEFINE_string(
    "baseline", "smmcts(threads=1)",
    "Spec of the baseline bot, without a budget (it plays at k * --time_limit per move).")
_TIME_LIMIT = flags.DEFINE_float("time_limit", 0.1, "Seconds per move of the treatments.")
_RATIOS = flags.DEFINE_list("ratios", ["1", "1.5", "1.7", "2"],
                            "The baseline's time per move, in multiples of --time_limit.")
_NUM_GAMES = flags.DEFINE_integer("num_games", 100, "Games per ordered pair and cell of "
                                  "--games (each cell plays twice as many, both seats).",
                                  lower_bound=1)
_LEVEL_NUM_GAMES = flags.DEFINE_integer("level_num_games", 50, "Games per ordered pair of "
                                        "each --level_games cell.", lower_bound=1)
_CHUNK = flags.DEFINE_integer("chunk", 10, "Games per job.", lower_bound=1)
_SEED = cli.define_seed("Base seed of every game.")
_DUPLICATE = flags.DEFINE_bool(
    "duplicate", True, "Duplicate deals: game g of the second ordered pair replays the "
    "chance outcomes of game g of the first with the seats swapped; intervals over deals.")
_WORKERS = flags.DEFINE_integer(
    "num_workers", 1, "Worker processes (keep 1: every bot's move needs the free cores).",
    lower_bound=1)
_RESULTS_DIR = flags.DEFINE_string(
    "results_dir", None, "Output directory (default: results/threads/strength_speedup, or "
    "experiments/threads/results/strength_speedup with --publish).")
_PUBLISH = cli.define_publish("the committed results (experiments/threads/results/)")
_NO_PLAY = flags.DEFINE_bool("no_play", False, "Play nothing: write the tables from the "
                             "chunks of games finished so far (e.g. while a run goes on).")
flags.register_validator("time_limit", cli.positive_finite,
                         "--time_limit must be a positive, finite number of seconds")


def parse_ratios(items: list[str]) -> list[float]:
    """``--ratios``: distinct finite numbers >= 1 (ValueError naming the bad one)."""
    ratios = []
    for item in items:
        try:
            ratio = float(item)
        except ValueError:
            raise ValueError(f"--ratios: {item!r} is not a number") from None
        if not (math.isfinite(ratio) and ratio >= 1):
            raise ValueError(f"--ratios: {item!r} must be a finite number >= 1 (the baseline's "
                             "time per move in multiples of --time_limit)")
        ratios.append(ratio)
    if not ratios or len(set(ratios)) != len(ratios):
        raise ValueError(f"--ratios must name distinct ratios, got {items}")
    return ratios


def timed_spec(spec: str, seconds: float) -> str:
    """``spec`` searching ``seconds`` per move; ValueError if it names a budget itself."""
    budget = bot_specs.own_budget(spec)
    if budget:
        raise ValueError(f"{spec!r} names its own budget ({budget}); the experiment gives "
                         "every bot its time per move: leave the budget out")
    return bot_specs.with_time_limit(spec, round(seconds, 9))


def plan_cells(games: list[str], level_games: list[str], bots: list[str],
               ratios: list[float]) -> list[dict]:
    """Every cell (game, treatment, ratio) in play order: ``--games`` at every ratio, then
    ``--level_games`` at ratio 1. A game string keeps one index (so one set of seeds) in
    every cell."""
    index = {g: k for k, g in enumerate(dict.fromkeys(games + level_games))}
    cells = [{"game": g, "bot": b, "ratio": r, "stage": "ratios", "num_games": _NUM_GAMES.value}
             for g in games for b in bots for r in ratios]
    cells += [{"game": g, "bot": b, "ratio": 1.0, "stage": "level",
               "num_games": _LEVEL_NUM_GAMES.value}
              for g in level_games if g not in games for b in bots]
    for cell in cells:
        cell["game_index"] = index[cell["game"]]
        cell["treatment"] = timed_spec(cell["bot"], _TIME_LIMIT.value)
        cell["baseline"] = timed_spec(_BASELINE.value, cell["ratio"] * _TIME_LIMIT.value)
        cell["key"] = (f"g{cell['game_index']}_b{bots.index(cell['bot'])}_"
                       f"r{cell['ratio']:g}".replace(".", "p"))
    return cells


def cell_jobs(cells: list[dict]) -> dict[str, dict]:
    """The chunks of games of every cell (:func:`smmcts_spiel.tournament.tournament_jobs`),
    interleaved within each stage: chunk 1 of every cell, then chunk 2, ..., both seats of
    a chunk together (so a partial run has complete deals in every cell)."""
    per_cell = []
    for cell in cells:
        jobs = tournament.tournament_jobs(
            [cell["game"]], [cell["treatment"], cell["baseline"]], cell["num_games"],
            _CHUNK.value, _SEED.value, num_opponents=1, duplicate=_DUPLICATE.value)
        for job in jobs.values():  # this game's seeds, whatever the cell
            job["pair_index"] += cell["game_index"] * tournament.GAME_STRIDE
        seats = sorted(jobs.items(), key=lambda kv: (kv[1]["start"],
                                                     kv[1]["first"] != cell["treatment"]))
        per_cell.append((cell, seats))
    ordered: dict[str, dict] = {}
    for stage in ("ratios", "level"):
        stage_cells = [(c, j) for c, j in per_cell if c["stage"] == stage]
        rounds = max((len(j) for _, j in stage_cells), default=0)
        for k in range(0, rounds, 2):
            for cell, jobs in stage_cells:
                for key, job in jobs[k:k + 2]:
                    ordered[f"{cell['key']}_{key}"] = job
    return ordered


def verdict(interval: reports.Interval) -> str:
    """The registered rule: ahead if the 95% interval lies above 0, behind if below, level
    otherwise; an undefined interval is level only if every deal was level (no spread)."""
    if not interval.defined:
        return "level" if interval.estimate == 0 and interval.n >= 2 else "no interval"
    if interval.low > 0:
        return "ahead"
    if interval.high < 0:
        return "behind"
    return "level"


def cell_result(cell: dict, rows: list[dict], half_sum: float) -> dict | None:
    """The treatment's result in one cell from its games, or None before a whole deal."""
    mine = [r for r in rows if r["game"] == cell["game"] and r["bot"] == cell["bot"]
            and r["ratio"] == cell["ratio"]]
    if not mine:
        return None
    bots = [cell["treatment"], cell["baseline"]]
    pair = tournament.pairs_by_game(mine, [cell["game"]], bots, {cell["game"]: half_sum},
                                    duplicate=_DUPLICATE.value)[cell["game"]][0]
    deals = pair.deal_returns
    if len(deals) == 0:
        return None
    interval = pair.interval
    return {"game": cell["game"], "bot": cell["bot"], "ratio": cell["ratio"],
            "treatment_seconds": _TIME_LIMIT.value,
            "baseline_seconds": round(cell["ratio"] * _TIME_LIMIT.value, 9),
            "games": pair.games, "deals": len(deals), "mean": interval.estimate,
            "low": interval.low, "high": interval.high, "wins": pair.wins,
            "draws": pair.draws, "losses": pair.losses, "verdict": verdict(interval),
            "complete": len(deals) == (cell["num_games"] if _DUPLICATE.value
                                       else 2 * cell["num_games"]),
            "stage": cell["stage"]}


def strength_speedup(results: list[dict]) -> tuple[float, str]:
    """The ratio k at which the mean return of the treatment against the baseline at k T
    crosses 0 (linear in log k between the two ratios around the first crossing), with how
    it is bounded: ``"="`` interpolated, ``">"`` never crossed (at least the largest ratio),
    ``"<"`` below 0 already at the smallest ratio."""
    results = sorted(results, key=lambda r: r["ratio"])
    if results[0]["mean"] < 0:
        return results[0]["ratio"], "<"
    for a, b in zip(results, results[1:]):
        if a["mean"] >= 0 > b["mean"]:
            la, lb = math.log(a["ratio"]), math.log(b["ratio"])
            return math.exp(la + (lb - la) * a["mean"] / (a["mean"] - b["mean"])), "="
    return results[-1]["ratio"], ">"


def speedup_rows(results: list[dict]) -> list[dict]:
    """Per game and bot of the ``ratios`` stage: the strength-speedup and the largest ratio
    at which the treatment is not behind (None: behind at every ratio played)."""
    rows = []
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in results:
        if r["stage"] == "ratios":
            groups.setdefault((r["game"], r["bot"]), []).append(r)
    for (game, bot), group in groups.items():
        k, bound = strength_speedup(group)
        not_behind = [r["ratio"] for r in group
                      if r["complete"] and r["verdict"] in ("ahead", "level")]
        rows.append({"game": game, "bot": bot, "strength_speedup": f"{bound}{k:.2f}",
                     "largest_ratio_not_behind": max(not_behind, default=None),
                     "ratios_played": len(group)})
    return rows


def target_lines(results: list[dict], bots: list[str]) -> list[str]:
    """The registered targets, per treatment (README.md): ahead at ratio 1 on at least
    three games of --games and behind at ratio 1 on none; level or ahead at ratio 1.7 on at
    least two games of --games. Only complete cells count (a partial one has no verdict)."""
    lines = []
    partial = sum(not r["complete"] for r in results)
    if partial:
        lines.append(f"- {partial} cell(s) partial (fewer deals than registered): left out.")
    for bot in bots:
        mine = [r for r in results if r["bot"] == bot and r["complete"]]
        equal = [r for r in mine if r["ratio"] == 1.0]
        ahead = sorted(r["game"] for r in equal if r["stage"] == "ratios"
                       and r["verdict"] == "ahead")
        behind = sorted(r["game"] for r in equal if r["verdict"] == "behind")
        at_17 = [r for r in mine if r["ratio"] == 1.7 and r["stage"] == "ratios"]
        held = sorted(r["game"] for r in at_17 if r["verdict"] in ("ahead", "level"))
        lines += [f"- `{bot}`: at equal time ahead on {len(ahead)} game(s) of the ratio stage "
                  f"({', '.join(ahead) or 'none'}), behind on {len(behind)} of the "
                  f"{len(equal)} played ({', '.join(behind) or 'none'}): target "
                  f"{'met' if len(ahead) >= 3 and not behind else 'not met'}"
                  " (ahead on >= 3, behind on none).",
                  f"- `{bot}`: level or ahead against 1.7 T on {len(held)} of {len(at_17)} "
                  f"game(s) ({', '.join(held) or 'none'}): target "
                  f"{'met' if len(held) >= 2 else 'not met'} (>= 2)." if at_17 else
                  f"- `{bot}`: ratio 1.7 not played."]
    return lines


def write_csv(path: str, rows: list[dict], fields: list[str] | None = None) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields or list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_summary(path: str, results: list[dict], speedups: list[dict], bots: list[str],
                  params: dict) -> None:
    def shown(r):
        interval = (f"{r['mean']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}]"
                    if math.isfinite(r["low"]) else f"{r['mean']:+.3f} (no interval)")
        return [r["game"], r["bot"], f"{r['ratio']:g}", r["deals"], interval,
                f"{r['wins']} / {r['draws']} / {r['losses']}",
                r["verdict"] if r["complete"] else f"partial ({r['verdict']})"]
    lines = [f"Treatments at {params['time_limit']:g} s per move against `{params['baseline']}` "
             "at k times that. Mean return of the treatment over both seats (utility minus "
             "half the utility sum), 95% t interval over "
             + ("duplicate deals" if params["duplicate"] else "games")
             + "; verdict: ahead if the interval lies above 0, behind if below, level "
             "otherwise.", "", "## Cells", "",
             tables.markdown([shown(r) for r in results],
                             ["game", "treatment", "k", "deals", "mean [95%]",
                              "wins / draws / losses", "verdict"]), ""]
    if speedups:
        lines += ["## Strength-speedup", "",
                  "The ratio k at which the mean return crosses 0 (interpolated in log k; "
                  "`>`: not crossed by the largest k, `<`: below 0 at the smallest).", "",
                  tables.markdown([[s["game"], s["bot"], s["strength_speedup"],
                                    s["largest_ratio_not_behind"] or "-"] for s in speedups],
                                  ["game", "treatment", "strength-speedup",
                                   "largest k not behind"]), ""]
    lines += ["## Registered targets", "", *target_lines(results, bots)]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(path: str, results: list[dict], bots: list[str]) -> None:
    """One panel per game of the ratio stage (mean return against k, per treatment), and one
    for the level stage (mean return at k = 1 per game)."""
    ratio_games = list(dict.fromkeys(r["game"] for r in results if r["stage"] == "ratios"))
    level = [r for r in results if r["stage"] == "level"]
    panels = len(ratio_games) + bool(level)
    with plots.saved_figure(path, (3.2 * panels + 1, 3.6)) as fig:
        axes = np.atleast_1d(fig.subplots(1, panels, squeeze=False)[0])
        for ax, game in zip(axes, ratio_games):
            for bot in bots:
                mine = sorted((r for r in results if r["game"] == game and r["bot"] == bot
                               and r["stage"] == "ratios"), key=lambda r: r["ratio"])
                if not mine:
                    continue
                k = np.array([r["ratio"] for r in mine])
                mean = np.array([r["mean"] for r in mine])
                low = np.nan_to_num(mean - np.array([r["low"] for r in mine]))
                high = np.nan_to_num(np.array([r["high"] for r in mine]) - mean)
                ax.errorbar(k, mean, yerr=[low, high], marker="o", capsize=3, label=bot)
            ax.axhline(0, color="black", lw=0.5)
            ax.set_title(game if len(game) < 40 else game[:37] + "...", fontsize=8)
            ax.set_xlabel("k (baseline's time / treatment's)")
        axes[0].set_ylabel("treatment's mean return, 95% interval")
        if level:
            games = list(dict.fromkeys(r["game"] for r in level))
            plots.interval_bars(axes[-1], games, {
                bot: tuple(np.array([next((r[f] for r in level if r["game"] == g
                                           and r["bot"] == bot), np.nan) for g in games])
                           for f in ("mean", "low", "high")) for bot in bots})
            axes[-1].set_title("k = 1, the other games", fontsize=8)
        axes[0].legend(fontsize=6)


def run() -> None:
    results_dir = _RESULTS_DIR.value or (os.path.join(RESULTS, "strength_speedup")
                                         if _PUBLISH.value else "results/threads/strength_speedup")
    experiments.check_output([results_dir], publish=_PUBLISH.value)
    games, level_games = cli.split(_GAMES.value), cli.split(_LEVEL_GAMES.value)
    bots = cli.split(_BOTS.value)
    if not games and not level_games:
        raise ValueError("--games and --level_games are both empty: nothing to play")
    if not bots:
        raise ValueError("--bots is empty: name at least one treatment")
    ratios = parse_ratios(_RATIOS.value)
    loaded = {g: cli.load_game(g, "--games") for g in dict.fromkeys(games + level_games)}
    for game in loaded.values():
        match.check_match_game(game)
    cells = plan_cells(games, level_games, bots, ratios)
    specs = list(dict.fromkeys(s for c in cells for s in (c["treatment"], c["baseline"])))
    match.warn_about_bots(specs, loaded.values())
    for game in loaded.values():  # refused settings (threads, engine) before any game
        for spec in specs:
            bot_specs.make_bot(spec, game, 0, 0)
    params = {"games": games, "level_games": level_games, "bots": bots,
              "baseline": _BASELINE.value, "time_limit": _TIME_LIMIT.value, "ratios": ratios,
              "num_games": _NUM_GAMES.value, "level_num_games": _LEVEL_NUM_GAMES.value,
              "chunk": _CHUNK.value, "seed": _SEED.value, "duplicate": _DUPLICATE.value}
    experiments.check_params(results_dir, params)
    jobs = cell_jobs(cells)
    games_dir = os.path.join(results_dir, "games")
    if _NO_PLAY.value:
        jobs = {k: j for k, j in jobs.items() if experiments.finished_jobs(games_dir, [k])}
        if not jobs:
            raise ValueError(f"no finished games in {games_dir} yet")
    start = time.perf_counter()
    finished = experiments.run_jobs(match.play_games, jobs, results_dir=games_dir,
                                    workers=_WORKERS.value, desc="chunks of games")
    cell_of = {c["key"]: c for c in cells}
    rows = []
    for key, job in jobs.items():
        cell = cell_of[key.split("_game")[0]]
        for g, (ret, sec) in enumerate(zip(finished[key]["returns"], finished[key]["seconds"]),
                                       job["start"]):
            rows.append({"game": job["game"], "bot": cell["bot"], "ratio": cell["ratio"],
                         "first": job["first"], "second": job["second"], "game_index": g,
                         "seed": match.game_seed(job["base_seed"], job["pair_index"], g),
                         "return_first": float(ret[0]), "return_second": float(ret[1]),
                         "seconds": round(float(sec), 3)})
    write_csv(os.path.join(results_dir, "games.csv"), rows, GAMES_CSV_FIELDS)
    half_sums = {g: game.utility_sum() / 2 for g, game in loaded.items()}
    results = [r for c in cells if (r := cell_result(c, rows, half_sums[c["game"]]))]
    if not results:
        raise ValueError("no cell has a whole deal yet")
    write_csv(os.path.join(results_dir, "cells.csv"), results)
    speedups = speedup_rows(results)
    if speedups:
        write_csv(os.path.join(results_dir, "speedup.csv"), speedups)
    write_summary(os.path.join(results_dir, "summary.md"), results, speedups, bots, params)
    plot(os.path.join(results_dir, "strength_speedup.png"), results, bots)
    experiments.write_params(os.path.join(results_dir, "strength_speedup.json"), params,
                             wall_seconds=round(time.perf_counter() - start, 1))
    print(open(os.path.join(results_dir, "summary.md")).read())


main = cli.main_of(run)

if __name__ == "__main__":
    cli.run(main)
