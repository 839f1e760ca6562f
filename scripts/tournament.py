"""Round robin at a fixed time per move: every pair of bots, both seats, on every game.

  python scripts/tournament.py --results_dir=results/my_tournament \
      --games="goofspiel(num_cards=6,imp_info=False,points_order=random,returns_type=win_loss)" \
      --bots="smmcts;mcts(engine=cpp);equilibrium" --time_limit=0.1 --num_games=100

Bots are spec strings (docs/bots_and_matches.md), separated by ';' like the games; every
searching bot (smmcts, mcts, oos, is_smmcts, ismcts) whose spec names no budget gets
``time_limit=--time_limit``; one that names its own budget keeps it (a warning says so), and
one that cannot search by time (mmcts) must name its budget. Each ordered pair plays
``--num_games`` games (so each pair meets twice as often, both seats equally), in chunks of
``--chunk`` games that are resumable jobs (``results_dir/games/``; an interrupted run
resumes, a run with other flags is refused). ``--duplicate`` plays duplicate deals (the two
games of a pair with the same index share their chance outcomes, seats swapped; intervals over
deals), which removes most of the luck of the cards in poker. Writes into ``--results_dir``
(into experiments/, benchmarks/ or docs/, where the committed results live, only with
``--publish``):

  games.csv      one row per game: game, first and second bot, game index, seed, returns,
                 seconds;
  pairs.csv      per game and pair: mean return of A (both seats) with its 95% interval,
                 wins / draws / losses, score;
  ratings.csv    per game and over all games: Bradley-Terry (Elo-scale) ratings with 95%
                 bootstrap intervals (smmcts_spiel.tournament);
  tournament.md  the tables; ratings.png  the ratings with their intervals.
"""

from __future__ import annotations

import csv
import os
import time

import numpy as np
from absl import flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import bot_specs, experiments, match, reports, tournament
from smmcts_spiel.experiments import cli
from smmcts_spiel.reports import plots, tables

GAMES_CSV_FIELDS = ["game", "first", "second", "game_index", "seed", "return_first",
                    "return_second", "seconds"]

_GAMES = flags.DEFINE_string(
    "games", "goofspiel(num_cards=6,imp_info=False,points_order=random,returns_type=win_loss)",
    "Semicolon-separated game strings (two-player zero-sum or constant-sum).")
_BOTS = flags.DEFINE_string("bots", "smmcts;mcts(engine=cpp);random",
                            "Semicolon-separated bot specs.")
_OPPONENTS = flags.DEFINE_string(
    "opponents", None, "Semicolon-separated bot specs; if given, a gauntlet: every bot of "
    "--bots plays each opponent (both seats), not the other bots.")
_TIME_LIMIT = flags.DEFINE_float("time_limit", 0.1, "Seconds per move of every searching bot "
                                 "whose spec names no budget of its own.")
_NUM_GAMES = flags.DEFINE_integer("num_games", 100, "Games per ordered pair and game.",
                                  lower_bound=1)
_CHUNK = flags.DEFINE_integer("chunk", 10, "Games per job.", lower_bound=1)
_SEED = cli.define_seed("Base seed of every game.")
_DUPLICATE = flags.DEFINE_bool(
    "duplicate", False, "Duplicate deals (as in duplicate poker): game g of (B, A) replays "
    "the chance outcomes of game g of (A, B) with the seats swapped; pair intervals are "
    "over deals (A's mean return of the two games).")
_WORKERS = flags.DEFINE_integer("num_workers", 1, "Worker processes (keep 1 on a busy machine: "
                                "time budgets need a free core).", lower_bound=1)
_BACKEND = flags.DEFINE_enum("backend", "process", experiments.BACKENDS, "Job backend.")
_RAY_ADDRESS = flags.DEFINE_string("ray_address", None, "Ray cluster (backend=ray).")
_RESULTS_DIR = flags.DEFINE_string("results_dir", "results/tournament", "Output directory.")
_PUBLISH = cli.define_publish("into a --results_dir of the committed tournaments "
                              "(experiments/tournaments/results/...)")
_NO_PLAY = flags.DEFINE_bool("no_play", False, "Play nothing: write the tables from the "
                             "chunks of games finished so far (e.g. while a run goes on).")
