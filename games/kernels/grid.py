"""What the grid games' kernels (markov_soccer, capture_the_flag, laser_tag) share.

Their grid strings, read as OpenSpiel's C++ does: rows of characters separated by newlines.
The width is the longest row (a shorter row's missing cells are empty), the height the
number of rows that hold a character (a trailing newline adds none). Each kernel says which
characters mean what.

And their turns, alike in all three: both players pick a move at once (every move is
legal at a decision node), the moves wait in the state, and an initiative chance node
(whose move is resolved first, even odds) resolves them. The compiled helpers below take
the kernel's state fields: ``first_action`` (player 0's pending move, player 1's right
after it) and ``chance`` (1 while chance is to move).

And the four-connected moves of the AIJ 2016 grid games (``smmcts_pursuit_evasion``,
``smmcts_tron``): :func:`neighbour`, as :func:`smmcts_spiel.games.grid_moves.neighbour`,
and a rollout's uniformly random pick among the directions allowed (:func:`random_direction`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from smmcts_spiel.games import grid_moves
from smmcts_spiel.games.kernels import base
from smmcts_spiel.games.kernels.base import DECISION, Uncovered


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

    def mask(self, char: str) -> np.ndarray:
        """1 on the cells holding ``char``, 0 elsewhere, row-major (int64)."""
        cells = np.zeros((self.rows, self.cols), np.int64)
        for r, c in self.of(char):
            cells[r, c] = 1
        return cells.ravel()


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


# Compiled turn helpers (see the module docstring).


@numba.njit(cache=True)
def every_move(kind, num_actions, out):
    """``legal_actions`` of a grid game at a node of ``kind``: every move
    ``0 .. num_actions - 1`` at a decision node, none elsewhere."""
    if kind != DECISION:
        return 0
    return base.every_action(num_actions, out)


@numba.njit(cache=True)
def pend_moves(state, first_action, chance, action0, action1):
    """``apply_actions`` of a grid game: both moves wait for the initiative chance node."""
    state[first_action] = action0
    state[first_action + 1] = action1
    state[chance] = 1


@numba.njit(cache=True)
def random_moves(state, first_action, num_actions, rng):
    """A rollout's joint move: each player's uniformly random move, pending."""
    state[first_action] = min(int(rng.random() * num_actions), num_actions - 1)
    state[first_action + 1] = min(int(rng.random() * num_actions), num_actions - 1)


@numba.njit(cache=True)
def random_initiative(rng):
    """A rollout's initiative outcome: 0 (player 0's move first) or 1, even odds."""
    return 0 if rng.random() < 0.5 else 1


_ROW_STEPS = np.array(grid_moves.ROW_STEPS, np.int64)
_COL_STEPS = np.array(grid_moves.COL_STEPS, np.int64)


@numba.njit(cache=True)
def neighbour(cell, direction, rows, cols):
    """The cell one step from ``cell`` in ``direction`` (0 north, 1 east, 2 south, 3 west;
    cells row by row), or -1 off the grid."""
    r = cell // cols + _ROW_STEPS[direction]
    c = cell % cols + _COL_STEPS[direction]
    if 0 <= r < rows and 0 <= c < cols:
        return r * cols + c
    return -1


@numba.njit(cache=True)
def random_direction(allowed, rng):
    """A uniformly random direction among those whose bit is set in ``allowed`` (bit ``d``
    for direction ``d``; at least one is set)."""
    pick = min(int(rng.random() * _bit_count(allowed)), _bit_count(allowed) - 1)
    for d in range(4):
        if (allowed >> d) & 1:
            if pick == 0:
                return d
            pick -= 1
    return -1


@numba.njit(cache=True)
def _bit_count(allowed):
    return (allowed & 1) + ((allowed >> 1) & 1) + ((allowed >> 2) & 1) + ((allowed >> 3) & 1)
