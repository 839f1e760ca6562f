"""Laser Tag (OpenSpiel's ``laser_tag`` with ``zero_sum=true``) as a numba game kernel.

Two players on a grid (``grid``: ``S`` spawn points, ``*`` obstacles, ``.`` empty), both
facing south at the start. Chance first spawns B, then A, each on a free spawn point
(outcome ``2 + k`` for the ``k``-th spawn point, row by row, uniformly over the free
ones). Each turn both pick one of ten actions at once (0 turn left, 1 turn right, 2
forward, 3 backward, 4 step left, 5 step right, 6 stand, 7 forward and turn left, 8
forward and turn right, 9 fire), relative to the way they face, and chance decides whose
action is resolved first (outcome 0: A's, 1: B's). Steps go only into empty cells (no
obstacle, no player); an action whose target cell is off the grid does nothing (turns
and fire target the player's own cell). Fire sends a beam ahead that stops at an
obstacle; a player it reaches is tagged: the tagger earns +1 and the tagged player -1
(zero-sum rewards), the tagged player leaves the grid without resolving its own action
and chance respawns it. The game ends after ``horizon`` turns; the return is the sum of the
rewards. Rules as OpenSpiel's C++ source.

Rewards: OpenSpiel's ``rewards()`` is the reward of the last resolved turn, still shown
while a tagged player respawns; the kernel keeps it (and the return) in the state.
Covered: every grid with two spawn points or more (both players must spawn) and
``horizon >= 0``, with ``zero_sum=true`` and ``fully_obs=true``; not ``zero_sum=false``
(general-sum), ``fully_obs=false`` (imperfect information) or a negative horizon (the game
then ends at the first tag, with no limit on its length).
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games.kernels import base, grid
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL, Uncovered

SHORT_NAMES = ("laser_tag",)
#: The leaf evaluator SMMCTSBot uses by default.
DEFAULT_EVALUATOR = "random_rollout"
NUM_ACTIONS = 10
_LEFT_TURN, _RIGHT_TURN, _FIRE = 0, 1, 9
_FORWARD_LEFT, _FORWARD_RIGHT = 7, 8
_NORTH, _SOUTH, _EAST, _WEST = range(4)
# Steps by orientation (north, south, east, west) and action, as OpenSpiel's tables.
_ROW_STEP = np.array([[0, 0, -1, 1, 0, 0, 0, -1, -1, 0],
                      [0, 0, 1, -1, 0, 0, 0, 1, 1, 0],
                      [0, 0, 0, 0, -1, 1, 0, 0, 0, 0],
                      [0, 0, 0, 0, 1, -1, 0, 0, 0, 0]], np.int64)
_COL_STEP = np.array([[0, 0, 0, 0, -1, 1, 0, 0, 0, 0],
                      [0, 0, 0, 0, 1, -1, 0, 0, 0, 0],
                      [0, 0, 1, -1, 0, 0, 0, 1, 1, 0],
                      [0, 0, -1, 1, 0, 0, 0, -1, -1, 0]], np.int64)
_TURN_LEFT = np.array([3, 2, 0, 1], np.int64)  # north -> west, south -> east, ...
_TURN_RIGHT = np.array([2, 3, 1, 0], np.int64)
# State layout: the respawn stack holds up to two players (the last one spawns first).
(_MOVES, _CHANCE, _ROW0, _COL0, _ROW1, _COL1, _FACING0, _FACING1, _ACTION0, _ACTION1,
 _RESPAWNS, _RESPAWN_STACK, _RESPAWN_STACK1, _REWARD0, _RETURN0) = range(15)
STATE_SIZE = 15
# Parameter layout: then one entry per cell (1: obstacle, row-major), then the spawn
# points as (row, col) pairs.
_ROWS, _COLS, _HORIZON, _NUM_SPAWNS, _CELLS = range(5)


def parameters(game) -> tuple[np.ndarray, np.ndarray]:
    p = game.get_parameters()
    if not p.get("zero_sum", False):
        raise Uncovered("zero_sum=False: general-sum rewards; load it with zero_sum=true")
    if not p.get("fully_obs", True):
        raise Uncovered("fully_obs=False: imperfect information")
    if p["horizon"] < 0:
        raise Uncovered(f"horizon={p['horizon']}: no limit on the game's length")
    g = grid.parse(p["grid"], "S*.")
    spawns = g.of("S")
    if len(spawns) < 2:
        raise Uncovered(f"a grid with {len(spawns)} spawn point(s): both players must spawn")
    params = np.concatenate([[g.rows, g.cols, p["horizon"], len(spawns)], g.mask("*"),
                             np.ravel(spawns)])
    return params.astype(np.int64), np.zeros(0)


def limits(params: np.ndarray) -> tuple[int, int, int]:
    # Two spawns, then per turn a decision, an initiative and perhaps a respawn.
    return NUM_ACTIONS, max(2, int(params[_NUM_SPAWNS])), 3 * int(params[_HORIZON]) + 3


@numba.njit(cache=True)
def _spawn_cell(params, k):
    start = _CELLS + params[_ROWS] * params[_COLS] + 2 * k
    return params[start], params[start + 1]


@numba.njit(cache=True)
def initial_state(params):
    state = np.zeros(STATE_SIZE, np.int64)
    state[_CHANCE] = 1
    for p in range(2):
        state[_ROW0 + 2 * p] = -1
        state[_COL0 + 2 * p] = -1
        state[_FACING0 + p] = _SOUTH
    state[_RESPAWNS] = 2
    state[_RESPAWN_STACK] = 0
    state[_RESPAWN_STACK1] = 1
    return state


@numba.njit(cache=True)
def status(state, params, data):
    if state[_MOVES] >= params[_HORIZON]:
        return TERMINAL
    return CHANCE if state[_CHANCE] else DECISION


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    return grid.every_move(status(state, params, data), NUM_ACTIONS, out)


@numba.njit(cache=True)
def _occupied(state, r, c):
    return (r == state[_ROW0] and c == state[_COL0]) or (r == state[_ROW1] and c == state[_COL1])


@numba.njit(cache=True)
def chance_outcomes(state, params, data, outcomes, probs):
    if state[_RESPAWNS] == 0:
        return base.initiative_outcomes(outcomes, probs)
    k = 0
    for s in range(params[_NUM_SPAWNS]):
        r, c = _spawn_cell(params, s)
        if not _occupied(state, r, c):
            outcomes[k] = 2 + s
            k += 1
    for i in range(k):
        probs[i] = 1.0 / k
    return k


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    grid.pend_moves(state, _ACTION0, _CHANCE, action0, action1)


@numba.njit(cache=True)
def _resolve(state, params, player, move):
    """OpenSpiel's ResolveMove; True if ``player`` tagged the other one."""
    rows = params[_ROWS]
    cols = params[_COLS]
    r = state[_ROW0 + 2 * player]
    c = state[_COL0 + 2 * player]
    facing = state[_FACING0 + player]
    nr = r + _ROW_STEP[facing, move]
    nc = c + _COL_STEP[facing, move]
    if nr < 0 or nc < 0 or nr >= rows or nc >= cols:
        return False
    if move == _LEFT_TURN:
        state[_FACING0 + player] = _TURN_LEFT[facing]
        return False
    if move == _RIGHT_TURN:
        state[_FACING0 + player] = _TURN_RIGHT[facing]
        return False
    if move == _FIRE:
        dr = -1 if facing == _NORTH else 1 if facing == _SOUTH else 0
        dc = 1 if facing == _EAST else -1 if facing == _WEST else 0
        r += dr
        c += dc
        other = 1 - player
        while 0 <= r < rows and 0 <= c < cols:
            if r == state[_ROW0 + 2 * other] and c == state[_COL0 + 2 * other]:
                state[_ROW0 + 2 * other] = -1  # tagged: off the grid until respawned
                state[_COL0 + 2 * other] = -1
                state[_RESPAWNS] = 1
                state[_RESPAWN_STACK] = other
                state[_REWARD0] += 1 if player == 0 else -1
                return True
            if params[_CELLS + r * cols + c]:
                return False
            r += dr
            c += dc
        return False
    if nr == r and nc == c:  # stand
        return False
    if not params[_CELLS + nr * cols + nc] and not _occupied(state, nr, nc):
        state[_ROW0 + 2 * player] = nr
        state[_COL0 + 2 * player] = nc
        if move == _FORWARD_LEFT:
            state[_FACING0 + player] = _TURN_LEFT[facing]
        elif move == _FORWARD_RIGHT:
            state[_FACING0 + player] = _TURN_RIGHT[facing]
    return False


