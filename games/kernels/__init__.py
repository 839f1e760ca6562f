"""Numba game kernels: pyspiel games described as arrays so whole searches run compiled.

:func:`kernel_for` returns a :class:`GameKernel` for a game a kernel covers (OpenSpiel's
``goofspiel`` and ``oshi_zumo``, our ``smmcts_goofspiel`` and explicit-tree games), or
None. Compiled code calls a
kernel through the dispatch functions below (``status(code, state, params, data)``, ...), which
branch on the kernel's ``code`` to the game module's function: one compiled search serves
every game, and numba can cache it (functions passed as arguments cannot be cached). The
interface each game module provides is described in :mod:`.base`. To add a game: write its
module, add it to ``_MODULES`` and one branch to each dispatch function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from smmcts_spiel.games.kernels import explicit_tree, goofspiel, oshi_zumo
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL

__all__ = ["CHANCE", "DECISION", "TERMINAL", "EVALUATORS", "GameKernel", "kernel_for"]

_MODULES = (goofspiel, oshi_zumo, explicit_tree)  # the index is the kernel's code
# Leaf evaluators of the evaluator slot, by name -> code.
EVALUATORS = {"random_rollout": 0, "heuristic": 1}


@dataclass(frozen=True)
class GameKernel:
    """A game's kernel: which module (``code``), its parameters and its size limits."""

    code: int
    name: str
    params: np.ndarray  # int64
    data: np.ndarray  # float64
    max_actions: int  # of one player at one node
    max_chance_outcomes: int
    max_depth: int  # nodes on a root-to-terminal path, the terminal included

    def initial_state(self) -> np.ndarray:
        return _MODULES[self.code].initial_state(self.params)

    @property
    def default_evaluator(self) -> str:
        """The leaf evaluator chosen by measurement for this game (a key of EVALUATORS)."""
        return _MODULES[self.code].DEFAULT_EVALUATOR


def kernel_for(game) -> GameKernel | None:
    """The kernel of ``game`` (a pyspiel game), or None if no kernel covers it."""
    name = game.get_type().short_name
    for code, module in enumerate(_MODULES):
        if name in module.SHORT_NAMES:
            arrays = module.parameters(game)
            if arrays is None:
                return None
            params, data = arrays
            actions, outcomes, depth = module.limits(params)
            return GameKernel(code, name, params, data, actions, max(1, outcomes), depth)
    return None


@numba.njit(cache=True)
def status(code, state, params, data):
    if code == 0:
        return goofspiel.status(state, params, data)
    if code == 1:
        return oshi_zumo.status(state, params, data)
    return explicit_tree.status(state, params, data)


@numba.njit(cache=True)
def legal_actions(code, state, params, data, player, out):
    if code == 0:
        return goofspiel.legal_actions(state, params, data, player, out)
    if code == 1:
        return oshi_zumo.legal_actions(state, params, data, player, out)
    return explicit_tree.legal_actions(state, params, data, player, out)


@numba.njit(cache=True)
def chance_outcomes(code, state, params, data, outcomes, probs):
    if code == 0:
        return goofspiel.chance_outcomes(state, params, data, outcomes, probs)
    if code == 1:
        return oshi_zumo.chance_outcomes(state, params, data, outcomes, probs)
    return explicit_tree.chance_outcomes(state, params, data, outcomes, probs)


@numba.njit(cache=True)
def apply_actions(code, state, params, data, action0, action1):
    if code == 0:
        goofspiel.apply_actions(state, params, data, action0, action1)
    elif code == 1:
        oshi_zumo.apply_actions(state, params, data, action0, action1)
    else:
        explicit_tree.apply_actions(state, params, data, action0, action1)


@numba.njit(cache=True)
def apply_chance(code, state, params, data, outcome):
    if code == 0:
        goofspiel.apply_chance(state, params, data, outcome)
    elif code == 1:
        oshi_zumo.apply_chance(state, params, data, outcome)
    else:
        explicit_tree.apply_chance(state, params, data, outcome)


@numba.njit(cache=True)
def returns(code, state, params, data):
    if code == 0:
        return goofspiel.returns(state, params, data)
    if code == 1:
        return oshi_zumo.returns(state, params, data)
    return explicit_tree.returns(state, params, data)


@numba.njit(cache=True)
def evaluate(code, evaluator, state, params, data, rng):
    """Player 0's value of a leaf by the evaluator ``evaluator`` (consumes ``state``)."""
    if code == 0:
        if evaluator == 0:
            return goofspiel.rollout(state, params, data, rng)
        return goofspiel.heuristic(state, params, data, rng)
    if code == 1:
        if evaluator == 0:
            return oshi_zumo.rollout(state, params, data, rng)
        return oshi_zumo.heuristic(state, params, data, rng)
    return explicit_tree.rollout(state, params, data, rng)
