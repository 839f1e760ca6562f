"""Issue 15: bandit regret matching and decreasing exploration in the numba engine, Fig. 3
by the paper's protocol (with and without a pre-screen) and Fig. 3 to 10^7 iterations."""

import itertools
import os
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from programs import program

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import experiments, trees
from smmcts_spiel.exact import solver
from smmcts_spiel.search import matrix_tree_engine as engine
from smmcts_spiel.search.smmcts import SMMCTS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOMINANT = [[1.0, 1.0], [0.0, 0.0]]  # row 0 dominates: e1 = share of row 1 in the frequencies


def curves(game, method, checkpoints, runs=10, **kw):
    flat = trees.flatten(game)
    return engine.exploitability_curves(flat, method, checkpoints=checkpoints,
                                        seeds=engine.run_seeds(3, 0, runs),
                                        game_value=solver.tree_value(game), **kw).e1


@pytest.mark.parametrize("method", ["rmb", "rmbm"])
def test_bandit_rm_converges_to_the_equilibrium_of_matching_pennies(method):
    # Value 0.5, equilibrium uniform: the exploration floor is 0.
    e1 = curves(trees.matrix_game([[1.0, 0.0], [0.0, 1.0]]), method, [100, 100_000])
    assert e1[:, 1].mean() < 0.01 < e1[:, 0].mean()


def test_bandit_rm_on_a_dominant_action_stops_at_the_exploration_floor():
    game = trees.matrix_game(DOMINANT)
    floor = experiments.exploration_floors(game, 0.05)["mixed_equilibrium"]  # 0.025
    e1 = curves(game, "rmb", [50_000])
    assert e1.mean() == pytest.approx(floor, abs=3e-3)


def test_decreasing_gamma_goes_below_the_constant_gamma_floor():
    """Row 1 is only explored: with gamma_t = 1/sqrt(t) its share after T iterations is
    about (1/T) sum_t 1/(2 sqrt t) = 1/sqrt(T) (0.007 at T = 20,000), far below 0.025."""
    game = trees.matrix_game(DOMINANT)
    floor = experiments.exploration_floors(game, 0.05)["mixed_equilibrium"]
    for method in ("rm", "exp3"):
        e1 = curves(game, method, [20_000], gamma=1.0, gamma_schedule="decreasing")
        assert e1.mean() == pytest.approx(1 / np.sqrt(20_000), rel=0.3), method
        assert e1.mean() < floor / 2, method


def test_unknown_gamma_schedule_is_named():
    with pytest.raises(ValueError, match="gamma_schedule must be one of"):
        curves(trees.matrix_game(DOMINANT), "rm", [10], gamma_schedule="linear")


def test_generic_engine_runs_bandit_rm():
    game = pyspiel.load_game("smmcts_random_stacked_matrix", {"depth": 2, "branching": 2,
                                                              "seed": 1})
    search = SMMCTS(game, selector="rmbm", gamma=0.05, seed=0)
    search.run(game.new_initial_state(), 200)
    probs = search.strategy(game.new_initial_state(), 0)
    assert sum(probs.values()) == pytest.approx(1.0)


# ----------------------------------------------------------------------------------------
# The floors of all subgame-perfect equilibria


def stage_guarantee(solution, path, stage, p):
    """What P(row 0) = p guarantees player 1 in the stage game of the children's values."""
    values = np.array([[solution.nodes[path + ((i, j),)].value for j in range(len(row))]
                       for i, row in enumerate(stage.children)])
    return (p * values[0] + (1 - p) * values[1]).min()


def test_equilibrium_intervals_are_exactly_the_maximin_strategies_of_each_stage():
    codes = trees.grid_game_codes()[::1000]
    for code in codes:
        root = trees.grid_game(int(code))
        solution = solver.solve_tree(root)
        nodes = dict(trees.iter_paths(root))
        for path, (a, b) in experiments.equilibrium_intervals(root).items():
            stage = nodes[path]
            value = solution.nodes[path].value
            assert 0 <= a <= b <= 1
            for p in (a, b, (a + b) / 2):
                assert stage_guarantee(solution, path, stage, p) >= value - 1e-12
            for p in (a - 1e-6, b + 1e-6):
                if 0 <= p <= 1:
                    assert stage_guarantee(solution, path, stage, p) < value - 1e-9
            assert a - 1e-12 <= solution.nodes[path].row_strategy[0] <= b + 1e-12


