"""Evaluation functions of the bots that value states without playing them out.

An evaluation is player 1's (pyspiel player 0's) estimated value of a state, within the
game's utility range: what the depth-limited DOAB (:mod:`.doab_bot`) gives its cut-off
states and SM-OOS (:mod:`.sm_oos_bot`) its new states in place of a random playout.
"""

from __future__ import annotations

from collections.abc import Callable

import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.games.kernels import kernel_for
from smmcts_spiel.games.kernels.state_values import KernelStateValue
from smmcts_spiel.search import evaluators

#: Evaluation functions by name: the game kernel's ``heuristic`` (the paper's evaluation
#: function on pursuit-evasion and Tron) or a game's Python evaluator of
#: :mod:`smmcts_spiel.search.evaluators` (random rollouts are not among them: the
#: depth-limited solvers prove bounds from fixed values).
EVALUATORS = ("heuristic", "goofspiel", "oshi_zumo")


def evaluation_function(game: pyspiel.Game, evaluator: str | Callable[[pyspiel.State], float],
                        seed: int | None = None,
                        otherwise: str = "") -> Callable[[pyspiel.State], float]:
    """Player 1's value estimate of a state of ``game``: ``evaluator`` itself if callable,
    else by name (:data:`EVALUATORS`); ValueError if ``game`` has no such evaluation, its
    fix followed by ``otherwise`` (what else the caller's user may do)."""
    if callable(evaluator):
        return evaluator
    if evaluator not in EVALUATORS:
        raise ValueError(f"evaluator must be one of {', '.join(EVALUATORS)} or a function "
                         f"of a state, got {checks.shown(evaluator)!r}"
                         f"{checks.did_you_mean(str(evaluator), EVALUATORS)}")
    if evaluator == "heuristic":
        kernel = kernel_for(game)
        if kernel is None or "heuristic" not in kernel.evaluators:
            known = evaluators.game_aware_evaluator(game)
            fix = (f"evaluator={known}" if known else
                   "a function of a state giving player 1's value (evaluator=...)")
            raise ValueError(f"{game} has no heuristic evaluation function (no game kernel "
                             f"with one); give {fix}{otherwise}")
        return KernelStateValue(kernel, seed=seed)
    if evaluators.game_aware_evaluator(game) != evaluator:
        raise ValueError(f"evaluator={evaluator} evaluates {evaluator} states, not those of "
                         f"{game}; give evaluator=heuristic or a function of a state")
    python = evaluators.make_evaluator(evaluator, game)
    return lambda state: python.evaluate(state)[0]


def forget(evaluation: Callable[[pyspiel.State], float] | None) -> None:
    """Drop what ``evaluation`` keeps from the states it saw (a kernel's heuristic keeps
    their kernel states), as a bot does before each move's search."""
    if isinstance(evaluation, KernelStateValue):
        evaluation.reset()
