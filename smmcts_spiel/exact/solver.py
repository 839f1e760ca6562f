"""Exact values and equilibria of two-player zero-sum games by backward induction.

The games are simultaneous-move games with perfect information between stages (the
paper's setting: both players see everything that happened before the current stage),
possibly with chance, and sequential perfect-information games (a node where one player
moves is a 1 x n stage). Every stage is a zero-sum matrix game whose entries are the
values of its children; :func:`smmcts_spiel.exact.matrix_game.solve_matrix_game` solves it.

Two entry points:

* explicit trees of :mod:`smmcts_spiel.trees`: :func:`tree_value`, :func:`solve_tree`;
* pyspiel games: :func:`game_value`, :func:`solve`.

Transpositions (the same position reached by different histories, e.g. Goofspiel's
hands, prize cards and score; Oshi-Zumo's coins, wrestler and move number) are solved once
when the state has a ``transposition_key()`` method or the game is in
:data:`TRANSPOSITION_KEYS`. This is what makes Goofspiel with 6 cards solvable in seconds
where the sequence-form LP on the turn-based conversion cannot even build its matrices.

Values are player 1's (pyspiel player 0's) utility; in constant-sum games player 2's is
``utility_sum - value``.
"""

from __future__ import annotations

import ast
import json
import math
import os
import random
import sys
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
import tqdm
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks, trees
from smmcts_spiel.exact import turn_based
from smmcts_spiel.exact.matrix_game import SMALL_GAME_SIZE, solve_matrix_game

# ----------------------------------------------------------------------------------------
# Explicit matrix trees

#: Where a node sits in a matrix tree (see :data:`smmcts_spiel.trees.Path`).
Path = trees.Path


@dataclass(frozen=True)
class NodeSolution:
    """Value of a node and, at a matrix stage, both players' equilibrium strategies.

    ``row_strategy`` (player 1) and ``col_strategy`` (player 2) are ``None`` at leaves and
    chance stages.
    """

    value: float
    row_strategy: np.ndarray | None = None
    col_strategy: np.ndarray | None = None


@dataclass(frozen=True)
class TreeSolution:
    """The solution of a matrix tree: ``nodes[path]`` for every node, in preorder.

    The order of ``nodes`` is :func:`smmcts_spiel.matrix_tree.iter_nodes`'s order, so
    ``list(nodes.values())[k]`` belongs to the ``k``-th node that ``iter_nodes`` yields.
    """

    root: trees.Node
    nodes: dict[Path, NodeSolution]

    @property
    def value(self) -> float:
        """Player 1's value of the game."""
        return self.nodes[()].value

    def strategies(self, exploration: float = 0.0) -> dict[Path, tuple[np.ndarray, np.ndarray]]:
        """Both players' equilibrium strategy at every matrix stage, keyed by path.

        With ``exploration = gamma > 0`` each strategy is mixed with the uniform one,
        ``(1 - gamma) * sigma + gamma / |A|``: the strategy an SM-MCTS selector with
        exploration ``gamma`` converges to at best (the floors of the paper's Fig. 3).
        """
        if not 0.0 <= exploration <= 1.0:
            raise ValueError(f"exploration must be in [0, 1], got {checks.shown(exploration)!r}")

        def mix(p: np.ndarray) -> np.ndarray:
            return (1.0 - exploration) * p + exploration / len(p)

        return {path: (mix(s.row_strategy), mix(s.col_strategy))
                for path, s in self.nodes.items()
                if s.row_strategy is not None and s.col_strategy is not None}


def tree_value(node: trees.Node) -> float:
    """Player 1's equilibrium value of a matrix tree (or any of its subtrees)."""
    if isinstance(node, trees.MatrixTree):
        node = node.root
    if isinstance(node, trees.MatrixStage):
        values = [[tree_value(c) for c in row] for row in node.children]
        return solve_matrix_game(values).value
    if isinstance(node, trees.ChanceStage):
        return sum(p * tree_value(c) for p, c in node.outcomes)
    return trees.leaf_value(node)


