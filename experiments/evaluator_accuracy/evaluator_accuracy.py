"""How close each leaf evaluator comes to the exact values, over every state of small games.

For each game the exact solver (with transpositions) gives every distinct state's value;
each evaluator scores the same states. Prints the mean absolute error and the correlation
with the exact values (a random rollout is one noisy sample of a playout's outcome).

  .venv/bin/python experiments/evaluator_accuracy/evaluator_accuracy.py
"""

from __future__ import annotations

import numpy as np
import pyspiel
from absl import app, flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel.exact import solver
from smmcts_spiel.experiments import cli
from smmcts_spiel.reports import tables
from smmcts_spiel.search import evaluators

_GAMES = flags.DEFINE_string(
    "games", "goofspiel(num_cards=5,imp_info=False,points_order=random,returns_type=win_loss);"
    "goofspiel(num_cards=6,imp_info=False,points_order=descending,"
    "returns_type=point_difference);oshi_zumo(coins=8,size=2,horizon=15);"
    "oshi_zumo(coins=10,size=3,horizon=20)",
    "Semicolon-separated games solvable by smmcts_spiel.exact.solver.")
_SEED = cli.define_seed("Seed of the rollouts.")


def distinct_states(game: pyspiel.Game) -> list[pyspiel.State]:
    """One decision state per transposition class (every state if the game has no key)."""
    key = solver.transposition_key(game) or (lambda s: tuple(s.history()))
    seen: dict = {}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        k = (state.is_chance_node(), key(state))
        if k in seen:
            continue
        seen[k] = state
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        rows, cols = solver.legal_actions(state, 0), solver.legal_actions(state, 1)
        stack.extend(c for row in solver.joint_children(state, rows, cols) for c in row)
    return [s for s in seen.values() if not s.is_chance_node()]


def main(argv):
    try:
        games = {name: cli.load_game(name, "--games") for name in cli.split(_GAMES.value)}
        for game in games.values():
            solver.check_game(game)
    except ValueError as e:
        raise app.UsageError(str(e)) from None
    rows = []
    for name, game in games.items():
        try:
            solution = solver.solve(game)
        except ValueError as e:
            raise app.UsageError(f"cannot solve {name!r}: {e}") from None
        states = distinct_states(game)
        exact = np.array([solution.state_value(s) for s in states])
        for evaluator in ("rollout", evaluators.game_aware_evaluator(game)):
            if evaluator is None:
                continue
            scorer = evaluators.make_evaluator(evaluator, game, seed=_SEED.value)
            values = np.array([scorer.evaluate(s)[0] for s in states])
            rows.append([name, evaluator, len(states), f"{np.abs(values - exact).mean():.3f}",
                         f"{np.corrcoef(values, exact)[0, 1]:.3f}"])
    print(tables.text(rows, ["game", "evaluator", "states", "MAE", "corr"],
                      align=["left", "left", "right", "right", "right"]))


if __name__ == "__main__":
    cli.run(main)
