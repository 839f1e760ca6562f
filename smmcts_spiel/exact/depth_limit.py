"""Depth-limited search with the pruning solvers: the game cut off ``depth`` moves down.

Minimax search is backward induction on a game cut off at a depth, its states there valued
by an evaluation function; Bošanský et al., AIJ 2016, Section 5.1, do the same for
simultaneous-move games with BI, DO, BIAB and DOAB. A depth of ``d`` is ``d`` joint
actions (a sequential player's move counts as one); chance outcomes do not count, so a
cut-off state may be a chance node (the evaluation values it, as the study's games do).

:class:`DepthLimitedState` is that cut-off game seen through pyspiel's state interface, so
:func:`smmcts_spiel.exact.pruned_induction.solve_state` solves it unchanged: a state with
no moves left is terminal and returns the evaluation. Every state it makes shares one
:class:`Horizon`: the evaluation (each cut-off state evaluated once), the count of
cut-off states the search reached (none: the subgame was solved exactly, the evaluation
never consulted) and a deadline, checked at every move, at which the search stops with
:class:`SearchTimeout`.

Values are player 1's (pyspiel player 0's) utility.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import pyspiel

from smmcts_spiel.exact.pruned_induction import StateResult, check_method, solve_state
from smmcts_spiel.exact.solution import StateSolution
from smmcts_spiel.exact.stages import check_game
from smmcts_spiel.exact.transpositions import solution_key
from smmcts_spiel.games.simultaneous import per_player_history

#: A leaf evaluation: player 1's estimated value of a non-terminal state.
Evaluator = Callable[[pyspiel.State], float]


class SearchTimeout(Exception):
    """A depth-limited search reached its deadline; its result is lost."""


class Horizon:
    """What the states of one depth-limited search share (see the module docstring)."""

    def __init__(self, game: pyspiel.Game, evaluator: Evaluator | None,
                 deadline: float | None = None, clock: Callable[[], float] = time.perf_counter):
        self.evaluator = evaluator
        self.deadline = deadline
        self.clock = clock
        self.base_key = solution_key(game)
        self.utility_range = (float(game.min_utility()), float(game.max_utility()))
        self.utility_sum = float(game.utility_sum() or 0.0)
        self.values: dict[Hashable, float] = {}  # cut-off states' evaluations, by key
        self.cut_offs = 0  # cut-off states reached (each counted once)

    def key(self, state: DepthLimitedState) -> Hashable:
        """A state's key for the solver: the game's transposition key and the depth left
        (the same position with fewer moves left is another state of the cut-off game)."""
        return self.base_key(state.state), state.remaining

    def tick(self) -> None:
        """One move made: SearchTimeout once the deadline has passed."""
        if self.deadline is not None and self.clock() > self.deadline:
            raise SearchTimeout

    def evaluation(self, state: pyspiel.State) -> float:
        """Player 1's evaluation of a cut-off ``state``, checked against the utility range
        (the solvers' bounds start from it)."""
        k = self.base_key(state)
        value = self.values.get(k)
        if value is not None:
            return value
        if self.evaluator is None:
            raise ValueError("the depth-limited search reached a state above its depth limit "
                             "without an evaluation function; give one")
        value = float(self.evaluator(state))
        low, high = self.utility_range
        if not low <= value <= high:
            raise ValueError(f"the evaluation function gave {value!r} at a state of "
                             f"{state.get_game()}, outside the game's utility range "
                             f"[{low:g}, {high:g}]; an evaluation must be a value the game "
                             "can return to player 1")
        self.values[k] = value
        self.cut_offs += 1
        return value


class DepthLimitedState:
    """A pyspiel state with ``remaining`` moves left before the cut-off (the interface the
    solvers use: the moves, chance, terminals and returns, clones and children)."""

    __slots__ = ("state", "remaining", "horizon")

    def __init__(self, state: pyspiel.State, remaining: float, horizon: Horizon):
        self.state = state
        self.remaining = remaining
        self.horizon = horizon

    def is_terminal(self) -> bool:
        return self.remaining <= 0 or self.state.is_terminal()

    def returns(self) -> list[float]:
        if self.state.is_terminal():
            return list(self.state.returns())
        value = self.horizon.evaluation(self.state)
        return [value, self.horizon.utility_sum - value]

    def is_chance_node(self) -> bool:
        return self.state.is_chance_node()

    def is_simultaneous_node(self) -> bool:
        return self.state.is_simultaneous_node()

    def current_player(self) -> int:
        return self.state.current_player()

    def legal_actions(self, *player: int) -> list[int]:
        return self.state.legal_actions(*player)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.state.chance_outcomes()

    def get_game(self) -> pyspiel.Game:
        return self.state.get_game()

    def clone(self) -> DepthLimitedState:
        return DepthLimitedState(self.state.clone(), self.remaining, self.horizon)

    def apply_action(self, action: int) -> None:
        self.horizon.tick()
        if not self.state.is_chance_node():
            self.remaining -= 1
        self.state.apply_action(action)

    def apply_actions(self, actions: list[int]) -> None:
        self.horizon.tick()
        self.remaining -= 1
        self.state.apply_actions(actions)

    def child(self, action: int) -> DepthLimitedState:
        child = self.clone()
        child.apply_action(action)
        return child


@dataclass(frozen=True)
class DepthResult:
    """A depth-limited search of one state (:func:`search`)."""

    depth: float  #: the depth limit (``math.inf``: none)
    result: StateResult  #: value, root strategies, the states solved (keys: ``(key, depth
    #: left)``) and the solver's statistics
    complete: bool  #: no cut-off state reached: the subgame's exact solution
    cut_offs: int  #: cut-off states evaluated


def search(state: pyspiel.State, depth: float, evaluator: Evaluator | None = None,
           method: str = "doab", *, deadline: float | None = None,
           clock: Callable[[], float] = time.perf_counter) -> DepthResult:
    """Solve the game at ``state`` cut off ``depth`` moves down (``math.inf``: the whole
    subgame), its cut-off states valued by ``evaluator`` (player 1's value), by ``method``
    of :data:`smmcts_spiel.exact.pruned_induction.METHODS`.

    With ``deadline`` (a time of ``clock``) the search raises :class:`SearchTimeout` at the
    first move it makes after it.
    """
    check_method(method)
    game = state.get_game()
    check_game(game)
    if not (depth == math.inf or isinstance(depth, int) and depth >= 1):
        raise ValueError(f"depth must be a positive integer or math.inf, got {depth!r}")
    if state.is_terminal():
        raise ValueError("a terminal state has nothing to search")
    horizon = Horizon(game, evaluator, deadline, clock)
    root = DepthLimitedState(per_player_history(state), depth, horizon)
    result = solve_state(root, method, key=horizon.key)
    return DepthResult(depth, result, horizon.cut_offs == 0, horizon.cut_offs)


def reused(solved: StateSolution, depth: int, earlier: DepthResult) -> DepthResult:
    """A state that the ``earlier`` search solved with ``depth`` moves left, as a result of
    depth ``depth`` of a search from that state (its table: the earlier one's, which holds
    the states below it with fewer moves left)."""
    result = StateResult(solved.value, solved.strategies, earlier.result.table,
                         earlier.result.statistics)
    return DepthResult(depth, result, False, 0)
