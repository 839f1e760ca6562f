"""OpenSpiel's grid strings (markov_soccer, capture_the_flag, laser_tag), read as its C++ does.

A grid is rows of characters separated by newlines. The width is the longest row (a shorter
row's missing cells are empty), the height the number of rows that hold a character (a
trailing newline adds none). Each kernel says which characters mean what.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from smmcts_spiel.games.kernels.base import Uncovered


@dataclass
class Grid:
    rows: int = 0
    cols: int = 0
    cells: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # char -> cells

    def of(self, char: str) -> list[tuple[int, int]]:
        """The cells holding ``char``, row by row."""
        return self.cells.get(char, [])

    def one(self, char: str) -> tuple[int, int]:
        """The single cell holding ``char`` (raises :class:`Uncovered` otherwise)."""
        cells = self.of(char)
        if len(cells) != 1:
            raise Uncovered(f"a grid with {len(cells)} '{char}' cells (one expected)")
        return cells[0]


def parse(text: str, allowed: str) -> Grid:
    """The grid of ``text``; characters outside ``allowed`` raise :class:`Uncovered`."""
    grid = Grid()
    row = col = 0
    for char in text:
        if char == "\n":
            row += 1
            col = 0
            continue
        if char not in allowed:
            raise Uncovered(f"grid character {char!r} at ({row}, {col})")
        grid.rows = max(grid.rows, row + 1)
        grid.cols = max(grid.cols, col + 1)
        grid.cells.setdefault(char, []).append((row, col))
        col += 1
    return grid
