"""Goofspiel with imperfect information (``goofspiel(imp_info=True)``) as a numba kernel.

The rules are those of :mod:`.goofspiel` (the functions below call it); the state adds,
per player, a running code of what that player has seen: its own bids, the prizes and who
won each round (not the opponent's bids), which is what OpenSpiel's information state
string of ``imp_info=True`` holds (hand and points follow from it). Searches over
information states play it through the turn-based conversion (player 0 bids, then player
1 without seeing that bid), as ``pyspiel.convert_to_turn_based``.
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games.kernels import goofspiel
from smmcts_spiel.games.kernels.base import Uncovered

SHORT_NAMES = ("goofspiel", "smmcts_goofspiel")
#: Most cards whose information states fit the int64 code.
MAX_CARDS = 8
_SEEN0 = goofspiel.STATE_SIZE  # then _SEEN0 + 1 for player 1
STATE_SIZE = goofspiel.STATE_SIZE + 2
_PRIZE, _NUM_CARDS = 4, 0  # goofspiel's state and parameter layout


def parameters(game) -> tuple[np.ndarray, np.ndarray] | None:
    """The parameter arrays of ``goofspiel(imp_info=True)`` with at most MAX_CARDS cards."""
    p = game.get_parameters()
    if not p.get("imp_info", False) or p.get("num_cards", 13) > MAX_CARDS:
        return None
    try:
        return goofspiel.rule_parameters(game)
    except Uncovered:
        return None


def limits(params: np.ndarray) -> tuple[int, int, int]:
    return goofspiel.limits(params)


@numba.njit(cache=True)
def initial_state(params):
    state = np.zeros(STATE_SIZE, np.int64)
    state[:goofspiel.STATE_SIZE] = goofspiel.initial_state(params)
    state[_SEEN0] = 1
    state[_SEEN0 + 1] = 1
    return state


@numba.njit(cache=True)
def status(state, params, data):
    return goofspiel.status(state, params, data)


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    return goofspiel.legal_actions(state, params, data, player, out)


@numba.njit(cache=True)
def chance_outcomes(state, params, data, outcomes, probs):
    return goofspiel.chance_outcomes(state, params, data, outcomes, probs)


@numba.njit(cache=True)
def apply_chance(state, params, data, outcome):
    goofspiel.apply_chance(state, params, data, outcome)


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    n = params[_NUM_CARDS]
    prize = state[_PRIZE]
    winner = 0 if action0 > action1 else 1 if action1 > action0 else 2
    state[_SEEN0] = state[_SEEN0] * 3 * n * n + (action0 * n + prize) * 3 + winner
    state[_SEEN0 + 1] = state[_SEEN0 + 1] * 3 * n * n + (action1 * n + prize) * 3 + winner
    goofspiel.apply_actions(state, params, data, action0, action1)


@numba.njit(cache=True)
def returns(state, params, data):
    return goofspiel.returns(state, params, data)


@numba.njit(cache=True)
def information_key(state, params, data, player):
    """A number that identifies ``player``'s information state (own bids, prizes, winners
    of the rounds so far, the prize on offer)."""
    n = params[_NUM_CARDS]
    return (state[_SEEN0 + player] * (n + 1) + state[_PRIZE] + 1) * 2 + player
