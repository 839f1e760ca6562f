"""Kuhn poker (OpenSpiel's ``kuhn_poker``, two players) as a numba game kernel.

Chance deals player 0 a card of three (0 jack, 1 queen, 2 king), then player 1 one of the
other two; the players then pass (action 0) or bet (action 1) in turn: pass-pass and
bet-bet (or pass-bet-bet) go to a showdown for the pot, a pass after a bet folds. Every
player antes 1 and a bet adds 1. A player's information state is its card and the
betting so far (:func:`information_key`). Checked against pyspiel on the whole game tree.
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL

SHORT_NAMES = ("kuhn_poker",)
_CARD0, _CARD1, _DEALT, _NUM_BETS, _A0, _A1, _A2 = range(7)
STATE_SIZE = 7
_PASS, _BET = 0, 1


def parameters(game) -> tuple[np.ndarray, np.ndarray] | None:
    """The kernel's (int, float) parameter arrays; None unless two players."""
    if game.get_parameters().get("players", 2) != 2:
        return None
    return np.zeros(0, np.int64), np.zeros(0)


def limits(params: np.ndarray) -> tuple[int, int, int]:
    """(most actions of a player, most chance outcomes, most nodes on a root-leaf path)."""
    return 2, 3, 6


@numba.njit(cache=True)
def initial_state(params):
    state = np.zeros(STATE_SIZE, np.int64)
    state[_CARD0] = -1
    state[_CARD1] = -1
    return state


@numba.njit(cache=True)
def _over(state):
    n = state[_NUM_BETS]
    if n < 2:
        return False
    if n == 2:  # pass-pass, bet-pass, bet-bet end; pass-bet goes on
        return not (state[_A0] == _PASS and state[_A1] == _BET)
    return True


@numba.njit(cache=True)
def status(state, params, data):
    if state[_DEALT] < 2:
        return CHANCE
    return TERMINAL if _over(state) else DECISION


@numba.njit(cache=True)
def current_player(state):
    return state[_NUM_BETS] % 2


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if state[_DEALT] < 2 or _over(state) or current_player(state) != player:
        return 0
    out[0] = _PASS
    out[1] = _BET
    return 2


@numba.njit(cache=True)
def chance_outcomes(state, params, data, outcomes, probs):
    k = 0
    for card in range(3):
        if state[_DEALT] == 0 or card != state[_CARD0]:
            outcomes[k] = card
            k += 1
    for i in range(k):
        probs[i] = 1.0 / k
    return k


@numba.njit(cache=True)
def apply_chance(state, params, data, outcome):
    state[_CARD0 + state[_DEALT]] = outcome
    state[_DEALT] += 1


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    action = action0 if current_player(state) == 0 else action1
    state[_A0 + state[_NUM_BETS]] = action
    state[_NUM_BETS] += 1


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's return at a terminal state."""
    n = state[_NUM_BETS]
    bets = 0
    for i in range(n):
        bets += state[_A0 + i]
    last = state[_A0 + n - 1]
    if last == _PASS and bets == 1:  # a pass after a bet: the passer folds
        folder = (n - 1) % 2
        return 1.0 if folder == 1 else -1.0
    stake = 1.0 + (1.0 if bets == 2 else 0.0)
    return stake if state[_CARD0] > state[_CARD1] else -stake


@numba.njit(cache=True)
def information_key(state, params, data, player):
    """A number that identifies ``player``'s information state (card, bets so far)."""
    key = state[_CARD0 + player] + 1
    for i in range(state[_NUM_BETS]):
        key = key * 3 + state[_A0 + i] + 1
    return key * 2 + player
