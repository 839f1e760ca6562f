"""The paper's experiments as independent jobs, run on a process pool or on Ray.

A job is a plain function call (module-level function, keyword arguments) whose result is a
dict of numpy arrays. :func:`run_jobs` runs a named set of them, saves each finished
result as ``<results_dir>/<key>.npz`` (atomically), skips the keys already saved, and
shows progress with tqdm, so an interrupted experiment resumes where it stopped. Every
random number of a job comes from its arguments (a base seed, the game index and the run
index through :func:`smmcts_spiel.fast.run_seeds`), so the results are the same whatever
the backend and the number of workers.

The jobs of Fig. 2 and Fig. 3 of Lisy et al. (NIPS 2013) live here too:

* :func:`curves_job`: exploitability curves of one method on one game, many runs;
* :func:`screen_job`: mean e1 after a fixed number of iterations on a batch of games;
* :func:`grid_games`: the depth-2, BF-2 games with utilities in {0, 0.5, 1}, one per
  class of games equal up to row and column permutations at every stage;
* :func:`exploration_floors`: the exploitability an SM-MCTS selector with exploration
  gamma cannot go below (the floors of Fig. 3).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from smmcts_spiel import fast, matrix_tree, solver
from smmcts_spiel.matrix_game import solve_matrix_game

BACKENDS = ("process", "ray", "serial")
PARAMS_FILE = "params.json"

Result = dict[str, np.ndarray]

# ----------------------------------------------------------------------------------------
# Runner


def run_jobs(
    fn: Callable[..., Result],
    jobs: Mapping[str, Mapping[str, Any]],
    *,
    results_dir: str | os.PathLike,
    workers: int | None = None,
    backend: str = "process",
    ray_address: str | None = None,
    desc: str = "jobs",
    progress: bool = True,
) -> dict[str, Result]:
    """``{key: fn(**jobs[key])}`` for every key, reusing results saved by earlier calls.

    ``backend`` is ``"process"`` (a local pool of ``workers`` processes, default the number
    of cores), ``"ray"`` (``ray.init(ray_address)``; a local cluster when None) or
    ``"serial"`` (this process). Finished results are saved one file per key as they
    arrive, so interrupting loses at most the jobs in flight.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"workers must be a positive integer (or None for all cores), "
                         f"got {workers!r}")
    for key in jobs:
        if not key or os.sep in key or key.startswith("."):
            raise ValueError(f"job key {key!r} must be a non-empty file name without '{os.sep}'")
    os.makedirs(results_dir, exist_ok=True)
    results: dict[str, Result] = {}
    todo = []
    for key in jobs:
        path = _result_path(results_dir, key)
        if os.path.exists(path):
            with np.load(path) as saved:
                results[key] = {name: saved[name] for name in saved.files}
        else:
            todo.append(key)
    bar = tqdm(total=len(jobs), initial=len(jobs) - len(todo), desc=desc, disable=not progress,
               dynamic_ncols=True)

    def finish(key: str, result: Result) -> None:
        _save_result(results_dir, key, result)
        results[key] = result
        bar.update(1)

    try:
        if backend == "serial" or not todo:
            for key in todo:
                finish(key, fn(**jobs[key]))
        elif backend == "process":
            _run_on_pool(fn, jobs, todo, workers or os.cpu_count() or 1, finish)
        else:
            _run_on_ray(fn, jobs, todo, ray_address, workers, finish)
    finally:
        bar.close()
    return {key: results[key] for key in jobs}


def _run_on_pool(fn, jobs, todo, workers, finish) -> None:
    # spawn: numba's compiled code and threads do not survive fork reliably; the on-disk
    # numba cache makes the start-up cheap.
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        pending = {}
        queue = list(reversed(todo))
        while queue or pending:
            while queue and len(pending) < 2 * workers:
                key = queue.pop()
                pending[pool.submit(fn, **jobs[key])] = key
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                finish(pending.pop(future), future.result())


def _run_on_ray(fn, jobs, todo, ray_address, workers, finish) -> None:
    try:
        import ray
    except ImportError:
        raise ValueError("backend='ray' needs Ray: pip install 'smmcts-spiel[ray]'") from None
    if not ray.is_initialized():
        ray.init(address=ray_address, num_cpus=workers if ray_address is None else None,
                 include_dashboard=False, log_to_driver=False)
    remote = ray.remote(fn)
    pending = {remote.remote(**jobs[key]): key for key in todo}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            finish(pending.pop(ref), ray.get(ref))


def finished_jobs(results_dir: str | os.PathLike, keys) -> int:
    """How many of ``keys`` already have a saved result (a resumed run computes the rest)."""
    return sum(os.path.exists(_result_path(results_dir, key)) for key in keys)


def _result_path(results_dir, key: str) -> str:
    return os.path.join(os.fspath(results_dir), f"{key}.npz")


def _save_result(results_dir, key: str, result: Result) -> None:
    path = _result_path(results_dir, key)
    tmp = f"{path}.tmp.npz"
    np.savez(tmp, **result)
    os.replace(tmp, path)


def check_params(results_dir: str | os.PathLike, params: Mapping[str, Any]) -> None:
    """Record ``params`` in ``results_dir``; refuse to mix results of other parameters."""
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(os.fspath(results_dir), PARAMS_FILE)
    wanted = json.loads(json.dumps(dict(params)))
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        if saved != wanted:
            changed = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
            raise ValueError(
                f"{results_dir} holds results of a run with other parameters ({', '.join(changed)} "
                "differ); pass a new --results_dir or delete that directory")
    else:
        with open(path, "w") as f:
            json.dump(wanted, f, indent=1, sort_keys=True)