def equilibrium_floors(root, points, gamma=0.05):
    """e1 (engine.exploitability) of every equilibrium on a grid of each stage's interval."""
    flat = trees.flatten(root)
    intervals = experiments.equilibrium_intervals(root)
    offsets = {path: flat.p1_offset[h] for h, (path, _) in enumerate(trees.iter_paths(root))
               if path in intervals}
    grids = [np.linspace(a, b, points) if b > a else [a] for a, b in intervals.values()]
    value = solver.tree_value(root)
    floors = []
    for choice in itertools.product(*grids):
        strategy = np.zeros(flat.num_p1_slots)
        for path, p in zip(intervals, choice):
            mixed = (1 - gamma) * np.array([p, 1 - p]) + gamma / 2
            strategy[offsets[path]:offsets[path] + 2] = mixed
        floors.append(engine.exploitability(flat, strategy, value))
    return np.array(floors)


@pytest.mark.parametrize("code", [96568, 187097, 115141])
def test_equilibrium_floor_range_spans_the_floors_of_all_equilibria(code):
    # Games with several equilibria; the least floor of 96568 and 187097 lies inside the box.
    root = trees.grid_game(code)
    low, high = experiments.equilibrium_floor_range(root, 0.05)
    floors = experiments.exploration_floors(root, 0.05)
    assert floors["best_explorative"] - 1e-12 <= low < floors["mixed_equilibrium"] + 1e-12
    assert floors["mixed_equilibrium"] <= high + 1e-12
    assert equilibrium_floors(root, 2).max() == pytest.approx(high, abs=1e-12)  # a corner
    grid = equilibrium_floors(root, 101)
    assert grid.max() == pytest.approx(high, abs=1e-12)
    assert low - 1e-12 <= grid.min() <= low + 1e-3


def test_equilibrium_floor_range_of_a_unique_equilibrium_is_its_floor():
    for code in (102704, 102516):  # the worst games of our searches
        root = trees.grid_game(code)
        low, high = experiments.equilibrium_floor_range(root, 0.05)
        assert low == pytest.approx(high, abs=1e-12)
        assert low == pytest.approx(experiments.exploration_floors(root, 0.05)[
            "mixed_equilibrium"], abs=1e-12)


def test_equilibrium_intervals_refuse_three_rows():
    with pytest.raises(ValueError, match="at most 2 rows"):
        experiments.equilibrium_intervals(trees.matrix_game([[1.0], [0.0], [0.5]]))


# ----------------------------------------------------------------------------------------
# The scripts, at small scale


def run_script(name, *args, check=True):
    return subprocess.run([sys.executable, str(program(name)), *args],
                          capture_output=True, text=True, check=check, cwd=ROOT)


def read_csv(path):
    import csv

    with open(path) as f:
        return list(csv.DictReader(f))


def paper_protocol(tmp_path, name, *extra):
    out = tmp_path / name
    run_script("fig3.py", "--protocol=paper", "--max_games=60", "--confirm_runs=4",
               "--batch=25", "--ranking_top=10", "--curve_iterations=300", "--curve_runs=2",
               "--curve_chunk=2", "--backend=serial", "--per_decade=2",
               f"--results_dir={tmp_path / name / 'jobs'}", f"--data_dir={tmp_path / name}",
               f"--out={out}", *extra)
    return {(r["method"], int(r["code"])): r for r in read_csv(f"{out}_ranking.csv")}, out


def test_fig3_paper_protocol_ranks_every_game_with_its_exact_floor(tmp_path):
    ranking, out = paper_protocol(tmp_path, "full")
    codes = trees.grid_game_codes()[:60]
    direct = experiments.screen_job(codes.tolist(), ["rm", "rmm"], 0.05, 1000, 4, base_seed=0)
    for m, method in enumerate(["rm", "rmm"]):
        rows = sorted((r for r in ranking.values() if r["method"] == method),
                      key=lambda r: int(r["rank"]))
        assert [int(r["rank"]) for r in rows] == list(range(1, 11))
        expected = np.lexsort((codes, -direct["mean_e1"][m]))[:10]
        assert [int(r["code"]) for r in rows] == codes[expected].tolist()
        for r in rows:
            floors = experiments.exploration_floors(trees.grid_game(int(r["code"])), 0.05)
            assert float(r["floor_mixed_equilibrium"]) == pytest.approx(
                floors["mixed_equilibrium"])
            assert float(r["floor_best_explorative"]) == pytest.approx(
                floors["best_explorative"])
            least, largest = experiments.equilibrium_floor_range(
                trees.grid_game(int(r["code"])), 0.05)
            assert float(r["floor_equilibria_least"]) == pytest.approx(least)
            assert float(r["floor_equilibria_largest"]) == pytest.approx(largest)
    text = open(f"{out}_ranking.md").read()
    assert "## The games with the paper's floors" in text
    # A game has a floor F with some equilibrium when F is in the range of their floors.
    ranges = [experiments.equilibrium_floor_range(trees.grid_game(int(c)), 0.05)
              for c in codes]
    possible = text.split("under another equilibrium")[1]
    for target in (0.0119, 0.0367):
        count = sum(low - 5e-5 <= target <= high + 5e-5 for low, high in ranges)
        assert f"### Floor {target}: {count} classes, {count} of them ranked" in possible

    # The pre-screen only chooses games: a kept game gets exactly the full protocol's runs.
    screened, out = paper_protocol(tmp_path, "pre", "--prescreen_runs=2", "--prescreen_keep=8")
    kept = [key for key in screened if key in ranking]
    assert kept
    for key in kept:
        assert screened[key]["mean_e1"] == ranking[key]["mean_e1"]
    text = open(f"{out}_ranking.md").read()
    assert "Pre-screen: every class got the first 2" in text
    # ... and every game that can have the paper's floors gets its runs too.
    possible = text.split("under another equilibrium")[1]
    for target in (0.0119, 0.0367):
        count = sum(low - 5e-5 <= target <= high + 5e-5 for low, high in ranges)
        assert f"### Floor {target}: {count} classes, {count} of them ranked" in possible


