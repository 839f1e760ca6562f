"""DO, BIAB and DOAB (the AIJ 2016 study's exact solvers) against backward induction.

Every value is checked against :func:`solver.game_value` (backward induction, on the tree
itself for explicit-tree games), every complete solution against our exact best response;
the pieces (the matrix double oracle, the serialized searches) against plain recursions.
"""

import math
import time

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smmcts_spiel import trees
from smmcts_spiel.exact import exploitability, pruned_induction, solver
from smmcts_spiel.exact.alpha_beta import SerializedBounds
from smmcts_spiel.exact.double_oracle import double_oracle
from smmcts_spiel.exact.matrix_game import solve_matrix_game
from smmcts_spiel.games.matrix_tree import load_tree_game

PRUNING = ("do", "biab", "doab")
ALL = ("bi",) + PRUNING
TOLERANCE = 1e-9

GOOFSPIEL = "goofspiel(imp_info=False,num_cards={},points_order={},returns_type={})"
GAMES = [
    "matrix_rps", "matrix_mp", "nim(pile_sizes=1;2;3)", "blotto(coins=4,fields=3)",
    "oshi_zumo(coins=4,size=1,horizon=3)", "oshi_zumo(coins=6,size=2,horizon=10)",
    "oshi_zumo(coins=8,size=2,horizon=20,min_bid=1)",
] + [GOOFSPIEL.format(n, order, returns) for n in (4, 5)
     for order in ("ascending", "descending", "random")
     for returns in ("win_loss", "point_difference")
     if not (n == 5 and order == "random")]


def assert_methods_agree(game, methods=ALL):
    expected = solver.game_value(game)
    for method in methods:
        result = pruned_induction.solve_value(game, method)
        assert result.value == pytest.approx(expected, abs=TOLERANCE), method


@pytest.mark.parametrize("name", GAMES)
def test_values_agree_with_backward_induction(name):
    game = pyspiel.load_game(name)
    assert_methods_agree(game)
    expected = solver.game_value(game)
    for method in PRUNING:  # the solver's entry point runs the same solves
        assert solver.game_value(game, method=method) == pytest.approx(expected, abs=TOLERANCE)


@settings(max_examples=100)
@given(depth=st.integers(1, 3), branching=st.integers(2, 3),
       chance=st.sampled_from([0, 0, 2]), utilities=st.sampled_from(["uniform", "grid3"]),
       seed=st.integers(0, 10**6))
def test_values_agree_on_random_stacked_matrix_games(depth, branching, chance, utilities, seed):
    if chance and depth == 3:
        branching = 2  # 5,832 leaves at three cells of 3 x 3 and two outcomes each: slow
    assert_methods_agree(pyspiel.load_game(
        f"smmcts_random_stacked_matrix(depth={depth},branching={branching},"
        f"chance_branching={chance},utilities={utilities},seed={seed})"))


# Explicit trees: few distinct leaf values (ties everywhere, pure equilibria, bounds that
# meet exactly at window edges), stages of any shape from 1 x 1 up, chance stages.
LEAVES = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0])


def trees_of(depth: int):
    if depth == 0:
        return LEAVES
    below = trees_of(depth - 1)
    stage = st.tuples(st.integers(1, 3), st.integers(1, 3)).flatmap(
        lambda shape: st.lists(st.lists(st.one_of(LEAVES, below), min_size=shape[1],
                                        max_size=shape[1]),
                               min_size=shape[0], max_size=shape[0]))
    matrix = stage.map(lambda rows: trees.MatrixStage(tuple(tuple(r) for r in rows)))
    chance = st.lists(st.one_of(LEAVES, below), min_size=2, max_size=3).map(
        lambda kids: trees.ChanceStage(tuple((1.0 / len(kids), k) for k in kids)))
    return st.one_of(matrix, matrix, chance)


TREES = trees_of(3).filter(lambda t: not trees.is_leaf(t))


@settings(max_examples=150)
@given(tree=TREES)
def test_values_agree_on_explicit_matrix_trees(tree):
    assert_methods_agree(load_tree_game(tree))


EQUILIBRIUM_GAMES = [
    GOOFSPIEL.format(4, "random", "win_loss"),
    GOOFSPIEL.format(4, "descending", "point_difference"),
    "oshi_zumo(coins=4,size=1,horizon=3)", "blotto(coins=4,fields=3)",
    "smmcts_random_stacked_matrix(depth=3,branching=3,utilities=grid3,seed=4)",
    "smmcts_random_stacked_matrix(depth=2,branching=3,chance_branching=2,seed=9)",
]


@pytest.mark.parametrize("method", PRUNING)
@pytest.mark.parametrize("name", EQUILIBRIUM_GAMES)
def test_solutions_are_equilibria_of_every_subgame(name, method):
    game = pyspiel.load_game(name)
    solution = solver.solve(game, method=method)
    reference = solver.solve(game, use_explicit_tree=False)
    assert solution.value == pytest.approx(reference.value, abs=TOLERANCE)
    assert len(solution) == len(reference)  # every reachable state has its entry
    solver.check_solution(solution)  # each stage's strategies guarantee its value
    # our exact best response walks every history (no transpositions): small games only
    report = exploitability.evaluate(game, solution, value=reference.value)
    assert abs(report.nash_conv) < TOLERANCE


