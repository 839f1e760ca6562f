"""Observation tensors split into named views, the layout OpenSpiel's Python observers use."""

from __future__ import annotations

import numpy as np


def tensor_with_views(pieces: list[tuple[str, tuple[int, ...]]]) -> tuple[np.ndarray, dict]:
    """One flat float32 tensor and, per ``(name, shape)`` piece in order, a view of it."""
    tensor = np.zeros(sum(int(np.prod(shape)) for _, shape in pieces), np.float32)
    views = {}
    index = 0
    for name, shape in pieces:
        size = int(np.prod(shape))
        views[name] = tensor[index:index + size].reshape(shape)
        index += size
    return tensor, views
