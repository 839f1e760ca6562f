"""Capture the Flag (OpenSpiel's ``capture_the_flag``, zero-sum) as a numba game kernel.

Two players start on their bases (``a``, ``b`` in ``grid``; ``*`` obstacles, ``.`` empty),
each base holding its owner's flag. Each turn both pick a move at once (0 north, 1 east,
2 south, 3 west, 4 stay) and chance decides whose move is resolved first (outcome 0: A's,
1: B's, even odds). A move into an obstacle, off the grid or onto the other player does
nothing. Stepping onto the opponent's base while its flag is there picks the flag up; the
carrier brings it along and scores by reaching its own base while its own flag is home,
which sends the captured flag home; ``score_limit`` scores win (+1 / -1; the rest of the
turn is not resolved). After both moves, a carrier standing in the defender's half (the
columns left of the centre for A, right of it for B; an odd width leaves the centre column
neutral) next to the defender (one step north, east, south or west) is tagged: the flag
goes home and the carrier back to its base. The game is a draw after ``horizon`` turns.
Rules as OpenSpiel's C++ source. Covered: every grid, ``score_limit`` and ``horizon >= 0``
with ``zero_sum=true`` (the default); not ``zero_sum=false`` (general-sum) nor a negative
horizon (no limit on the game's length, which the engine needs).

State: turn count, winner, whether chance is to move, both players' cells, who carries
each flag (-1: at home), the scores and the pending moves.
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games.kernels import base, grid
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL, Uncovered

SHORT_NAMES = ("capture_the_flag",)
#: The leaf evaluator SMMCTSBot uses by default.
DEFAULT_EVALUATOR = "random_rollout"
NUM_ACTIONS = 5
_STAY = 4
_ROW_STEP = np.array([-1, 0, 1, 0, 0], np.int64)
_COL_STEP = np.array([0, 1, 0, -1, 0], np.int64)
# State layout.
(_MOVES, _WINNER, _CHANCE, _ROW0, _COL0, _ROW1, _COL1, _CARRIER0, _CARRIER1, _SCORE0,
 _SCORE1, _ACTION0, _ACTION1) = range(13)
STATE_SIZE = 13
# Parameter layout: then one entry per cell, 1 for an obstacle (row-major).
_ROWS, _COLS, _HORIZON, _SCORE_LIMIT, _BASE_ROW0, _BASE_COL0, _BASE_ROW1, _BASE_COL1, \
    _CELLS = range(9)


def parameters(game) -> tuple[np.ndarray, np.ndarray]:
    p = game.get_parameters()
    if not p.get("zero_sum", True):
        raise Uncovered("zero_sum=False: general-sum rewards; load it with zero_sum=true")
    if p["horizon"] < 0:
        raise Uncovered(f"horizon={p['horizon']}: no limit on the game's length")
    g = grid.parse(p["grid"], "ab*.")
    params = [g.rows, g.cols, p["horizon"], p["score_limit"], *g.one("a"), *g.one("b")]
    return np.concatenate([params, g.mask("*")]).astype(np.int64), np.zeros(0)


def limits(params: np.ndarray) -> tuple[int, int, int]:
    # A decision and an initiative chance node per turn.
    return NUM_ACTIONS, 2, 2 * int(params[_HORIZON]) + 1


@numba.njit(cache=True)
def initial_state(params):
    state = np.zeros(STATE_SIZE, np.int64)
    state[_WINNER] = -1
    state[_ROW0] = params[_BASE_ROW0]
    state[_COL0] = params[_BASE_COL0]
    state[_ROW1] = params[_BASE_ROW1]
    state[_COL1] = params[_BASE_COL1]
    state[_CARRIER0] = -1
    state[_CARRIER1] = -1
    return state


@numba.njit(cache=True)
def status(state, params, data):
    if state[_WINNER] >= 0 or state[_MOVES] >= params[_HORIZON]:
        return TERMINAL
    return CHANCE if state[_CHANCE] else DECISION


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    return grid.every_move(status(state, params, data), NUM_ACTIONS, out)


@numba.njit(cache=True)
def chance_outcomes(state, params, data, outcomes, probs):
    return base.initiative_outcomes(outcomes, probs)


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    grid.pend_moves(state, _ACTION0, _CHANCE, action0, action1)


@numba.njit(cache=True)
def _resolve(state, params, player, move):
    """OpenSpiel's ResolveMove: the move, a pickup, a capture (and a win)."""
    if move == _STAY:
        return
    r = state[_ROW0 + 2 * player] + _ROW_STEP[move]
    c = state[_COL0 + 2 * player] + _COL_STEP[move]
    cols = params[_COLS]
    if r < 0 or c < 0 or r >= params[_ROWS] or c >= cols or params[_CELLS + r * cols + c]:
        return
    other = 1 - player
    if r == state[_ROW0 + 2 * other] and c == state[_COL0 + 2 * other]:
        return
    state[_ROW0 + 2 * player] = r
    state[_COL0 + 2 * player] = c
    if (state[_CARRIER0 + other] == -1 and r == params[_BASE_ROW0 + 2 * other]
            and c == params[_BASE_COL0 + 2 * other]):
        state[_CARRIER0 + other] = player
    if (state[_CARRIER0 + other] == player and r == params[_BASE_ROW0 + 2 * player]
            and c == params[_BASE_COL0 + 2 * player] and state[_CARRIER0 + player] == -1):
        state[_SCORE0 + player] += 1
        state[_CARRIER0 + other] = -1
        if state[_SCORE0 + player] >= params[_SCORE_LIMIT]:
            state[_WINNER] = player