# Slow: 2,700 games, as the first game that can have the floor 0.0119 is the 1,975th. The
# fast test_fig3_paper_protocol_ranks_every_game_with_its_exact_floor runs the pre-screen on
# 60 games (kept games get the full runs, the ranking's text); only this one adds games.
@pytest.mark.slow
def test_fig3_prescreen_keeps_every_game_that_can_have_the_papers_floors(tmp_path):
    # The first 2,700 classes hold a few dozen games whose floors reach 0.0119.
    out = tmp_path / "pre"
    run_script("fig3.py", "--max_games=2700", "--prescreen_runs=1", "--prescreen_keep=5",
               "--confirm_runs=2", "--batch=900", "--curve_iterations=100", "--curve_runs=2",
               "--curve_chunk=2", "--backend=serial", "--per_decade=1",
               f"--results_dir={tmp_path / 'jobs'}", f"--data_dir={tmp_path}", f"--out={out}")
    codes = trees.grid_game_codes()[:2700]
    ranges = np.array(experiments.floor_ranges_job(codes.tolist(), 0.05)["floor_ranges"])
    count = int(np.sum((ranges[0] - 5e-5 <= 0.0119) & (0.0119 <= ranges[1] + 5e-5)))
    assert count > 5
    text = open(f"{out}_ranking.md").read()
    assert f"### Floor 0.0119: {count} classes, {count} of them ranked" in text
    assert f"The {count} games it dropped that can have the paper's floors" in text
    # No class has the paper's 0.0367 with any equilibrium: the nearest floors are named.
    below = ranges[1][ranges[1] < 0.0367].max()
    assert "### Floor 0.0367: 0 classes" in text
    assert f"The nearest floors of any equilibrium: {below:.6f}" in text


def test_fig3_screen_or_prescreen_does_not_replace_the_paper_protocols_result(tmp_path):
    out = tmp_path / "fig3"
    (tmp_path / "fig3.json").write_text('{"protocol": "paper", "runs_every_class": 100}')
    for search in (["--protocol=screen"], ["--prescreen_runs=10"]):
        refused = run_script("fig3.py", *search, "--max_games=10", "--backend=serial",
                             f"--results_dir={tmp_path / 'jobs'}", f"--out={out}", check=False)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        assert "runs_every_class=" in refused.stderr and "< 100" in refused.stderr
        assert "--force" in refused.stderr


def test_fig3_rejects_methods_that_are_not_regret_matching(tmp_path):
    result = run_script("fig3.py", "--methods=exp3,rm", f"--results_dir={tmp_path}",
                        check=False)
    assert result.returncode == 2 and "--methods needs two regret-matching" in result.stderr
    assert "Traceback" not in result.stderr


def test_fig3_long_small_run(tmp_path):
    out = tmp_path / "long"
    run_script("fig3_long.py", "--iterations=2000", "--runs=2", "--methods=rm,exp3",
               "--backend=serial", "--per_decade=2", f"--results_dir={tmp_path / 'jobs'}",
               f"--out={out}")
    rows = read_csv(f"{out}.csv")
    assert {(r["method"], r["schedule"]) for r in rows} == {
        (m, s) for m in ("rm", "exp3") for s in ("constant", "decreasing")}
    assert max(int(r["t"]) for r in rows) == 2000
    assert os.path.getsize(f"{out}.png") > 10_000
    bad = run_script("fig3_long.py", "--codes=999999999", f"--results_dir={tmp_path / 'j2'}",
                     check=False)
    assert bad.returncode == 2 and "is not a grid game code" in bad.stderr


def test_fig3_long_writes_into_its_results_only_with_publish(tmp_path):
    refused = run_script("fig3_long.py", "--iterations=10", "--runs=2", "--backend=serial",
                         f"--results_dir={tmp_path / 'jobs'}",
                         "--out=experiments/fig3/results/fig3_long",
                         check=False)
    assert refused.returncode == 2 and "--publish" in refused.stderr
    assert "Traceback" not in refused.stderr
