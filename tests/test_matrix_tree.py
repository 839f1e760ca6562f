"""The explicit matrix-tree representation: generation, queries and the JSON round trip."""

import json

import pytest

from smmcts_spiel import trees as mt


def test_same_seed_same_game_and_different_seed_different_game():
    a = mt.random_stacked_matrix(2, 2, seed=7)
    assert a == mt.random_stacked_matrix(2, 2, seed=7)
    assert a != mt.random_stacked_matrix(2, 2, seed=8)


def test_random_game_shape():
    g = mt.random_stacked_matrix(3, 2, 3, seed=1)
    assert g.shape == (2, 3)
    assert mt.depth(g) == 3
    leaves = [n for n in mt.iter_nodes(g) if mt.is_leaf(n)]
    assert len(leaves) == 6**3
    assert all(0.0 <= v <= 1.0 for v in leaves)


def test_grid3_utilities_and_chance_stages():
    g = mt.random_stacked_matrix(1, 2, chance_branching=3, utilities="grid3", seed=3)
    leaves = {n for n in mt.iter_nodes(g) if mt.is_leaf(n)}
    assert leaves <= {0.0, 0.5, 1.0}
    child = g.children[0][0]
    assert isinstance(child, mt.ChanceStage) and len(child.outcomes) == 3
    assert mt.max_game_length(g) == 2 and mt.depth(g) == 1


def test_edge_sum_leaves_sum_one_step_in_minus_one_zero_one_per_joint_action():
    """The AIJ 2016 correlated random games: a leaf is the sum of its path's joint-action
    values, so below a first-stage joint action the leaves lie within one step of each
    other's parent value (a span of at most 2), and all are integers in [-depth, depth]."""
    g = mt.random_stacked_matrix(2, 3, utilities="edge_sum", seed=4)
    leaves = [n for n in mt.iter_nodes(g) if mt.is_leaf(n)]
    assert len(leaves) == 9 ** 2
    assert all(float(v).is_integer() and -2 <= v <= 2 for v in leaves)
    for row in g.children:
        for child in row:
            below = [v for r in child.children for v in r]
            assert max(below) - min(below) <= 2
    depth_one = mt.random_stacked_matrix(1, 4, utilities="edge_sum", seed=0)
    assert {v for row in depth_one.children for v in row} == {-1.0, 0.0, 1.0}


def test_json_round_trip_keeps_tree_and_metadata(tmp_path):
    tree = mt.MatrixTree(mt.random_stacked_matrix(2, 2, chance_branching=2, seed=5),
                         {"name": "example"})
    path = tmp_path / "g.json"
    mt.dump(tree, path)
    back = mt.load(path)
    assert back.root == tree.root
    assert back.metadata == {"name": "example"}
    assert mt.loads(mt.dumps(back)).root == tree.root


@pytest.mark.parametrize(
    "text, message",
    [
        ("{", "not valid JSON"),
        ('{"format": "x", "version": 1, "root": 0}', '"format"'),
        ('{"format": "smmcts_matrix_tree", "version": 9, "root": 0}', "version"),
        ('{"format": "smmcts_matrix_tree", "version": 1, "root": 0.5}', "bare leaf"),
        ('{"format": "smmcts_matrix_tree", "version": 1, "root": {"matrix": [[1], [1, 2]]}}',
         "different lengths"),
        ('{"format": "smmcts_matrix_tree", "version": 1, '
         '"root": {"chance": [[0.5, 1], [0.2, 0]]}}', "sum to"),
        ('{"format": "smmcts_matrix_tree", "version": 1, "root": {"matrix": [["a"]]}}',
         "root[0][0]"),
    ],
)
def test_malformed_json_names_the_problem(text, message):
    with pytest.raises(mt.MatrixTreeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        mt.loads(text)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(mt.MatrixTreeError, match="cannot read"):
        mt.load(tmp_path / "nope.json")


@pytest.mark.parametrize(
    "kwargs, name",
    [({"depth": 0}, "depth"), ({"branching_p1": 1, "branching_p2": 1}, "branching"),
     ({"utilities": "normal"}, "utilities"), ({"chance_branching": 1}, "chance_branching")],
)
def test_bad_generation_parameters(kwargs, name):
    with pytest.raises(mt.MatrixTreeError, match=name):
        mt.random_stacked_matrix(**kwargs)


def test_matrix_game_helper():
    g = mt.matrix_game([[1, 0], [0, 1]])
    assert g.shape == (2, 2)
    assert json.loads(mt.dumps(g))["root"] == {"matrix": [[1.0, 0.0], [0.0, 1.0]]}
