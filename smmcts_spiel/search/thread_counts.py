"""How many threads a search runs: the check of a ``threads`` setting, and what
``threads="auto"`` picks for a game.

``auto`` is the setting that pays in play, read from the registered strength runs at equal
time per move (experiments/threads/README.md): one tree grown by every usable core up to
:data:`AUTO_MAX_THREADS` (tree parallelism) where the game has a kernel, except the games of
:data:`ONE_THREAD_GAMES`; one thread where the search holds Python's interpreter lock (the
generic and reference engines), and with one usable core.
"""

from __future__ import annotations

import os

import numpy as np
import pyspiel

from smmcts_spiel import checks

AUTO = "auto"
#: The most threads ``auto`` uses: the largest count measured to make the bot stronger at
#: equal time (two cores: the machines the registered runs had).
AUTO_MAX_THREADS = 2
#: Games (short names) where ``auto`` keeps one thread: a shared tree measured behind one
#: thread at equal time there (none so far).
ONE_THREAD_GAMES: frozenset[str] = frozenset()


def usable_cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity``)."""
    return len(os.sched_getaffinity(0))


def check_threads(threads) -> int:
    """A number of threads this process can run at once, 1 .. the cores it may use (numpy
    integers accepted; bools, floats and strings refused); ValueError naming the accepted
    values."""
    count = _checked(threads, allow_auto=False)
    assert isinstance(count, int)
    return count


def check_setting(threads) -> int | str:
    """A ``threads`` setting: a number of threads as :func:`check_threads` accepts, or
    ``"auto"``."""
    return _checked(threads, allow_auto=True)


def _checked(threads, allow_auto: bool) -> int | str:
    if allow_auto and isinstance(threads, str) and threads == AUTO:
        return AUTO
    if (isinstance(threads, bool) or not isinstance(threads, (int, np.integer))
            or threads < 1):
        accepted = "an integer >= 1" + (' or "auto"' if allow_auto else "")
        raise ValueError(f"threads must be {accepted} (the number of threads searching at "
                         f"once), got {checks.shown(threads)!r}")
    threads = int(threads)
    cores = usable_cores()
    if threads > cores:
        raise ValueError(f"threads={threads} is more than the {cores} core(s) this process "
                         f"may run on (os.sched_getaffinity); use threads <= {cores}"
                         + (' or "auto"' if allow_auto else "")
                         + ": more threads than cores only take turns")
    return threads


def auto_threads(game: pyspiel.Game, compiled: bool) -> int:
    """The threads ``auto`` gives a search of ``game``: ``compiled``, whether it runs the
    kernel engine (whose iterations release the interpreter lock)."""
    if not compiled or game.get_type().short_name in ONE_THREAD_GAMES:
        return 1
    return min(usable_cores(), AUTO_MAX_THREADS)
