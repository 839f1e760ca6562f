"""Pit bots against each other on any OpenSpiel game and print a results table.

Examples:
  python scripts/match.py --game="goofspiel(num_cards=5,imp_info=False)" \
      --bot_a="smmcts(selector=exp3,gamma=0.1,iterations=2000)" --bot_b="mcts(iterations=2000)"
  python scripts/match.py --round_robin="smmcts(selector=rm);smmcts(selector=ucb);random"
  python scripts/match.py --game=phantom_ttt --bot_a=belief_sampler \
      --bot_b="ismcts(simulations=100)"

Bot specs: see smmcts_spiel/bot_specs.py and docs/bots_and_matches.md.
"""

import pyspiel
from absl import app, flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import match
from smmcts_spiel.experiments import cli

_GAME = flags.DEFINE_string("game", "goofspiel(num_cards=5,imp_info=False)",
                            "Any pyspiel.load_game string (two-player zero-sum or constant-sum).")
_BOT_A = flags.DEFINE_string("bot_a", "smmcts(selector=rm,iterations=1000)",
                             "Spec of the first bot (see smmcts_spiel.bot_specs).")
_BOT_B = flags.DEFINE_string("bot_b", "random", "Spec of the second bot.")
_ROUND_ROBIN = flags.DEFINE_string(
    "round_robin", None,
    "Semicolon-separated bot specs; if given, every pair plays (bot_a/bot_b are ignored).")
_NUM_GAMES = flags.DEFINE_integer("num_games", 100, "Games per pair (seats alternate).")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the bots and the chance events.")


def main(argv):
    try:
        game = pyspiel.load_game(_GAME.value)
    except (pyspiel.SpielError, ValueError) as e:  # Python-defined games raise ValueError
        raise app.UsageError(f"cannot load game {_GAME.value!r}: {e}", exitcode=2) from None
    try:
        if _ROUND_ROBIN.value:
            specs = [s.strip() for s in _ROUND_ROBIN.value.split(";") if s.strip()]
            if len(specs) < 2:
                raise ValueError("--round_robin needs at least two bot specs")
            results = match.round_robin(game, specs, _NUM_GAMES.value, seed=_SEED.value)
        else:
            results = [match.play_match(game, _BOT_A.value, _BOT_B.value, _NUM_GAMES.value,
                                        seed=_SEED.value)]
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None
    print(f"game: {_GAME.value}   games per pair: {_NUM_GAMES.value}   seed: {_SEED.value}")
    print(match.format_table(results))


if __name__ == "__main__":
    cli.run(main)