@numba.njit(cache=True)
def apply_chance(state, params, data, outcome):
    if outcome >= 2:
        player = state[_RESPAWN_STACK + state[_RESPAWNS] - 1]
        r, c = _spawn_cell(params, outcome - 2)
        state[_ROW0 + 2 * player] = r
        state[_COL0 + 2 * player] = c
        state[_RESPAWNS] -= 1
    else:
        state[_REWARD0] = 0
        first = outcome
        if not _resolve(state, params, first, state[_ACTION0 + first]):
            _resolve(state, params, 1 - first, state[_ACTION0 + 1 - first])
        state[_RETURN0] += state[_REWARD0]
        state[_MOVES] += 1
    state[_CHANCE] = 1 if state[_RESPAWNS] > 0 else 0


@numba.njit(cache=True)
def rewards(state, params, data):
    """Player 0's reward of the last resolved turn."""
    return float(state[_REWARD0])


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's tags minus player 1's, so far."""
    return float(state[_RETURN0])


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """Player 0's return after uniformly random actions and chance from ``state``."""
    n = params[_NUM_SPAWNS]
    while state[_MOVES] < params[_HORIZON]:
        if state[_RESPAWNS] > 0:
            # A uniformly random free spawn point: draw among all, redraw an occupied one.
            while True:
                s = min(int(rng.random() * n), n - 1)
                r, c = _spawn_cell(params, s)
                if not _occupied(state, r, c):
                    break
            apply_chance(state, params, data, 2 + s)
            continue
        if not state[_CHANCE]:
            grid.random_moves(state, _ACTION0, NUM_ACTIONS, rng)
        apply_chance(state, params, data, grid.random_initiative(rng))
    return float(state[_RETURN0])
