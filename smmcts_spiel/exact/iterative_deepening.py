"""Iterative deepening under a time limit: depth-limited searches one depth deeper each.

The online DOAB of Bošanský et al., AIJ 2016, Section 5.1, and GTLibrary's
``SimAlphaBetaAlgorithm``: search to depth 1, 2, ... and play the result of the deepest
search that finished. The rules, each a small function so that a test can drive them with
a fake clock:

* a depth starts only if it is predicted to finish in the time left: the next depth is
  predicted to take the last one's time times the growth of the last two (at least 1;
  the last one's time alone after a single depth, GTLibrary's rule);
* a depth that runs past the deadline is stopped there (the search checks the clock at
  every move) and its result dropped, so the overshoot is one move's work;
* the first depth runs to its end when no earlier result exists (a move must be chosen);
* deepening stops when a search never reached its depth limit (the subgame is solved) or
  at ``max_depth``;
* a deeper result that shows the searcher's game lost does not replace a shallower one
  (against a perfect opponent every move loses, so the shallower search's choice, which
  still hopes for a mistake, is kept), as in GTLibrary.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from smmcts_spiel.exact.depth_limit import SearchTimeout

R = TypeVar("R")


@dataclass
class Deepening(Generic[R]):
    """The outcome of :func:`deepen`."""

    result: R  #: the deepest kept result (``fallback`` if no search finished)
    depth: float  #: its depth
    seconds: list[tuple[float, float]] = field(default_factory=list)  #: (depth, seconds)
    #: of every search that finished, in order
    stopped: str = ""  #: why deepening stopped: "complete", "max_depth", "time", "timeout"


def predicted_seconds(seconds: Sequence[float]) -> float:
    """How long the next depth is expected to take, from the times of the depths so far."""
    if not seconds:
        return 0.0
    last = seconds[-1]
    if len(seconds) < 2 or seconds[-2] <= 0:
        return last
    return last * max(1.0, last / seconds[-2])


def deepen(search: Callable[[float, float | None], R], *, start_depth: float = 1,
           max_depth: float = math.inf, time_limit: float | None = None,
           fallback: tuple[R, float] | None = None,
           complete: Callable[[R], bool] = lambda r: False,
           lost: Callable[[R], bool] = lambda r: False,
           clock: Callable[[], float] = time.perf_counter) -> Deepening[R]:
    """Run ``search(depth, deadline)`` for depths ``start_depth``, ``start_depth + 1``, ...

    Args:
      search: a depth-limited search; raises :class:`SearchTimeout` after ``deadline`` (a
        time of ``clock``; None: no deadline).
      max_depth: the deepest search (``math.inf``: until ``complete`` or the time is up).
      time_limit: seconds for the whole deepening (None: no limit).
      fallback: ``(result, depth)`` already known (e.g. the previous move's search), kept
        until a search finishes.
      complete: whether a result is the exact solution (no deeper search can change it).
      lost: whether a result shows the searcher's game lost.
    """
    start = clock()
    deadline = None if time_limit is None else start + time_limit
    best = fallback
    out: Deepening = Deepening(None, 0)
    depth = start_depth
    while True:
        if deadline is not None and best is not None:
            times = [t for _, t in out.seconds]
            if times and predicted_seconds(times) > deadline - clock():
                out.stopped = "time"
                break
        began = clock()
        try:
            result = search(depth, deadline if best is not None else None)
        except SearchTimeout:
            out.stopped = "timeout"
            break
        out.seconds.append((depth, clock() - began))
        if best is None or not lost(result):
            best = (result, depth)
        if complete(result):
            out.stopped = "complete"
            break
        if depth >= max_depth:
            out.stopped = "max_depth"
            break
        depth += 1
    assert best is not None
    out.result, out.depth = best
    return out
