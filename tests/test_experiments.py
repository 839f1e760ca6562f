"""The experiment runner and the pieces of the paper's experiments (Fig. 2 and Fig. 3)."""

import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from programs import program

from smmcts_spiel import experiments, trees
from smmcts_spiel.exact import solver
from smmcts_spiel.search import matrix_tree_engine as engine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def curve_jobs(games=2, runs=3, iterations=300):
    checkpoints = engine.log_checkpoints(iterations, 4).tolist()
    return {f"{method}_game{g}": dict(
        game={"random": dict(depth=2, branching=2, base_seed=5, game_index=g)},
        method=method, gamma=0.1, checkpoints=checkpoints, base_seed=5, game_index=g,
        runs=runs) for method in ("rm", "rmm") for g in range(games)}


def assert_same_results(a, b):
    assert a.keys() == b.keys()
    for key in a:
        for name in a[key]:
            np.testing.assert_array_equal(a[key][name], b[key][name])


def test_process_pool_gives_the_serial_results(tmp_path):
    jobs = curve_jobs()
    serial = experiments.run_jobs(experiments.curves_job, jobs, results_dir=tmp_path / "s",
                                  backend="serial", progress=False)
    pool = experiments.run_jobs(experiments.curves_job, jobs, results_dir=tmp_path / "p",
                                backend="process", workers=2, progress=False)
    assert_same_results(serial, pool)


@pytest.mark.slow  # starting a local Ray cluster takes a minute on two busy cores
# One local Ray at a time under pytest-xdist: two starting at once risk its start-up timeouts.
@pytest.mark.xdist_group("ray")
def test_ray_backend_gives_the_serial_results(tmp_path):
    pytest.importorskip("ray", reason="Ray is optional: pip install 'smmcts-spiel[ray]'")
    import ray

    jobs = curve_jobs(games=1)
    serial = experiments.run_jobs(experiments.curves_job, jobs, results_dir=tmp_path / "s",
                                  backend="serial", progress=False)
    try:
        on_ray = experiments.run_jobs(experiments.curves_job, jobs, results_dir=tmp_path / "r",
                                      backend="ray", workers=1, progress=False)
    finally:
        ray.shutdown()
    assert_same_results(serial, on_ray)


def refuse(**kwargs):
    raise AssertionError("a finished job was run again")


def test_finished_jobs_are_saved_and_not_run_again(tmp_path):
    jobs = curve_jobs(games=1)
    first = experiments.run_jobs(experiments.curves_job, jobs, results_dir=tmp_path,
                                 backend="serial", progress=False)
    assert sorted(os.listdir(tmp_path)) == sorted(f"{k}.npz" for k in jobs)
    again = experiments.run_jobs(refuse, jobs, results_dir=tmp_path, backend="serial",
                                 progress=False)
    assert_same_results(first, again)
    # An interrupted run: one result missing, only that job runs.
    os.remove(tmp_path / "rm_game0.npz")
    ran = []

    def count(**kwargs):
        ran.append(kwargs["method"])
        return experiments.curves_job(**kwargs)

    resumed = experiments.run_jobs(count, jobs, results_dir=tmp_path, backend="serial",
                                   progress=False)
    assert ran == ["rm"]
    assert_same_results(first, resumed)


def test_results_of_other_parameters_are_not_mixed(tmp_path):
    experiments.check_params(tmp_path, {"runs": 10, "games": [1, 2]})
    experiments.check_params(tmp_path, {"runs": 10, "games": [1, 2]})
    with pytest.raises(ValueError, match="runs"):
        experiments.check_params(tmp_path, {"runs": 20, "games": [1, 2]})


def test_runner_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="backend"):
        experiments.run_jobs(refuse, {}, results_dir=tmp_path, backend="mpi")
    with pytest.raises(ValueError, match="workers"):
        experiments.run_jobs(refuse, {}, results_dir=tmp_path, workers=0)
    with pytest.raises(ValueError, match="file name"):
        experiments.run_jobs(refuse, {"a/b": {}}, results_dir=tmp_path)


def test_mean_curve_uses_games_as_sampling_units():
    per_game = [np.array([[1.0, 0.5], [3.0, 0.5]]), np.array([[4.0, 1.5], [4.0, 1.5]])]
    mean, se = experiments.mean_curve(per_game)
    np.testing.assert_allclose(mean, [3.0, 1.0])
    np.testing.assert_allclose(se, [np.std([2.0, 4.0], ddof=1) / np.sqrt(2), 0.5])
    mean, se = experiments.mean_curve(per_game[:1])
    np.testing.assert_allclose(mean, [2.0, 0.5])
    np.testing.assert_allclose(se, [np.sqrt(2) / np.sqrt(2), 0.0])


