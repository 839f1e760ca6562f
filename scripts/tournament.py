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
resumes, a run with other flags is refused). Writes into ``--results_dir``
(into docs/ or data/, where the committed tournaments live, only with ``--publish``):

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
from absl import app, flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import bot_specs, experiments, match, tournament
from smmcts_spiel.experiments import cli

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
_WORKERS = flags.DEFINE_integer("num_workers", 1, "Worker processes (keep 1 on a busy machine: "
                                "time budgets need a free core).", lower_bound=1)
_BACKEND = flags.DEFINE_enum("backend", "process", experiments.BACKENDS, "Job backend.")
_RAY_ADDRESS = flags.DEFINE_string("ray_address", None, "Ray cluster (backend=ray).")
_RESULTS_DIR = flags.DEFINE_string("results_dir", "results/tournament", "Output directory.")
_PUBLISH = cli.define_publish("into a --results_dir of the committed tournaments "
                              "(docs/figures/tournament/...)")
_NO_PLAY = flags.DEFINE_bool("no_play", False, "Play nothing: write the tables from the "
                             "chunks of games finished so far (e.g. while a run goes on).")
_BOOTSTRAP = flags.DEFINE_integer("bootstrap", 200, "Bootstrap samples of the rating intervals.",
                                  lower_bound=1)
flags.register_validator("time_limit", cli.positive_finite,
                         "--time_limit must be a positive, finite number of seconds")


def main(argv):
    try:
        run()
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None


def run() -> None:
    games = cli.split(_GAMES.value)
    opponents = cli.split(_OPPONENTS.value)
    results_dir = _RESULTS_DIR.value
    experiments.check_output([results_dir], publish=_PUBLISH.value)
    if not games:
        raise ValueError("--games is empty")
    bots = [bot_specs.with_time_limit(s, _TIME_LIMIT.value)
            for s in cli.split(_BOTS.value) + opponents]
    loaded = {name: cli.load_game(name, "--games") for name in games}
    for game in loaded.values():
        match.check_match_game(game)
    match.warn_about_bots(bots, loaded.values(), _TIME_LIMIT.value)
    jobs = tournament.tournament_jobs(games, bots, _NUM_GAMES.value, _CHUNK.value, _SEED.value,
                                      num_opponents=len(opponents))
    params = {"games": games, "bots": bots, "opponents": len(opponents),
              "time_limit": _TIME_LIMIT.value, "num_games": _NUM_GAMES.value,
              "chunk": _CHUNK.value, "seed": _SEED.value}
    experiments.check_params(results_dir, params)
    if _NO_PLAY.value:
        games_dir = os.path.join(results_dir, "games")
        jobs = {k: j for k, j in jobs.items()
                if experiments.finished_jobs(games_dir, [k])}
        if not jobs:
            raise ValueError(f"no finished games in {games_dir} yet")
    start = time.perf_counter()
    results = experiments.run_jobs(
        match.play_games, jobs, results_dir=os.path.join(results_dir, "games"),
        workers=_WORKERS.value, backend=_BACKEND.value, ray_address=_RAY_ADDRESS.value,
        desc="chunks of games")
    games = [g for g in games if any(j["game"] == g for j in jobs.values())]
    write_outputs(results_dir, games, loaded, bots, jobs, results)
    experiments.write_params(os.path.join(results_dir, "tournament.json"), params,
                             wall_seconds=round(time.perf_counter() - start, 1))
    print(open(os.path.join(results_dir, "tournament.md")).read())


