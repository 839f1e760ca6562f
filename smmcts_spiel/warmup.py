"""Compile the bots' numba code ahead of time, so that a later first move does not wait.

    python -m smmcts_spiel.warmup                 every built-in kernel and engine
    python -m smmcts_spiel.warmup markov_soccer "goofspiel(imp_info=False)" leduc_poker

numba compiles a search the first time a process builds a bot for a game of a kernel it has
not compiled before (seconds to tens of seconds, once per kernel, not per parameter set) and
caches it on disk; this builds each bot that plays the games named and runs one short
search, with a progress bar, so that a cluster image, a CI job or a tournament's workers pay
that once up front. A simultaneous-move game warms SMMCTSBot (the kernel engine where a
kernel covers the game, else the generic engine); an imperfect-information game the compiled
information-set searches cover warms OOS and IS-SM-MCTS too.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Sequence

import pyspiel
from absl import app, flags

#: One game per built-in kernel, the generic engine's (tic-tac-toe) and the
#: information-set searches' (Leduc poker): what ``warmup`` with no game compiles.
DEFAULT_GAMES = (
    "goofspiel(imp_info=False)", "oshi_zumo", "smmcts_random_stacked_matrix", "blotto",
    "matrix_rps", "markov_soccer", "capture_the_flag", "laser_tag(zero_sum=true)",
    "smmcts_pursuit_evasion", "smmcts_tron", "tic_tac_toe", "leduc_poker",
)


def bots_for(game: pyspiel.Game) -> list[tuple[str, Callable[[], object]]]:
    """The compiled bots that play ``game``, each as (name, a function that builds it):
    SMMCTSBot on a game with perfect information between its stages, OOS and IS-SM-MCTS on
    an imperfect-information game that a compiled information-set kernel covers."""
    from smmcts_spiel import bots
    from smmcts_spiel.games.kernels import information
    from smmcts_spiel.search.smmcts import check_game

    try:
        check_game(game)
    except ValueError:
        if information.information_kernel_for(game) is None:
            return []
        found = [("OOSBot", bots.OOSBot), ("ISSMMCTSBot", bots.ISSMMCTSBot)]
    else:
        found = [("SMMCTSBot", bots.SMMCTSBot)]
    return [(name, functools.partial(bot, game, 0, iterations=10, seed=0))
            for name, bot in found]


def warm_up(games: Sequence[str] = DEFAULT_GAMES, progress: bool = True) -> dict[str, float]:
    """Build every compiled bot of ``games`` (game strings) and search once with each: the
    seconds each took, by ``"<bot> on <game>"``. Raises ValueError naming a game that does
    not load or that no compiled bot plays."""
    from tqdm.auto import tqdm  # imported when used: importing the package must not import it

    from smmcts_spiel.imperfect.information_sets import first_decision_state

    work = []
    for name in games:
        try:
            game = pyspiel.load_game(name)
        except pyspiel.SpielError as error:
            raise ValueError(f"cannot load game {name!r}: {error}") from None
        playing = bots_for(game)
        if not playing:
            raise ValueError(f"no compiled bot of ours plays {name!r}: SMMCTSBot needs a "
                             "two-player zero-sum game with perfect information between "
                             "stages, OOS and IS-SM-MCTS a game with an information-set "
                             "kernel (goofspiel, kuhn_poker, leduc_poker, phantom_ttt)")
        work += [(f"{bot} on {name}", build, game) for bot, build in playing]
    seconds = {}
    with tqdm(work, desc="compiling", unit="bot", disable=not progress,
              file=sys.stderr) as bar:
        for label, build, game in bar:
            bar.set_postfix_str(label)
            start = time.perf_counter()
            build().step(first_decision_state(game))
            seconds[label] = time.perf_counter() - start
    return seconds


def main(argv: list[str]) -> None:
    try:
        seconds = warm_up(argv[1:] or DEFAULT_GAMES, progress=not _QUIET.value)
    except ValueError as error:
        raise app.UsageError(str(error)) from None
    for label, taken in seconds.items():
        print(f"{taken:7.1f} s  {label}")


_QUIET = flags.DEFINE_bool("quiet", False, "No progress bar.")

if __name__ == "__main__":
    app.run(main)
