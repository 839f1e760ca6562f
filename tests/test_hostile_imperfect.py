"""Hostile and careless use of the imperfect-information scripts (issue 27): nothing lost,
no traceback, every refusal names the flag to fix.

``experiments/imperfect/imperfect_match.py`` and ``imperfect_exploitability.py`` write under
``results/`` by default and into the committed results (``experiments/``, ...) only with
``--publish`` (the output check of fig2 / fig3 / olympiad).
"""

import json
import pathlib
import subprocess
import sys

import pytest
from programs import program

ROOT = pathlib.Path(__file__).resolve().parents[1]
MATCH = ["--game=kuhn_poker", "--bots=oos,random", "--games_per_pair=2", "--time_limit=0.005"]
EXPLOITABILITY = ["--games=kuhn_poker", "--root_methods=oos_root", "--online_methods=oos",
                  "--checkpoints=10", "--online_budgets=1", "--online_seconds=0.001",
                  "--seeds=1"]


def run_script(name, *args, cwd=ROOT):
    return subprocess.run([sys.executable, str(program(name)), *args],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


def assert_usage_error(result, *words):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def published_files():
    return {p: p.stat().st_mtime_ns for p in (ROOT / "experiments" / "imperfect" /
                                                 "results").glob("*")}


@pytest.mark.parametrize("name, args", [("imperfect_match.py", MATCH),
                                        ("imperfect_exploitability.py", EXPLOITABILITY)])
def test_writing_into_docs_needs_publish(name, args, tmp_path):
    before = published_files()
    results = "experiments/imperfect/results"
    prefix = f"{results}/imperfect_match_kuhn_poker" if "match" in name else \
        f"{results}/imperfect_exploitability"
    result = run_script(name, *args, f"--out={prefix}", f"--results_dir={tmp_path / 'jobs'}")
    assert_usage_error(result, "--publish", "experiments")
    assert published_files() == before
    assert not (tmp_path / "jobs").exists()  # refused before any work


@pytest.mark.slow
@pytest.mark.parametrize("name, args, out", [
    ("imperfect_match.py", MATCH, "results/imperfect_match/kuhn_poker/imperfect_match"),
    ("imperfect_exploitability.py", EXPLOITABILITY,
     "results/imperfect_exploitability/imperfect_exploitability")])
def test_default_outputs_go_under_results(name, args, out, tmp_path):
    # Run from an empty folder: a default under docs/ would create tmp_path/docs.
    result = run_script(name, *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / f"{out}.csv").exists() and (tmp_path / f"{out}.json").exists()
    assert not (tmp_path / "docs").exists()


def test_pairs_with_a_bot_that_does_not_play_is_a_usage_error(tmp_path):
    result = run_script("imperfect_match.py", *MATCH, "--pairs_with=alphazero",
                        f"--results_dir={tmp_path / 'jobs'}", f"--out={tmp_path / 'm'}")
    assert_usage_error(result, "--pairs_with", "alphazero")


@pytest.mark.parametrize("flag", ["--checkpoints=0.5", "--checkpoints=100,1.5",
                                  "--online_budgets=0", "--online_budgets=2.5"])
def test_fractional_iteration_counts_are_refused(flag, tmp_path):
    result = run_script("imperfect_exploitability.py", *EXPLOITABILITY, flag,
                        f"--results_dir={tmp_path / 'jobs'}", f"--out={tmp_path / 'e'}")
    assert_usage_error(result, flag.split("=")[0])


@pytest.mark.parametrize("name, args", [("imperfect_match.py", MATCH),
                                        ("imperfect_exploitability.py", EXPLOITABILITY)])
def test_results_of_other_parameters_are_refused_without_a_traceback(name, args, tmp_path):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "params.json").write_text(json.dumps({"game": "leduc_poker", "oos_root": None}))
    result = run_script(name, *args, f"--results_dir={jobs}", f"--out={tmp_path / 'x'}")
    assert_usage_error(result, "other parameters", str(jobs))
    assert not (tmp_path / "x.csv").exists()