@settings(max_examples=40)
@given(tree=TREES, method=st.sampled_from(PRUNING))
def test_solutions_of_explicit_trees_are_equilibria(tree, method):
    game = load_tree_game(tree)
    solution = solver.solve(game, method=method)
    report = exploitability.evaluate(game, solution, value=solver.tree_value(tree))
    assert abs(report.nash_conv) < TOLERANCE


# ----------------------------------------------------------------------------------------
# The pieces


class ArrayMatrix:
    """A :class:`~smmcts_spiel.exact.double_oracle.LazyMatrix` over a known array that,
    like a subgame asked with a window, may answer only "at most alpha"."""

    def __init__(self, values: np.ndarray, lazy: bool):
        self.values = values
        self.known = np.zeros(values.shape, dtype=bool)
        self.lo = np.full(values.shape, values.min())
        self.hi = np.full(values.shape, values.max())
        self.lazy = lazy
        self.refined = 0

    def upper(self, i, j):
        return self.hi[i, j]

    def lower(self, i, j):
        return self.lo[i, j]

    def refine(self, i, j, alpha, beta):
        self.refined += 1
        v = self.values[i, j]
        if self.lazy and v <= alpha:
            self.hi[i, j] = min(self.hi[i, j], alpha)
        elif self.lazy and v >= beta:
            self.lo[i, j] = max(self.lo[i, j], beta)
        else:
            self.lo[i, j] = self.hi[i, j] = v
        return self.lo[i, j], self.hi[i, j]


@settings(max_examples=200)
@given(shape=st.tuples(st.integers(1, 6), st.integers(1, 6)), data=st.data(),
       lazy=st.booleans())
def test_double_oracle_solves_matrix_games_within_their_window(shape, data, lazy):
    values = np.array(data.draw(st.lists(st.sampled_from([-2, -1, 0, 1, 3]),
                                         min_size=shape[0] * shape[1],
                                         max_size=shape[0] * shape[1])),
                      dtype=float).reshape(shape)
    alpha = data.draw(st.sampled_from([-math.inf, -1.0, 0.0, 0.5]))
    beta = data.draw(st.sampled_from([math.inf, 1.0, 0.5])) if alpha < 0.5 else math.inf
    expected = solve_matrix_game(values).value
    matrix = ArrayMatrix(values, lazy)
    result = double_oracle(matrix, *shape, lo=values.min(), hi=values.max(), alpha=alpha,
                           beta=beta, rows=[data.draw(st.integers(0, shape[0] - 1))])
    if result.exact:
        assert result.value == pytest.approx(expected, abs=1e-9)
        x = np.zeros(shape[0])
        x[result.rows] = result.row_strategy
        y = np.zeros(shape[1])
        y[result.cols] = result.col_strategy
        assert (x @ values).min() >= expected - 1e-9  # an equilibrium of the whole game
        assert (values @ y).max() <= expected + 1e-9
    else:
        assert result.lo - 1e-9 <= expected <= result.hi + 1e-9
        assert result.hi <= alpha + 1e-9 or result.lo >= beta - 1e-9
        assert not alpha <= expected <= beta or math.isclose(expected, alpha) or math.isclose(
            expected, beta)


def test_double_oracle_leaves_entries_a_best_response_does_not_need():
    # A 20 x 20 game with a dominant first row and a dominant first column: the first
    # restricted game is the equilibrium, and the other rows' bounds rule them out after
    # one entry each at most.
    values = np.zeros((20, 20))
    values[0, :] = 1.0
    values[:, 0] = np.minimum(values[:, 0], 0.0)
    values[0, 0] = 0.5
    values[1:, 1:] = 0.25
    matrix = ArrayMatrix(values, lazy=True)
    matrix.hi[1:, 1:] = 0.3  # what serialized bounds would say
    matrix.lo[0, 1:] = 0.9
    result = double_oracle(matrix, 20, 20, lo=0.0, hi=1.0)
    assert result.exact and result.value == pytest.approx(0.5)
    assert matrix.refined < 40  # of 400 entries


def serialized_value(node, first: int) -> float:
    """The serialization where player ``first`` (0 or 1) moves first at every stage."""
    if trees.is_leaf(node):
        return float(node)
    if isinstance(node, trees.ChanceStage):
        return sum(p * serialized_value(c, first) for p, c in node.outcomes)
    values = np.array([[serialized_value(c, first) for c in row] for row in node.children])
    return float(values.min(axis=1).max() if first == 0 else values.max(axis=0).min())


