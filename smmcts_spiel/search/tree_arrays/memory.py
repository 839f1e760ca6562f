"""Where the tree's arrays get their memory: private anonymous pages supplied when first
written (:func:`lazy_zeros`), the memory of dropped arrays kept for the next of their size
(:class:`_ReleasedMemory`), and scratch arrays on cache lines of their own
(:func:`padded_zeros`)."""

from __future__ import annotations

import ctypes
import mmap
import os
import threading
import weakref

import numpy as np

#: ``mmap`` flags of :func:`lazy_zeros`: private anonymous memory where the system has it.
#: (``mmap.mmap(-1, n)`` alone maps *shared* anonymous memory, which a forked process would
#: write into, and whose first-touch page faults go through the shared-memory file system:
#: slower than private ones, about 5% of a fresh 20,000-iteration Oshi-Zumo search.)
_PRIVATE = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)


def lazy_zeros(shape, dtype=np.float64) -> np.ndarray:
    """An array of zeros in private anonymous memory, whose pages the operating system
    supplies (zeroed) when first written: allocating a big capacity costs no time. A forked
    process gets its own copy of the pages it writes (copy on write).

    Memory of the same size that a dropped array released is reused (see
    :class:`_ReleasedMemory`): its written pages cleared, so that a new search does not
    pay a first-touch page fault for each page its predecessor already had.

    ``np.zeros`` may instead reuse freed heap memory, which it must clear: on the shared
    machine that took 60-70 ms for the 25 MB of node arrays a 0.1 s move plans for.
    """
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    if size == 0:
        return np.zeros(shape, dtype)
    memory = _RELEASED.take(size)
    if memory is None:
        memory = mmap.mmap(-1, size, flags=_PRIVATE) if _PRIVATE else mmap.mmap(-1, size)
    array = np.frombuffer(memory, dtype)
    _RELEASED.watch(array, memory)
    return array.reshape(shape)


def _load_mincore():
    """libc's ``mincore`` (which pages of a mapping are in memory), or None."""
    if not _PRIVATE or not hasattr(mmap.mmap, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return None
    try:
        mincore = ctypes.CDLL(None, use_errno=True).mincore
    except (OSError, AttributeError):
        return None
    mincore.restype = ctypes.c_int
    mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    return mincore


class _ReleasedMemory:
    """The memory of dropped tree arrays, kept (at most :attr:`limit` bytes of pages in
    memory) for the next array of the same size, as the C heap keeps freed memory for the
    next allocation.

    A fresh search writes megabytes of new arrays (20,000 iterations of the default
    Oshi-Zumo: 14 MB, 3,500 pages), and each page first written costs a page fault
    (about a fifth of such a search on the shared machine); OpenSpiel's C++ MCTSBot
    gets its nodes from the heap, which reuses the memory of the bot before.

    An array's memory comes back when the array and every view of it are gone (a weak
    reference to the array that owns the buffer); it is cleared only when taken: pages in
    memory are set to zero (a fraction of the cost of faulting them in anew), the others
    (never written, or swapped out) are dropped (``madvise(MADV_DONTNEED)``: read as zeros
    again). Where the system cannot tell which pages are in memory (``mincore``), nothing
    is kept.
    """

    def __init__(self, limit: int):
        self.limit = limit
        self._mincore = _load_mincore()
        # Arrays are dropped on any thread, and in a garbage collection that may run inside
        # this class's own locked steps (hence re-entrant).
        self._lock = threading.RLock()
        self._kept: dict[int, list[tuple[mmap.mmap, int]]] = {}  # size: (memory, in memory)
        self._bytes = 0  # of the kept memory's pages in memory

    def watch(self, array: np.ndarray, memory: mmap.mmap) -> None:
        """Take ``memory`` back when ``array`` (which owns it) is gone."""
        if self._mincore is not None and self.limit > 0:
            weakref.finalize(array, self._give_back, memory).atexit = False

    def _give_back(self, memory: mmap.mmap) -> None:
        resident = self._resident(memory)
        if resident is None:
            return
        used = int(resident.sum()) * mmap.PAGESIZE
        with self._lock:
            if self._bytes + used > self.limit:
                return  # unmapped when the last reference goes
            self._kept.setdefault(len(memory), []).append((memory, used))
            self._bytes += used

    def take(self, size: int) -> mmap.mmap | None:
        """Kept memory of ``size`` bytes, cleared, or None."""
        with self._lock:
            kept = self._kept.get(size)
            if not kept:
                return None
            memory, used = kept.pop()
            self._bytes -= used
        return memory if self._clear(memory) else None

    def _resident(self, memory: mmap.mmap) -> np.ndarray | None:
        """Per page of ``memory``: 1 if it is in memory (``mincore``), else 0; or None."""
        assert self._mincore is not None
        pages = (len(memory) + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        resident = np.zeros(pages, np.uint8)
        view = np.frombuffer(memory, np.uint8)
        if self._mincore(view.__array_interface__["data"][0], len(memory),
                         resident.ctypes.data) != 0:
            return None
        return resident & 1

    def _clear(self, memory: mmap.mmap) -> bool:
        """Zero ``memory``: its pages in memory by writing, the others by dropping them."""
        resident = self._resident(memory)
        if resident is None:
            return False
        view = np.frombuffer(memory, np.uint8)
        flags = np.concatenate(([2], resident, [2]))
        starts = np.flatnonzero(flags[1:] != flags[:-1])  # where each run of pages begins
        for first, end in zip(starts[:-1].tolist(), starts[1:].tolist()):
            begin, stop = first * mmap.PAGESIZE, min(end * mmap.PAGESIZE, len(memory))
            if resident[first]:
                view[begin:stop] = 0
            else:
                memory.madvise(mmap.MADV_DONTNEED, begin, stop - begin)
        return True


#: Bytes of released tree memory a process keeps for new arrays (:class:`_ReleasedMemory`).
KEEP_RELEASED_BYTES = 256 << 20
_RELEASED = _ReleasedMemory(KEEP_RELEASED_BYTES)
if hasattr(os, "register_at_fork"):  # a lock held by another thread stays held in a fork
    os.register_at_fork(after_in_child=lambda: setattr(_RELEASED, "_lock", threading.RLock()))


_CACHE_LINE = 64  # bytes


def padded_zeros(shape, dtype=np.float64) -> np.ndarray:
    """Zeros (C-contiguous) on cache lines of their own: a thread's scratch array that
    shared a cache line with another thread's, at either end, would pass that line between
    the cores on every write (tree parallelism)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    pad = _CACHE_LINE // dtype.itemsize
    buffer = np.zeros(size + 3 * pad, dtype)
    start = pad + (-buffer.ctypes.data // dtype.itemsize) % pad  # aligned, a line before
    return buffer[start:start + size].reshape(shape)

