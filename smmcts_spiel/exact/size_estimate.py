"""What a solve takes, estimated before solving: states, stage cells, seconds, and the
limits above which :func:`smmcts_spiel.exact.solver.solve` refuses a game.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel

from smmcts_spiel import checks, trees
from smmcts_spiel.exact.matrix_game import SMALL_GAME_SIZE
from smmcts_spiel.exact.stages import explicit_tree, legal_actions

#: Estimated distinct states (each a stage game) :func:`~smmcts_spiel.exact.solver.solve`
#: and :func:`~smmcts_spiel.exact.solver.game_value` take on unless told otherwise
#: (``max_states``): the table of a solve holds one entry per state. The estimates are
#: upper bounds: 4x4 Othello's is 1.06 million (it has 56,621).
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
# or HiGHS's LP (LP_SECONDS + LP_CELL_SECONDS * (r c) ** LP_EXPONENT). Fitted on one core
# so that estimates err high, never low; the fit: experiments/solver_time_model/NOTES.md.
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
    """The size limits of :func:`~smmcts_spiel.exact.solver.solve` as keyword arguments:
    the defaults (``{}``), or none at all (every limit None) for a caller who means to solve
    however large a game."""
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


def _pursuit_evasion_stages(game: pyspiel.Game) -> tuple[np.ndarray, ...]:
    """Before each round, the three units' cells (at most ``n^6``, at most the ``64^r``
    histories of ``r`` rounds); the evader has at most 4 moves, the pursuer 16."""
    params = game.get_parameters()
    cells = params["grid_size"] ** 2
    counts = [min(float(cells) ** 3, 64.0 ** r) for r in range(params["depth"])]
    return np.array(counts), np.full(len(counts), 4), np.full(len(counts), 16)


STAGE_ESTIMATES.update(goofspiel=_goofspiel_stages, smmcts_goofspiel=_goofspiel_stages,
                       oshi_zumo=_oshi_zumo_stages, smmcts_oshi_zumo=_oshi_zumo_stages,
                       smmcts_othello=_othello_stages,
                       smmcts_pursuit_evasion=_pursuit_evasion_stages)


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


