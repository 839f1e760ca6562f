"""One line on stderr when numba compiles our code, so a first search that takes minutes to
compile does not look like a hang.

numba compiles a function on its first call with new argument types, unless its cache
(``cache=True``) holds it, which it then loads in a fraction of the time. A compile (never a
cache load) fires numba's ``numba:compile`` event: the listener here logs, once per module
and process, the first compile of a function of this package or of a kernel module
registered with :func:`watch`. The logger is ``smmcts_spiel.compiling``, writing to stderr;
``logging.getLogger("smmcts_spiel.compiling").setLevel(logging.WARNING)`` silences it.
"""

from __future__ import annotations

import logging
import sys
import threading

from numba.core import event

logger = logging.getLogger("smmcts_spiel.compiling")
_PACKAGE = __name__.partition(".")[0]
_lock = threading.Lock()
_watched: set[str] = set()
_announced: set[str] = set()
_installed = False


class _CompileListener(event.Listener):
    """Logs the outermost compile of a module's function, the first time only."""

    def __init__(self) -> None:
        self.depth = 0  # numba compiles under one global lock: nested compiles, one thread

    def on_start(self, event_: event.Event) -> None:
        self.depth += 1
        if self.depth > 1:
            return
        module = _module_of(event_.data.get("dispatcher"))
        if module is None or module in _announced:
            return
        if module.partition(".")[0] != _PACKAGE and module not in _watched:
            return
        _announced.add(module)
        logger.info("numba is compiling %s, once: later processes load it from numba's cache "
                    "(this can take a few minutes)", module)

    def on_end(self, event_: event.Event) -> None:
        self.depth -= 1


def _module_of(dispatcher) -> str | None:
    function = getattr(dispatcher, "py_func", None)
    return getattr(function, "__module__", None)


def install() -> None:
    """Start announcing compiles (idempotent; the compiled packages call it on import)."""
    global _installed
    with _lock:
        if _installed:
            return
        if not logger.handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("smmcts_spiel: %(message)s"))
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
            logger.propagate = False
        event.register("numba:compile", _CompileListener())
        _installed = True


def watch(module: str) -> None:
    """Announce the compiles of ``module`` (a user's kernel module) as well."""
    _watched.add(module)
