"""Colonel Blotto (OpenSpiel's ``blotto``, two players) as a numba game kernel.

Each player splits ``coins`` coins over ``fields`` battlefields at once; a field goes to
whoever put more coins on it (a tie: nobody), and whoever wins more fields wins the game
(+1 / -1, a draw 0). Action ``k`` is the ``k``-th split in OpenSpiel's order: the splits
listed by the coins on the first field, then the second, ..., each ascending (rules and
numbering as OpenSpiel's C++ source). Every ``coins`` and ``fields`` is covered with two
players (more need another protocol) while a node's joint actions fit the engine.

Parameters: ``[coins, fields, num_actions]`` then the splits, ``num_actions`` rows of
``fields`` coin counts. State: both players' actions, -1 before the move.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from smmcts_spiel.games.kernels import base
from smmcts_spiel.games.kernels.base import DECISION, MAX_JOINT_ACTIONS, TERMINAL, Uncovered

SHORT_NAMES = ("blotto",)
#: The leaf evaluator SMMCTSBot uses by default (one move: the rollout is the returns).
DEFAULT_EVALUATOR = "random_rollout"
_COINS, _FIELDS, _NUM_ACTIONS, _SPLITS = range(4)
STATE_SIZE = 2


def num_actions(coins: int, fields: int) -> int:
    """The number of ways to split ``coins`` coins over ``fields`` fields."""
    return math.comb(coins + fields - 1, fields - 1)


def splits(coins: int, fields: int) -> np.ndarray:
    """Every split, one per row, in OpenSpiel's action order (lexicographic)."""
    rows = np.zeros((num_actions(coins, fields), fields), np.int64)
    split = [0] * fields
    count = 0

    def fill(field: int, left: int) -> None:
        nonlocal count
        if field == fields - 1:
            split[field] = left
            rows[count] = split
            count += 1
            return
        for c in range(left + 1):
            split[field] = c
            fill(field + 1, left - c)

    fill(0, coins)
    return rows


def parameters(game) -> tuple[np.ndarray, np.ndarray]:
    p = game.get_parameters()
    if p.get("players", 2) != 2:
        raise Uncovered(f"players={p['players']}: the kernel plays two players")
    coins, fields = p.get("coins", 10), p.get("fields", 3)
    n = num_actions(coins, fields)
    if n * n > MAX_JOINT_ACTIONS:  # (refused before listing the splits)
        raise Uncovered(f"coins={coins}, fields={fields}: {n:,} actions per player, more "
                        "joint actions than a compiled node holds")
    params = np.concatenate([[coins, fields, n], splits(coins, fields).ravel()])
    return params.astype(np.int64), np.zeros(0)


def limits(params: np.ndarray) -> tuple[int, int, int]:
    return int(params[_NUM_ACTIONS]), 0, 2


@numba.njit(cache=True)
def payoff(params, action0, action1):
    """Player 0's return when the players play these splits."""
    fields = params[_FIELDS]
    row0 = _SPLITS + action0 * fields
    row1 = _SPLITS + action1 * fields
    won = 0
    for f in range(fields):
        c0 = params[row0 + f]
        c1 = params[row1 + f]
        if c0 > c1:
            won += 1
        elif c1 > c0:
            won -= 1
    return 1.0 if won > 0 else -1.0 if won < 0 else 0.0


@numba.njit(cache=True)
def initial_state(params):
    return np.full(STATE_SIZE, -1, np.int64)


@numba.njit(cache=True)
def status(state, params, data):
    return DECISION if state[0] < 0 else TERMINAL


@numba.njit(cache=True)
def legal_actions(state, params, data, player, out):
    if state[0] >= 0:
        return 0
    return base.every_action(params[_NUM_ACTIONS], out)


chance_outcomes = base.no_chance_outcomes
apply_chance = base.no_chance


@numba.njit(cache=True)
def apply_actions(state, params, data, action0, action1):
    state[0] = action0
    state[1] = action1


@numba.njit(cache=True)
def returns(state, params, data):
    """Player 0's return (0 before the move)."""
    if state[0] < 0:
        return 0.0
    return payoff(params, state[0], state[1])


@numba.njit(cache=True)
def rewards(state, params, data):
    return returns(state, params, data)


@numba.njit(cache=True)
def rollout(state, params, data, rng):
    """Player 0's return after a uniformly random move of each player."""
    if state[0] < 0:
        n = params[_NUM_ACTIONS]
        state[0] = min(int(rng.random() * n), n - 1)
        state[1] = min(int(rng.random() * n), n - 1)
    return payoff(params, state[0], state[1])
