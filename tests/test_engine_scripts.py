"""The engine's measurement scripts run end to end on tiny settings (no timing is checked)."""

import csv
import os
import subprocess
import sys

import pytest
from programs import program

TWO_CORES = len(os.sched_getaffinity(0)) >= 2


def run(script, *flags):
    result = subprocess.run([sys.executable, str(program(script)), *flags],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
def test_bench_bot_all_games_writes_a_row_per_game(tmp_path):
    threads = "1,2" if TWO_CORES else "1"
    out = run("bench_bot.py", "--all_games", "--only=^matrix_mp$|^repeated_game.*matrix_mp",
              "--repeats=1", "--iterations=200", "--python_iterations=50",
              "--overshoot_games=1", "--overshoot_moves=2", f"--threads={threads}",
              f"--csv={tmp_path / 'rows.csv'}")
    rows = list(csv.DictReader(open(tmp_path / "rows.csv")))
    assert [r["game"] for r in rows] == ["matrix_mp",
                                         "repeated_game(stage_game=matrix_mp(),num_repetitions=5)"]
    assert float(rows[0]["threads1_rate"]) > 0 and float(rows[0]["threads1_ratio"]) > 0
    assert float(rows[0]["threads1_per_move_ratio"]) > 0  # the C++ bot's moves in between
    # The C++ bot refuses rewards along the way; OpenSpiel's Python MCTSBot plays them.
    assert rows[1]["baseline"] == "Python MCTSBot" and rows[1]["cpp_refuses"]
    assert float(rows[1]["threads1_ratio"]) > 0
    assert "min_ratio_vs_cpp_threads1=" in out and "max_median_overshoot_ms=" in out


@pytest.mark.slow
def test_tune_exploration_scores_every_candidate(tmp_path):
    out = run("tune_exploration.py",
              "--games=goofspiel(num_cards=3,imp_info=False,points_order=descending)",
              "--random_settings=2x2", "--random_games=2", "--random_runs=2", "--states=2",
              "--seeds=1", "--checkpoints=50,200", "--exp3_gammas=0.05,0.2", "--ucb_cs=0.5,1",
              "--workers=1", "--backend=serial", f"--results_dir={tmp_path / 'jobs'}",
              f"--solution_dir={tmp_path / 'solutions'}")
    scores = (tmp_path / "jobs" / "tune_scores.md").read_text()
    for line in ("gamma = 0.05", "gamma = 0.2", "c = 0.5", "c = 1"):
        assert line in scores
    rows = list(csv.DictReader(open(tmp_path / "jobs" / "tune.csv")))
    # 4 candidates x (1 solved game x 2 budgets x 2 rules + 1 random setting x 2 budgets).
    assert len(rows) == 4 * (4 + 2)
    assert all(float(r["mean"]) >= 0 for r in rows)
    assert "exp3:" in out and "ucb:" in out


@pytest.mark.slow
def test_bench_startup_times_a_cold_and_a_warm_process_beside_the_cpp_bot(tmp_path):
    out = run("bench_startup.py", "--rows=SMMCTSBot:matrix_rps", "--repeats=1",
              f"--csv={tmp_path / 'rows.csv'}")
    (row,) = list(csv.DictReader(open(tmp_path / "rows.csv")))
    assert (row["bot"], row["game"]) == ("SMMCTSBot", "matrix_rps")
    # A cold process compiles what a warm one loads from the cache it filled.
    assert float(row["cold_cpu"]) > float(row["warm_cpu"]) > 0
    assert float(row["openspiel_cpu"]) > 0
    assert "max_warm_cpu=" in out and "max_cold_cpu=" in out


@pytest.mark.slow
def test_compile_profile_lists_what_a_cold_first_move_compiles(tmp_path):
    result = subprocess.run([sys.executable, str(program("compile_profile.py")),
                             "--game=matrix_rps", "--top=3"], capture_output=True, text=True,
                            timeout=600, env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("SMMCTSBot on matrix_rps: first move after")
    assert len([line for line in lines if " s own " in line]) == 3
    assert any("kernel_engine._run_" in line for line in lines)
    assert lines[-1].startswith("kernel engine loop, nopython pipeline:")
