"""AIJ 2016 Tron (``smmcts_tron``) as a numba game kernel.

The state is both heads, the outcome so far and one entry per cell (1 for a wall or a
head); rules, actions (directions into empty cells) and returns are those of
:mod:`smmcts_spiel.games.tron`, for every grid. The heuristic is the paper's evaluation
function: ``tanh((owned_0 - owned_1) / 5)``, a cell owned by the player who reaches it
first (a flood fill from both heads at once; a cell both reach in the same step belongs to
neither and stops both fills).
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games import tron
from smmcts_spiel.games.kernels import base
from smmcts_spiel.games.kernels.base import DECISION, TERMINAL
from smmcts_spiel.games.kernels.grid import neighbour, random_direction

SHORT_NAMES = (tron.SHORT_NAME,)
#: The leaf evaluator SMMCTSBot uses by default: the AIJ 2016 paper's evaluation function.
#: At 0.1 s per move it beat random rollouts by +0.145 +- 0.055, +0.530 +- 0.070 and
#: +0.695 +- 0.073 on 8 x 8, 10 x 10 and 13 x 13 (200 games each; experiments/tournaments,
#: screens/tron_heuristic). The paper's samplers ran without it: ``random_rollout``.
DEFAULT_EVALUATOR = "heuristic"
_HEAD0, _HEAD1, _WINNER, _ROUNDS, _CELLS = range(5)  # cells: _CELLS .. _CELLS + rows*cols
_ONGOING = -2  # _WINNER before the end; then 0, 1 or tron.DRAW
_ROWS, _COLS = 0, 1
_OWNER_SCALE = 5.0


def parameters(game) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's (int, float) parameter arrays for ``game``."""
    p = game.get_parameters()
    return np.array([p["rows"], p["cols"]], np.int64), np.zeros(0)


def limits(params: np.ndarray) -> tuple[int, int, int]:
    """(most actions of a player, most chance outcomes, most nodes on a root-leaf path)."""
    return 4, 0, tron.max_rounds(int(params[_ROWS]), int(params[_COLS])) + 1


@numba.njit(cache=True)
def initial_state(params):
    cells = params[_ROWS] * params[_COLS]
    state = np.zeros(_CELLS + cells, np.int64)
    state[_HEAD1] = cells - 1
    state[_WINNER] = _ONGOING
    state[_CELLS] = 1
    state[_CELLS + cells - 1] = 1
    return state


@numba.njit(cache=True)
def status(state, params, data):
    return DECISION if state[_WINNER] == _ONGOING else TERMINAL


@numba.njit(cache=True)
def _free_directions(state, params, cell):
    """The directions from ``cell`` into empty cells, as bits (bit ``d`` for ``d``)."""
    allowed = 0
    for d in range(4):
        target = neighbour(cell, d, params[_ROWS], params[_COLS])
        if target >= 0 and state[_CELLS + target] == 0:
            allowed |= 1 << d
    return allowed


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if state[_WINNER] != _ONGOING:
        return 0
    allowed = _free_directions(state, params, state[_HEAD0 + player])
    k = 0
    for d in range(4):
        if (allowed >> d) & 1:
            out[k] = d
            k += 1
    return k


chance_outcomes = base.no_chance_outcomes
apply_chance = base.no_chance


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    rows, cols = params[_ROWS], params[_COLS]
    to0 = neighbour(state[_HEAD0], action0, rows, cols)
    to1 = neighbour(state[_HEAD1], action1, rows, cols)
    state[_HEAD0], state[_HEAD1] = to0, to1
    state[_CELLS + to0] = 1
    state[_CELLS + to1] = 1
    state[_ROUNDS] += 1
    if to0 == to1:
        state[_WINNER] = tron.DRAW
        return
    enclosed0 = _free_directions(state, params, to0) == 0
    enclosed1 = _free_directions(state, params, to1) == 0
    if enclosed0 and enclosed1:
        state[_WINNER] = tron.DRAW
    elif enclosed0:
        state[_WINNER] = 1
    elif enclosed1:
        state[_WINNER] = 0


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's return: +1 a win, -1 a loss, 0 a draw or before the end."""
    if state[_WINNER] == 0:
        return 1.0
    if state[_WINNER] == 1:
        return -1.0
    return 0.0


@numba.njit(cache=True)
def rewards(state, params, data):
    """Player 0's reward: the return, paid at the end."""
    return returns(state, params, data)


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """Player 0's return after uniformly random moves from ``state``."""
    while state[_WINNER] == _ONGOING:
        move0 = random_direction(_free_directions(state, params, state[_HEAD0]), rng)
        move1 = random_direction(_free_directions(state, params, state[_HEAD1]), rng)
        apply_actions(state, params, data, move0, move1)
    return returns(state, params, data)


@numba.njit(cache=True)
def _claim(state, cell, player, step):
    """``player``'s fill reaches empty ``cell`` at ``step``: +1 if it now owns the cell, -1
    if the other player reached it at the same step (a tie: nobody's), 0 otherwise. A
    claimed cell holds ``2 + 3 step + owner`` (owner 2: a tie)."""
    value = state[_CELLS + cell]
    if value == 0:
        state[_CELLS + cell] = 2 + 3 * step + player
        return 1
    if value == 2 + 3 * step + 1 - player:
        state[_CELLS + cell] = 2 + 3 * step + 2
        return -1
    return 0


@numba.njit(cache=True)
def owned_cells(state, params):
    """Cells each player reaches strictly first, from both heads at once (the paper's
    "owned" cells; the heads not counted). A cell both reach at the same step is nobody's
    and stops both fills. Consumes ``state`` (marks the claimed cells in it) and allocates
    nothing, as the compiled search needs."""
    rows, cols = params[_ROWS], params[_COLS]
    owned0 = owned1 = 0
    new = 0
    step = 0
    while step == 0 or new:
        new = 0
        for cell in range(rows * cols):
            if step == 0:  # the first step goes from the heads
                player = 0 if cell == state[_HEAD0] else 1 if cell == state[_HEAD1] else -1
            else:
                value = state[_CELLS + cell] - 2
                claimed_now = value >= 0 and value // 3 == step and value % 3 != 2
                player = value % 3 if claimed_now else -1
            if player < 0:
                continue
            for d in range(4):
                target = neighbour(cell, d, rows, cols)
                if target >= 0:
                    gained = _claim(state, target, player, step + 1)
                    if gained != 0:
                        new += 1
                    if player == 0:
                        owned0 += max(gained, 0)
                        owned1 += min(gained, 0)
                    else:
                        owned1 += max(gained, 0)
                        owned0 += min(gained, 0)
        step += 1
    return owned0, owned1


@numba.njit(cache=True)
def heuristic(state, params, data, rng):
    """The paper's evaluation function (exact at terminals): ``tanh((owned_0 - owned_1)
    / 5)``, see :func:`owned_cells` (consumes ``state``)."""
    if state[_WINNER] != _ONGOING:
        return returns(state, params, data)
    owned0, owned1 = owned_cells(state, params)
    return np.tanh((owned0 - owned1) / _OWNER_SCALE)
