"""The process-wide garbage-collector freeze after a compiled engine loads its code."""

from __future__ import annotations

import gc


def freeze_loaded_objects() -> None:
    """Collect the garbage, then exclude every object alive from later collections
    (:func:`gc.freeze`); called when a compiled engine has loaded its code.

    Loading numba's code leaves some 60,000 objects the collector tracks (126,000 in a
    process with pyspiel, OpenSpiel's games and both engines loaded): each full collection
    then walks them all, 30-130 ms on the shared machine, which inside a timed move is the
    overshoot. Frozen objects are still freed when their last reference goes; only a frozen
    object that later ends in a reference cycle is never reclaimed (the searches avoid
    cycles: see :attr:`ArrayTreeSearch.root`).

    Only when at least :data:`FREEZE_ABOVE` objects the collector tracks are not frozen yet
    (code was loaded since the last freeze): building a bot whose code is loaded already
    adds a few hundred objects, whose collection at every bot's construction only cost time
    (0.1-2 ms once the rest is frozen).
    """
    if sum(len(gc.get_objects(generation)) for generation in range(3)) < FREEZE_ABOVE:
        return
    gc.collect()
    gc.freeze()


#: Tracked objects not frozen yet from which :func:`freeze_loaded_objects` collects and
#: freezes (a full collection of this many takes about 1-5 ms on the shared machine).
FREEZE_ABOVE = 5_000