def solve_tree(node: trees.Node) -> TreeSolution:
    """Value and equilibrium strategies of every node of a matrix tree."""
    if isinstance(node, trees.MatrixTree):
        node = node.root
    nodes: dict[Path, NodeSolution] = {}
    preorder: list[Path] = []

    def visit(n: trees.Node, path: Path) -> float:
        preorder.append(path)
        if isinstance(n, trees.MatrixStage):
            values = [[visit(c, path + ((i, j),)) for j, c in enumerate(row)]
                      for i, row in enumerate(n.children)]
            sol = solve_matrix_game(values)
            nodes[path] = NodeSolution(sol.value, sol.row_strategy, sol.col_strategy)
        elif isinstance(n, trees.ChanceStage):
            nodes[path] = NodeSolution(
                sum(p * visit(c, path + ((k,),)) for k, (p, c) in enumerate(n.outcomes)))
        else:
            nodes[path] = NodeSolution(trees.leaf_value(n))
        return nodes[path].value

    visit(node, ())
    return TreeSolution(node, {path: nodes[path] for path in preorder})


# ----------------------------------------------------------------------------------------
# pyspiel games

#: ``key(state) -> hashable`` per game short name, for games whose states have no
#: ``transposition_key()`` method. Two states with the same key must have the same
#: subgame (same future and same player-1 returns for the same future play); the key
#: need not tell apart chance and decision nodes (the solver adds that).
TRANSPOSITION_KEYS: dict[str, Callable[[pyspiel.Game], Callable[[pyspiel.State], Hashable]]] = {}


def _goofspiel_key(game: pyspiel.Game) -> Callable[[pyspiel.State], Hashable]:
    """OpenSpiel's C++ goofspiel: hands, prize cards left, current prize, point difference.

    The public observation string (``imp_info=False``) shows both hands, the prize cards
    left, the current prize card and both players' points; the ``Win sequence`` line is
    history and is dropped. With zero-sum returns (``win_loss``, ``point_difference``)
    only the point difference matters for the future.
    """
    params = game.get_parameters()
    if params.get("imp_info", False):
        raise ValueError("goofspiel with imp_info=True hides the opponent's cards, so it is not a "
                         "game of perfect information between stages; load it with imp_info=False")

    def key(state: pyspiel.State) -> Hashable:
        current, remaining, hand0, hand1, _, points = state.observation_string(0).splitlines()
        p0, p1 = points[len("Points: "):].split()
        if state.is_chance_node():
            current = None
        return current, remaining, hand0, hand1, int(p0) - int(p1)

    return key


TRANSPOSITION_KEYS["goofspiel"] = _goofspiel_key


def _oshi_zumo_key(game: pyspiel.Game) -> Callable[[pyspiel.State], Hashable]:
    """OpenSpiel's C++ oshi_zumo: both players' coins, the wrestler's position, and the
    number of moves played (the game stops at ``horizon`` moves, and since both players may
    bid 0 a position can recur at any move number).

    The observation string is the whole position (``Coins: 8 9, Field: #....W..#``).
    """
    del game

    def key(state: pyspiel.State) -> Hashable:
        return state.observation_string(0), state.move_number()

    return key


TRANSPOSITION_KEYS["oshi_zumo"] = _oshi_zumo_key


def _markov_soccer_key(game: pyspiel.Game) -> Callable[[pyspiel.State], Hashable]:
    """OpenSpiel's C++ markov_soccer: the board (both players, the ball or who holds it:
    the state's string), the move number (the game stops at ``horizon``), and at a chance
    node the two actions it is about to resolve (the last two of the history).
    """
    del game

    def key(state: pyspiel.State) -> Hashable:
        if state.is_chance_node():
            return str(state), state.move_number(), tuple(state.history()[-2:])
        return str(state), state.move_number()

    return key


TRANSPOSITION_KEYS["markov_soccer"] = _markov_soccer_key

# ----------------------------------------------------------------------------------------
# Sizes and times, before solving

#: Estimated distinct states (each a stage game) :func:`solve` and :func:`game_value` take
#: on unless told otherwise (``max_states``): the table of a solve holds one entry per
#: state. The estimates are upper bounds: 4x4 Othello's is 1.06 million (it has 56,621).
MAX_STATES = 2_000_000
#: Estimated seconds of solving (:func:`estimate_size`) above which a solve is refused
#: unless told otherwise (``max_seconds``).
MAX_SECONDS = 300.0
#: Largest stage matrix (rows x columns, ``max_stage_cells``) solved unless told otherwise:
#: all of a stage's children are held at once, and its dense LP grows faster than its size
#: (Blotto's 816 x 816 stage took 3.5 s, 1140 x 1140 12 s, 1771 x 1771 about a minute).
MAX_STAGE_CELLS = 1_000_000

