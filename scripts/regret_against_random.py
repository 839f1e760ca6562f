"""Where bots lose against a random player: regret by move against the best response.

For every bot of --bots, plays --num_games games against a uniformly random opponent
(seats alternating, a fresh bot every game) and splits the gap between the best response
to random (OpenSpiel's best_response, exact) and the bot's expected return by the bot's
move number (smmcts_spiel.experiments.regret_against_random). Give bots iteration
budgets (e.g. oos(iterations=10000)): nothing is timed, so it can run niced.

  python scripts/regret_against_random.py \\
      --game="goofspiel(num_cards=6,imp_info=True,points_order=descending)" \\
      --bots="oos(iterations=10000);ismcts(iterations=900)" --num_games=60

Prints one row per bot (best-response value, regret per move, their sum, the implied
expected return and the realised mean return with its 95% interval) and writes
<out>.csv and <out>.json, by default under results/regret_against_random/; the committed results
(experiments/, benchmarks/, docs/) only with --publish.
"""

from __future__ import annotations

import csv
import os
import time

from absl import flags

from smmcts_spiel import experiments
from smmcts_spiel.bot_specs import parse_bot_spec
from smmcts_spiel.experiments import cli
from smmcts_spiel.experiments.regret_against_random import (
    RandomOpponentResponse,
    regret_against_random,
)
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.reports import intervals

_GAME = flags.DEFINE_string("game", "goofspiel(num_cards=6,imp_info=True,points_order=descending)",
                            "A two-player zero-sum game small enough for an exact best "
                            "response.")
_BOTS = flags.DEFINE_string("bots", "oos(iterations=10000);ismcts(iterations=900)",
                            "Semicolon-separated bot specs.")
_NUM_GAMES = flags.DEFINE_integer("num_games", 60, "Games per bot (seats alternating).",
                                  lower_bound=1)
_SEED = cli.define_seed()
_OUT = flags.DEFINE_string("out", None, "Output prefix (default: "
                           "results/regret_against_random/<game>).")
_PUBLISH = cli.define_publish()


def main(argv):
    game = cli.load_game(_GAME.value, "--game")
    bots = cli.split(_BOTS.value)
    try:
        if not bots:
            raise ValueError("--bots: give at least one bot spec")
        for spec in bots:
            parse_bot_spec(spec)
        search_game = information_sets.check_sequential_search_game(game,
                                                                    "regret_against_random")
        out = _OUT.value or os.path.join("results", "regret_against_random",
                                         "".join(c if c.isalnum() else "_" for c in
                                                 _GAME.value))
        experiments.check_output([out], publish=_PUBLISH.value)
    except ValueError as e:
        cli.usage_error(str(e))
    start = time.time()
    responses = [RandomOpponentResponse(search_game, p) for p in (0, 1)]
    print(f"best response to random: {responses[0].value:+.4f} as player 0, "
          f"{responses[1].value:+.4f} as player 1 ({time.time() - start:.0f} s)", flush=True)
    rows, summary = [], {}
    for spec in bots:
        result = regret_against_random(game, spec, _NUM_GAMES.value, _SEED.value, responses)
        realised = intervals.mean_interval(result["returns"])
        summary[spec] = {k: result[k] for k in ("value", "regret", "total_regret",
                                                "implied_return")}
        summary[spec].update(mean_return=realised.estimate, low=realised.low,
                             high=realised.high)
        rows.extend({"bot": spec, "move": m, "regret": r} for m, r in
                    enumerate(result["regret"]))
        print(f"{spec}: best response {result['value']:+.3f}, regret by move "
              f"{' '.join(f'{r:.3f}' for r in result['regret'])}, sum "
              f"{result['total_regret']:.3f}, implied return {result['implied_return']:+.3f}; "
              f"realised {realised}", flush=True)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["bot", "move", "regret"])
        writer.writeheader()
        writer.writerows(rows)
    experiments.write_params(out + ".json", {
        "game": _GAME.value, "bots": bots, "num_games": _NUM_GAMES.value, "seed": _SEED.value,
        "summary": summary}, wall_seconds=round(time.time() - start, 1))
    print(f"wrote {out}.csv/.json")


if __name__ == "__main__":
    cli.run(main)
