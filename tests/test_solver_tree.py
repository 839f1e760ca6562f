"""Backward induction on explicit matrix trees: hand-solved games and the stage certificates."""

import numpy as np
import pytest

from smmcts_spiel import trees
from smmcts_spiel.exact.solver import solve_tree, tree_value
from smmcts_spiel.trees import ChanceStage, MatrixStage, iter_paths, matrix_game


def test_matching_pennies_in_unit_utilities_is_worth_one_half():
    pennies = matrix_game([[1, 0], [0, 1]])
    assert tree_value(pennies) == pytest.approx(0.5)
    root = solve_tree(pennies).nodes[()]
    np.testing.assert_allclose(root.row_strategy, [0.5, 0.5])
    np.testing.assert_allclose(root.col_strategy, [0.5, 0.5])


def test_two_stages_and_chance_by_hand():
    # The (0, 0) subgame is matching pennies (value 1/2); the (1, 1) chance node is worth
    # 0.25 * 1 + 0.75 * 0 = 0.25. The root matrix [[1/2, 0], [1, 1/4]] has the saddle
    # point (row 1, column 1), worth 1/4.
    pennies = matrix_game([[1, 0], [0, 1]])
    coin = ChanceStage(((0.25, 1.0), (0.75, 0.0)))
    root = MatrixStage(((pennies, 0.0), (1.0, coin)))
    solution = solve_tree(root)
    assert solution.value == pytest.approx(0.25)
    assert solution.nodes[((0, 0),)].value == pytest.approx(0.5)
    assert solution.nodes[((1, 1),)].value == pytest.approx(0.25)
    assert solution.nodes[((1, 1),)].row_strategy is None
    np.testing.assert_allclose(solution.nodes[()].row_strategy, [0, 1])
    np.testing.assert_allclose(solution.nodes[()].col_strategy, [0, 1])


def test_nodes_are_in_iter_nodes_order_and_paths_lead_to_them():
    tree = trees.random_stacked_matrix(2, 2, 3, chance_branching=2, seed=3)
    solution = solve_tree(tree)
    paths = [path for path, _ in iter_paths(tree)]
    assert list(solution.nodes) == paths
    assert len(paths) == sum(1 for _ in trees.iter_nodes(tree))
    for (path, node), leaf in zip(iter_paths(tree), trees.iter_nodes(tree), strict=True):
        assert node is leaf
        if trees.is_leaf(node):
            assert solution.nodes[path].value == node


@pytest.mark.parametrize("depth,branching", [(1, 2), (2, 2), (2, 3), (3, 2), (3, 3)])
def test_every_stage_strategy_pair_is_an_equilibrium_of_its_stage_game(depth, branching):
    tree = trees.random_stacked_matrix(depth, branching, seed=depth * 10 + branching)
    solution = solve_tree(tree)
    for path, node in iter_paths(tree):
        if not isinstance(node, MatrixStage):
            continue
        a = np.array([[solution.nodes[path + ((i, j),)].value for j in range(len(row))]
                      for i, row in enumerate(node.children)])
        s = solution.nodes[path]
        assert (s.row_strategy @ a).min() >= s.value - 1e-9
        assert (a @ s.col_strategy).max() <= s.value + 1e-9
    assert solution.value == pytest.approx(tree_value(tree), abs=1e-12)


def test_exploration_mixes_each_strategy_with_uniform():
    solution = solve_tree(MatrixStage(((1.0, 0.0), (1.0, 0.0))))  # row 0 weakly dominant
    x, y = solution.strategies(exploration=0.1)[()]
    np.testing.assert_allclose(x.sum(), 1.0)
    np.testing.assert_allclose(y, [0.05, 0.95])
    with pytest.raises(ValueError, match="exploration"):
        solution.strategies(exploration=1.5)


def test_matrix_tree_wrapper_and_bad_nodes():
    tree = trees.MatrixTree(matrix_game([[0.2, 0.8]]), {"name": "pure"})
    assert tree_value(tree) == pytest.approx(0.2)
    assert solve_tree(tree).value == pytest.approx(0.2)
    with pytest.raises(ValueError, match="not a matrix tree node"):
        tree_value("0.5")
