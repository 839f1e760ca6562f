"""Classical Phantom Tic-Tac-Toe (``phantom_ttt``, ``smmcts_phantom_ttt``) as a numba kernel.

The rules of :mod:`smmcts_spiel.games.phantom_ttt_rules`: a move on a cell the mover has not
seen taken either marks it or, if the opponent holds it, is refused (the mover learns the
cell and moves again). A player's information state is the sequence of its attempts and
whether each was refused (:func:`information_key`), what OpenSpiel's information state
string holds (the view board follows from it).
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games import phantom_ttt_rules
from smmcts_spiel.games.kernels.base import DECISION, TERMINAL

SHORT_NAMES = phantom_ttt_rules.SUPPORTED_GAMES
NUM_CELLS = phantom_ttt_rules.NUM_CELLS
_VIEW0, _MARKS, _PLAYER, _OVER, _RESULT, _SEEN0 = 9, 11, 12, 13, 14, 15
STATE_SIZE = 17
_has_line = numba.njit(cache=True)(phantom_ttt_rules.has_line)


def parameters(game) -> tuple[np.ndarray, np.ndarray] | None:
    """Empty parameter arrays for classical Phantom Tic-Tac-Toe; None for other variants."""
    if not phantom_ttt_rules.is_array_phantom_ttt(game):
        return None
    return np.zeros(0, np.int64), np.zeros(0)


def limits(params: np.ndarray) -> tuple[int, int, int]:
    """(most actions of a player, most chance outcomes, most nodes on a root-leaf path)."""
    return NUM_CELLS, 0, 2 * NUM_CELLS + 1


@numba.njit(cache=True)
def initial_state(params):
    state = np.zeros(STATE_SIZE, np.int64)
    state[_SEEN0] = 1
    state[_SEEN0 + 1] = 1
    return state


@numba.njit(cache=True)
def status(state, params, data):
    return TERMINAL if state[_OVER] else DECISION


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if state[_OVER] or state[_PLAYER] != player:
        return 0
    k = 0
    view = state[_VIEW0 + player]
    for cell in range(NUM_CELLS):
        if not (view >> cell) & 1:
            out[k] = cell
            k += 1
    return k


@numba.njit(cache=True)
def chance_outcomes(state, params, data, outcomes, probs):
    return 0


@numba.njit(cache=True)
def apply_chance(state, params, data, outcome):
    pass


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    player = state[_PLAYER]
    cell = action0 if player == 0 else action1
    refused = 1 if state[cell] != 0 else 0
    state[_SEEN0 + player] = state[_SEEN0 + player] * 2 * NUM_CELLS + 2 * cell + refused
    state[_VIEW0 + player] |= np.int64(1) << cell
    if refused:
        return
    state[cell] = player + 1
    state[_MARKS] += 1
    if _has_line(state[:NUM_CELLS], player + 1):
        state[_OVER] = 1
        state[_RESULT] = 1 if player == 0 else -1
    elif state[_MARKS] == NUM_CELLS:
        state[_OVER] = 1
    else:
        state[_PLAYER] = 1 - player


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's return at a terminal state."""
    return float(state[_RESULT])


@numba.njit(cache=True)
def information_key(state, params, data, player):
    """A number that identifies ``player``'s information state (its attempts, refused or not)."""
    return state[_SEEN0 + player] * 2 + player
