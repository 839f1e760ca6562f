"""Generators of the paper's games: random stacked matrix games and the Fig. 3 grid games."""

from __future__ import annotations

import numpy as np

from smmcts_spiel import checks
from smmcts_spiel.trees.nodes import (
    MAX_NODES,
    MAX_STAGES,
    ChanceStage,
    MatrixStage,
    MatrixTreeError,
    Node,
    matrix_game,
)

UTILITY_DISTRIBUTIONS = ("uniform", "grid3", "edge_sum")


def random_stacked_matrix(
    depth: int = 2,
    branching_p1: int = 2,
    branching_p2: int | None = None,
    *,
    chance_branching: int = 0,
    utilities: str = "uniform",
    seed: int = 0,
) -> MatrixStage:
    """The paper's random games: ``depth`` stacked ``branching_p1 x branching_p2`` stages.

    Leaf utilities (player 1) are drawn from U[0, 1] (``"uniform"``) or uniformly from
    {0, 0.5, 1} (``"grid3"``) by ``numpy.random.default_rng(seed)``, depth first, so the
    same parameters always give the same game; with ``"edge_sum"`` (the AIJ 2016 study's
    correlated random games, after random P-games) every joint action is worth -1, 0 or +1
    (uniformly) and a leaf is the sum of the values on its path. With
    ``chance_branching = c > 0`` every joint action leads to a chance stage with ``c``
    equally likely outcomes.
    """
    if branching_p2 is None:
        branching_p2 = branching_p1
    _check_int("depth", depth, 1)
    _check_int("branching_p1", branching_p1, 1)
    _check_int("branching_p2", branching_p2, 1)
    _check_int("chance_branching", chance_branching, 0)
    if branching_p1 * branching_p2 < 2:
        raise MatrixTreeError(
            "branching_p1 * branching_p2 must be at least 2 (a 1 x 1 stage is no choice); "
            f"got {branching_p1} x {branching_p2}"
        )
    if chance_branching == 1:
        raise MatrixTreeError("chance_branching must be 0 (no chance) or at least 2, got 1")
    if utilities not in UTILITY_DISTRIBUTIONS:
        raise MatrixTreeError(
            f"utilities must be one of {', '.join(UTILITY_DISTRIBUTIONS)}; got {utilities!r}"
        )
    if depth > MAX_STAGES:
        raise MatrixTreeError(f"depth must be at most {MAX_STAGES} stages, got {depth}")
    per_stage = branching_p1 * branching_p2 * max(chance_branching, 1)
    checks.check_size(
        per_stage ** min(depth, MAX_STAGES + 1), MAX_NODES,
        f"a random stacked matrix game of depth {depth} and {branching_p1} x {branching_p2} "
        f"stages{f' with {chance_branching} chance outcomes' if chance_branching else ''}",
        "choose a smaller depth or branching", unit="leaves")
    rng = np.random.default_rng(seed)

    def leaf(path_sum: float) -> float:
        if utilities == "uniform":
            return float(rng.random())
        if utilities == "edge_sum":
            return path_sum
        return float(rng.integers(0, 3)) / 2.0

    def after_joint_action(levels_left: int, path_sum: float) -> Node:
        if utilities == "edge_sum":
            path_sum += float(rng.integers(-1, 2))

        def sub() -> Node:
            return stage(levels_left, path_sum) if levels_left > 0 else leaf(path_sum)

        if chance_branching:
            p = 1.0 / chance_branching
            return ChanceStage(tuple((p, sub()) for _ in range(chance_branching)))
        return sub()

    def stage(levels: int, path_sum: float) -> MatrixStage:
        return MatrixStage(
            tuple(
                tuple(after_joint_action(levels - 1, path_sum) for _ in range(branching_p2))
                for _ in range(branching_p1)
            )
        )

    return stage(depth, 0.0)


def _check_int(name: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise MatrixTreeError(f"{name} must be an integer >= {minimum}, got {value!r}")


# ----------------------------------------------------------------------------------------
# The worst-case search space of Fig. 3

GRID_UTILITIES = (0.0, 0.5, 1.0)


def _stage_orbit_labels() -> np.ndarray:
    """The 2 x 2 grid matrices (as base-3 codes a b c d = row-major) that are the smallest of
    their class under swapping rows and/or columns."""
    codes = np.arange(81)
    a, b, c, d = codes // 27, codes // 9 % 3, codes // 3 % 3, codes % 3

    def enc(w, x, y, z):
        return ((w * 3 + x) * 3 + y) * 3 + z

    smallest = np.minimum.reduce([enc(a, b, c, d), enc(c, d, a, b), enc(b, a, d, c),
                                  enc(d, c, b, a)])
    return codes[codes == smallest]


def grid_game_codes() -> np.ndarray:
    """One code per class of depth-2 BF-2 games with utilities in {0, 0.5, 1}.

    Two games are in one class when they differ by a permutation of rows and/or columns at
    the root (moving whole subtrees) and at each second-stage matrix; such games have the
    same distribution of SM-MCTS exploitability. A code packs the root's four subgame
    labels (indices into the stage classes) in base ``len(labels)``, row-major.
    """
    labels = _stage_orbit_labels()
    k = len(labels)
    codes = np.arange(k ** 4, dtype=np.int64)
    a, b, c, d = codes // k ** 3, codes // k ** 2 % k, codes // k % k, codes % k

    def enc(w, x, y, z):
        return ((w * k + x) * k + y) * k + z

    smallest = np.minimum.reduce([enc(a, b, c, d), enc(c, d, a, b), enc(b, a, d, c),
                                  enc(d, c, b, a)])
    return codes[codes == smallest]


def grid_game(code: int) -> MatrixStage:
    """The game of a :func:`grid_game_codes` code."""
    labels = _stage_orbit_labels()
    k = len(labels)
    if not 0 <= code < k ** 4:
        raise ValueError(f"grid game code must be in [0, {k ** 4}), got {code}")
    subgames = []
    for position in range(4):
        label = labels[code // k ** (3 - position) % k]
        digits = [label // 27, label // 9 % 3, label // 3 % 3, label % 3]
        subgames.append(matrix_game(
            np.array([GRID_UTILITIES[x] for x in digits]).reshape(2, 2)))
    return MatrixStage(((subgames[0], subgames[1]), (subgames[2], subgames[3])))
