"""Perfect play in (ordinary) Tic-Tac-Toe by memoised minimax over the 3^9 boards.

Boards are 9 cells row by row: 0 empty, 1 = x (player 0), 2 = o (player 1). Values are
from the point of view of the player to move: +1 win, 0 draw, -1 loss under perfect play.
The Belief Sampler plays these moves on sampled boards; the tests cross-check the values
with OpenSpiel's ``minimax.alpha_beta_search`` on ``tic_tac_toe``.
"""

from __future__ import annotations

import functools

from smmcts_spiel.games.phantom_ttt_rules import WINNING_LINES


def winner(board: tuple[int, ...]) -> int:
    """The mark (1 or 2) that holds a line, or 0."""
    for a, b, c in WINNING_LINES:
        if board[a] and board[a] == board[b] == board[c]:
            return board[a]
    return 0


@functools.cache
def value(board: tuple[int, ...], player: int) -> int:
    """Minimax value of ``board`` for ``player`` (0 or 1) to move."""
    done = winner(board)
    if done:
        return 1 if done == player + 1 else -1
    if 0 not in board:
        return 0
    return max(move_values(board, player).values())


def move_values(board: tuple[int, ...], player: int) -> dict[int, int]:
    """The minimax value, for ``player``, of each empty cell it could mark."""
    values = {}
    for cell, mark in enumerate(board):
        if mark == 0:
            child = board[:cell] + (player + 1,) + board[cell + 1:]
            values[cell] = -value(child, 1 - player)
    return values


def optimal_moves(board, player: int) -> list[int]:
    """Every empty cell whose mark keeps the best minimax value for ``player``."""
    board = tuple(int(x) for x in board)
    if len(board) != 9 or any(x not in (0, 1, 2) for x in board):
        raise ValueError(f"a board is 9 cells in {{0, 1, 2}}, got {board}")
    if winner(board) or 0 not in board:
        raise ValueError(f"board {board} is already over: no move to choose")
    values = move_values(board, player)
    best = max(values.values())
    return [cell for cell, v in values.items() if v == best]