# The time model of a solve, per stage of r x c children: STATE_SECONDS, CHILD_SECONDS per
# child (clone, move, transposition key, look-up; PYTHON_CHILD_SECONDS for a game written
# in Python) and, when both players have a choice, the stage solve: the small simplex
# (up to SMALL_GAME_SIZE actions; SIMPLEX_SECONDS + SIMPLEX_CELL_SECONDS * r c min(r, c))
# or HiGHS's LP (LP_SECONDS + LP_CELL_SECONDS * (r c) ** LP_EXPONENT). Fitted on one pinned
# core of the shared 2-core machine (2026-11-26 01:40 UTC, the other core loaded): random
# uniform stages (rarely a saddle point) 3 x 3 0.02 ms, 12 x 12 0.32 ms, 13 x 13 1.2 ms,
# 80 x 80 5.1 ms, 160 x 160 24 ms, 320 x 320 175 ms, 480 x 480 0.80 s; children 1.3 us
# (Oshi-Zumo), 2.7 us (Goofspiel), 23 us (smmcts_goofspiel). With the states' upper bounds
# the estimates are 2-8x the measured solves (Oshi-Zumo coins=10 and 15, Goofspiel-7
# descending, Blotto coins=15), never below.
STATE_SECONDS = 1e-5
CHILD_SECONDS = 3e-6
PYTHON_CHILD_SECONDS = 2.5e-5
SIMPLEX_SECONDS = 2e-5
SIMPLEX_CELL_SECONDS = 2e-7
LP_SECONDS = 1.2e-3
LP_CELL_SECONDS = 1.8e-9
LP_EXPONENT = 1.6

#: ``stages(game) -> (counts, rows, columns)`` per game short name: classes of stages, as
#: arrays: an upper bound on how many distinct non-terminal states of each stage size the
#: solver visits with the game's transposition key (a chance node counts as a stage of one
#: column and one row per outcome).
STAGE_ESTIMATES: dict[str, Callable[[pyspiel.Game], tuple[np.ndarray, ...]]] = {}


class GameTooLarge(ValueError):
    """A solve refused before it starts: the game is estimated above one of the limits."""


def size_limits(enforced: bool = True) -> dict[str, Any]:
    """The size limits of :func:`solve` as keyword arguments: the defaults (``{}``), or
    none at all (every limit None) for a caller who means to solve however large a game."""
    return {} if enforced else dict(max_states=None, max_seconds=None, max_stage_cells=None)


@dataclass(frozen=True)
class SizeEstimate:
    """What solving a game takes, estimated before solving (:func:`estimate_size`)."""

    states: float  #: distinct non-terminal states (stage games), an upper bound
    cells: float  #: children evaluated: the stage matrices' entries, summed
    largest_stage: tuple[int, int]  #: rows x columns of the largest stage matrix
    seconds: float  #: time on one core of the reference machine (the time model above)

    def __str__(self) -> str:
        r, c = self.largest_stage
        return (f"{checks.approximately(self.states)} states, "
                f"{checks.approximately(self.cells)} stage-matrix cells, the largest stage "
                f"{r} x {c}")


def stage_seconds(rows, cols, python_game: bool = False) -> np.ndarray:
    """Seconds the time model gives to one stage of ``rows`` x ``cols`` (arrays)."""
    r, c = np.asarray(rows, dtype=float), np.asarray(cols, dtype=float)
    cells = r * c
    child = PYTHON_CHILD_SECONDS if python_game else CHILD_SECONDS
    mixed = (r > 1) & (c > 1)
    small = np.maximum(r, c) <= SMALL_GAME_SIZE
    with np.errstate(over="ignore"):
        solve = np.where(small, SIMPLEX_SECONDS + SIMPLEX_CELL_SECONDS * cells * np.minimum(r, c),
                         LP_SECONDS + LP_CELL_SECONDS * cells ** LP_EXPONENT)
    return STATE_SECONDS + child * cells + np.where(mixed, solve, 0.0)


