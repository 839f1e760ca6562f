"""One line on stderr when numba compiles our code, so a first search that takes minutes to
compile does not look like a hang.

numba compiles a function on its first call with new argument types, unless its cache
(``cache=True``) holds it, which it then loads in a fraction of the time. A compile (never a
cache load) fires numba's ``numba:compile`` event: the listener here logs, once per module
and process, the first compile of a function of this package or of a kernel module
registered with :func:`watch`. The logger is ``smmcts_spiel.compiling``, writing to stderr;
``logging.getLogger("smmcts_spiel.compiling").setLevel(logging.WARNING)`` silences it.

A cache numba cannot use (a corrupt or truncated file, a full disk) costs a compile in
memory, not the search: one warning line per process, instead of numba's traceback; a
``NUMBA_CACHE_DIR`` that cannot be written, which numba passes over in silence, one line too.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import threading
from typing import Any

import numba
from numba.core import caching, event

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
                    "(seconds to a minute)", module)

    def on_end(self, event_: event.Event) -> None:
        self.depth -= 1


def _module_of(dispatcher) -> str | None:
    function = getattr(dispatcher, "py_func", None)
    return getattr(function, "__module__", None)


@contextlib.contextmanager
def _tolerant_cache_io(cache: caching.Cache):
    """numba's guard around reading and writing one function's cache (on Windows it
    tolerates sharing errors): any failure to use the cache is reported once and swallowed,
    which makes numba compile the function, or keep it compiled, in memory."""
    try:
        yield
    except Exception as error:  # noqa: BLE001  (whatever the file held: compile instead)
        with _lock:
            if _cache_warned:
                return
            _cache_warned.append(cache.cache_path)
        logger.warning("numba's cache in %s cannot be used (%s: %s): compiling in memory "
                       "instead; delete that folder, or set NUMBA_CACHE_DIR to a writable "
                       "one", cache.cache_path, type(error).__name__, " ".join(str(error).split()))


_cache_warned: list[str] = []


def install() -> None:
    """Start announcing compiles and tolerating unusable cache files (idempotent; the
    compiled packages call it on import)."""
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
        cache_class: Any = caching.Cache  # replacing one of its methods, its guard
        cache_class._guard_against_spurious_io_errors = _tolerant_cache_io
        _check_cache_dir()
        _installed = True


def _check_cache_dir() -> None:
    """``NUMBA_CACHE_DIR`` names a folder that cannot be written: numba silently caches
    elsewhere (or nowhere), so say so once."""
    folder = getattr(numba.config, "CACHE_DIR", "")  # set from NUMBA_CACHE_DIR
    if not folder:
        return
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        logger.warning("NUMBA_CACHE_DIR=%s cannot be written (%s): numba caches next to the "
                       "sources or in its per-user folder instead, or compiles in every "
                       "process; point it at a writable folder", folder,
                       " ".join(str(error).split()))


def watch(module: str) -> None:
    """Announce the compiles of ``module`` (a user's kernel module) as well."""
    _watched.add(module)
