"""The study's exact solvers beside backward induction: DO, BIAB and DOAB.

Bošanský, Lisý, Lanctot, Čermák, Winands, "Algorithms for computing strategies in
two-player simultaneous move games", Artificial Intelligence 237 (2016), Section 4:

* ``"bi"``: backward induction, every child of every stage evaluated and the stage solved
  (:mod:`smmcts_spiel.exact.solver` runs it fastest; here it counts its work);
* ``"do"``: a double oracle at every stage (:mod:`.double_oracle`): children evaluated only
  when a best response needs them, and only as far as it needs (bounds from the game's
  utility range);
* ``"biab"``: backward induction where the bounds of the two serialized alpha-beta
  searches (:mod:`.alpha_beta`) settle every subgame they meet in, without evaluating it;
* ``"doab"``: both: the double oracle prunes with the serialized bounds.

One recursion runs all four, as GTLibrary's ``SimAlphaBeta`` (its ``alphaBetaBounds`` and
``doubleOracle`` switches). Every state has bounds ``[lo, hi]`` on its value in one table
(filed under the solver's transposition key, so transpositions are solved once);
evaluating a state with a window ``[alpha, beta]`` either finds its value or proves it
outside the window and keeps the bound, as alpha-beta search does; a double oracle stopped
that way starts again from its restricted game when the state is needed more precisely.

Values are player 1's (pyspiel player 0's) utility.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.exact.alpha_beta import (
    SerializedBounds,
    decision_actions,
    joint_child,
    terminal_value,
)
from smmcts_spiel.exact.double_oracle import OracleCounts, double_oracle
from smmcts_spiel.exact.matrix_game import solve_matrix_game
from smmcts_spiel.exact.size_estimate import MAX_SECONDS, MAX_STAGE_CELLS, MAX_STATES, check_size
from smmcts_spiel.exact.solution import Solution, StateSolution
from smmcts_spiel.exact.stages import check_game, legal_actions, with_recursion_limit
from smmcts_spiel.exact.transpositions import solution_key

#: The solvers: ``method -> (serialized bounds, double oracle)``.
METHODS: dict[str, tuple[bool, bool]] = {
    "bi": (False, False), "do": (False, True), "biab": (True, False), "doab": (True, True)}
#: Slack of every bound and of the double oracle's improvement test, relative to the game's
#: utility range: values agree with backward induction's to a few times this.
TOLERANCE = 1e-11


def check_method(method: str) -> str:
    """``method`` if it names a solver of :data:`METHODS`; ValueError otherwise."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got "
                         f"{checks.shown(method)!r}{checks.did_you_mean(str(method), METHODS)}")
    return method


@dataclass(frozen=True)
class SolveStatistics:
    """What a solve did: the figures the study compares the solvers by.

    ``nodes_evaluated`` is the study's count: states whose stage (or chance expectation)
    the solver evaluated, the serialized searches' states excluded (they may be searched
    again and again); ``serialized_nodes`` counts those separately.
    """

    method: str
    nodes_evaluated: int  #: states evaluated by the main recursion (the paper's count)
    matrix_games: int  #: stage games solved: whole stages (BI, BIAB), restricted games (DO)
    serialized_nodes: int  #: states expanded by the serialized alpha-beta searches
    settled_by_bounds: int  #: states whose serialized bounds met (a pure equilibrium)
    pruned: int  #: best-response candidates the double oracle dropped by bounds
    window_cuts: int  #: evaluations that stopped at a bound outside their window
    states: int  #: distinct states given bounds (the table's size)
    seconds: float  #: processor time of the solve


@dataclass(frozen=True)
class StateResult:
    """The solve of the subgame at one state (:func:`solve_state`)."""

    value: float  #: player 1's value of the subgame
    strategies: tuple[dict[int, float], dict[int, float]]  #: both players' equilibrium
    #: strategies at the state, ``{action: probability}`` (``{}``: no move there)
    table: dict[Hashable, StateSolution]  #: every state the solve found exactly, by key
    statistics: SolveStatistics


@dataclass(frozen=True)
class ValueResult:
    """Player 1's value of a game and the statistics of the solve that found it."""

    value: float
    statistics: SolveStatistics


