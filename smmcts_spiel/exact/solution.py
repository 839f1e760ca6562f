"""The exact solution of a pyspiel game as an OpenSpiel policy, and its check.

A :class:`Solution` holds, for every state (up to transposition: :mod:`.transpositions`),
its value and both players' equilibrium strategies; :func:`check_solution` verifies, state
by state, that it is an equilibrium of its game.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks
from smmcts_spiel.exact import turn_based
from smmcts_spiel.exact.stages import (
    joint_children,
    legal_actions,
    successors,
    with_recursion_limit,
)


@dataclass(frozen=True)
class StateSolution:
    """Value of a state and both players' equilibrium strategies there.

    A strategy is a ``{action: probability}`` dict over the player's legal actions; it is
    empty for a player who does not move in this state (and both are empty at chance
    nodes).
    """

    value: float
    strategies: tuple[dict[int, float], dict[int, float]]


class Solution(policy_lib.Policy):
    """The exact solution of a game: values and equilibrium strategies of every state.

    As an OpenSpiel policy, ``action_probabilities(state, player_id)`` answers for states
    of the game itself (the simultaneous game, not its turn-based conversion);
    :attr:`tabular_policy` is the same equilibrium as a ``TabularPolicy`` on the
    turn-based conversion (built on first use: it enumerates every state of the game).
    """

    def __init__(self, game: pyspiel.Game, value: float, table: dict,
                 key: Callable[[pyspiel.State], Hashable]):
        super().__init__(game, [0, 1])
        self.value = value
        self._table = table
        self._key = key
        self._tabular_policy = None

    @property
    def key(self) -> Callable[[pyspiel.State], Hashable]:
        """The function that files a state under its entry of :attr:`table`."""
        return self._key

    @property
    def table(self) -> Mapping[Hashable, StateSolution]:
        """Every state's entry, by its key (read-only)."""
        return MappingProxyType(self._table)

    def __len__(self) -> int:
        """Number of distinct (up to transposition) non-terminal states solved."""
        return len(self._table)

    def state_solution(self, state: pyspiel.State) -> StateSolution:
        """Value and equilibrium strategies at a non-terminal ``state`` of the game (or of its
        turn-based conversion: see :func:`smmcts_spiel.checks.state_of_game`); a state of
        another game is refused (ValueError)."""
        state = checks.state_of_game(state, self.game, "the solution")
        if state.is_terminal():
            raise ValueError("a terminal state has no strategies; use state.returns()")
        try:
            return self._table[self._key(state)]
        except KeyError:
            raise ValueError(f"state not reachable in the solved game:\n{state}") from None

    def state_value(self, state: pyspiel.State) -> float:
        """Player 1's equilibrium value of the subgame at ``state``."""
        state = checks.state_of_game(state, self.game, "the solution")
        if state.is_terminal():
            return float(state.returns()[0])
        return self.state_solution(state).value

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None
                             ) -> dict[int, float]:
        """Equilibrium strategy of ``player_id`` at a state of the (simultaneous) game."""
        if player_id is None:
            player_id = state.current_player()
        if player_id not in (0, 1):
            raise ValueError(f"player_id must be 0 or 1, got {checks.shown(player_id)!r}")
        return dict(self.state_solution(state).strategies[player_id])

    @property
    def tabular_policy(self):
        """The equilibrium as a ``TabularPolicy`` on ``convert_to_turn_based(game)``."""
        if self._tabular_policy is None:
            self._tabular_policy = turn_based.to_turn_based_tabular_policy(self.game, self)
        return self._tabular_policy


#: Tolerance of :func:`check_solution`, relative to the game's utility range.
SOLUTION_TOLERANCE = 1e-6


def check_solution(solution: Solution) -> None:
    """Raise ValueError unless ``solution`` is an equilibrium of its game, state by state.

    Walks every reachable state once (up to transposition): its entry exists, its values are
    finite, its strategies are distributions over the legal actions (empty for a player not
    moving), a chance node's value is the expectation of its children's values and a
    decision node's strategies guarantee its value in the stage game of its children's
    values (the row strategy at least ``value`` against every column, the column strategy at
    most ``value`` against every row). The cost is a walk of the game without the stage
    LPs. Also refuses entries for states the game never reaches and a ``value`` that is not
    the initial state's.
    """
    game = solution.game
    scale = max(1.0, game.max_utility() - game.min_utility())
    walk = _SolutionCheck(solution, SOLUTION_TOLERANCE * scale)
    root_value = with_recursion_limit(lambda: walk.value(game.new_initial_state()), game)
    if not math.isclose(root_value, solution.value, rel_tol=0, abs_tol=walk.tolerance):
        raise ValueError(f"the game value {solution.value:.9g} is not the initial state's "
                         f"value {root_value:.9g}")
    extra = len(solution._table) - len(walk.checked)
    if extra:
        raise ValueError(f"it has {extra} entries for states the game never reaches")


class _SolutionCheck:
    """The walk of :func:`check_solution`."""

    def __init__(self, solution: Solution, tolerance: float):
        self.table, self.key, self.tolerance = solution._table, solution._key, tolerance
        self.checked: set = set()

    def value(self, state: pyspiel.State) -> float:
        if state.is_terminal():
            return float(state.returns()[0])
        k = self.key(state)
        entry = self.table.get(k)
        if k in self.checked:
            return self.table[k].value
        where = f"the state after history {state.history()}"
        if not isinstance(entry, StateSolution):
            raise ValueError(f"no entry for {where}")
        v = entry.value
        if not math.isfinite(v):
            raise ValueError(f"the value of {where} is {v}")
        tol = self.tolerance
        if state.is_chance_node():
            if entry.strategies != ({}, {}):
                raise ValueError(f"{where} is a chance node but has strategies")
            outcomes = state.chance_outcomes()
            children = successors(state, [a for a, _ in outcomes], consume=True)
            expected = sum(p * self.value(c) for (_, p), c in zip(outcomes, children))
            if abs(expected - v) > tol:
                raise ValueError(f"the value {v:.9g} of {where} (a chance node) is not the "
                                 f"expectation {expected:.9g} of its children's values")
        else:
            rows, cols = legal_actions(state, 0), legal_actions(state, 1)
            x = self._distribution(entry.strategies[0], rows, where, 1)
            y = self._distribution(entry.strategies[1], cols, where, 2)
            children = joint_children(state, rows, cols, consume=True)
            payoffs = np.array([[self.value(c) for c in row] for row in children])
            if (x @ payoffs).min() < v - tol or (payoffs @ y).max() > v + tol:
                raise ValueError(
                    f"the strategies {entry.strategies} of {where} are not an equilibrium "
                    f"of its stage game with value {v:.9g}: player 1 is sure of "
                    f"{(x @ payoffs).min():.9g}, player 2 concedes at most "
                    f"{(payoffs @ y).max():.9g}")
        self.checked.add(k)
        return v

    def _distribution(self, probs: dict, actions: list[int], where: str,
                      player: int) -> np.ndarray:
        if not actions:
            if probs:
                raise ValueError(f"player {player} does not move at {where} but has a strategy")
            return np.ones(1)
        p = np.array([probs.get(a, np.nan) for a in actions])
        if (set(probs) != set(actions) or not np.isfinite(p).all()
                or p.min() < -self.tolerance or abs(p.sum() - 1.0) > self.tolerance):
            raise ValueError(f"player {player}'s strategy {probs} at {where} is not a "
                             f"distribution over the legal actions {actions}")
        return p
