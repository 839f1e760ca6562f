"""The fast explicit-tree engine: layout, exploitability, Alg. 1 bookkeeping, seeding."""

import numpy as np
import pytest

from smmcts_spiel import trees
from smmcts_spiel.exact import solver
from smmcts_spiel.search import matrix_tree_engine as engine

MATCHING_PENNIES = trees.matrix_game([[1.0, 0.0], [0.0, 1.0]])


def two_stage_game():
    return trees.MatrixStage((
        (trees.matrix_game([[1.0, 0.0], [0.0, 1.0]]), 0.25),
        (0.75, trees.ChanceStage(((0.5, 1.0), (0.5, trees.matrix_game([[0.0, 1.0]]))))),
    ))


def curves(tree, selector="rm", runs=5, iterations=2000, seed=0, **kw):
    flat = trees.flatten(tree)
    return engine.exploitability_curves(
        flat, selector, checkpoints=engine.log_checkpoints(iterations, 4),
        seeds=engine.run_seeds(seed, 0, runs), game_value=solver.tree_value(tree), **kw)


def test_flatten_numbers_nodes_like_iter_nodes_and_lays_out_children_row_major():
    tree = two_stage_game()
    flat = trees.flatten(tree)
    nodes = list(trees.iter_nodes(tree))
    assert flat.num_nodes == len(nodes)
    for h, node in enumerate(nodes):
        if isinstance(node, trees.MatrixStage):
            m, n = node.shape
            for i in range(m):
                for j in range(n):
                    child = flat.children[flat.child_start[h] + i * n + j]
                    assert nodes[child] is node.children[i][j]
        elif isinstance(node, trees.ChanceStage):
            for k, (p, child) in enumerate(node.outcomes):
                assert nodes[flat.children[flat.child_start[h] + k]] is child
                assert flat.probs[flat.child_start[h] + k] == p
        else:
            assert flat.value[h] == node
    assert (flat.num_p1_slots, flat.num_p2_slots) == (2 + 2 + 1, 2 + 2 + 2)
    assert flat.max_path == 4  # root, chance, 1 x 2 stage, leaf


def test_flatten_rejects_a_bare_leaf():
    with pytest.raises(ValueError, match="bare leaf"):
        trees.flatten(0.5)


def test_exploitability_of_hand_made_strategies():
    flat = trees.flatten(MATCHING_PENNIES)
    assert engine.exploitability(flat, np.array([1.0, 1.0]), 0.5) == pytest.approx(0.0)
    assert engine.exploitability(flat, np.array([1.0, 0.0]), 0.5) == pytest.approx(0.5)
    assert engine.exploitability(flat, np.array([3.0, 1.0]), 0.5) == pytest.approx(0.25)
    # Two stages: the value of the game is 0.5 (root: [[0.5, 0.25], [0.75, 0.5]], saddle).
    tree = two_stage_game()
    flat = trees.flatten(tree)
    assert solver.tree_value(tree) == pytest.approx(0.5)
    # Player 1 plays row 1 at the root: the column player takes column 1 (value 0.5 via
    # the chance node: 0.5 * 1 + 0.5 * min(0, 1)).
    strategy = np.zeros(flat.num_p1_slots)
    strategy[[1, 2, 3, 4]] = [1.0, 1.0, 1.0, 1.0]  # root row 1, uniform below
    assert engine.exploitability(flat, strategy, 0.5) == pytest.approx(0.0)
    strategy[:2] = [1.0, 0.0]  # root row 0: the column player answers 0.25
    assert engine.exploitability(flat, strategy, 0.5) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="one per player-1 action slot"):
        engine.exploitability(flat, np.ones(3), 0.5)


