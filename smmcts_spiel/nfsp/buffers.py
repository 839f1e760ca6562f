"""The two memories of (MC-)NFSP: a reservoir for the average policy, a ring for the best response.

The reservoir keeps a uniform sample of every best-response action ever taken (Vitter's
algorithm R), so supervised learning on it approximates the average of past best
responses: the fictitious-play average. The best response learns from recent play only.

An item is a tuple of fields (arrays or scalars of fixed shape); the memories store each
field in one numpy array (grown by doubling up to the capacity), so that adding a batch
and sampling one are array operations, not a stack of small arrays per item. Both draw
from the numpy generator they are given, so a seeded run is reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from smmcts_spiel import checks


def check_memory(items: Mapping[str, tuple], capacities: Mapping[str, int], batch: int,
                 run: str) -> None:
    """Refuse, before anything is allocated, memories that would not fit in half the
    machine's memory once full: ``capacities[name]`` items of the fields ``items[name]``
    (``(shape, dtype)`` each), plus ``batch`` items sampled at once from the largest."""
    sizes = {name: sum(math.prod(shape) * np.dtype(dtype).itemsize for shape, dtype in fields)
             for name, fields in items.items()}
    total = sum(capacities[name] * size for name, size in sizes.items())
    total += batch * max(sizes.values())
    shown = ", ".join(f"{name}_capacity={capacities[name]}" for name in items)
    checks.check_size(total, checks.PHYSICAL_MEMORY // 2,
                      f"{run}'s memories ({shown}, batches of {batch} items)",
                      "lower batch_size or the capacities (half the machine's memory is the "
                      "limit)", unit="bytes")


class ReplayBuffer:
    """The last ``capacity`` items (first in, first out)."""

    def __init__(self, capacity: int, rng: np.random.Generator):
        if capacity < 1:
            raise ValueError(f"buffer capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.rng = rng
        self.size = 0
        self.added = 0
        self._fields: list[np.ndarray] | None = None

    def __len__(self) -> int:
        return self.size

    def contents(self) -> tuple[np.ndarray, ...]:
        """The stored items, one array per field (in storage order, not arrival order)."""
        if self._fields is None:
            return ()
        return tuple(f[:self.size] for f in self._fields)

    def add(self, item) -> None:
        """Add one item (a tuple of fields)."""
        self.add_batch(tuple(np.asarray(field)[None] for field in item))

    def add_batch(self, fields) -> None:
        """Add ``n`` items given as one array per field, each of leading dimension ``n``."""
        fields = tuple(np.asarray(f) for f in fields)
        n = len(fields[0])
        if any(len(f) != n for f in fields):
            raise ValueError(f"fields of different lengths: {[len(f) for f in fields]}")
        if n:
            self._store(fields, n)

    def _store(self, fields, n: int) -> None:
        if n > self.capacity:  # only the last ``capacity`` items stay
            self.added += n - self.capacity
            fields = tuple(f[-self.capacity:] for f in fields)
            n = self.capacity
        slots = (self.added + np.arange(n)) % self.capacity
        for store, f in zip(self._reserve(fields, min(self.capacity, self.size + n)), fields):
            store[slots] = f
        self.size = min(self.capacity, self.size + n)
        self.added += n

    def _reserve(self, fields, size: int) -> list[np.ndarray]:
        """Storage for at least ``size`` items (doubling, at most ``capacity``): the arrays."""
        if self._fields is None:
            self._fields = [np.empty((0,) + f.shape[1:], f.dtype) for f in fields]
        have = len(self._fields[0])
        if size > have:
            grown = min(self.capacity, max(size, 2 * have, 1024))
            for k, store in enumerate(self._fields):
                bigger = np.empty((grown,) + store.shape[1:], store.dtype)
                bigger[:have] = store
                self._fields[k] = bigger
        return self._fields

    def sample(self, batch_size: int) -> tuple[np.ndarray, ...]:
        """``batch_size`` items drawn uniformly with replacement, one array per field."""
        if not self.size:
            raise ValueError("cannot sample from an empty buffer")
        picks = self.rng.integers(self.size, size=batch_size)
        assert self._fields is not None  # a non-empty buffer has storage
        return tuple(f[picks] for f in self._fields)

    def restore(self, fields: tuple[np.ndarray, ...], size: int, added: int) -> None:
        """Put back what :meth:`contents`, ``size`` and ``added`` held (a checkpoint)."""
        self._fields = [np.array(f) for f in fields] if fields else None
        self.size, self.added = size, added


class ReservoirBuffer(ReplayBuffer):
    """A uniform sample of size ``capacity`` of every item ever added (reservoir sampling)."""

    def _store(self, fields, n: int) -> None:
        free = min(n, self.capacity - self.size)
        if free:  # the first items fill the free slots
            for store, f in zip(self._reserve(fields, self.size + free), fields):
                store[self.size:self.size + free] = f[:free]
            self.size += free
            self.added += free
        if free < n:  # the (added + 1)-th item takes a random slot w.p. capacity / (added + 1)
            rest = n - free
            slots = self.rng.integers(0, self.added + 1 + np.arange(rest))
            stores = self._reserve(fields, self.size)
            for i in np.flatnonzero(slots < self.capacity):  # in order: a later item wins
                for store, f in zip(stores, fields):
                    store[slots[i]] = f[free + i]
            self.added += rest
