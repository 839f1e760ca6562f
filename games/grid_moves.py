"""Moves on a four-connected grid, shared by the grid games of the AIJ 2016 study.

Cells are numbered row by row (``cell = row * cols + col``, row 0 at the top); a move is
one of the four directions, numbered as in GTLibrary's Tron: north (up), east, south,
west. ``smmcts_pursuit_evasion`` and ``smmcts_tron`` use these numbers as their actions.
"""

from __future__ import annotations

import functools

DIRECTION_NAMES = ("N", "E", "S", "W")
ROW_STEPS = (-1, 0, 1, 0)
COL_STEPS = (0, 1, 0, -1)
NUM_DIRECTIONS = 4


def neighbour(cell: int, direction: int, rows: int, cols: int) -> int:
    """The cell one step from ``cell`` in ``direction``, or -1 off the grid."""
    r, c = divmod(cell, cols)
    r, c = r + ROW_STEPS[direction], c + COL_STEPS[direction]
    if 0 <= r < rows and 0 <= c < cols:
        return r * cols + c
    return -1


@functools.cache
def neighbour_table(rows: int, cols: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Each cell's on-grid neighbours as ``(direction, cell)`` pairs in direction order:
    :func:`neighbour` computed once per grid for the games' inner loops."""
    return tuple(tuple((d, target) for d in range(NUM_DIRECTIONS)
                       if (target := neighbour(cell, d, rows, cols)) >= 0)
                 for cell in range(rows * cols))


def cell_name(cell: int, cols: int) -> str:
    """E.g. ``"(1,2)"``: row 1, column 2."""
    r, c = divmod(cell, cols)
    return f"({r},{c})"


def check_range(game: str, name: str, value: int, low: int, high: int) -> None:
    """Refuse a grid parameter outside ``low..high`` with a message naming the range."""
    if not low <= value <= high:
        raise ValueError(f"{game}: {name} must be an integer from {low} to {high}, "
                         f"got {value}")