def test_first_iterations_expand_every_joint_action_exactly_once():
    game = trees.matrix_game(np.arange(12.0).reshape(3, 4) / 12)
    flat = trees.flatten(game)
    for selector in ("rm", "exp3m", "ucb"):
        result = engine.exploitability_curves(flat, selector, checkpoints=[12], seeds=[7],
                                            game_value=solver.tree_value(game))
        np.testing.assert_array_equal(result.counts_p1, [4, 4, 4])
        np.testing.assert_array_equal(result.counts_p2, [3, 3, 3, 3])


def test_average_strategy_sums_one_distribution_per_update():
    result = curves(two_stage_game(), "exp3", runs=1, iterations=500, final_strategy="average")
    flat = trees.flatten(two_stage_game())
    root1 = result.average_p1[:2]
    assert root1.sum() == pytest.approx(result.counts_p1[:2].sum())
    assert result.counts_p1[:2].sum() == 500  # the root is updated on every iteration
    assert np.all(result.average_p2 >= 0) and flat.num_p2_slots == len(result.average_p2)


@pytest.mark.parametrize("selector", ["rm", "rmm", "exp3", "exp3m", "ucb", "ucbm"])
def test_a_seed_fixes_the_result_and_runs_can_be_split(selector):
    game = trees.random_stacked_matrix(2, 3, seed=4)
    a = curves(game, selector, runs=6, seed=11)
    b = curves(game, selector, runs=6, seed=11)
    np.testing.assert_array_equal(a.e1, b.e1)
    np.testing.assert_array_equal(a.nash_conv, b.nash_conv)
    c = curves(game, selector, runs=6, seed=12)
    assert not np.array_equal(a.e1, c.e1)
    flat = trees.flatten(game)
    tail = engine.exploitability_curves(flat, selector, checkpoints=a.checkpoints,
                                      seeds=engine.run_seeds(11, 0, 2, first_run=4),
                                      game_value=solver.tree_value(game))
    np.testing.assert_array_equal(tail.e1, a.e1[4:])


@pytest.mark.parametrize("selector", ["rm", "rmm", "exp3", "exp3m"])
def test_exploitability_falls_towards_zero(selector):
    game = trees.random_stacked_matrix(2, 2, seed=3)
    result = curves(game, selector, runs=10, iterations=10_000, gamma=0.05)
    mean = result.e1.mean(axis=0)
    assert np.all(result.e1 >= -1e-12)
    assert np.all(result.nash_conv >= result.e1 - 1e-12)
    assert mean[-1] < 0.5 * mean[2]
    assert mean[-1] < 0.05


def test_regret_matching_reaches_the_mixed_equilibrium_of_matching_pennies():
    result = curves(MATCHING_PENNIES, "rm", runs=5, iterations=20_000, final_strategy="average")
    assert result.e1[:, -1].mean() < 0.01


def test_log_checkpoints_are_increasing_and_end_at_the_budget():
    points = engine.log_checkpoints(1_000_000, 8)
    assert points[0] == 1 and points[-1] == 1_000_000
    assert np.all(np.diff(points) > 0)
    assert 40 < len(points) <= 49  # 8 per decade, repeats at small t merged
    with pytest.raises(ValueError, match="iterations"):
        engine.log_checkpoints(0)


def test_bad_arguments_raise_clear_errors():
    flat = trees.flatten(MATCHING_PENNIES)
    kw = dict(checkpoints=[10], seeds=[1], game_value=0.5)
    with pytest.raises(ValueError, match="unknown selector"):
        engine.exploitability_curves(flat, "cfr", **kw)
    with pytest.raises(ValueError, match="gamma"):
        engine.exploitability_curves(flat, "rm", gamma=0.0, **kw)
    with pytest.raises(ValueError, match="final_strategy"):
        engine.exploitability_curves(flat, "rm", final_strategy="last", **kw)
    with pytest.raises(ValueError, match="checkpoints"):
        engine.exploitability_curves(flat, "rm", checkpoints=[10, 5], seeds=[1], game_value=0.5)
    with pytest.raises(ValueError, match="seeds"):
        engine.exploitability_curves(flat, "rm", checkpoints=[10], seeds=[], game_value=0.5)