# ----------------------------------------------------------------------------------------
# The worst-case search space


def leaves(root):
    return [float(x) for x in trees.iter_nodes(root) if trees.is_leaf(x)]


def symmetric_variants(root):
    """All 1024 games from swapping rows / columns at the root and at each subgame."""
    swaps = list(itertools.product((0, 1), repeat=2))
    for (r, c) in swaps:
        for subs in itertools.product(swaps, repeat=4):
            children = [[None, None], [None, None]]
            for i, j in itertools.product((0, 1), repeat=2):
                sub = root.children[i ^ r][j ^ c]
                sr, sc = subs[2 * i + j]
                children[i][j] = [[sub.children[a ^ sr][b ^ sc] for b in (0, 1)]
                                  for a in (0, 1)]
            yield tuple(v for row in children for sub in row for r2 in sub for v in r2)


def test_grid_games_are_one_per_symmetry_class():
    codes = trees.grid_game_codes()
    # Burnside: 27 classes of 2 x 2 stages over {0, .5, 1} ((81 + 3 * 9) / 4), and the root
    # arranges four of them up to its own row / column swaps.
    assert len(codes) == (27 ** 4 + 3 * 27 ** 2) // 4
    rng = np.random.default_rng(0)
    sample = rng.choice(codes, size=100, replace=False)
    canonical = set()
    for code in sample:
        root = trees.grid_game(int(code))
        assert set(leaves(root)) <= {0.0, 0.5, 1.0} and len(leaves(root)) == 16
        canonical.add(min(symmetric_variants(root)))
    assert len(canonical) == len(sample)  # no two codes describe equivalent games
    with pytest.raises(ValueError, match="code"):
        trees.grid_game(-1)


def test_screen_ranks_games_by_mean_exploitability():
    codes = trees.grid_game_codes()[::3000]
    result = experiments.screen_job(codes, ["rm", "rmm"], 0.05, 200, 3, 0)
    assert result["mean_e1"].shape == (2, len(codes))
    # A game with constant utilities cannot be exploited.
    constant = [k for k, c in enumerate(codes)
                if len(set(leaves(trees.grid_game(int(c))))) == 1]
    assert constant and np.allclose(result["mean_e1"][:, constant], 0.0)
    assert result["mean_e1"].max() > 0.01


# ----------------------------------------------------------------------------------------
# Floors


def test_floor_of_a_dominant_action_is_the_explored_mass_times_the_gap():
    game = trees.matrix_game([[1.0, 1.0], [0.0, 0.0]])
    floors = experiments.exploration_floors(game, 0.05)
    assert floors["mixed_equilibrium"] == pytest.approx(0.025)
    assert floors["best_explorative"] == pytest.approx(0.025)


def test_floor_of_a_mixed_equilibrium_depends_on_how_the_exploration_is_mixed():
    # Equilibrium (0.9, 0.1) with value 0.1. Mixed with 5% uniform exploration it becomes
    # (0.88, 0.12): the column player answers with min(0.88 / 9, 0.12). An explorative
    # strategy can still play (0.9, 0.1) exactly, so its best floor is 0.
    game = trees.matrix_game([[1 / 9, 0.0], [0.0, 1.0]])
    floors = experiments.exploration_floors(game, 0.05)
    assert floors["mixed_equilibrium"] == pytest.approx(0.1 - 0.88 / 9)
    assert floors["best_explorative"] == pytest.approx(0.0, abs=1e-12)


def test_floor_of_a_two_stage_game_by_hand():
    # Root [[A, 0], [0, A]] with A = [[1, 1], [0, 0]] (value 1): v* = 0.5, root mixed
    # (0.5, 0.5). In A, 5% exploration loses 0.025: A is worth 0.975 to the explored
    # strategy, and the root then guarantees 0.975 / 2.
    sub = trees.matrix_game([[1.0, 1.0], [0.0, 0.0]])
    game = trees.MatrixStage(((sub, 0.0), (0.0, sub)))
    floors = experiments.exploration_floors(game, 0.05)
    assert floors["mixed_equilibrium"] == pytest.approx(0.5 - 0.975 / 2)
    assert floors["best_explorative"] == pytest.approx(0.5 - 0.975 / 2)


def test_exploration_floor_bounds_what_rm_reaches():
    """RM's empirical frequencies explore too, so they end near the floor, not below."""
    game = trees.matrix_game([[1.0, 1.0], [0.0, 0.0]])
    result = engine.exploitability_curves(
        trees.flatten(game), "rm", checkpoints=[20_000], seeds=engine.run_seeds(0, 0, 5),
        game_value=1.0)
    floor = experiments.exploration_floors(game, 0.05)["mixed_equilibrium"]
    assert result.e1.mean() == pytest.approx(floor, abs=2e-3)