@numba.njit(cache=True)
def _in_home(params, player, c):
    """Whether column ``c`` is in ``player``'s half."""
    centre = params[_COLS] // 2
    if player == 0:
        return c < centre
    return c > centre if params[_COLS] % 2 == 1 else c >= centre


@numba.njit(cache=True)
def _resolve_tags(state, params):
    """OpenSpiel's ResolveTags: a carrier next to the defender in its half is sent home."""
    for carrier in range(2):
        defender = 1 - carrier
        if state[_CARRIER0 + defender] != carrier:
            continue
        r = state[_ROW0 + 2 * carrier]
        c = state[_COL0 + 2 * carrier]
        if not _in_home(params, defender, c):
            continue
        if abs(r - state[_ROW0 + 2 * defender]) + abs(c - state[_COL0 + 2 * defender]) == 1:
            state[_CARRIER0 + defender] = -1
            state[_ROW0 + 2 * carrier] = params[_BASE_ROW0 + 2 * carrier]
            state[_COL0 + 2 * carrier] = params[_BASE_COL0 + 2 * carrier]


@numba.njit(cache=True)
def apply_chance(state, params, data, outcome):
    first = outcome
    _resolve(state, params, first, state[_ACTION0 + first])
    if state[_WINNER] < 0:
        _resolve(state, params, 1 - first, state[_ACTION0 + 1 - first])
    if state[_WINNER] < 0:
        _resolve_tags(state, params)
    state[_MOVES] += 1
    state[_CHANCE] = 0


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's return: +1 if A won, -1 if B won, 0 otherwise."""
    if state[_WINNER] < 0:
        return 0.0
    return 1.0 if state[_WINNER] == 0 else -1.0


@numba.njit(cache=True)
def rewards(state, params, data):
    """Player 0's reward: paid by the winning turn (OpenSpiel resets it every turn)."""
    return returns(state, params, data)


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """Player 0's return after uniformly random moves and chance from ``state``."""
    while state[_WINNER] < 0 and state[_MOVES] < params[_HORIZON]:
        if not state[_CHANCE]:
            grid.random_moves(state, _ACTION0, NUM_ACTIONS, rng)
        apply_chance(state, params, data, grid.random_initiative(rng))
    return returns(state, params, data)
