"""The fast engine runs the same algorithm as the generic engine over pyspiel states.

Both engines search the same registered games; the mean exploitability curves of 100 runs
must agree within statistical error at every checkpoint. The exploitability of the generic
engine's final strategy is computed with the fast engine's exact evaluator (itself checked
on hand-made strategies in test_fast.py).
"""

import numpy as np
import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import trees
from smmcts_spiel.exact import solver
from smmcts_spiel.search import matrix_tree_engine as engine
from smmcts_spiel.search.smmcts import SMMCTS

RUNS = 100
CHECKPOINTS = [10, 100, 1_000, 10_000]


def generic_strategy(search: SMMCTS, game, flat: trees.FlatTree) -> np.ndarray:
    """Player 1's final strategy of ``search`` in the fast engine's slot layout."""
    strategy = np.zeros(flat.num_p1_slots)
    for h, (path, _) in enumerate(trees.iter_paths(game.tree.root)):
        if flat.kind[h] != trees.MATRIX:
            continue
        state = game.new_initial_state()
        for step in path:
            if len(step) == 2:
                state.apply_actions(list(step))
            else:
                state.apply_action(step[0])
        probs = search.strategy(state, 0)
        o = flat.p1_offset[h]
        for a in range(flat.rows[h]):
            strategy[o + a] = probs[a]
    return strategy


def generic_curves(game, selector: str) -> np.ndarray:
    flat = trees.flatten(game.tree)
    value = solver.tree_value(game.tree)
    e1 = np.zeros((RUNS, len(CHECKPOINTS)))
    for r in range(RUNS):
        search = SMMCTS(game, selector=selector, gamma=0.05, seed=10_000 + r)
        done = 0
        for c, t in enumerate(CHECKPOINTS):
            search.run(game.new_initial_state(), t - done)
            done = t
            e1[r, c] = engine.exploitability(flat, generic_strategy(search, game, flat), value)
    return e1


@pytest.mark.slow
@pytest.mark.parametrize("params,selector", [
    ({"depth": 2, "branching": 2, "seed": 1}, "rm"),
    ({"depth": 2, "branching": 2, "seed": 1}, "rmm"),
    ({"depth": 2, "branching": 3, "seed": 2}, "exp3"),
    ({"depth": 2, "branching": 2, "seed": 4}, "rmb"),
    ({"depth": 2, "branching": 2, "chance_branching": 2, "seed": 3}, "rm"),
])
def test_mean_exploitability_curves_agree(params, selector):
    game = pyspiel.load_game("smmcts_random_stacked_matrix", params)
    ours = engine.exploitability_curves(
        trees.flatten(game.tree), selector, gamma=0.05, checkpoints=CHECKPOINTS,
        seeds=engine.run_seeds(0, 0, RUNS), game_value=solver.tree_value(game.tree)).e1
    theirs = generic_curves(game, selector)
    se = np.sqrt(ours.var(axis=0, ddof=1) / RUNS + theirs.var(axis=0, ddof=1) / RUNS)
    diff = ours.mean(axis=0) - theirs.mean(axis=0)
    # 4 standard errors per checkpoint: a real difference in the algorithm shows up as
    # many, since both curves fall by an order of magnitude.
    assert np.all(np.abs(diff) <= 4 * se), (ours.mean(axis=0), theirs.mean(axis=0), se)