# ----------------------------------------------------------------------------------------
# The committed worst games and small versions of the scripts


WORST = {name: os.path.join(ROOT, "experiments", "fig3", "results", f"{name}.json")
         for name in ("wc_rm", "wc_rmm")}


@pytest.mark.skipif(not all(os.path.exists(p) for p in WORST.values()),
                    reason="experiments/fig3/results/wc_rm.json and wc_rmm.json are written "
                    "by experiments/fig3/fig3.py")
def test_worst_games_rm_is_not_slower_than_rmm_and_approaches_the_floor():
    for name, path in WORST.items():
        root = trees.load(path).root
        floor = experiments.exploration_floors(root, 0.05)["mixed_equilibrium"]
        flat = trees.flatten(root)
        checkpoints = [1_000, 30_000]
        seeds = engine.run_seeds(1, 0, 30)
        rm, rmm = (engine.exploitability_curves(flat, method, checkpoints=checkpoints,
                                              seeds=seeds, game_value=solver.tree_value(root))
                   for method in ("rm", "rmm"))
        se = np.sqrt(rm.e1.var(axis=0) / 30 + rmm.e1.var(axis=0) / 30)
        assert np.all(rmm.e1.mean(axis=0) > rm.e1.mean(axis=0) - 3 * se), name
        assert rm.e1[:, 1].mean() < rm.e1[:, 0].mean(), name
        assert rm.e1[:, 1].mean() > floor - 3 * se[1], name


def run_script(name, *args):
    return subprocess.run([sys.executable, str(program(name)), *args],
                          capture_output=True, text=True, check=True, cwd=ROOT)


def read_csv(path):
    import csv

    with open(path) as f:
        return list(csv.DictReader(f))


def test_fig2_small_run_writes_decreasing_curves(tmp_path):
    out = tmp_path / "fig2"
    run_script("fig2.py", "--games=2", "--runs=3", "--iterations=1000", "--branchings=2,3",
               "--gammas=0.1", "--depths=2,3", "--backend=serial", "--per_decade=2",
               f"--results_dir={tmp_path / 'jobs'}", f"--out={out}")
    rows = read_csv(f"{out}.csv")
    assert list(rows[0]) == ["setting", "method", "t", "mean_e1", "standard_error"]
    settings = {r["setting"] for r in rows}
    assert settings == {"depth=2 bf=2 gamma=0.1", "depth=2 bf=3 gamma=0.1",
                        "depth=2 bf=2 gamma=0.05", "depth=3 bf=2 gamma=0.05"}
    for setting in settings:
        for method in ("rm", "rmm"):
            curve = [float(r["mean_e1"]) for r in rows
                     if r["setting"] == setting and r["method"] == method]
            assert curve[-1] < curve[0], (setting, method)
    assert os.path.getsize(f"{out}.png") > 10_000
    params = json.load(open(f"{out}.json"))
    assert params["games"] == 2 and params["wall_seconds"] > 0


def test_fig3_small_run_finds_worst_games_and_their_floors(tmp_path):
    out = tmp_path / "fig3"
    run_script("fig3.py", "--protocol=screen", "--max_games=150", "--screen_runs=2",
               "--shortlist=10",
               "--shortlist_runs=4", "--finalists=3", "--confirm_runs=6",
               "--curve_iterations=1000", "--curve_runs=4", "--curve_chunk=2",
               "--backend=serial", "--per_decade=2", f"--results_dir={tmp_path / 'jobs'}",
               f"--data_dir={tmp_path}", f"--out={out}")
    floors = read_csv(f"{out}_floors.csv")
    assert [r["game"] for r in floors] == ["WC_RM", "WC_RMM"]
    for row in floors:
        root = trees.load(tmp_path / f"{row['game'].lower()}.json").root
        assert float(row["floor_mixed_equilibrium"]) == pytest.approx(
            experiments.exploration_floors(root, 0.05)["mixed_equilibrium"])
        assert float(row["game_value"]) == pytest.approx(solver.tree_value(root))
    rows = read_csv(f"{out}.csv")
    assert {r["method"] for r in rows} == {"rm", "rmm", "exp3", "exp3m"}
    for game in ("WC_RM", "WC_RMM"):
        rm = [float(r["mean_e1"]) for r in rows if r["game"] == game and r["method"] == "rm"]
        assert rm[-1] < rm[0]
    assert os.path.getsize(f"{out}.png") > 10_000