class _Stage:
    """A decision state's stage as a :class:`~smmcts_spiel.exact.double_oracle.LazyMatrix`:
    children made once, their bounds read from the solve's table (each side searched
    when first asked for), refined by the solve."""

    def __init__(self, solve: _PrunedInduction, state: pyspiel.State):
        self.solve = solve
        self.state = state
        self.rows, self.cols = decision_actions(state)
        self.children: dict[tuple[int, int], tuple[pyspiel.State, Hashable, list]] = {}

    def child(self, i: int, j: int) -> tuple[pyspiel.State, Hashable, list]:
        """The child after ``(i, j)``, its key (None: terminal) and its table entry."""
        found = self.children.get((i, j))
        if found is None:
            child = joint_child(self.state, self.rows[i], self.cols[j])
            found = self.children[i, j] = (child, *self.solve.lookup(child))
        return found

    def upper(self, i: int, j: int) -> float:
        child, k, entry = self.child(i, j)
        if k is not None:
            self.solve.search(child, k, 1)
        return entry[1]

    def lower(self, i: int, j: int) -> float:
        child, k, entry = self.child(i, j)
        if k is not None:
            self.solve.search(child, k, 0)
        return entry[0]

    def refine(self, i: int, j: int, alpha: float, beta: float) -> tuple[float, float]:
        child, k, entry = self.child(i, j)
        if k is not None:
            self.solve.evaluate(child, alpha, beta)
        return entry[0], entry[1]

    def values(self) -> np.ndarray:
        """Every child's value, each evaluated as far as needed."""
        out = np.empty((len(self.rows), len(self.cols)))
        for i in range(len(self.rows)):
            for j in range(len(self.cols)):
                lo, hi = self.refine(i, j, -math.inf, math.inf)
                out[i, j] = 0.5 * (lo + hi)
        return out

    def strategies(self, x: np.ndarray, y: np.ndarray, rows: list[int], cols: list[int]
                   ) -> tuple[dict[int, float], dict[int, float]]:
        """Mixed strategies over restricted ``rows`` / ``cols`` as the solver's
        ``{action: probability}`` over each mover's legal actions (``{}``: no move)."""
        out: list[dict[int, float]] = []
        for player, actions, support, probs in ((0, self.rows, rows, x), (1, self.cols, cols, y)):
            if not legal_actions(self.state, player):
                out.append({})
                continue
            full = dict.fromkeys(actions, 0.0)
            for index, p in zip(support, probs.tolist(), strict=True):
                full[actions[index]] += p
            out.append(full)
        return out[0], out[1]


