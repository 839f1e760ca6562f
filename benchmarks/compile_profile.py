"""Where a first move's compile time goes: numba's compile events, function by function.

Builds one bot (``--bot`` on ``--game``, 1,000 iterations) and makes its first move in this
process, listening to numba's ``numba:compile`` events, and prints the functions that took
longest to compile (their own time, and with the functions compiled inside them), then the
pipeline passes of the kernel engine's loop where the bot has one. Run it with an empty
cache folder to see a cold start (``NUMBA_CACHE_DIR=$(mktemp -d)``); with a warm one it
lists what is still compiled in every process (nothing, ideally).

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_profile.py --game=blotto
"""

from __future__ import annotations

import collections
import time

import pyspiel
from absl import flags
from numba.core import event

from smmcts_spiel.experiments import cli
from smmcts_spiel.imperfect.information_sets import first_decision_state

_BOT = flags.DEFINE_enum("bot", "SMMCTSBot", ["SMMCTSBot", "OOSBot", "ISSMMCTSBot"],
                         "The bot to build.")
_GAME = flags.DEFINE_string("game", "markov_soccer", "The game it moves in.")
_TOP = flags.DEFINE_integer("top", 15, "Functions listed.", lower_bound=1)


class CompileTimes(event.Listener):
    """CPU seconds compiling each function: its own, and with the compiles nested in it."""

    def __init__(self) -> None:
        self.stack: list[list] = []
        self.own: collections.Counter = collections.Counter()
        self.total: collections.Counter = collections.Counter()

    def on_start(self, event_: event.Event) -> None:
        function = getattr(event_.data.get("dispatcher"), "py_func", None)
        name = f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"
        self.stack.append([name, time.process_time(), 0.0])

    def on_end(self, event_: event.Event) -> None:
        name, start, nested = self.stack.pop()
        seconds = time.process_time() - start
        self.total[name] += seconds
        self.own[name] += seconds - nested
        if self.stack:
            self.stack[-1][2] += seconds


def profile() -> None:
    from smmcts_spiel import bots

    listener = CompileTimes()
    event.register("numba:compile", listener)
    game = pyspiel.load_game(_GAME.value)
    start = time.process_time()
    bot = getattr(bots, _BOT.value)(game, 0, iterations=1000, seed=0)
    bot.step(first_decision_state(game))
    print(f"{_BOT.value} on {_GAME.value}: first move after {time.process_time() - start:.1f} s "
          f"CPU, {sum(listener.own.values()):.1f} s of it compiling")
    for name, seconds in listener.own.most_common(_TOP.value):
        print(f"{seconds:8.2f} s own {listener.total[name]:8.2f} s with nested  {name}")
    run = getattr(getattr(getattr(bot, "_search", None), "_compiled", None), "run", None)
    for result in getattr(run, "overloads", {}).values():  # empty when loaded from the cache
        for pipeline, passes in result.metadata.get("pipeline_times", {}).items():
            slowest = sorted(((t.init + t.run + t.finalize, name) for name, t in passes.items()),
                             reverse=True)[:8]
            print(f"kernel engine loop, {pipeline} pipeline:",
                  ", ".join(f"{name} {seconds:.1f} s" for seconds, name in slowest))


if __name__ == "__main__":
    cli.run(cli.main_of(profile))
