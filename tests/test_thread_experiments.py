"""The thread experiments (experiments/threads/): the strength run on a tiny budget, its
resume, its tables and rules; the iterations-per-second run and its model."""

import ast
import csv
import json
import math
import os
import subprocess
import sys

import pytest
from programs import program

STRENGTH = program("strength_speedup.py")
SCALING = program("scaling.py")
needs_two_cores = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                                     reason="threads=2 needs two usable cores")


def run(path, *flags):
    return subprocess.run([sys.executable, str(path), *flags], capture_output=True, text=True,
                          timeout=900, env={**os.environ, "TQDM_DISABLE": "1"})


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@needs_two_cores
def test_a_tiny_strength_run_writes_its_tables_and_resumes(tmp_path):
    flags = ["--games=matrix_mp", "--level_games=matrix_rps", "--ratios=1,2", "--num_games=2",
             "--level_num_games=1", "--chunk=1", "--time_limit=0.002", "--seed=3",
             f"--results_dir={tmp_path}"]
    first = run(STRENGTH, *flags)
    assert first.returncode == 0, first.stderr[-3000:]
    cells = rows(tmp_path / "cells.csv")
    assert [(c["game"], c["ratio"], c["stage"]) for c in cells] == [
        ("matrix_mp", "1.0", "ratios"), ("matrix_mp", "2.0", "ratios"),
        ("matrix_rps", "1.0", "level")]
    assert all(c["deals"] == ("2" if c["stage"] == "ratios" else "1") for c in cells)
    games = rows(tmp_path / "games.csv")
    assert len(games) == 2 * (2 * 2 + 1)  # both seats of every deal
    # the baseline's time per move is k times the treatment's
    assert {g["second"] for g in games if g["ratio"] == "2.0"} >= {
        "smmcts(threads=1,time_limit=0.004)"}
    # the same game has the same seeds in every cell (common random numbers)
    seeds = {(g["game_index"], g["first"].startswith("smmcts(threads=2")): g["seed"]
             for g in games if g["game"] == "matrix_mp" and g["ratio"] == "1.0"}
    assert seeds == {(g["game_index"], g["first"].startswith("smmcts(threads=2")): g["seed"]
                     for g in games if g["game"] == "matrix_mp" and g["ratio"] == "2.0"}
    assert (tmp_path / "strength_speedup.png").exists()
    assert "Registered targets" in (tmp_path / "summary.md").read_text()
    again = run(STRENGTH, *flags)  # every chunk is reused: the same games
    assert again.returncode == 0, again.stderr[-3000:]
    assert rows(tmp_path / "games.csv") == games
    other = run(STRENGTH, *flags[:-1], "--ratios=1,3", f"--results_dir={tmp_path}")
    assert other.returncode == 2 and "other parameters" in other.stderr


@pytest.mark.parametrize("flag, message", [
    ("--ratios=1,0.5", "must be a finite number >= 1"),
    ("--ratios=1,1", "distinct ratios"),
    ("--ratios=1,x", "is not a number"),
    ("--bots=smmcts(threads=1,iterations=10)", "names its own budget"),
    ("--games=", "--games and --level_games are both empty"),
])
def test_bad_strength_flags_are_usage_errors(flag, message, tmp_path):
    result = run(STRENGTH, "--level_games=", "--games=matrix_mp", flag,
                 f"--results_dir={tmp_path}")
    assert result.returncode == 2 and message in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def evaluated(path, expression):
    """``expression``'s value in a fresh interpreter that imported the program ``path`` as
    a module (each program defines its absl flags once per process)."""
    code = (f"import sys; sys.path.insert(0, {str(path.parent)!r}); import {path.stem}; "
            f"print(repr({expression}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


def test_the_interpolated_strength_speedup():
    def cells(*means):
        return [{"ratio": k, "mean": m} for k, m in zip((1, 1.5, 2), means)]
    k, bound = evaluated(STRENGTH, f"strength_speedup.strength_speedup({cells(0.2, 0.1, -0.1)})")
    assert bound == "=" and k == pytest.approx(math.exp(math.log(1.5) + math.log(4 / 3) / 2))
    assert evaluated(STRENGTH, f"strength_speedup.strength_speedup({cells(0.2, 0.1, 0.05)})") \
        == (2, ">")
    assert evaluated(STRENGTH, f"strength_speedup.strength_speedup({cells(-0.1, -0.2, -0.3)})") \
        == (1, "<")


@needs_two_cores
def test_a_tiny_scaling_run_reports_rates_and_the_model(tmp_path):
    result = run(SCALING, "--games=matrix_mp", "--repeats=2", "--move_time=0.005",
                 "--variants=smmcts(threads=1);smmcts(threads=2,parallel=tree)",
                 f"--results_dir={tmp_path}")
    assert result.returncode == 0, result.stderr[-3000:]
    one, two = rows(tmp_path / "rates.csv")
    assert one["threads"] == "1" and float(one["speedup"]) == 1
    assert two["threads"] == "2" and float(two["rate"]) > 0
    low, high = float(two["speedup_16_low"]), float(two["speedup_16_high"])
    assert 0 < low <= high <= 16
    assert float(two["lost_per_million"]) == 0
    record = json.loads((tmp_path / "scaling.json").read_text())
    assert record["cores"] >= 2 and len(record["load_before"]) == 3


def test_the_model_fits_two_costs_from_three_thread_counts():
    t1, a, b = 1.0, 0.2, 0.1
    costs = [(n, a + (n - 1) * b) for n in (2, 4, 8)]
    low, high = evaluated(SCALING, f"tuple(map(float, scaling.predicted(16, {t1}, {costs})))")
    assert low == pytest.approx(high) and low == pytest.approx(16 / (t1 + a + 15 * b))
    # one count: between b = 0 and a = 0
    low, high = evaluated(SCALING, f"tuple(map(float, scaling.predicted(16, {t1}, {costs[:1]})))")
    assert low == pytest.approx(16 / (1 + 15 * 0.3)) and high == pytest.approx(16 / 1.3)


@pytest.mark.parametrize("flag, message", [
    ("--variants=smmcts(threads=2,parallel=tree)", "exactly one variant with threads=1"),
    ("--variants=smmcts(threads=1);smmcts(threads=1,time_limit=1)", "without a budget"),
    ("--predict=4,x", "--predict takes core counts"),
])
def test_bad_scaling_flags_are_usage_errors(flag, message, tmp_path):
    result = run(SCALING, "--games=matrix_mp", flag, f"--results_dir={tmp_path}")
    assert result.returncode == 2 and message in result.stderr, result.stderr[-2000:]