class _PrunedInduction:
    """One solve of a pyspiel game by one of :data:`METHODS`."""

    def __init__(self, game: pyspiel.Game, method: str, keep_strategies: bool,
                 key: Callable[[pyspiel.State], Hashable]):
        check_game(game)
        self.method = method
        serialized, self.use_oracle = METHODS[method]
        self.keep_strategies = keep_strategies
        self.key = key
        self.utility_range = (float(game.min_utility()), float(game.max_utility()))
        self.tolerance = TOLERANCE * max(1.0, self.utility_range[1] - self.utility_range[0])
        self.bounds: dict[Hashable, list] = {}
        self.table: dict[Hashable, StateSolution] = {}
        self.restart: dict[Hashable, tuple[list[int], list[int]]] = {}
        self.serialized = (SerializedBounds(self.key, self.bounds, self.tolerance,
                                            self.utility_range) if serialized else None)
        self.searched: tuple[set, set] = (set(), set())  # keys searched, by first mover
        self.counts = OracleCounts()
        self.nodes = self.settled = self.cuts = self.stage_games = 0
        self.seconds = 0.0

    # -- the table of bounds -------------------------------------------------------------

    def entry(self, state: pyspiel.State) -> list:
        """``[lo, hi]`` bounds on ``state``'s value (:meth:`lookup`)."""
        return self.lookup(state)[1]

    def lookup(self, state: pyspiel.State) -> tuple[Hashable, list]:
        """``state``'s key and ``[lo, hi]`` bounds on its value: a terminal's returns (key
        None), otherwise the table's entry (the utility range until something is known)."""
        if state.is_terminal():
            r = terminal_value(state, self.utility_range)
            return None, [r, r]
        k = self.key(state)
        entry = self.bounds.get(k)
        if entry is None:
            entry = self.bounds[k] = list(self.utility_range)
        return k, entry

    def search(self, state: pyspiel.State, k: Hashable, first: int) -> None:
        """Give ``state`` (key ``k``) the bound of the serialization where ``first`` moves
        first (a lower bound for player 1, an upper bound for player 2), once."""
        if self.serialized is None or k in self.searched[first]:
            return
        self.searched[first].add(k)
        if first == 0:
            self.serialized.lower(state)
        else:
            self.serialized.upper(state)
        if k in self.searched[1 - first] and self.exact(self.bounds[k]):
            self.settled += 1

    def exact(self, entry: list) -> bool:
        return entry[1] - entry[0] <= self.tolerance

    # -- the recursion -------------------------------------------------------------------

    def run(self, state: pyspiel.State) -> float:
        start = time.process_time()
        try:
            entry = self.entry(state)
            if not state.is_terminal():
                self.evaluate(state, -math.inf, math.inf)
            return 0.5 * (entry[0] + entry[1])
        finally:
            self.seconds += time.process_time() - start

    def evaluate(self, state: pyspiel.State, alpha: float, beta: float) -> None:
        """Tighten ``state``'s bounds until they meet, or show its value at most ``alpha``
        or at least ``beta`` (each within the tolerance)."""
        k, entry = self.lookup(state)
        self.search(state, k, 0)
        self.search(state, k, 1)
        tol = self.tolerance
        if self.exact(entry) or entry[1] <= alpha + tol or entry[0] >= beta - tol:
            return
        self.nodes += 1
        if state.is_chance_node():
            lo, hi = self._chance(state, k, alpha, beta)
        else:
            lo, hi = self._decision(state, k, entry, alpha, beta)
        if hi - lo <= tol:
            entry[0] = entry[1] = 0.5 * (lo + hi)
        else:
            self.cuts += 1
            entry[0], entry[1] = max(entry[0], lo), min(entry[1], hi)

    def _chance(self, state: pyspiel.State, k: Hashable, alpha: float, beta: float
                ) -> tuple[float, float]:
        outcomes = state.chance_outcomes()
        children = [state.child(a) for a, _ in outcomes]
        entries = []
        for child in children:
            key, entry = self.lookup(child)
            if key is not None:
                self.search(child, key, 0)
                self.search(child, key, 1)
            entries.append(entry)
        probs = [p for _, p in outcomes]
        tol = self.tolerance

        def total(side: int) -> float:
            return sum(p * e[side] for p, e in zip(probs, entries))

        for p, child, e in zip(probs, children, entries):
            lo, hi = total(0), total(1)
            if hi <= alpha + tol or lo >= beta - tol:
                break
            if self.exact(e) or child.is_terminal():
                continue
            # The window this outcome needs given the others' bounds (the study's chance
            # nodes: GTLibrary's DOUtilityCalculator).
            self.evaluate(child, (alpha - (hi - p * e[1])) / p, (beta - (lo - p * e[0])) / p)
        lo, hi = total(0), total(1)
        if self.keep_strategies and hi - lo <= tol:
            self.table[k] = StateSolution(0.5 * (lo + hi), ({}, {}))
        return lo, hi

    def _decision(self, state: pyspiel.State, k: Hashable, entry: list, alpha: float,
                  beta: float) -> tuple[float, float]:
        stage = _Stage(self, state)
        if not self.use_oracle:
            solution = solve_matrix_game(stage.values())
            self.stage_games += 1
            self._record(k, stage, solution.value, solution.row_strategy, solution.col_strategy,
                         list(range(len(stage.rows))), list(range(len(stage.cols))))
            return solution.value, solution.value
        restart = self.restart.pop(k, None)
        rows, cols = restart if restart is not None else self._first_actions(k, stage)
        result = double_oracle(stage, len(stage.rows), len(stage.cols), lo=entry[0],
                               hi=entry[1], alpha=alpha, beta=beta, rows=rows, cols=cols,
                               tolerance=self.tolerance, counts=self.counts)
        if not result.exact:
            self.restart[k] = (result.rows, result.cols)
            return result.lo, result.hi
        self._record(k, stage, result.value, result.row_strategy, result.col_strategy,
                     result.rows, result.cols)
        return result.value, result.value

    def _first_actions(self, k: Hashable, stage: _Stage) -> tuple[list[int], list[int]]:
        """The restricted game a stage's double oracle starts from: each player's move in
        the serialization where they move first (their pure maximin), else the first."""
        first = []
        for player, actions in ((0, stage.rows), (1, stage.cols)):
            move = None if self.serialized is None else self.serialized.best_move(k, player)
            first.append([actions.index(move) if move in actions else 0])
        return first[0], first[1]

    def _record(self, k: Hashable, stage: _Stage, value: float, x: np.ndarray, y: np.ndarray,
                rows: list[int], cols: list[int]) -> None:
        if self.keep_strategies:
            self.table[k] = StateSolution(float(value), stage.strategies(x, y, rows, cols))

    # -- every state's strategies --------------------------------------------------------

    def complete(self, state: pyspiel.State, done: set) -> None:
        """Give every state below ``state`` an entry with equilibrium strategies: the
        states the pruned solve never solved are solved now, their children first."""
        if state.is_terminal():
            return
        k = self.key(state)
        if k in done:
            return
        done.add(k)
        if state.is_chance_node():
            for action, _ in state.chance_outcomes():
                self.complete(state.child(action), done)
        else:
            rows, cols = decision_actions(state)
            for row in rows:
                for col in cols:
                    self.complete(joint_child(state, row, col), done)
        if k in self.table:
            return
        entry = self.entry(state)
        self.nodes += 1
        if state.is_chance_node():
            lo, hi = self._chance(state, k, -math.inf, math.inf)
        else:
            lo, hi = self._decision(state, k, entry, -math.inf, math.inf)
        entry[0] = entry[1] = 0.5 * (lo + hi)

    def statistics(self) -> SolveStatistics:
        serialized = self.serialized.nodes if self.serialized is not None else 0
        return SolveStatistics(self.method, self.nodes,
                               self.stage_games + self.counts.restricted_games, serialized,
                               self.settled, self.counts.pruned, self.cuts, len(self.bounds),
                               self.seconds)