def write_outputs(results_dir, games, loaded, bots, jobs, results) -> None:
    index = {b: k for k, b in enumerate(bots)}
    per_game = {g: {} for g in games}
    with open(os.path.join(results_dir, "games.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["game", "first", "second", "game_index", "seed", "return_first",
                         "return_second", "seconds"])
        for key, job in jobs.items():
            r = results[key]
            pair = (index[job["first"]], index[job["second"]])
            store = per_game[job["game"]]
            store[pair] = np.concatenate([store.get(pair, np.zeros((0, 2))), r["returns"]])
            for g, (ret, sec) in enumerate(zip(r["returns"], r["seconds"]), job["start"]):
                writer.writerow([job["game"], job["first"], job["second"], g,
                                 match.game_seed(job["base_seed"], job["pair_index"], g),
                                 *ret, round(float(sec), 3)])
    pairs = {g: tournament.pair_results(g, bots, per_game[g], loaded[g].utility_sum() / 2)
             for g in games}
    with open(os.path.join(results_dir, "pairs.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["game", "bot_a", "bot_b", "games", "mean_a", "ci95", "wins_a",
                         "draws", "losses_a", "score_a"])
        for g in games:
            for r in pairs[g]:
                signs = np.sign(r.returns)
                writer.writerow([g, r.bot_a, r.bot_b, r.games, f"{r.mean:.4f}", f"{r.ci95:.4f}",
                                 int((signs > 0).sum()), int((signs == 0).sum()),
                                 int((signs < 0).sum()), f"{r.score:.4f}"])
    ratings = {}
    for label, rs in [(g, pairs[g]) for g in games] + [("all games", sum(pairs.values(), []))]:
        ratings[label] = tournament.elo_with_intervals(
            len(bots), *tournament.elo_games(rs, bots), bootstrap=_BOOTSTRAP.value,
            seed=_SEED.value)
    with open(os.path.join(results_dir, "ratings.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["games", "bot", "elo", "elo_low", "elo_high"])
        for label, (r, lo, hi) in ratings.items():
            for k, bot in enumerate(bots):
                writer.writerow([label, bot, f"{r[k]:.1f}", f"{lo[k]:.1f}", f"{hi[k]:.1f}"])
    write_markdown(os.path.join(results_dir, "tournament.md"), games, bots, pairs, ratings)
    plot_ratings(os.path.join(results_dir, "ratings.png"), bots, ratings)


def write_markdown(path, games, bots, pairs, ratings) -> None:
    lines = [f"Round robin at {_TIME_LIMIT.value:g} s per move, {_NUM_GAMES.value} games per "
             "ordered pair (both seats). Cell: mean return of the row bot against the column "
             "bot (utility minus half the utility sum), +- the 95% interval half-width.", ""]
    for g in games:
        table = {(r.bot_a, r.bot_b): (r.mean, r.ci95) for r in pairs[g]}
        table.update({(b, a): (-m, c) for (a, b), (m, c) in list(table.items())})
        table.update({(a, b): None for a in bots for b in bots if (a, b) not in table})
        lines += [f"### {g}", "", "| bot | " + " | ".join(bots) + " | Elo [95%] |",
                  "|---|" + "---|" * (len(bots) + 1)]
        r, lo, hi = ratings[g]
        for k, a in enumerate(bots):
            cells = ["" if table[(a, b)] is None else
                     f"{table[(a, b)][0]:+.3f} +- {table[(a, b)][1]:.3f}" for b in bots]
            lines.append(f"| {a} | " + " | ".join(cells) +
                         f" | {r[k]:+.0f} [{lo[k]:+.0f}, {hi[k]:+.0f}] |")
        lines.append("")
    r, lo, hi = ratings["all games"]
    lines += ["### Elo over all games", "", "| bot | Elo | 95% interval |", "|---|---|---|"]
    lines += [f"| {b} | {r[k]:+.0f} | [{lo[k]:+.0f}, {hi[k]:+.0f}] |"
              for k, b in sorted(enumerate(bots), key=lambda kb: -r[kb[0]])]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot_ratings(path, bots, ratings) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(ratings)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(labels) * len(bots) / 3), 4.5))
    width = 0.8 / len(bots)
    x = np.arange(len(labels))
    for k, bot in enumerate(bots):
        r = np.array([ratings[g][0][k] for g in labels])
        lo = np.array([ratings[g][1][k] for g in labels])
        hi = np.array([ratings[g][2][k] for g in labels])
        ax.bar(x + (k - (len(bots) - 1) / 2) * width, r, width, label=bot,
               yerr=[np.maximum(r - lo, 0), np.maximum(hi - r, 0)], capsize=3)
    ax.set_xticks(x, [g if len(g) < 40 else g[:37] + "..." for g in labels], rotation=15,
                  ha="right", fontsize=7)
    ax.axhline(0, color="black", lw=0.5)
    ax.set_ylabel("Elo (Bradley-Terry, mean 0), 95% bootstrap interval")
    ax.set_title(f"Round robin at {_TIME_LIMIT.value:g} s per move")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    cli.run(main)
