"""Numba kernels of imperfect-information games, with information-state keys.

The kernels of :mod:`smmcts_spiel.games.kernels` describe games to compiled SM-MCTS; the
ones here describe imperfect-information games to compiled searches over information
sets (Online Outcome Sampling, :mod:`smmcts_spiel.imperfect.oos_kernel`). Each game module
provides the interface of :mod:`.base` (``status``, ``legal_actions``,
``chance_outcomes``, ``apply_actions``, ``apply_chance``, ``returns``; a sequential game
moves one player at a time, the other passes ``-1``) and one more function:

* ``information_key(state, params, data, player) -> int64``: a number that is equal for two
  states where ``player`` is to move exactly when OpenSpiel's
  ``information_state_string(player)`` is (the tests check it on the whole tree of the
  small games, on random trajectories of the others). It includes the player.

A simultaneous move (both players have legal actions) is searched as the turn-based
conversion does: player 0 moves, then player 1 without seeing it. :func:`replay` plays a
pyspiel history (flattened like ``state.history()``) into a kernel state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from smmcts_spiel.games.kernels import goofspiel_information, kuhn_poker, leduc_poker, phantom_ttt
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL

__all__ = ["CHANCE", "DECISION", "TERMINAL", "InformationKernel", "information_kernel_for",
           "replay"]

_MODULES = (goofspiel_information, kuhn_poker, leduc_poker, phantom_ttt)  # index = code


@dataclass(frozen=True)
class InformationKernel:
    """A game's kernel: which module (``code``), its parameters and its size limits."""

    code: int
    name: str
    params: np.ndarray  # int64
    data: np.ndarray  # float64
    max_actions: int  # of one player at one node
    max_chance_outcomes: int
    max_depth: int  # nodes on a root-to-terminal path of the turn-based game
    num_action_ids: int  # action and chance outcome ids are below this

    def initial_state(self) -> np.ndarray:
        return _MODULES[self.code].initial_state(self.params)


def information_kernel_for(game) -> InformationKernel | None:
    """The kernel of ``game`` (a pyspiel game, not its turn-based conversion), or None."""
    name = game.get_type().short_name
    for code, module in enumerate(_MODULES):
        if name in module.SHORT_NAMES:
            arrays = module.parameters(game)
            if arrays is None:
                return None
            params, data = arrays
            actions, outcomes, depth = module.limits(params)
            # A simultaneous round is two nodes of the turn-based game.
            return InformationKernel(code, name, params, data, actions, max(1, outcomes),
                                     2 * depth, max(game.num_distinct_actions(),
                                                    game.max_chance_outcomes(), 1))
    return None


@numba.njit(cache=True)
def status(code, state, params, data):
    if code == 0:
        return goofspiel_information.status(state, params, data)
    if code == 1:
        return kuhn_poker.status(state, params, data)
    if code == 2:
        return leduc_poker.status(state, params, data)
    return phantom_ttt.status(state, params, data)


@numba.njit(cache=True)
def legal_actions(code, state, params, data, player, out):
    if code == 0:
        return goofspiel_information.legal_actions(state, params, data, player, out)
    if code == 1:
        return kuhn_poker.legal_actions(state, params, data, player, out)
    if code == 2:
        return leduc_poker.legal_actions(state, params, data, player, out)
    return phantom_ttt.legal_actions(state, params, data, player, out)


@numba.njit(cache=True)
def chance_outcomes(code, state, params, data, outcomes, probs):
    if code == 0:
        return goofspiel_information.chance_outcomes(state, params, data, outcomes, probs)
    if code == 1:
        return kuhn_poker.chance_outcomes(state, params, data, outcomes, probs)
    if code == 2:
        return leduc_poker.chance_outcomes(state, params, data, outcomes, probs)
    return phantom_ttt.chance_outcomes(state, params, data, outcomes, probs)


@numba.njit(cache=True)
def apply_actions(code, state, params, data, action0, action1):
    if code == 0:
        goofspiel_information.apply_actions(state, params, data, action0, action1)
    elif code == 1:
        kuhn_poker.apply_actions(state, params, data, action0, action1)
    elif code == 2:
        leduc_poker.apply_actions(state, params, data, action0, action1)
    else:
        phantom_ttt.apply_actions(state, params, data, action0, action1)


@numba.njit(cache=True)
def apply_chance(code, state, params, data, outcome):
    if code == 0:
        goofspiel_information.apply_chance(state, params, data, outcome)
    elif code == 1:
        kuhn_poker.apply_chance(state, params, data, outcome)
    elif code == 2:
        leduc_poker.apply_chance(state, params, data, outcome)
    else:
        phantom_ttt.apply_chance(state, params, data, outcome)


@numba.njit(cache=True)
def returns(code, state, params, data):
    if code == 0:
        return goofspiel_information.returns(state, params, data)
    if code == 1:
        return kuhn_poker.returns(state, params, data)
    if code == 2:
        return leduc_poker.returns(state, params, data)
    return phantom_ttt.returns(state, params, data)


@numba.njit(cache=True)
def information_key(code, state, params, data, player):
    if code == 0:
        return goofspiel_information.information_key(state, params, data, player)
    if code == 1:
        return kuhn_poker.information_key(state, params, data, player)
    if code == 2:
        return leduc_poker.information_key(state, params, data, player)
    return phantom_ttt.information_key(state, params, data, player)


@numba.njit(cache=True)
def to_move(code, state, params, data, pending, scratch):
    """The player to move in the turn-based game at (``state``, ``pending``): 0 or 1, or -1
    at a chance node, -2 at a terminal. ``pending`` is player 0's hidden action of a
    simultaneous move (-1 if none); ``scratch`` is overwritten."""
    kind = status(code, state, params, data)
    if kind == TERMINAL:
        return -2
    if kind == CHANCE:
        return -1
    if pending < 0 and legal_actions(code, state, params, data, 0, scratch) > 0:
        return 0
    return 1


@numba.njit(cache=True)
def step(code, state, params, data, pending, player, action, scratch):
    """Plays ``player``'s ``action`` (or a chance outcome, ``player`` -1); returns the new
    pending action. Player 0's move waits for player 1's when both move at once."""
    if player < 0:
        apply_chance(code, state, params, data, action)
        return -1
    if player == 0:
        if legal_actions(code, state, params, data, 1, scratch) > 0:
            return action
        apply_actions(code, state, params, data, action, -1)
        return -1
    apply_actions(code, state, params, data, pending, action)
    return -1


@numba.njit(cache=True)
def replay(code, initial, params, data, history, scratch):
    """(state, pending) after ``history`` of the turn-based game from ``initial``."""
    state = initial.copy()
    pending = -1
    for action in history:
        player = to_move(code, state, params, data, pending, scratch)
        pending = step(code, state, params, data, pending, player, action, scratch)
    return state, pending
