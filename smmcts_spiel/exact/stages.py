"""A pyspiel game stage by stage, as backward induction walks it.

A decision state is one stage: a matrix game of both players' legal actions (a player who
does not move has none; one who moves alone faces a 1 x n or n x 1 stage); a chance state
is the list of its outcomes. The solver (:mod:`.solver`), the size estimate
(:mod:`.size_estimate`) and the check of a solution (:mod:`.solution`) walk games with the
functions here.
"""

from __future__ import annotations

import sys

import pyspiel

from smmcts_spiel import checks, trees


def check_game(game: pyspiel.Game) -> None:
    """Raise ValueError unless backward induction applies to ``game``."""
    checks.check_game(game, "the solver", explicit_chance=True,
                      hint="use sequence_form_lp or CFR for such games")


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


def children(state: pyspiel.State) -> list[pyspiel.State]:
    """Every successor of a non-terminal ``state`` (each chance outcome or joint action)."""
    if state.is_chance_node():
        return successors(state, [a for a, _ in state.chance_outcomes()])
    rows, cols = legal_actions(state, 0), legal_actions(state, 1)
    return [child for row in joint_children(state, rows, cols) for child in row]


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


def state_path(state: pyspiel.State) -> trees.Path:
    """The :data:`smmcts_spiel.trees.Path` of an explicit-tree game's state (its ``state.path``)."""
    return tuple(step if isinstance(step, tuple) else (step,) for step in state.path)
