"""Oshi-Zumo (OpenSpiel's ``oshi_zumo``, and ``smmcts_oshi_zumo``, the same game with the
AIJ 2016 study's position returns) as a numba game kernel.

Both players start with ``coins`` coins and a wrestler in the middle of a field of
``2 * size + 3`` positions (0 and ``2 * size + 2`` are off the edge). Each turn both bid at
once (at least ``min_bid``, or all they have left if less); the higher bid pushes the
wrestler one step towards the other player and both bids are paid. The game ends when the
wrestler leaves the field, both are out of coins, or after ``horizon`` turns; the player
who pushed the wrestler off wins, otherwise the one on whose opposite side the wrestler
stands (a draw in the middle, or always with ``alesia``); with ``returns_type=position``
(``smmcts_oshi_zumo``) player 0 gets the wrestler's offset towards player 1's edge instead.
Rules as OpenSpiel's C++ source; every parameter set is covered.
"""

from __future__ import annotations

import numba
import numpy as np

from smmcts_spiel.games.kernels import base
from smmcts_spiel.games.kernels.base import DECISION, TERMINAL

SHORT_NAMES = ("oshi_zumo", "smmcts_oshi_zumo")
#: The leaf evaluator SMMCTSBot uses by default: at 0.1 s per move against OpenSpiel's C++
#: MCTSBot the heuristic scored +0.035 +- 0.116 where random rollouts scored -0.270 +- 0.104
#: (200 games each on oshi_zumo(coins=10,size=3,horizon=20); experiments/tournaments/NOTES.md).
DEFAULT_EVALUATOR = "heuristic"
_COINS0, _COINS1, _POSITION, _MOVES, _WINNER = range(5)
STATE_SIZE = 5
_START_COINS, _SIZE, _HORIZON, _MIN_BID, _ALESIA, _POSITION_RETURNS = range(6)
# The weights of the heuristic, as in smmcts_spiel.search.evaluators.OshiZumoEvaluator.
_POSITION_WEIGHT, _COIN_WEIGHT = 4.0, 8.0


def parameters(game) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's (int, float) parameter arrays for ``game``."""
    p = game.get_parameters()
    position = int(p.get("returns_type", "win_loss") == "position")
    return (np.array([p["coins"], p["size"], p["horizon"], p["min_bid"], int(p["alesia"]),
                      position], np.int64), np.zeros(0))


def limits(params: np.ndarray) -> tuple[int, int, int]:
    """(most actions of a player, most chance outcomes, most nodes on a root-leaf path)."""
    coins, horizon, min_bid = (int(params[f]) for f in (_START_COINS, _HORIZON, _MIN_BID))
    moves = max(0, horizon)
    if min_bid > 0:
        # Each move a player with coins pays at least min_bid or all it has left: after
        # coins // min_bid + 1 moves both are broke, which ends the game.
        moves = min(moves, coins // min_bid + 1)
    return coins + 1, 1, moves + 1


@numba.njit(cache=True)
def initial_state(params):
    state = np.zeros(STATE_SIZE, np.int64)
    state[_COINS0] = params[_START_COINS]
    state[_COINS1] = params[_START_COINS]
    state[_POSITION] = params[_SIZE] + 1
    state[_WINNER] = -1
    return state


@numba.njit(cache=True)
def status(state, params, data):
    if (state[_MOVES] >= params[_HORIZON] or state[_WINNER] != -1
            or (state[_COINS0] == 0 and state[_COINS1] == 0)):
        return TERMINAL
    return DECISION


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if status(state, params, data) != DECISION:
        return 0
    coins = state[_COINS0 + player]
    k = 0
    for bid in range(params[_MIN_BID], coins + 1):
        out[k] = bid
        k += 1
    if k == 0:  # Less than the minimum bid left: bid everything.
        out[0] = coins
        k = 1
    return k


chance_outcomes = base.no_chance_outcomes
apply_chance = base.no_chance


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    if action0 > action1:
        state[_POSITION] += 1
    elif action0 < action1:
        state[_POSITION] -= 1
    state[_COINS0] -= action0
    state[_COINS1] -= action1
    if state[_POSITION] == 0:
        state[_WINNER] = 1
    elif state[_POSITION] == 2 * params[_SIZE] + 2:
        state[_WINNER] = 0
    state[_MOVES] += 1


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's return (0 until the game ends)."""
    if status(state, params, data) != TERMINAL:
        return 0.0
    if params[_POSITION_RETURNS]:
        return float(state[_POSITION] - params[_SIZE] - 1)
    if state[_WINNER] == 0:
        return 1.0
    if state[_WINNER] == 1:
        return -1.0
    middle = params[_SIZE] + 1
    if params[_ALESIA] or state[_POSITION] == middle:
        return 0.0
    return 1.0 if state[_POSITION] > middle else -1.0


@numba.njit(cache=True)
def rewards(state, params, data):
    """Player 0's reward: the return, paid at the end."""
    return returns(state, params, data)


@numba.njit(cache=True)
def _random_bid(coins, min_bid, u):
    if coins < min_bid:
        return coins
    k = coins - min_bid + 1
    return min_bid + min(int(u * k), k - 1)


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """Player 0's return after uniformly random bids from ``state``."""
    while status(state, params, data) != TERMINAL:
        a0 = _random_bid(state[_COINS0], params[_MIN_BID], rng.random())
        a1 = _random_bid(state[_COINS1], params[_MIN_BID], rng.random())
        apply_actions(state, params, data, a0, a1)
    return returns(state, params, data)


@numba.njit(cache=True)
def heuristic(state, params, data, rng):
    """Leaf value without a rollout: the wrestler's position and the coin balance.

    Exact at terminals. Elsewhere the formula of
    :class:`smmcts_spiel.search.evaluators.OshiZumoEvaluator` (its weights were fitted to
    exact values; experiments/tournaments): ``tanh(4 x + 8 y)`` with ``x`` the wrestler's offset
    towards player 2's edge in units of ``size + 1`` and ``y = (c1 - c2) / (c1 + c2)``; a
    player whose broke opponent cannot stop it walking to the edge wins outright. With
    position returns the same estimate times ``size + 1``.
    """
    if status(state, params, data) == TERMINAL:
        return returns(state, params, data)
    reach = params[_SIZE] + 1
    offset = state[_POSITION] - reach
    c0 = state[_COINS0]
    c1 = state[_COINS1]
    steps = max(1, params[_MIN_BID] + 1)  # the cheapest bid that beats a broke opponent
    scale = float(reach) if params[_POSITION_RETURNS] else 1.0
    if c1 == 0 and c0 >= steps * (reach - offset):
        return scale
    if c0 == 0 and c1 >= steps * (reach + offset):
        return -scale
    y = (c0 - c1) / (c0 + c1) if c0 + c1 > 0 else 0.0
    return scale * np.tanh(_POSITION_WEIGHT * offset / reach + _COIN_WEIGHT * y)