def solve_value(game: pyspiel.Game | str, method: str = "doab", *,
                use_transpositions: bool = True, max_states: int | None = MAX_STATES,
                max_seconds: float | None = MAX_SECONDS,
                max_stage_cells: int | None = MAX_STAGE_CELLS) -> ValueResult:
    """Player 1's value of ``game`` by ``method`` (:data:`METHODS`), with the statistics.

    The game is checked and its size estimated as by
    :func:`smmcts_spiel.exact.solver.game_value` (the limits are backward induction's: the
    pruning methods store at most as many states and usually take far less time, so pass
    ``max_seconds=None`` to try a game estimated too slow for BI).
    """
    check_method(method)
    game = checks.load_game(game)
    check_size(game, use_transpositions=use_transpositions, max_states=max_states,
               max_seconds=max_seconds, max_stage_cells=max_stage_cells)
    solve = _PrunedInduction(game, method, False, solution_key(game, use_transpositions))
    value = with_recursion_limit(lambda: solve.run(game.new_initial_state()), game)
    return ValueResult(value, solve.statistics())


def solve(game: pyspiel.Game | str, method: str = "doab", *, use_transpositions: bool = True,
          max_states: int | None = MAX_STATES,
          max_seconds: float | None = MAX_SECONDS,
          max_stage_cells: int | None = MAX_STAGE_CELLS
          ) -> tuple[Solution, SolveStatistics]:
    """The solution of ``game`` by ``method``: values and equilibrium strategies of every
    reachable state (as :func:`smmcts_spiel.exact.solver.solve`), and the statistics.

    The value and the strategies of the states the pruned solve reaches come from it;
    every other state is then solved, its children first, by the same stage solver (a
    complete solution needs them all, so this walks the whole game as BI does; the
    statistics cover both parts).
    """
    check_method(method)
    game = checks.load_game(game)
    check_size(game, use_transpositions=use_transpositions, max_states=max_states,
               max_seconds=max_seconds, max_stage_cells=max_stage_cells)
    solve = _PrunedInduction(game, method, True, solution_key(game, use_transpositions))
    root = game.new_initial_state()

    def run() -> float:
        value = solve.run(root)
        start = time.process_time()
        solve.complete(root, set())
        solve.seconds += time.process_time() - start
        return value

    value = with_recursion_limit(run, game)
    return Solution(game, value, solve.table, solve.key), solve.statistics()


def solve_state(state: pyspiel.State, method: str = "doab", *,
                key: Callable[[pyspiel.State], Hashable] | None = None) -> StateResult:
    """The value and both players' equilibrium strategies of the subgame at ``state``.

    ``state`` is a decision or chance state of a game :func:`solve` takes, or a view of one
    with the same interface (a depth-limited search's,
    :class:`smmcts_spiel.exact.depth_limit.DepthLimitedState`); ``key`` files its states
    (default: the solver's transposition keys). No size limit is applied: the caller bounds
    the work (a depth limit, a deadline). The result's ``table`` holds the strategies of
    every state below that the pruned solve found exactly, for a search that starts there
    next.
    """
    check_method(method)
    game = state.get_game()
    solve = _PrunedInduction(game, method, True, key or solution_key(game))

    def run() -> tuple[float, tuple[dict[int, float], dict[int, float]]]:
        value = solve.run(state)
        if state.is_terminal() or state.is_chance_node():
            return value, ({}, {})
        k = solve.key(state)
        if k not in solve.table:  # settled by the serialized bounds: solve its stage
            start = time.process_time()
            solve._decision(state, k, solve.entry(state), -math.inf, math.inf)
            solve.seconds += time.process_time() - start
        return value, solve.table[k].strategies

    value, strategies = with_recursion_limit(run, game)
    return StateResult(value, strategies, solve.table, solve.statistics())
