"""The two memories of (MC-)NFSP: a reservoir for the average policy, a ring for the best response.

The reservoir keeps a uniform sample of every best-response action ever taken (Vitter's
algorithm R), so supervised learning on it approximates the average of past best
responses: the fictitious-play average. The best response learns from recent play only.
Items are tuples of arrays; ``sample`` stacks them field by field. Both draw from the
numpy generator they are given, so a seeded run is reproducible.
"""

from __future__ import annotations

import numpy as np


class ReplayBuffer:
    """The last ``capacity`` items (first in, first out)."""

    def __init__(self, capacity: int, rng: np.random.Generator):
        if capacity < 1:
            raise ValueError(f"buffer capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.rng = rng
        self.items: list = []
        self.added = 0

    def __len__(self) -> int:
        return len(self.items)

    def add(self, item) -> None:
        if len(self.items) < self.capacity:
            self.items.append(item)
        else:
            self.items[self.added % self.capacity] = item
        self.added += 1

    def sample(self, batch_size: int) -> tuple[np.ndarray, ...]:
        """``batch_size`` items drawn uniformly with replacement, stacked per field."""
        if not self.items:
            raise ValueError("cannot sample from an empty buffer")
        picks = self.rng.integers(len(self.items), size=batch_size)
        return tuple(np.stack(field) for field in zip(*(self.items[i] for i in picks)))


class ReservoirBuffer(ReplayBuffer):
    """A uniform sample of size ``capacity`` of every item ever added (reservoir sampling)."""

    def add(self, item) -> None:
        if len(self.items) < self.capacity:
            self.items.append(item)
        else:
            slot = self.rng.integers(self.added + 1)
            if slot < self.capacity:
                self.items[slot] = item
        self.added += 1
