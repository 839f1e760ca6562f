"""Pit bots against each other on any OpenSpiel game and print a results table.

Examples:
  python scripts/match.py --game="goofspiel(num_cards=5,imp_info=False)" \
      --bot_a="smmcts(selector=exp3,gamma=0.1)" --bot_b=mcts --time_limit=0.05
  python scripts/match.py --round_robin="smmcts(selector=rm);smmcts(selector=ucb);random"
  python scripts/match.py --game=phantom_ttt --bot_a=belief_sampler \
      --bot_b="ismcts(iterations=100)"

Bot specs: see smmcts_spiel/bot_specs.py and docs/bots_and_matches.md. With --time_limit,
every searching bot whose spec names no budget searches that many seconds per move.
"""

from absl import app, flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import bot_specs, match
from smmcts_spiel.experiments import cli

_GAME = flags.DEFINE_string("game", "goofspiel(num_cards=5,imp_info=False)",
                            "Any pyspiel.load_game string (two-player zero-sum or constant-sum).")
_BOT_A = flags.DEFINE_string("bot_a", "smmcts(selector=rm,iterations=1000)",
                             "Spec of the first bot (see smmcts_spiel.bot_specs).")
_BOT_B = flags.DEFINE_string("bot_b", "random", "Spec of the second bot.")
_ROUND_ROBIN = flags.DEFINE_string(
    "round_robin", None,
    "Semicolon-separated bot specs; if given, every pair plays (bot_a/bot_b are ignored).")
_NUM_GAMES = flags.DEFINE_integer("num_games", 100, "Games per pair (seats alternate).",
                                  lower_bound=1)
_TIME_LIMIT = flags.DEFINE_float("time_limit", None, "Seconds per move of every searching bot "
                                 "whose spec names no budget (default: the specs' budgets).")
_SEED = cli.define_seed("Seed of the bots and the chance events.")
flags.register_validator("time_limit", cli.positive_finite,
                         "--time_limit must be a positive, finite number of seconds")


def main(argv):
    try:
        game = cli.load_game(_GAME.value)
        match.check_match_game(game)
        specs = (cli.split(_ROUND_ROBIN.value) if _ROUND_ROBIN.value
                 else [_BOT_A.value, _BOT_B.value])
        if len(specs) < 2:
            raise ValueError("--round_robin needs at least two bot specs")
        specs = [bot_specs.with_time_limit(s, _TIME_LIMIT.value) for s in specs]
        match.warn_about_bots(specs, [game], _TIME_LIMIT.value)
        if _ROUND_ROBIN.value:
            results = match.round_robin(game, specs, _NUM_GAMES.value, seed=_SEED.value)
        else:
            results = [match.play_match(game, *specs, _NUM_GAMES.value, seed=_SEED.value)]
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    print(f"game: {_GAME.value}   games per pair: {_NUM_GAMES.value}   seed: {_SEED.value}")
    print(match.format_table(results))


if __name__ == "__main__":
    cli.run(main)