@settings(max_examples=150)
@given(tree=TREES)
def test_serialized_searches_find_the_serialized_games_values(tree):
    game = load_tree_game(tree)
    key = solver.solution_key(game)
    bounds = {}
    search = SerializedBounds(key, bounds, 1e-12, (-1.0, 2.0))
    root = game.new_initial_state()
    lower, upper = search.lower(root), search.upper(root)
    assert lower == pytest.approx(serialized_value(tree, 0), abs=1e-12)
    assert upper == pytest.approx(serialized_value(tree, 1), abs=1e-12)
    value = solver.tree_value(tree)
    assert lower - 1e-12 <= value <= upper + 1e-12
    lo, hi = bounds[key(root)]
    assert lo == pytest.approx(lower) and hi == pytest.approx(upper)


def test_a_cut_at_a_chance_node_is_never_taken_for_a_value():
    """Goofspiel-6 with chance: player 2 leads by 2, both hold 3 4 5, prizes 2 3 6 left
    (value -1). Searched above 1/3, the second prize cuts, and the cut's bound summed to
    one ulp above the window: it was taken for a value, a lower bound of 1/3 that made
    BIAB's and DOAB's Goofspiel-6 values 1e-6 off."""
    game = pyspiel.load_game(GOOFSPIEL.format(6, "random", "win_loss"))
    state = game.new_initial_state()
    for action in (0, [0, 1], 4, [1, 5], 3, [5, 0]):  # prizes 1, 5, 4
        state.apply_actions(action) if isinstance(action, list) else state.apply_action(action)
    assert state.is_chance_node() and pruned_induction.solve_state(state, "bi").value == -1.0
    key = solver.solution_key(game)
    alpha = 1 / 3 + 2 ** -54  # the window the full solve searched it with
    search = SerializedBounds(key, {}, 1e-11, (-1.0, 1.0))
    assert search.search(state, 0, alpha, 1.0) <= alpha
    assert search.bounds[key(state)][0] == -1.0  # no lower bound proved


# ----------------------------------------------------------------------------------------
# What the solves report, and what they refuse


def test_the_pruning_evaluates_fewer_nodes_than_backward_induction():
    # The study's Goofspiel finding (fixed sequence, win/tie/lose): BIAB and DOAB evaluate
    # a small part of BI's nodes, DOAB fewer than BIAB.
    game = pyspiel.load_game(GOOFSPIEL.format(5, "descending", "win_loss"))
    stats = {m: pruned_induction.solve_value(game, m).statistics for m in ALL}
    assert stats["bi"].nodes_evaluated == stats["bi"].states == stats["bi"].matrix_games
    assert stats["biab"].nodes_evaluated < stats["bi"].nodes_evaluated / 5
    assert stats["doab"].nodes_evaluated <= stats["biab"].nodes_evaluated
    assert stats["do"].pruned > 0 and stats["doab"].pruned > 0
    assert stats["biab"].settled_by_bounds > 0 and stats["bi"].serialized_nodes == 0


def test_a_game_with_a_pure_equilibrium_is_settled_at_the_root():
    # Oshi-Zumo with 13 coins and K = 4: the study's BIAB and DOAB solve one alpha-beta
    # search per serialization and evaluate no node (a minimum bid of 1 ends the game
    # within 13 moves: the horizon does not cut it).
    game = pyspiel.load_game("oshi_zumo(coins=13,size=4,horizon=20,min_bid=1)")
    for method in ("biab", "doab"):
        stats = pruned_induction.solve_value(game, method).statistics
        assert stats.nodes_evaluated == 0 and stats.settled_by_bounds >= 1
        assert stats.matrix_games == 0


@pytest.mark.parametrize("method", ["dob", "BI", 3, ""])
def test_unknown_methods_are_refused_with_the_choices(method):
    with pytest.raises(ValueError, match="'bi', 'do', 'biab', 'doab'"):
        solver.game_value("matrix_rps", method=method)
    with pytest.raises(ValueError, match="method must be one of"):
        solver.solve("matrix_rps", method=method)


@pytest.mark.parametrize("method", PRUNING)
@pytest.mark.parametrize("name,problem", [
    ("goofspiel(num_cards=3,imp_info=False,returns_type=total_points)", "zero-sum"),
    ("goofspiel(num_cards=3,imp_info=False,players=3)", "two-player"),
    ("goofspiel(num_cards=3,imp_info=True)", "imp_info=False"),
    ("kuhn_poker", "imperfect information"),
])
def test_games_outside_the_solvers_scope_are_refused(name, method, problem):
    with pytest.raises(ValueError, match=problem):
        solver.game_value(name, method=method)


@pytest.mark.parametrize("method", PRUNING)
def test_a_game_estimated_too_large_is_refused_at_once_with_the_estimate(method):
    start = time.process_time()
    with pytest.raises(solver.GameTooLarge, match=r"states .*minutes"):
        solver.game_value("goofspiel(imp_info=False,num_cards=13)", method=method)
    assert time.process_time() - start < 1.0