_FROM_GAMES_CSV = flags.DEFINE_bool(
    "from_games_csv", False, "Play nothing: rebuild the tables and ratings of the tournament "
    "in --results_dir from its games.csv and tournament.json (e.g. a committed one, with "
    "--publish).")
_BOOTSTRAP = flags.DEFINE_integer("bootstrap", 200, "Bootstrap samples of the rating intervals.",
                                  lower_bound=1)
flags.register_validator("time_limit", cli.positive_finite,
                         "--time_limit must be a positive, finite number of seconds")


def run() -> None:
    results_dir = _RESULTS_DIR.value
    experiments.check_output([results_dir], publish=_PUBLISH.value)
    if _FROM_GAMES_CSV.value:
        rebuild_tables(results_dir)
        return
    games = cli.split(_GAMES.value)
    opponents = cli.split(_OPPONENTS.value)
    if not games:
        raise ValueError("--games is empty")
    bots = [bot_specs.with_time_limit(s, _TIME_LIMIT.value)
            for s in cli.split(_BOTS.value) + opponents]
    loaded = {name: cli.load_game(name, "--games") for name in games}
    for game in loaded.values():
        match.check_match_game(game)
    match.warn_about_bots(bots, loaded.values(), _TIME_LIMIT.value)
    jobs = tournament.tournament_jobs(games, bots, _NUM_GAMES.value, _CHUNK.value, _SEED.value,
                                      num_opponents=len(opponents),
                                      duplicate=_DUPLICATE.value)
    params = {"games": games, "bots": bots, "opponents": len(opponents),
              "time_limit": _TIME_LIMIT.value, "num_games": _NUM_GAMES.value,
              "chunk": _CHUNK.value, "seed": _SEED.value}
    if _DUPLICATE.value:  # only when set, so that earlier runs' records still match
        params["duplicate"] = True
    experiments.check_params(results_dir, params)
    if _NO_PLAY.value:
        games_dir = os.path.join(results_dir, "games")
        jobs = {k: j for k, j in jobs.items()
                if experiments.finished_jobs(games_dir, [k])}
        if not jobs:
            raise ValueError(f"no finished games in {games_dir} yet")
    else:  # compiled here, once, the workers load numba's cache: the bar's clock is fair
        for game in loaded.values():
            match.load_compiled_code(game, bots)
    start = time.perf_counter()
    results = experiments.run_jobs(
        match.play_games, jobs, results_dir=os.path.join(results_dir, "games"),
        workers=_WORKERS.value, backend=_BACKEND.value, ray_address=_RAY_ADDRESS.value,
        desc="chunks of games")
    rows = [{"game": job["game"], "first": job["first"], "second": job["second"],
             "game_index": g, "seed": match.game_seed(job["base_seed"], job["pair_index"], g),
             "return_first": float(ret[0]), "return_second": float(ret[1]),
             "seconds": round(float(sec), 3)}
            for key, job in jobs.items()
            for g, (ret, sec) in enumerate(zip(results[key]["returns"],
                                               results[key]["seconds"]), job["start"])]
    write_games_csv(os.path.join(results_dir, "games.csv"), rows)
    params["bootstrap"] = _BOOTSTRAP.value
    write_tables(results_dir, params, rows)
    experiments.write_params(os.path.join(results_dir, "tournament.json"), params,
                             wall_seconds=round(time.perf_counter() - start, 1))
    print(open(os.path.join(results_dir, "tournament.md")).read())


def rebuild_tables(results_dir: str) -> None:
    """The tables and ratings of a finished tournament, from its games.csv and the
    parameters in its tournament.json (e.g. a committed one, after a change of the
    statistics)."""
    record = os.path.join(results_dir, "tournament.json")
    params = experiments.outputs.read_json_object(record) if os.path.exists(record) else {}
    missing = [k for k in ("games", "bots", "time_limit", "num_games", "seed") if k not in params]
    if missing:
        raise ValueError(f"{record} (the parameters of the tournament) is missing or lacks "
                         f"{', '.join(missing)}")
    params.setdefault("bootstrap", 200)  # the default before it was recorded
    rows = tournament.read_games_csv(os.path.join(results_dir, "games.csv"))
    names = {r["first"] for r in rows} | {r["second"] for r in rows}
    if names - set(params["bots"]) or {r["game"] for r in rows} - set(params["games"]):
        raise ValueError(f"{results_dir}/games.csv holds games or bots that "
                         f"{record} does not list")
    write_tables(results_dir, params, rows)
    print(open(os.path.join(results_dir, "tournament.md")).read())