def write_params(path: str | os.PathLike, params: Mapping[str, Any], **timings: float) -> None:
    """Write the parameters (and run times) of an experiment next to its CSV."""
    record = dict(params)
    record.update(timings)
    record["written_at_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(path, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")


# ----------------------------------------------------------------------------------------
# Games


def random_game(depth: int, branching: int, base_seed: int, game_index: int) -> matrix_tree.Node:
    """Game ``game_index`` of the random stacked matrix games with these parameters."""
    seed = int(np.random.SeedSequence([base_seed, depth, branching, game_index])
               .generate_state(1)[0])
    return matrix_tree.random_stacked_matrix(depth, branching, seed=seed)


def game_from_spec(spec: Mapping[str, Any]) -> matrix_tree.Node:
    """``{"random": {depth, branching, base_seed, game_index}}`` or ``{"json": <tree>}``."""
    if "random" in spec:
        return random_game(**spec["random"])
    if "json" in spec:
        return matrix_tree.from_json(spec["json"]).root
    raise ValueError(f"a game spec needs a 'random' or 'json' entry, got keys {sorted(spec)}")


# ----------------------------------------------------------------------------------------
# Jobs


def curves_job(game: Mapping[str, Any], method: str, gamma: float, checkpoints: Sequence[int],
               base_seed: int, game_index: int, runs: int, first_run: int = 0,
               final_strategy: str = "empirical") -> Result:
    """e1 and NashConv of ``runs`` searches of ``method`` on one game, at the checkpoints."""
    root = game_from_spec(game)
    curves = fast.exploitability_curves(
        fast.flatten(root), method, gamma=gamma, checkpoints=checkpoints,
        seeds=fast.run_seeds(base_seed, game_index, runs, first_run),
        game_value=solver.tree_value(root), final_strategy=final_strategy)
    return {"e1": curves.e1, "nash_conv": curves.nash_conv, "checkpoints": curves.checkpoints}


def screen_job(codes: Sequence[int], methods: Sequence[str], gamma: float, iterations: int,
               runs: int, base_seed: int) -> Result:
    """Mean e1 after ``iterations`` of each method (rows) on the grid games ``codes``."""
    mean_e1 = np.zeros((len(methods), len(codes)))
    for g, code in enumerate(codes):
        root = grid_game(int(code))
        flat = fast.flatten(root)
        value = solver.tree_value(root)
        seeds = fast.run_seeds(base_seed, int(code), runs)
        for m, method in enumerate(methods):
            curves = fast.exploitability_curves(flat, method, gamma=gamma,
                                                checkpoints=[iterations], seeds=seeds,
                                                game_value=value)
            mean_e1[m, g] = curves.e1[:, 0].mean()
    return {"codes": np.asarray(codes, dtype=np.int64), "mean_e1": mean_e1}


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


def grid_game(code: int) -> matrix_tree.MatrixStage:
    """The game of a :func:`grid_game_codes` code."""
    labels = _stage_orbit_labels()
    k = len(labels)
    if not 0 <= code < k ** 4:
        raise ValueError(f"grid game code must be in [0, {k ** 4}), got {code}")
    subgames = []
    for position in range(4):
        label = labels[code // k ** (3 - position) % k]
        digits = [label // 27, label // 9 % 3, label // 3 % 3, label % 3]
        subgames.append(matrix_tree.matrix_game(
            np.array([GRID_UTILITIES[x] for x in digits]).reshape(2, 2)))
    return matrix_tree.MatrixStage(((subgames[0], subgames[1]), (subgames[2], subgames[3])))


# ----------------------------------------------------------------------------------------
# Floors


def exploration_floors(root: matrix_tree.Node, gamma: float) -> dict[str, float]:
    """Exploitability floors of player 1 when every stage explores with probability gamma.

    * ``"mixed_equilibrium"``: e1 of the solver's subgame-perfect equilibrium mixed with
      uniform exploration, ``(1 - gamma) sigma* + gamma / |A|`` at every stage (the value
      the paper quotes for Fig. 3);
    * ``"best_explorative"``: the least e1 any strategy of that form can have, for any
      sigma. Backward induction: the best guarantee ``W`` of a stage solves the matrix game
      ``(1 - gamma) W_children + gamma * column means``. Never above the first.
    """
    if isinstance(root, matrix_tree.MatrixTree):
        root = root.root
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
    solution = solver.solve_tree(root)
    mixed = solution.strategies(exploration=gamma)
    flat = fast.flatten(root)
    strategy = np.zeros(flat.num_p1_slots)
    for h, (path, _) in enumerate(solver.iter_paths(root)):  # the fast engine's node order
        if flat.kind[h] == fast.MATRIX:
            row = mixed[path][0]
            strategy[flat.p1_offset[h]:flat.p1_offset[h] + len(row)] = row

    def guarantee(node) -> float:
        if isinstance(node, matrix_tree.MatrixStage):
            w = np.array([[guarantee(c) for c in row] for row in node.children])
            explored = (1.0 - gamma) * w + gamma * w.mean(axis=0, keepdims=True)
            return solve_matrix_game(explored).value
        if isinstance(node, matrix_tree.ChanceStage):
            return sum(p * guarantee(c) for p, c in node.outcomes)
        return float(node)

    return {
        "mixed_equilibrium": fast.exploitability(flat, strategy, solution.value),
        "best_explorative": solution.value - guarantee(root),
    }


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
