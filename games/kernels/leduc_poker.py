"""Leduc poker (OpenSpiel's ``leduc_poker``, default parameters) as a numba game kernel.

Six cards, two of each of three ranks (card ``c`` has rank ``c // 2``). Chance deals
player 0 a card, then player 1 one; a betting round; chance deals a public card; a second
betting round; showdown. Both ante 1; a raise adds 2 in the first round and 4 in the
second, at most two raises a round. Actions: fold 0 (only when facing a bet), call 1
(check), raise 2. A call other than a round's first action ends the round; a fold ends the
game. At the showdown a card pairing the public card wins, else the higher rank; equal
ranks split. Player 0 starts both rounds. A player's information state is its card, the
public card and every action so far (:func:`information_key`). Checked against pyspiel on
the whole game tree.
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL

SHORT_NAMES = ("leduc_poker",)
(_CARD0, _CARD1, _PUBLIC, _DEALT, _ROUND, _STAKE0, _STAKE1, _RAISES, _ROUND_ACTIONS,
 _PLAYER, _FOLDER, _OVER, _ACTIONS) = range(13)
STATE_SIZE = 13
_FOLD, _CALL, _RAISE = 0, 1, 2
_MAX_RAISES = 2


def parameters(game) -> tuple[np.ndarray, np.ndarray] | None:
    """The kernel's (int, float) parameter arrays; None for parameters it does not cover."""
    p = game.get_parameters()
    if (p.get("players", 2) != 2 or p.get("action_mapping", False)
            or p.get("suit_isomorphism", False) or p.get("starting_player", 0) != 0):
        return None
    return np.zeros(0, np.int64), np.zeros(0)


def limits(params: np.ndarray) -> tuple[int, int, int]:
    """(most actions of a player, most chance outcomes, most nodes on a root-leaf path)."""
    return 3, 6, 3 + 2 * 4 + 1


@numba.njit(cache=True)
def initial_state(params):
    state = np.zeros(STATE_SIZE, np.int64)
    state[_CARD0] = -1
    state[_CARD1] = -1
    state[_PUBLIC] = -1
    state[_ROUND] = 1
    state[_STAKE0] = 1
    state[_STAKE1] = 1
    state[_FOLDER] = -1
    state[_ACTIONS] = 1  # base-4 digits (action + 1) after a leading 1
    return state


@numba.njit(cache=True)
def _chance_pending(state):
    return state[_DEALT] < 2 or (state[_ROUND] == 2 and state[_DEALT] < 3)


@numba.njit(cache=True)
def status(state, params, data):
    if state[_OVER]:
        return TERMINAL
    return CHANCE if _chance_pending(state) else DECISION


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if state[_OVER] or _chance_pending(state) or state[_PLAYER] != player:
        return 0
    k = 0
    if state[_STAKE0 + player] < state[_STAKE0 + 1 - player]:
        out[k] = _FOLD
        k += 1
    out[k] = _CALL
    k += 1
    if state[_RAISES] < _MAX_RAISES:
        out[k] = _RAISE
        k += 1
    return k


@numba.njit(cache=True)
def chance_outcomes(state, params, data, outcomes, probs):
    k = 0
    for card in range(6):
        if card != state[_CARD0] and card != state[_CARD1]:
            outcomes[k] = card
            k += 1
    for i in range(k):
        probs[i] = 1.0 / k
    return k


@numba.njit(cache=True)
def apply_chance(state, params, data, outcome):
    if state[_DEALT] < 2:
        state[_CARD0 + state[_DEALT]] = outcome
    else:
        state[_PUBLIC] = outcome
    state[_DEALT] += 1


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    player = state[_PLAYER]
    action = action0 if player == 0 else action1
    state[_ACTIONS] = state[_ACTIONS] * 4 + action + 1
    if action == _FOLD:
        state[_FOLDER] = player
        state[_OVER] = 1
        return
    top = max(state[_STAKE0], state[_STAKE1])
    if action == _RAISE:
        state[_STAKE0 + player] = top + (2 if state[_ROUND] == 1 else 4)
        state[_RAISES] += 1
    else:
        state[_STAKE0 + player] = top
    state[_ROUND_ACTIONS] += 1
    state[_PLAYER] = 1 - player
    if action == _CALL and state[_ROUND_ACTIONS] >= 2:  # the round is over
        if state[_ROUND] == 2:
            state[_OVER] = 1
        else:
            state[_ROUND] = 2
            state[_RAISES] = 0
            state[_ROUND_ACTIONS] = 0
            state[_PLAYER] = 0


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's return at a terminal state (chips won or lost)."""
    if state[_FOLDER] == 0:
        return -float(state[_STAKE0])
    if state[_FOLDER] == 1:
        return float(state[_STAKE1])
    public = state[_PUBLIC] // 2
    rank0 = state[_CARD0] // 2
    rank1 = state[_CARD1] // 2
    pot = float(state[_STAKE1])
    if rank0 == public and rank1 != public:
        return pot
    if rank1 == public and rank0 != public:
        return -pot
    if rank0 > rank1:
        return pot
    if rank1 > rank0:
        return -pot
    return 0.0


@numba.njit(cache=True)
def information_key(state, params, data, player):
    """A number that identifies ``player``'s information state (its card, the public card,
    every action so far)."""
    return ((state[_ACTIONS] * 7 + state[_PUBLIC] + 1) * 6 + state[_CARD0 + player]) * 2 + player