def write_games_csv(path: str, rows: list[dict]) -> None:
    with experiments.replaced_file(path, newline="") as f:
        writer = csv.DictWriter(f, fieldnames=GAMES_CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def write_tables(results_dir: str, params: dict, rows: list[dict]) -> None:
    """pairs.csv, ratings.csv, tournament.md and ratings.png from the games ``rows``."""
    games = [g for g in params["games"] if any(r["game"] == g for r in rows)]
    half_sums = {g: cli.load_game(g, "--games").utility_sum() / 2 for g in games}
    pairs = tournament.pairs_by_game(rows, games, params["bots"], half_sums,
                                     duplicate=params.get("duplicate", False))
    ratings = tournament.ratings_by_game(pairs, params["bots"], params["bootstrap"],
                                         params["seed"])
    tournament.write_pairs_csv(os.path.join(results_dir, "pairs.csv"), pairs)
    tournament.write_ratings_csv(os.path.join(results_dir, "ratings.csv"), params["bots"],
                                 ratings)
    write_markdown(os.path.join(results_dir, "tournament.md"), params, games, pairs, ratings)
    plot_ratings(os.path.join(results_dir, "ratings.png"), params, ratings)


def _elo(r: float, lo: float, hi: float) -> str:
    return f"{r:+.0f} [{lo:+.0f}, {hi:+.0f}]"


def write_markdown(path, params, games, pairs, ratings) -> None:
    bots = params["bots"]
    lines = [f"Round robin at {params['time_limit']:g} s per move, {params['num_games']} games "
             "per ordered pair (both seats). Cell: mean return of the row bot against the "
             "column bot (utility minus half the utility sum), +- the half-width of its 95% "
             "t interval" + (" over duplicate deals (each deal played twice, seats swapped, "
                             "same chance outcomes)" if params.get("duplicate") else "") +
             ". Elo: Bradley-Terry ratings with 95% bootstrap intervals.", ""]
    for g in games:
        cells = {}
        for r in pairs[g]:
            cells[(r.bot_a, r.bot_b)] = r.interval.format()
            cells[(r.bot_b, r.bot_a)] = reports.Interval(
                -r.interval.estimate, -r.interval.high, -r.interval.low, r.interval.n,
                r.interval.why_undefined).format()
        r, lo, hi = ratings[g]
        rows = [[a, *(cells.get((a, b), "") for b in bots), _elo(r[k], lo[k], hi[k])]
                for k, a in enumerate(bots)]
        lines += [f"### {g}", "", tables.markdown(rows, ["bot", *bots, "Elo [95%]"]), ""]
    r, lo, hi = ratings["all games"]
    order = sorted(range(len(bots)), key=lambda k: -r[k])
    lines += ["### Elo over all games", "",
              tables.markdown([[bots[k], f"{r[k]:+.0f}", f"[{lo[k]:+.0f}, {hi[k]:+.0f}]"]
                               for k in order], ["bot", "Elo", "95% interval"])]
    with experiments.replaced_file(path) as f:
        f.write("\n".join(lines) + "\n")


def plot_ratings(path, params, ratings) -> None:
    bots = params["bots"]
    labels = list(ratings)
    with plots.saved_figure(path, (max(6, 1.6 * len(labels) * len(bots) / 3), 4.5),
                            dpi=120) as fig:
        ax = fig.subplots()
        plots.interval_bars(ax, labels, {bot: tuple(np.array([ratings[g][i][k] for g in labels])
                                                    for i in range(3))
                                         for k, bot in enumerate(bots)})
        ax.set_ylabel("Elo (Bradley-Terry, mean 0), 95% bootstrap interval")
        ax.set_title(f"Round robin at {params['time_limit']:g} s per move")


main = cli.main_of(run)

if __name__ == "__main__":
    cli.run(main)
