"""Markov Soccer (OpenSpiel's ``markov_soccer``, Littman 1994) as a numba game kernel.

Two players A and B on a grid (``grid``: ``A``, ``B`` their start cells, ``O`` the
possible starting cells of the ball, ``.`` empty). First chance puts the ball on one of
the ``O`` cells (outcome ``2 + k`` for the ``k``-th, row by row, uniformly). Then each turn
both players pick a move at once (0 up, 1 down, 2 left, 3 right, 4 stand) and chance
decides whose move is resolved first (outcome 0: A's, 1: B's, even odds). A player moves
into an empty cell, picks the ball up by moving onto it, and a ball carrier who runs into
the other player loses the ball to it (and stays put); any other move into an occupied
cell or off the grid does nothing, except that a carrier leaving the grid through the
opponent's goal scores: A to the right of the last column, B to the left of the first,
in rows 1 or 2 (whatever the grid's height, as OpenSpiel's C++ source). A goal ends the
game (+1 to the scorer, -1 to the other) unless the move count, which counts the ball's
placement and each resolved turn, has reached ``horizon``: then it is a draw, as when the
horizon ends the game without a goal. Every grid and horizon OpenSpiel loads is covered,
if the grid has a ball cell (without one the first chance node has no outcome).

State: move count, winner, whether chance is to move, both players' cells, who holds the
ball (-1: nobody), the free ball's cell, the pending moves. A player who scored leaves the
grid (its cell -1), as OpenSpiel clears its square.
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games.kernels import base, grid
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL, Uncovered

SHORT_NAMES = ("markov_soccer",)
#: The leaf evaluator SMMCTSBot uses by default.
DEFAULT_EVALUATOR = "random_rollout"
NUM_ACTIONS = 5
_ROW_STEP = np.array([-1, 1, 0, 0, 0], np.int64)
_COL_STEP = np.array([0, 0, -1, 1, 0], np.int64)
# State layout.
(_MOVES, _WINNER, _CHANCE, _ROW0, _COL0, _ROW1, _COL1, _HOLDER, _BALL_ROW, _BALL_COL,
 _ACTION0, _ACTION1) = range(12)
STATE_SIZE = 12
# Parameter layout: then the ball's starting cells, (row, col) pairs.
_ROWS, _COLS, _HORIZON, _START_ROW0, _START_COL0, _START_ROW1, _START_COL1, _NUM_BALLS, \
    _BALLS = range(9)


def parameters(game) -> tuple[np.ndarray, np.ndarray]:
    p = game.get_parameters()
    g = grid.parse(p["grid"], "ABO.")
    balls = g.of("O")
    if not balls:
        raise Uncovered("a grid without a ball cell 'O': the first chance node has no "
                        "outcome")
    params = [g.rows, g.cols, p["horizon"], *g.one("A"), *g.one("B"), len(balls)]
    for cell in balls:
        params.extend(cell)
    return np.array(params, np.int64), np.zeros(0)


def limits(params: np.ndarray) -> tuple[int, int, int]:
    # The ball's placement, then a decision and an initiative chance node per turn.
    horizon = max(0, int(params[_HORIZON]))
    return NUM_ACTIONS, max(2, int(params[_NUM_BALLS])), 2 * horizon + 1


@numba.njit(cache=True)
def initial_state(params):
    state = np.full(STATE_SIZE, -1, np.int64)
    state[_MOVES] = 0
    state[_CHANCE] = 1
    state[_ROW0] = params[_START_ROW0]
    state[_COL0] = params[_START_COL0]
    state[_ROW1] = params[_START_ROW1]
    state[_COL1] = params[_START_COL1]
    return state


@numba.njit(cache=True)
def status(state, params, data):
    if state[_MOVES] >= params[_HORIZON] or state[_WINNER] >= 0:
        return TERMINAL
    return CHANCE if state[_CHANCE] else DECISION


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    return grid.every_move(status(state, params, data), NUM_ACTIONS, out)


@numba.njit(cache=True)
def chance_outcomes(state, params, data, outcomes, probs):
    if state[_MOVES] == 0:
        n = params[_NUM_BALLS]
        for k in range(n):
            outcomes[k] = 2 + k
            probs[k] = 1.0 / n
        return n
    return base.initiative_outcomes(outcomes, probs)


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    grid.pend_moves(state, _ACTION0, _CHANCE, action0, action1)


@numba.njit(cache=True)
def _resolve(state, params, player, move):
    """OpenSpiel's ResolveMove for ``player`` (0: A, 1: B)."""
    r = state[_ROW0 + 2 * player]
    c = state[_COL0 + 2 * player]
    nr = r + _ROW_STEP[move]
    nc = c + _COL_STEP[move]
    carrier = state[_HOLDER] == player
    if nr < 0 or nc < 0 or nr >= params[_ROWS] or nc >= params[_COLS]:
        goal = params[_COLS] if player == 0 else -1
        if carrier and (nr == 1 or nr == 2) and nc == goal:
            state[_WINNER] = player
            state[_HOLDER] = -1
            state[_ROW0 + 2 * player] = -1  # off the grid
            state[_COL0 + 2 * player] = -1
        return
    if nr == r and nc == c:
        return
    other = 1 - player
    if nr == state[_ROW0 + 2 * other] and nc == state[_COL0 + 2 * other]:
        if carrier:  # The carrier runs into the defender: the defender takes the ball.
            state[_HOLDER] = other
        return
    state[_ROW0 + 2 * player] = nr
    state[_COL0 + 2 * player] = nc
    if nr == state[_BALL_ROW] and nc == state[_BALL_COL]:
        state[_HOLDER] = player
        state[_BALL_ROW] = -1
        state[_BALL_COL] = -1


@numba.njit(cache=True)
def apply_chance(state, params, data, outcome):
    if outcome >= 2:
        state[_BALL_ROW] = params[_BALLS + 2 * (outcome - 2)]
        state[_BALL_COL] = params[_BALLS + 2 * (outcome - 2) + 1]
    else:
        first = outcome
        _resolve(state, params, first, state[_ACTION0 + first])
        _resolve(state, params, 1 - first, state[_ACTION0 + 1 - first])
    state[_CHANCE] = 0
    state[_MOVES] += 1


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's return: +1 for A's goal, -1 for B's, 0 otherwise (and at the horizon)."""
    if state[_MOVES] >= params[_HORIZON] or state[_WINNER] < 0:
        return 0.0
    return 1.0 if state[_WINNER] == 0 else -1.0


@numba.njit(cache=True)
def rewards(state, params, data):
    return returns(state, params, data)


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """Player 0's return after uniformly random moves and chance from ``state``."""
    while state[_MOVES] < params[_HORIZON] and state[_WINNER] < 0:
        if state[_MOVES] == 0:
            n = params[_NUM_BALLS]
            apply_chance(state, params, data, 2 + min(int(rng.random() * n), n - 1))
            continue
        if not state[_CHANCE]:
            grid.random_moves(state, _ACTION0, NUM_ACTIONS, rng)
        apply_chance(state, params, data, grid.random_initiative(rng))
    return returns(state, params, data)
