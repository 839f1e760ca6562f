"""The rules of classical Phantom Tic-Tac-Toe in one place: board, views, beliefs (arrays).

The fast MMCTS engine and the Belief Sampler need the rules of (classical) Phantom
Tic-Tac-Toe without pyspiel objects: a board of 9 cells (0 empty, 1 = x = player 0,
2 = o = player 1) and, per player, a 9-bit mask of the cells that player knows are taken
(its own marks and the cells where one of its moves was refused). A move on a taken cell is
refused, the cell joins the mover's view, and the same player moves again. This is the
``gameversion=classical`` rule of OpenSpiel's ``phantom_ttt``; :func:`replay` is checked
against it move by move in the tests.

Cells are numbered 0..8 row by row, like the actions of OpenSpiel's ``phantom_ttt``.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

NUM_CELLS = 9
ALL_CELLS = (1 << NUM_CELLS) - 1
#: The eight winning lines, the one copy every Phantom TTT and tic-tac-toe module uses.
WINNING_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8),
                 (2, 4, 6))
#: The same as an array, for numba-compiled code.
LINES = np.array(WINNING_LINES, dtype=np.int64)
# The phantom_ttt variants the array rules describe (short name, gameversion).
SUPPORTED_GAMES = ("phantom_ttt", "smmcts_phantom_ttt")


def has_line(board, mark) -> bool:
    """Whether ``mark`` (1 or 2) holds three cells in a row on ``board`` (numba-compilable)."""
    for k in range(LINES.shape[0]):
        if (board[LINES[k, 0]] == mark and board[LINES[k, 1]] == mark
                and board[LINES[k, 2]] == mark):
            return True
    return False


def is_array_phantom_ttt(game) -> bool:
    """Whether ``game`` is classical Phantom Tic-Tac-Toe with the rules of this module."""
    name = game.get_type().short_name
    if name not in SUPPORTED_GAMES:
        return False
    params = game.get_parameters()
    return (params.get("gameversion", "classical") == "classical"
            and params.get("obstype", "reveal-nothing") == "reveal-nothing")


@dataclasses.dataclass
class Replay:
    """The referee's record of a history: board, views, and every attempt with its outcome."""

    board: np.ndarray                      # int8[9]: 0 empty, 1 x, 2 o
    views: list[int]                       # per player: bitmask of cells known taken
    attempts: list[list[tuple[int, bool]]]  # per player: (cell, refused) in order
    turns: list[list[int]]                 # per player: own marks placed before each attempt
    current_player: int                    # -4 (terminal) or the player to move
    returns: tuple[float, float]


def replay(actions) -> Replay:
    """Plays ``actions`` (cells, both players interleaved) under the classical rules."""
    board = np.zeros(NUM_CELLS, dtype=np.int8)
    views = [0, 0]
    attempts: list[list[tuple[int, bool]]] = [[], []]
    turns: list[list[int]] = [[], []]
    marks = [0, 0]
    player = 0
    returns = (0.0, 0.0)
    for cell in actions:
        if player < 0:
            raise ValueError(f"action {cell} after the end of the game in history {actions}")
        cell = int(cell)
        if not 0 <= cell < NUM_CELLS or views[player] >> cell & 1:
            raise ValueError(f"illegal action {cell} for player {player} in history {actions}")
        refused = bool(board[cell])
        attempts[player].append((cell, refused))
        turns[player].append(marks[player])
        views[player] |= 1 << cell
        if refused:
            continue
        board[cell] = player + 1
        marks[player] += 1
        if has_line(board, player + 1):
            returns = (1.0, -1.0) if player == 0 else (-1.0, 1.0)
            player = -4
        elif marks[0] + marks[1] == NUM_CELLS:
            player = -4
        else:
            player = 1 - player
    return Replay(board, views, attempts, turns, player, returns)


def own_view_board(rep: Replay, player: int) -> np.ndarray:
    """What ``player`` knows of the board: its marks and the refused cells (opponent's)."""
    known = np.zeros(NUM_CELLS, dtype=np.int8)
    for cell, refused in rep.attempts[player]:
        known[cell] = (2 - player) if refused else (player + 1)
    return known


def consistent_boards(known: np.ndarray, player: int) -> list[np.ndarray]:
    """Every full board ``player`` (to move) cannot rule out, given what it ``known``-s.

    The opponent has made as many marks as the turn order says (x moves first), the known
    opponent marks are among them, the rest lie on cells ``player`` has not seen taken, and
    the game is not over (nobody has a line).
    """
    mine, theirs = player + 1, 2 - player
    own_marks = int(np.sum(known == mine))
    opponent_marks = own_marks if player == 0 else own_marks + 1
    missing = opponent_marks - int(np.sum(known == theirs))
    unknown = np.flatnonzero(known == 0)
    if missing < 0 or missing > len(unknown):
        raise ValueError(f"no board is consistent with view {known.tolist()} for player "
                         f"{player} to move: check that it is that player's turn")
    boards = []
    for cells in itertools.combinations(unknown.tolist(), missing):
        board = known.copy()
        board[list(cells)] = theirs
        if not has_line(board, theirs) and not has_line(board, mine):
            boards.append(board)
    return boards


def consistent_history(rep: Replay, player: int, board: np.ndarray, rng) -> list[int]:
    """A history in which ``player`` sees exactly what it saw in ``rep`` and the board is ``board``.

    ``board`` must be one of :func:`consistent_boards`. Opponent marks a refusal revealed are
    placed before the refused attempt (earliest deadline first); the others in random order.
    The opponent never has refused attempts in the history (``player`` could not tell).
    """
    opponent = 1 - player
    theirs = opponent + 1
    deadline: dict[int, int] = {}  # refused cell -> opponent marks before the refused attempt
    for (cell, refused), own_marks in zip(rep.attempts[player], rep.turns[player], strict=True):
        if refused:
            deadline[cell] = own_marks if player == 0 else own_marks + 1
    hidden = [c for c in np.flatnonzero(board == theirs).tolist() if c not in deadline]
    rng.shuffle(hidden)
    order = sorted(deadline, key=deadline.__getitem__) + hidden
    for slot, cell in enumerate(order):
        if cell in deadline and slot >= deadline[cell]:
            raise ValueError("board is not consistent with the player's refused attempts")
    history = []
    opponent_turns = iter(order)
    own = iter(rep.attempts[player])
    to_move = 0
    while True:
        if to_move == opponent:
            mark = next(opponent_turns, None)
            if mark is None:
                break
            history.append(mark)
        else:
            placed = False
            for cell, refused in own:
                history.append(cell)
                if not refused:
                    placed = True
                    break
            if not placed:
                break
        to_move = 1 - to_move
    return history


def sample_board(history, player: int, rng) -> tuple[np.ndarray, Replay]:
    """A board uniformly among those ``player`` (to move after ``history``) cannot rule out."""
    rep = replay(history)
    if rep.current_player != player:
        raise ValueError(f"player {player} is not to move after history {list(history)}")
    boards = consistent_boards(own_view_board(rep, player), player)
    return boards[rng.integers(len(boards))], rep


def sample_world(history, player: int, rng) -> list[int]:
    """A history ``player`` cannot tell from ``history``, its board drawn by sample_board."""
    board, rep = sample_board(history, player, rng)
    return consistent_history(rep, player, board, rng)