def _goofspiel_stages(game: pyspiel.Game) -> tuple[np.ndarray, ...]:
    """After ``r`` rounds, ``n - r`` cards each: both hands (``C(n, r)`` each), the prizes
    dealt (random order: which ones, and the one on the table or none yet) and the point
    difference (at most twice the ``r`` largest prizes)."""
    params = game.get_parameters()
    n = params["num_cards"]
    turns = params.get("num_turns", -1)
    turns = n if turns is None or turns < 0 else min(turns, n)
    counts = []
    for r in range(turns):
        prizes = math.comb(n, r) * (n - r + 1) if params["points_order"] == "random" else 1
        differences = 2 * sum(range(n - r + 1, n + 1)) + 1
        counts.append(float(math.comb(n, r)) ** 2 * prizes * differences)
    sizes = np.arange(n, n - turns, -1)
    return np.array(counts), sizes, sizes


def _oshi_zumo_stages(game: pyspiel.Game) -> tuple[np.ndarray, ...]:
    """Both players' coins (a bid of ``min_bid`` up to all of them), the wrestler's
    position and the move number."""
    params = game.get_parameters()
    bids = np.maximum(np.arange(params["coins"] + 1) - params.get("min_bid", 0) + 1, 1)
    rows, cols = np.meshgrid(bids, bids)
    counts = np.full(rows.size, float((2 * params["size"] + 1) * params["horizon"]))
    return counts, rows.ravel(), cols.ravel()


