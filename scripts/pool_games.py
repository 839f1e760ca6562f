"""Pool the games of several tournament runs: one table per game and pair, 95% intervals.

  python scripts/pool_games.py \
      --games_csv="docs/figures/tournament/c_g6/games.csv;docs/figures/tournament/c_g6_more/games.csv"

Reads the ``games.csv`` files that ``scripts/tournament.py`` writes (runs with different
seeds, e.g. a pre-registered run and its pre-registered extension) and prints, per game and
unordered pair of bots, the mean return of A over both seats with its 95% interval and
wins / draws / losses, as ``tournament.md`` does for one run. Only identical game and bot
strings are pooled.
"""

from __future__ import annotations

import numpy as np
from absl import app, flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import tournament
from smmcts_spiel.experiments import cli

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
    for game, half in halves.items():
        game_rows = [r for r in rows if r["game"] == game]
        bots = list(dict.fromkeys(b for r in game_rows for b in (r["first"], r["second"])))
        per_pair: dict[tuple[int, int], list] = {}
        for r in game_rows:
            pair = (bots.index(r["first"]), bots.index(r["second"]))
            per_pair.setdefault(pair, []).append([r["return_first"], r["return_second"]])
        results = tournament.pair_results(game, bots, {k: np.array(v) for k, v in
                                                       per_pair.items()}, half)
        print(f"### {game}\n")
        print("| bot A | bot B | games | mean return of A [95%] | A wins / draws / losses |")
        print("| --- | --- | ---: | ---: | ---: |")
        for r in results:
            print(f"| {r.bot_a} | {r.bot_b} | {r.games} | {r.mean:+.3f} "
                  f"[{r.mean - r.ci95:+.3f}, {r.mean + r.ci95:+.3f}] | "
                  f"{r.wins} / {r.draws} / {r.losses} |")
        print()


if __name__ == "__main__":
    cli.run(main)
