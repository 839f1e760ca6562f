"""The AIJ 2016 pursuit-evasion game (``smmcts_pursuit_evasion``) as a numba game kernel.

The state is the evader's and both units' cells, the rounds played and whether the evader
is caught; the rules, action numbers and returns are those of
:mod:`smmcts_spiel.games.pursuit_evasion` (evader: a direction; pursuer: ``4 * d1 + d2``),
for every parameter set. The heuristic is the paper's evaluation function
(:func:`smmcts_spiel.games.pursuit_evasion.evaluation`).
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games import pursuit_evasion
from smmcts_spiel.games.kernels import base
from smmcts_spiel.games.kernels.base import DECISION, TERMINAL
from smmcts_spiel.games.kernels.grid import neighbour, random_direction

SHORT_NAMES = (pursuit_evasion.SHORT_NAME,)
#: The leaf evaluator SMMCTSBot uses by default: random rollouts (the paper's sampling
#: algorithms ran without its evaluation function, which is here as ``heuristic``).
DEFAULT_EVALUATOR = "random_rollout"
_EVADER, _UNIT1, _UNIT2, _ROUND, _CAUGHT = range(5)
STATE_SIZE = 5
_SIZE, _DEPTH, _STARTS = 0, 1, 2  # params: grid size, depth, the three start cells


def parameters(game) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's (int, float) parameter arrays for ``game``."""
    p = game.get_parameters()
    starts = pursuit_evasion.start_cells(p)
    return np.array([p["grid_size"], p["depth"], *starts], np.int64), np.zeros(0)


def limits(params: np.ndarray) -> tuple[int, int, int]:
    """(most actions of a player, most chance outcomes, most nodes on a root-leaf path)."""
    return pursuit_evasion.NUM_PURSUER_ACTIONS, 0, int(params[_DEPTH]) + 1


@numba.njit(cache=True)
def initial_state(params):
    state = np.zeros(STATE_SIZE, np.int64)
    for unit in range(3):
        state[_EVADER + unit] = params[_STARTS + unit]
    return state


@numba.njit(cache=True)
def status(state, params, data):
    if state[_CAUGHT] or state[_ROUND] >= params[_DEPTH]:
        return TERMINAL
    return DECISION


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if status(state, params, data) != DECISION:
        return 0
    n = params[_SIZE]
    if player == pursuit_evasion.EVADER:
        k = 0
        for d in range(4):
            if neighbour(state[_EVADER], d, n, n) >= 0:
                out[k] = d
                k += 1
        return k
    k = 0
    for d1 in range(4):
        if neighbour(state[_UNIT1], d1, n, n) < 0:
            continue
        for d2 in range(4):
            if neighbour(state[_UNIT2], d2, n, n) >= 0:
                out[k] = 4 * d1 + d2
                k += 1
    return k


chance_outcomes = base.no_chance_outcomes
apply_chance = base.no_chance


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    n = params[_SIZE]
    evader_from = state[_EVADER]
    unit_from1, unit_from2 = state[_UNIT1], state[_UNIT2]
    evader_to = neighbour(evader_from, action0, n, n)
    unit_to1 = neighbour(unit_from1, action1 // 4, n, n)
    unit_to2 = neighbour(unit_from2, action1 % 4, n, n)
    state[_EVADER], state[_UNIT1], state[_UNIT2] = evader_to, unit_to1, unit_to2
    state[_ROUND] += 1
    if (evader_to == unit_to1 or evader_to == unit_to2
            or (evader_to == unit_from1 and evader_from == unit_to1)
            or (evader_to == unit_from2 and evader_from == unit_to2)):
        state[_CAUGHT] = 1


@numba.njit(cache=True)
def returns(state, params, data):
    """The evader's return: -1 caught, +1 free after the last round, 0 before the end."""
    if state[_CAUGHT]:
        return -1.0
    if state[_ROUND] >= params[_DEPTH]:
        return 1.0
    return 0.0


@numba.njit(cache=True)
def rewards(state, params, data):
    """The evader's reward: the return, paid at the end."""
    return returns(state, params, data)


@numba.njit(cache=True)
def _random_move(cell, n, rng):
    """A uniformly random direction that stays on the grid."""
    allowed = 0
    for d in range(4):
        if neighbour(cell, d, n, n) >= 0:
            allowed |= 1 << d
    return random_direction(allowed, rng)


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """The evader's return after uniformly random moves from ``state`` (the pursuer's
    joint moves are uniform: each unit's move is drawn on its own)."""
    n = params[_SIZE]
    while status(state, params, data) != TERMINAL:
        move = _random_move(state[_EVADER], n, rng)
        units = 4 * _random_move(state[_UNIT1], n, rng) + _random_move(state[_UNIT2], n, rng)
        apply_actions(state, params, data, move, units)
    return returns(state, params, data)


@numba.njit(cache=True)
def heuristic(state, params, data, rng):
    """The paper's evaluation function (exact at terminals): the evader's distance to the
    nearer unit plus 0.01 times the farther one's, over ``1.01 (w + l)``."""
    if status(state, params, data) == TERMINAL:
        return returns(state, params, data)
    n = params[_SIZE]
    er, ec = state[_EVADER] // n, state[_EVADER] % n
    d1 = abs(er - state[_UNIT1] // n) + abs(ec - state[_UNIT1] % n)
    d2 = abs(er - state[_UNIT2] // n) + abs(ec - state[_UNIT2] % n)
    return (min(d1, d2) + 0.01 * max(d1, d2)) / (1.01 * 2 * n)
