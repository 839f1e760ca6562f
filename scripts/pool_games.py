"""Pool the games of several tournament runs: one table per game and pair, 95% intervals.

  python scripts/pool_games.py \
      --games_csv="experiments/tournaments/results/against_mcts/c_g6/games.csv;experiments/tournaments/results/against_mcts/c_g6_more/games.csv"

Reads the ``games.csv`` files that ``scripts/tournament.py`` writes (runs with different
seeds, e.g. a pre-registered run and its pre-registered extension) and prints, per game and
unordered pair of bots, the mean return of A over both seats with its 95% t interval and
wins / draws / losses, as ``tournament.md`` does for one run. Only identical game and bot
strings are pooled.
"""

from __future__ import annotations

from absl import app, flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import tournament
from smmcts_spiel.experiments import cli
from smmcts_spiel.reports import tables

_GAMES_CSV = flags.DEFINE_string("games_csv", None, "Semicolon-separated games.csv files.")


def main(argv):
    paths = cli.split(_GAMES_CSV.value)
    if not paths:
        raise app.UsageError("give --games_csv=<games.csv>[;<games.csv>...]")
    rows, halves = [], {}
    try:
        for path in paths:
            rows += tournament.read_games_csv(path)
            for game in dict.fromkeys(r["game"] for r in rows):
                if game not in halves:
                    halves[game] = cli.load_game(game, f"{path}, column game").utility_sum() / 2
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    bots = list(dict.fromkeys(b for r in rows for b in (r["first"], r["second"])))
    pairs = tournament.pairs_by_game(rows, list(halves), bots, halves)
    for game, results in pairs.items():
        print(f"### {game}\n")
        print(tables.markdown(
            [[r.bot_a, r.bot_b, r.games, r.interval.format(style="[]"),
              f"{r.wins} / {r.draws} / {r.losses}"] for r in results],
            ["bot A", "bot B", "games", "mean return of A [95%]", "A wins / draws / losses"],
            align=["left", "left", "right", "right", "right"]))
        print()


if __name__ == "__main__":
    cli.run(main)
