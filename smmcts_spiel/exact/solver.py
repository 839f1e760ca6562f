"""Exact values and equilibria of two-player zero-sum games by backward induction.

The games are simultaneous-move games with perfect information between stages (the
paper's setting: both players see everything that happened before the current stage),
possibly with chance, and sequential perfect-information games (a node where one player
moves is a 1 x n stage). Every stage is a zero-sum matrix game whose entries are the
values of its children; :func:`smmcts_spiel.exact.matrix_game.solve_matrix_game` solves it.

Two entry points:

* explicit trees of :mod:`smmcts_spiel.trees`: :func:`tree_value`, :func:`solve_tree`;
* pyspiel games: :func:`game_value`, :func:`solve`.

Transpositions are solved once (:mod:`.transpositions`); a game estimated above the size
limits is refused before solving (:mod:`.size_estimate`); a :class:`Solution` is checked by
:func:`check_solution` and saved and loaded by :func:`save_solution` and
:func:`load_solution` (:mod:`.solution_file`). Those names are importable from here too.

Values are player 1's (pyspiel player 0's) utility; in constant-sum games player 2's is
``utility_sum - value``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
import tqdm

from smmcts_spiel import checks, trees
from smmcts_spiel.exact.matrix_game import solve_matrix_game
from smmcts_spiel.exact.size_estimate import (
    MAX_SECONDS,
    MAX_STAGE_CELLS,
    MAX_STATES,
    STAGE_ESTIMATES,
    GameTooLarge,
    SizeEstimate,
    check_size,
    estimate_size,
    estimate_states,
    size_limits,
    stage_seconds,
)
from smmcts_spiel.exact.solution import (
    SOLUTION_TOLERANCE,
    Solution,
    StateSolution,
    check_solution,
)
from smmcts_spiel.exact.solution_file import (
    MAX_SOLUTION_BYTES,
    SOLUTION_FORMAT,
    SOLUTION_VERSION,
    load_solution,
    save_solution,
)
from smmcts_spiel.exact.stages import (
    check_game,
    explicit_tree,
    joint_children,
    legal_actions,
    state_path,
    successors,
    with_recursion_limit,
)
from smmcts_spiel.exact.transpositions import (
    TRANSPOSITION_KEYS,
    solution_key,
    transposition_key,
)

__all__ = [
    "MAX_SECONDS", "MAX_SOLUTION_BYTES", "MAX_STAGE_CELLS", "MAX_STATES", "SOLUTION_FORMAT",
    "SOLUTION_TOLERANCE", "SOLUTION_VERSION", "STAGE_ESTIMATES", "TRANSPOSITION_KEYS",
    "GameTooLarge", "NodeSolution", "Path", "SizeEstimate", "Solution", "StateSolution",
    "TreeSolution", "check_game", "check_size", "check_solution", "estimate_size",
    "estimate_states", "explicit_tree", "game_value", "joint_children", "legal_actions",
    "load_solution", "save_solution", "size_limits", "solution_key", "solve", "solve_tree",
    "stage_seconds", "state_path", "successors", "transposition_key", "tree_value",
    "with_recursion_limit",
]

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

    The order of ``nodes`` is :func:`smmcts_spiel.trees.iter_nodes`'s order, so
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


def _pruned_induction():
    """The module of the pruning solvers, imported when asked for: it builds on this
    module's parts (stages, transpositions, size_estimate, solution)."""
    from smmcts_spiel.exact import pruned_induction
    return pruned_induction


def game_value(game: pyspiel.Game | str, *, method: str = "bi", use_transpositions: bool = True,
               use_explicit_tree: bool = True, max_states: int | None = MAX_STATES,
               max_seconds: float | None = MAX_SECONDS,
               max_stage_cells: int | None = MAX_STAGE_CELLS) -> float:
    """Player 1's (pyspiel player 0's) equilibrium value of ``game``.

    ``method`` is ``"bi"`` (backward induction, below) or one of the pruning solvers of
    :mod:`smmcts_spiel.exact.pruned_induction` (``"do"``, ``"biab"``, ``"doab"``; they
    solve pyspiel states, also of explicit-tree games). An explicit-tree game is solved
    on its tree (same result, without pyspiel states) unless ``use_explicit_tree`` is
    False. A game of more than about ``max_states`` distinct states, whose solve would take
    more than about ``max_seconds`` (:func:`estimate_size`) or with a stage matrix of more
    than ``max_stage_cells`` cells is refused before solving (:func:`check_size`; None: no
    limit).
    """
    limits: dict[str, Any] = dict(max_states=max_states, max_seconds=max_seconds,
                                  max_stage_cells=max_stage_cells)
    if method != "bi":
        return _pruned_induction().solve_value(
            game, method, use_transpositions=use_transpositions, **limits).value
    game = checks.load_game(game)
    tree = explicit_tree(game) if use_explicit_tree else None
    if tree is not None:
        check_game(game)
        check_size(game, **limits)
        return with_recursion_limit(lambda: tree_value(tree.root), game)
    return _BackwardInduction(game, use_transpositions, False, limits).run(game)


def solve(game: pyspiel.Game | str, *, method: str = "bi", use_transpositions: bool = True,
          use_explicit_tree: bool = True, max_states: int | None = MAX_STATES,
          max_seconds: float | None = MAX_SECONDS,
          max_stage_cells: int | None = MAX_STAGE_CELLS) -> Solution:
    """Values and equilibrium strategies of every (reachable) state of ``game``.

    ``method``, an explicit-tree game, ``max_states`` and the other limits as in
    :func:`game_value` (a complete solution needs every state: the pruning methods' savings
    are in :func:`game_value`).
    """
    limits: dict[str, Any] = dict(max_states=max_states, max_seconds=max_seconds,
                                  max_stage_cells=max_stage_cells)
    if method != "bi":
        solution, _ = _pruned_induction().solve(
            game, method, use_transpositions=use_transpositions, **limits)
        return solution
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