def _othello_stages(game: pyspiel.Game) -> tuple[np.ndarray, ...]:
    """Each cell but the four starting ones empty, black or white, and who moves; a third
    of the empty cells as moves."""
    n = game.get_parameters()["board_size"]
    moves = max(1, (n * n - 4) // 3)
    return np.array([2.0 * 3.0 ** (n * n - 4)]), np.array([moves]), np.array([1])


STAGE_ESTIMATES.update(goofspiel=_goofspiel_stages, smmcts_goofspiel=_goofspiel_stages,
                       oshi_zumo=_oshi_zumo_stages, smmcts_othello=_othello_stages)


def _walk_stages(game: pyspiel.Game, walks: int) -> tuple[np.ndarray, ...]:
    """Knuth's estimate of the tree's stages from ``walks`` random walks: each stage met at
    depth ``d`` stands for the product of the branching factors above it, divided by
    ``walks`` (unbiased for the tree; an over-estimate when transpositions merge states)."""
    rng = random.Random(0)
    counts, rows, cols = [], [], []
    for _ in range(walks):
        state, weight = game.new_initial_state(), 1.0
        while not state.is_terminal() and weight < 1e300:
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                counts.append(weight / walks)
                rows.append(len(outcomes))
                cols.append(1)
                weight *= len(outcomes)
                state.apply_action(rng.choice(outcomes)[0])
                continue
            moves0, moves1 = legal_actions(state, 0), legal_actions(state, 1)
            counts.append(weight / walks)
            rows.append(max(len(moves0), 1))
            cols.append(max(len(moves1), 1))
            weight *= rows[-1] * cols[-1]
            if state.is_simultaneous_node():
                state.apply_actions([rng.choice(moves0), rng.choice(moves1)])
            else:
                state.apply_action(rng.choice(moves0 or moves1))
    return np.array(counts, dtype=float), np.array(rows), np.array(cols)


def _tree_stages(tree: trees.MatrixTree) -> tuple[np.ndarray, ...]:
    shapes = [node.shape if isinstance(node, trees.MatrixStage) else (len(node.outcomes), 1)
              for node in trees.iter_nodes(tree.root) if isinstance(node, trees.MatrixStage)
              or isinstance(node, trees.ChanceStage)]
    rows, cols = np.array(shapes, dtype=float).reshape(-1, 2).T
    return np.ones(len(shapes)), rows, cols


def estimate_size(game: pyspiel.Game, use_transpositions: bool = True,
                  walks: int = 64) -> SizeEstimate:
    """About how many states, stage-matrix cells and seconds solving ``game`` takes.

    An explicit tree's stages are counted; a game of :data:`STAGE_ESTIMATES` gets its upper
    bound; any other game Knuth's estimate from ``walks`` random walks. The seconds come
    from :func:`stage_seconds` (the time model above :data:`STAGE_ESTIMATES`).
    """
    tree = explicit_tree(game)
    estimate = STAGE_ESTIMATES.get(game.get_type().short_name)
    if tree is not None:
        counts, rows, cols = _tree_stages(tree)
    elif use_transpositions and estimate is not None:
        counts, rows, cols = estimate(game)
    else:
        counts, rows, cols = _walk_stages(game, walks)
    if not len(counts):
        return SizeEstimate(0.0, 0.0, (0, 0), 0.0)
    python_game = not type(game).__module__.startswith("pyspiel")
    largest = int(np.argmax(np.asarray(rows, dtype=float) * cols))
    with np.errstate(over="ignore"):
        return SizeEstimate(
            min(float(counts.sum()), 1e300), min(float((counts * rows * cols).sum()), 1e300),
            (int(rows[largest]), int(cols[largest])),
            min(float((counts * stage_seconds(rows, cols, python_game)).sum()), 1e300))


def estimate_states(game: pyspiel.Game, use_transpositions: bool = True,
                    walks: int = 64) -> float:
    """About how many distinct non-terminal states (stage games) solving ``game`` visits
    (:func:`estimate_size`)."""
    return estimate_size(game, use_transpositions, walks).states


def check_size(game: pyspiel.Game, max_states: int | None = MAX_STATES,
               use_transpositions: bool = True, max_seconds: float | None = MAX_SECONDS,
               max_stage_cells: int | None = MAX_STAGE_CELLS) -> SizeEstimate:
    """Refuse (:class:`GameTooLarge`) to solve ``game`` if it has more than about
    ``max_states`` states, would take more than about ``max_seconds``, or has a stage matrix
    of more than ``max_stage_cells`` cells (None: no limit); returns the estimate
    (:func:`estimate_size`).
    """
    estimate = estimate_size(game, use_transpositions)
    if max_states is not None:
        minutes = estimate.seconds / 60
        try:
            checks.check_size(
                estimate.states, max_states, f"the game {game}",
                f"solving it could take about {minutes:.3g} minutes ({estimate}); choose a "
                "smaller game, or pass max_states=None (or a larger limit) to solve it anyway",
                unit="states (stage games) to solve")
        except ValueError as e:
            raise GameTooLarge(str(e)) from None
    rows, cols = estimate.largest_stage
    if max_stage_cells is not None and rows * cols > max_stage_cells:
        raise GameTooLarge(
            f"the game {game} has a stage of {rows} x {cols} joint actions, more than the "
            f"limit of max_stage_cells={max_stage_cells:g}: its children are held at once and "
            f"its LP grows faster than its size (solving could take about "
            f"{estimate.seconds / 60:.3g} minutes); choose a smaller game, or pass "
            "max_stage_cells=None (or a larger limit) to solve it anyway")
    if max_seconds is not None and estimate.seconds > max_seconds:
        raise GameTooLarge(
            f"solving the game {game} would take about {estimate.seconds / 60:.3g} minutes "
            f"({estimate}), more than the limit of max_seconds={max_seconds:g}; choose a "
            "smaller game, or pass max_seconds=None (or a larger limit) to solve it anyway")
    return estimate


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


def check_game(game: pyspiel.Game) -> None:
    """Raise ValueError unless backward induction applies to ``game``."""
    checks.check_game(game, "the solver", explicit_chance=True,
                      hint="use sequence_form_lp or CFR for such games")


def transposition_key(game: pyspiel.Game) -> Callable[[pyspiel.State], Hashable] | None:
    """The transposition key the solver uses for ``game``'s states, or None.

    A ``transposition_key()`` method on the states wins; otherwise the
    :data:`TRANSPOSITION_KEYS` entry for the game's short name, if any.
    """
    state = game.new_initial_state()
    method = getattr(state, "transposition_key", None)
    if callable(method):
        return lambda s: s.transposition_key()
    factory = TRANSPOSITION_KEYS.get(game.get_type().short_name)
    return factory(game) if factory is not None else None


def legal_actions(state: pyspiel.State, player: int) -> list[int]:
    """``player``'s legal actions at a decision state; ``[0]`` if they have no move.

    A player without legal actions at a simultaneous node plays action 0, as in
    OpenSpiel's ``convert_to_turn_based``.
    """
    if state.is_simultaneous_node() or state.current_player() == player:
        return state.legal_actions(player) or [0]
    return []


def successors(state: pyspiel.State, moves: list, *, consume: bool = False
               ) -> list[pyspiel.State]:
    """The state after each move: an action, or a joint action given as a list.

    With ``consume`` the last successor is ``state`` itself, advanced in place: one clone
    fewer (clones dominate the cost of Python-defined games) for callers done with it.
    """
    out = []
    last = len(moves) - 1
    for k, move in enumerate(moves):
        child = state if consume and k == last else state.clone()
        if isinstance(move, list):
            child.apply_actions(move)
        else:
            child.apply_action(move)
        out.append(child)
    return out


def joint_children(state: pyspiel.State, rows: list[int], cols: list[int], *,
                   consume: bool = False) -> list[list[pyspiel.State]]:
    """The children after each joint action at a decision node, ``[row][column]``.

    ``consume`` as in :func:`successors`.
    """
    if state.is_simultaneous_node():
        flat = successors(state, [[a, b] for a in rows for b in cols], consume=consume)
        return [flat[i * len(cols):(i + 1) * len(cols)] for i in range(len(rows))]
    if state.current_player() == 0:
        return [[child] for child in successors(state, rows, consume=consume)]
    return [successors(state, cols, consume=consume)]


def _children(state: pyspiel.State) -> list[pyspiel.State]:
    """Every successor of a non-terminal ``state`` (each chance outcome or joint action)."""
    if state.is_chance_node():
        return successors(state, [a for a, _ in state.chance_outcomes()])
    rows, cols = legal_actions(state, 0), legal_actions(state, 1)
    return [child for row in joint_children(state, rows, cols) for child in row]


def solution_key(game: pyspiel.Game, use_transpositions: bool = True
                 ) -> Callable[[pyspiel.State], Hashable]:
    """The key :func:`solve` files a state of ``game`` under: whether it is a chance node
    (chance and decision nodes may share a transposition key), and its transposition key,
    or its history when the game has none (or ``use_transpositions`` is False)."""
    key = (transposition_key(game) if use_transpositions else None) or _history_key
    return lambda s: (s.is_chance_node(), key(s))


class _BackwardInduction:
    """One solve of a pyspiel game; ``table`` maps state keys to :class:`StateSolution`.

    Refuses a game above its limits (:func:`check_size`) before solving; a solve of more
    than a few seconds shows a progress bar (tqdm, on a terminal).
    """

    def __init__(self, game: pyspiel.Game, use_transpositions: bool, keep_strategies: bool,
                 limits: dict[str, Any]):
        check_game(game)
        estimate = check_size(game, use_transpositions=use_transpositions, **limits).states
        self.keep_strategies = keep_strategies
        self.memoize = (use_transpositions and transposition_key(game) is not None
                        or keep_strategies)
        self.key = solution_key(game, use_transpositions)
        self.table: dict = {}
        self.progress = tqdm.tqdm(total=estimate, desc=f"solving {game.get_type().short_name}",
                                  unit=" states", delay=3.0, leave=False, disable=None)
        self.solved = 0

    def run(self, game: pyspiel.Game) -> float:
        """Player 1's value of ``game`` (its table filled as it goes)."""
        try:
            return with_recursion_limit(lambda: self.value(game.new_initial_state()), game)
        finally:
            self.progress.close()

    def value(self, state: pyspiel.State) -> float:
        if state.is_terminal():
            return float(state.returns()[0])
        if self.memoize:
            k = self.key(state)
            hit = self.table.get(k)
            if hit is not None:
                return hit.value
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            children = successors(state, [a for a, _ in outcomes], consume=True)
            v = sum(p * self.value(c) for (_, p), c in zip(outcomes, children, strict=True))
            solution = StateSolution(v, ({}, {}))
        else:
            rows, cols = legal_actions(state, 0), legal_actions(state, 1)
            children = joint_children(state, rows, cols, consume=True)
            sol = solve_matrix_game([[self.value(c) for c in row] for row in children])
            v = sol.value
            strategies: tuple[dict[int, float], dict[int, float]] = ({}, {})
            if self.keep_strategies:
                strategies = (
                    dict(zip(rows, sol.row_strategy.tolist(), strict=True)) if rows else {},
                    dict(zip(cols, sol.col_strategy.tolist(), strict=True)) if cols else {},
                )
            solution = StateSolution(v, strategies)
        if self.memoize:
            self.table[k] = solution
        self.solved += 1
        if self.solved % 1024 == 0:
            self.progress.update(1024)
        return v


def _history_key(state: pyspiel.State) -> Hashable:
    return tuple(state.history())


def with_recursion_limit(fn, game: pyspiel.Game):
    """``fn()`` with Python's recursion limit raised to what ``game``'s depth needs."""
    needed = 8 * game.max_game_length() + 100  # a few frames per move, two turns per stage
    old = sys.getrecursionlimit()
    if needed > old:
        sys.setrecursionlimit(needed)
    try:
        return fn()
    finally:
        sys.setrecursionlimit(old)


def explicit_tree(game: pyspiel.Game) -> trees.MatrixTree | None:
    """The matrix tree behind an explicit-tree game (``game.tree``, e.g. the registered
    ``smmcts_random_stacked_matrix`` and ``smmcts_matrix_tree``), or None."""
    tree = getattr(game, "tree", None)
    return tree if isinstance(tree, trees.MatrixTree) else None


def state_path(state: pyspiel.State) -> Path:
    """The :data:`Path` of an explicit-tree game's state (its ``state.path``)."""
    return tuple(step if isinstance(step, tuple) else (step,) for step in state.path)


def game_value(game: pyspiel.Game | str, *, use_transpositions: bool = True,
               use_explicit_tree: bool = True, max_states: int | None = MAX_STATES,
               max_seconds: float | None = MAX_SECONDS,
               max_stage_cells: int | None = MAX_STAGE_CELLS) -> float:
    """Player 1's (pyspiel player 0's) equilibrium value of ``game``.

    An explicit-tree game is solved on its tree (same result, without pyspiel states)
    unless ``use_explicit_tree`` is False. A game of more than about ``max_states``
    distinct states, whose solve would take more than about ``max_seconds``
    (:func:`estimate_size`) or with a stage matrix of more than ``max_stage_cells`` cells is
    refused before solving (:func:`check_size`; None: no limit).
    """
    limits: dict[str, Any] = dict(max_states=max_states, max_seconds=max_seconds,
                                  max_stage_cells=max_stage_cells)
    game = checks.load_game(game)
    tree = explicit_tree(game) if use_explicit_tree else None
    if tree is not None:
        check_game(game)
        check_size(game, **limits)
        return with_recursion_limit(lambda: tree_value(tree.root), game)
    return _BackwardInduction(game, use_transpositions, False, limits).run(game)


def solve(game: pyspiel.Game | str, *, use_transpositions: bool = True,
          use_explicit_tree: bool = True, max_states: int | None = MAX_STATES,
          max_seconds: float | None = MAX_SECONDS,
          max_stage_cells: int | None = MAX_STAGE_CELLS) -> Solution:
    """Values and equilibrium strategies of every (reachable) state of ``game``.

    An explicit-tree game is solved on its tree (see :func:`game_value`); ``max_states``
    and the other limits as in :func:`game_value`.
    """
    limits: dict[str, Any] = dict(max_states=max_states, max_seconds=max_seconds,
                                  max_stage_cells=max_stage_cells)
    game = checks.load_game(game)
    tree = explicit_tree(game) if use_explicit_tree else None
    if tree is not None:
        check_game(game)
        check_size(game, **limits)
        solution = with_recursion_limit(lambda: solve_tree(tree.root), game)
        table = {}
        for path, node in trees.iter_paths(tree.root):
            s = solution.nodes[path]
            if isinstance(node, trees.MatrixStage):
                strategies = (dict(enumerate(s.row_strategy.tolist())),
                              dict(enumerate(s.col_strategy.tolist())))
                table[path] = StateSolution(s.value, strategies)
            elif isinstance(node, trees.ChanceStage):
                table[path] = StateSolution(s.value, ({}, {}))
        return Solution(game, solution.value, table, state_path)
    solver = _BackwardInduction(game, use_transpositions, True, limits)
    value = solver.run(game)
    return Solution(game, value, solver.table, solver.key)


# ----------------------------------------------------------------------------------------
# Solutions on disk

SOLUTION_FORMAT = "smmcts_solution"
SOLUTION_VERSION = 1


def save_solution(solution: Solution, path: str | os.PathLike) -> None:
    """Write ``solution`` (of a pyspiel game solved by :func:`solve` with transpositions, or
    of an explicit-tree game) as JSON: keys as Python literals, read back without pickle."""
    key = "path" if solution._key is state_path else "state"
    states = [[repr(k), s.value, [[a, p] for a, p in s.strategies[0].items()],
               [[a, p] for a, p in s.strategies[1].items()]]
              for k, s in solution._table.items()]
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump({"format": SOLUTION_FORMAT, "version": SOLUTION_VERSION,
                   "game": str(solution.game), "value": solution.value, "key": key,
                   "states": states}, f)
    os.replace(tmp, path)


#: Largest solution file :func:`load_solution` reads (bytes).
MAX_SOLUTION_BYTES = 1 << 30


def load_solution(game: pyspiel.Game, path: str | os.PathLike,
                  max_states: int | None = MAX_STATES) -> Solution:
    """The solution of ``game`` that :func:`save_solution` wrote to ``path``, checked.

    Refuses (ValueError, naming the file) a file that is not such a solution, one of another
    game, or one that is not an equilibrium of ``game``: every reachable state must have an
    entry, its strategies must be distributions over the legal actions, a chance node's
    value the expectation of its children's, and a decision node's strategies an
    equilibrium of its stage game (the matrix of its children's values) with its value
    (:func:`check_solution`); a game above ``max_states`` is refused as by :func:`solve`
    (the check walks the game without solving its stages, so ``max_seconds`` and
    ``max_stage_cells`` do not apply).
    """
    def refuse(why: str) -> ValueError:
        return ValueError(f"{path}: {why}; write solutions with solver.save_solution (or "
                          "delete the file to solve the game again)")

    try:
        if os.path.getsize(path) > MAX_SOLUTION_BYTES:
            raise refuse(f"larger than {MAX_SOLUTION_BYTES} bytes")
    except OSError as e:
        raise refuse(f"cannot be read ({e})") from None
    try:
        with open(path) as f:
            saved = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise refuse(f"cannot be read as JSON ({e})") from None
    if not isinstance(saved, dict) or saved.get("format") != SOLUTION_FORMAT or saved.get(
            "version") != SOLUTION_VERSION:
        raise refuse(f"not a {SOLUTION_FORMAT} file of version {SOLUTION_VERSION}")
    if saved.get("game") != str(game):
        raise refuse(f"it solves {saved.get('game')!r}, not {str(game)!r}")
    try:
        table = {}
        for k, value, row, col in saved["states"]:
            key = ast.literal_eval(k)
            hash(key)
            table[key] = StateSolution(float(value), ({int(a): float(p) for a, p in row},
                                                      {int(a): float(p) for a, p in col}))
        value = float(saved["value"])
        key = {"path": state_path, "state": None}[saved["key"]] or solution_key(game)
    except (KeyError, TypeError, ValueError, SyntaxError, MemoryError, RecursionError) as e:
        raise refuse(f"malformed ({type(e).__name__}: {e})") from None
    if key is state_path and explicit_tree(game) is None:
        raise refuse("its states are filed by tree path, but the game has no explicit tree")
    root = game.new_initial_state()
    if not root.is_terminal() and key(root) not in table:
        inner = [child for child in _children(root) if not child.is_terminal()]
        if not inner or any(key(child) in table for child in inner):
            raise refuse("the root entry (the initial state's value and strategies) is missing: "
                         "the file is incomplete or was edited; compute the solution again with "
                         "solver.solve")
        raise refuse("the root entry (the initial state's) is missing and so are its "
                     "successors': the file was edited, or its states are filed under other "
                     "keys than this game's (written by another version)")
    check_game(game)
    check_size(game, max_states, max_seconds=None, max_stage_cells=None)
    solution = Solution(game, value, table, key)
    try:
        check_solution(solution)
    except ValueError as e:
        raise refuse(f"not an equilibrium of the game: {e}") from None
    return solution


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
