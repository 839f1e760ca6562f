"""The experiments of Lisy et al. (NIPS 2013) as jobs for :mod:`.runner`.

* :func:`curves_job`: exploitability curves of one method on one game, many runs;
* :func:`screen_job`: mean e1 after a fixed number of iterations on a batch of games;
* :func:`floors_job`: the exploration floors of a batch of grid games;
* :func:`exploration_floors`: the exploitability an SM-MCTS selector with exploration
  gamma cannot go below (the floors of Fig. 3); :func:`equilibrium_floor_range`: the
  floors of all the subgame-perfect equilibria, and :func:`floor_ranges_job` as a job;
* :func:`mean_curve`: the mean over games and runs with its standard error.

Every random number of a job comes from its arguments (a base seed, the game index and the
run index through :func:`smmcts_spiel.search.matrix_tree_engine.run_seeds`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from smmcts_spiel import checks, trees
from smmcts_spiel.exact import solver
from smmcts_spiel.exact.matrix_game import solve_matrix_game
from smmcts_spiel.search import matrix_tree_engine as engine

Result = dict[str, np.ndarray]

# ----------------------------------------------------------------------------------------
# Games


def random_game(depth: int, branching: int, base_seed: int, game_index: int) -> trees.Node:
    """Game ``game_index`` of the random stacked matrix games with these parameters."""
    seed = int(np.random.SeedSequence([base_seed, depth, branching, game_index])
               .generate_state(1)[0])
    return trees.random_stacked_matrix(depth, branching, seed=seed)


def game_from_spec(spec: Mapping[str, Any]) -> trees.Node:
    """``{"random": {depth, branching, base_seed, game_index}}`` or ``{"json": <tree>}``."""
    if "random" in spec:
        return random_game(**spec["random"])
    if "json" in spec:
        return trees.from_json(spec["json"]).root
    raise ValueError(f"a game spec needs a 'random' or 'json' entry, got keys {sorted(spec)}")


# ----------------------------------------------------------------------------------------
# Jobs


def curves_job(game: Mapping[str, Any], method: str, gamma: float, checkpoints: Sequence[int],
               base_seed: int, game_index: int, runs: int, first_run: int = 0,
               final_strategy: str = "empirical", gamma_schedule: str = "constant") -> Result:
    """e1 and NashConv of ``runs`` searches of ``method`` on one game, at the checkpoints."""
    root = game_from_spec(game)
    curves = engine.exploitability_curves(
        trees.flatten(root), method, gamma=gamma, checkpoints=checkpoints,
        seeds=engine.run_seeds(base_seed, game_index, runs, first_run),
        game_value=solver.tree_value(root), final_strategy=final_strategy,
        gamma_schedule=gamma_schedule)
    return {"e1": curves.e1, "nash_conv": curves.nash_conv, "checkpoints": curves.checkpoints}


def screen_job(codes: Sequence[int], methods: Sequence[str], gamma: float, iterations: int,
               runs: int, base_seed: int) -> Result:
    """Mean e1 after ``iterations`` of each method (rows) on the grid games ``codes``.

    ``sd_e1`` is the standard deviation over the runs (ddof 1; 0 with one run).
    """
    mean_e1 = np.zeros((len(methods), len(codes)))
    sd_e1 = np.zeros_like(mean_e1)
    for g, code in enumerate(codes):
        root = trees.grid_game(int(code))
        flat = trees.flatten(root)
        value = solver.tree_value(root)
        seeds = engine.run_seeds(base_seed, int(code), runs)
        for m, method in enumerate(methods):
            curves = engine.exploitability_curves(flat, method, gamma=gamma,
                                                checkpoints=[iterations], seeds=seeds,
                                                game_value=value)
            mean_e1[m, g] = curves.e1[:, 0].mean()
            sd_e1[m, g] = curves.e1[:, 0].std(ddof=1) if runs > 1 else 0.0
    return {"codes": np.asarray(codes, dtype=np.int64), "mean_e1": mean_e1, "sd_e1": sd_e1}


def floors_job(codes: Sequence[int], gamma: float) -> Result:
    """:func:`exploration_floors` of the grid games ``codes``: rows mixed equilibrium, best."""
    floors = np.zeros((2, len(codes)))
    for g, code in enumerate(codes):
        f = exploration_floors(trees.grid_game(int(code)), gamma)
        floors[:, g] = f["mixed_equilibrium"], f["best_explorative"]
    return {"codes": np.asarray(codes, dtype=np.int64), "floors": floors}


# ----------------------------------------------------------------------------------------
# Floors


def exploration_floors(root: trees.Node, gamma: float) -> dict[str, float]:
    """Exploitability floors of player 1 when every stage explores with probability gamma.

    * ``"mixed_equilibrium"``: e1 of the solver's subgame-perfect equilibrium mixed with
      uniform exploration, ``(1 - gamma) sigma* + gamma / |A|`` at every stage (the value
      the paper quotes for Fig. 3);
    * ``"best_explorative"``: the least e1 any strategy of that form can have, for any
      sigma. Backward induction: the best guarantee ``W`` of a stage solves the matrix game
      ``(1 - gamma) W_children + gamma * column means``. Never above the first.
    """
    if isinstance(root, trees.MatrixTree):
        root = root.root
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {checks.shown(gamma)!r}")
    solution = solver.solve_tree(root)
    mixed = solution.strategies(exploration=gamma)
    flat = trees.flatten(root)
    strategy = np.zeros(flat.num_p1_slots)
    for h, (path, _) in enumerate(trees.iter_paths(root)):  # the engine's node order (trees.flat)
        if flat.kind[h] == trees.MATRIX:
            row = mixed[path][0]
            strategy[flat.p1_offset[h]:flat.p1_offset[h] + len(row)] = row

    def guarantee(node) -> float:
        if isinstance(node, trees.MatrixStage):
            w = np.array([[guarantee(c) for c in row] for row in node.children])
            explored = (1.0 - gamma) * w + gamma * w.mean(axis=0, keepdims=True)
            return solve_matrix_game(explored).value
        if isinstance(node, trees.ChanceStage):
            return sum(p * guarantee(c) for p, c in node.outcomes)
        return float(node)

    return {
        "mixed_equilibrium": engine.exploitability(flat, strategy, solution.value),
        "best_explorative": solution.value - guarantee(root),
    }


def equilibrium_intervals(root: trees.Node,
                          solution: solver.TreeSolution | None = None,
                          ) -> dict[trees.Path, tuple[float, float]]:
    """Player 1's subgame-perfect equilibrium strategies: ``[a, b]`` of P(row 0) per stage.

    At a matrix stage with two rows (the stage game's entries are its children's values)
    the maximin strategies are an interval; a stage with one row has ``(1, 1)``. Keyed by
    path, matrix stages only. Larger stages raise ValueError (their equilibria are a
    polytope, not an interval).
    """
    if isinstance(root, trees.MatrixTree):
        root = root.root
    solution = solver.solve_tree(root)
    intervals = {}
    for path, node in trees.iter_paths(root):
        if not isinstance(node, trees.MatrixStage):
            continue
        rows = len(node.children)
        if rows > 2:
            raise ValueError(f"equilibrium_intervals needs at most 2 rows per stage; the "
                             f"stage at {path} has {rows}")
        if rows == 1:
            intervals[path] = (1.0, 1.0)
            continue
        a = np.array([[solution.nodes[path + ((i, j),)].value for j in range(len(row))]
                      for i, row in enumerate(node.children)])
        v = solution.nodes[path].value
        low, high = 0.0, 1.0
        for j in range(a.shape[1]):  # p * a[0, j] + (1 - p) * a[1, j] >= v
            d, need = a[0, j] - a[1, j], v - a[1, j]
            if d > 0.0:
                low = max(low, need / d)
            elif d < 0.0:
                high = min(high, need / d)
        if low > high + 1e-9:
            raise RuntimeError(f"no maximin strategy at {path}: [{low}, {high}]")
        if low > high:  # A unique mixed equilibrium, up to rounding.
            low = high = 0.5 * (low + high)
        intervals[path] = (float(low) + 0.0, float(high) + 0.0)  # + 0.0: no -0.0
    return intervals


def equilibrium_floor_range(root: trees.Node, gamma: float) -> tuple[float, float]:
    """The least and the largest floor over player 1's subgame-perfect equilibria.

    :func:`exploration_floors`' ``"mixed_equilibrium"`` mixes the solver's equilibrium with
    exploration; a game with several equilibria has a floor for each, and they fill this
    interval (e1 is continuous on the box of :func:`equilibrium_intervals`). Player 2 best
    responds stage by stage, and its response value at a stage never decreases when a
    child's guarantee rises, so both ends come by backward induction over the intervals:
    the largest guarantee is a concave piecewise-linear maximum over ``[a, b]`` (at an end
    or where two columns cross), the smallest a concave minimum (at an end).
    """
    if isinstance(root, trees.MatrixTree):
        root = root.root
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {checks.shown(gamma)!r}")
    solution = solver.solve_tree(root)
    intervals = equilibrium_intervals(root, solution)

    def guarantee(p: float, w: np.ndarray) -> float:
        if w.shape[0] == 1:
            return float(w[0].min())
        x0 = (1.0 - gamma) * p + gamma / 2
        return float((x0 * w[0] + (1.0 - x0) * w[1]).min())

    def visit(node, path) -> tuple[float, float]:  # (least, largest) guarantee
        if isinstance(node, trees.MatrixStage):
            ends = [[visit(c, path + ((i, j),)) for j, c in enumerate(row)]
                    for i, row in enumerate(node.children)]
            least, largest = (np.array([[e[k] for e in row] for row in ends]) for k in (0, 1))
            a, b = intervals[path]
            candidates = [a, b]
            if largest.shape[0] == 2 and gamma < 1.0:
                slope, base = largest[0] - largest[1], largest[1]
                for j in range(len(slope)):
                    for k in range(j):
                        if slope[j] != slope[k]:  # x0 where columns j and k cross
                            x0 = (base[k] - base[j]) / (slope[j] - slope[k])
                            p = (x0 - gamma / 2) / (1.0 - gamma)
                            if a < p < b:
                                candidates.append(p)
            return (min(guarantee(a, least), guarantee(b, least)),
                    max(guarantee(p, largest) for p in candidates))
        if isinstance(node, trees.ChanceStage):
            below = [visit(c, path + ((k,),)) for k, (_, c) in enumerate(node.outcomes)]
            return (sum(p * e[0] for (p, _), e in zip(node.outcomes, below)),
                    sum(p * e[1] for (p, _), e in zip(node.outcomes, below)))
        return float(node), float(node)

    least, largest = visit(root, ())
    return solution.value - largest, solution.value - least


def floor_ranges_job(codes: Sequence[int], gamma: float) -> Result:
    """:func:`equilibrium_floor_range` of the grid games ``codes``: rows least, largest."""
    ranges = np.zeros((2, len(codes)))
    for g, code in enumerate(codes):
        ranges[:, g] = equilibrium_floor_range(trees.grid_game(int(code)), gamma)
    return {"codes": np.asarray(codes, dtype=np.int64), "floor_ranges": ranges}


# ----------------------------------------------------------------------------------------
# Summaries


def mean_curve(e1_per_game: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Mean e1 over games and runs, and its standard error, at each checkpoint.

    ``e1_per_game[g]`` has shape (runs, checkpoints). With several games the games are the
    sampling units (the error is the spread of the per-game means, as a new draw of games
    would vary); with one game the runs are.
    """
    if not e1_per_game:
        raise ValueError("mean_curve needs at least one game's results")
    if len(e1_per_game) == 1:
        samples = np.asarray(e1_per_game[0])
    else:
        samples = np.stack([np.asarray(e).mean(axis=0) for e in e1_per_game])
    mean = samples.mean(axis=0)
    if len(samples) < 2:
        return mean, np.full_like(mean, np.nan)
    return mean, samples.std(axis=0, ddof=1) / np.sqrt(len(samples))
