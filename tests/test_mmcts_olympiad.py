"""experiments/olympiad/olympiad.py end to end on a tiny budget: files, table shape, resuming."""

import csv
import json
import pathlib
import subprocess
import sys

from programs import program

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_olympiad(results_dir, *extra):
    return subprocess.run(
        [sys.executable, str(program("olympiad.py")), f"--results_dir={results_dir}",
         "--num_games=4", "--ismcts_num_games=2", "--ismcts_simulations=5", "--chunk=2",
         "--num_workers=1", "--mmcts=2K:exp3_no_exploration,3K:empirical", *extra],
        capture_output=True, text=True, timeout=300)


def test_olympiad_writes_every_ordered_pair_and_resumes(tmp_path):
    first = run_olympiad(tmp_path)
    assert first.returncode == 0, first.stderr
    with open(tmp_path / "olympiad.csv") as f:
        rows = list(csv.DictReader(f))
    names = ["MMCTS-2K-exp3_no_exploration", "MMCTS-3K-empirical", "Random", "BeliefSampler",
             "ISMCTS"]
    assert sorted((r["first"], r["second"]) for r in rows) == sorted(
        (a, b) for a in names for b in names)
    for r in rows:
        games = 2 if "ISMCTS" in (r["first"], r["second"]) else 4
        assert int(r["games"]) == games
        assert int(r["wins"]) + int(r["draws"]) + int(r["losses"]) == games
        assert float(r["win_low"]) <= float(r["win_rate"]) <= float(r["win_high"])
    table = (tmp_path / "olympiad.md").read_text().splitlines()
    assert table[2] == "| P1 \\ P2 | " + " | ".join(names) + " |"
    assert len([line for line in table if line.startswith("| ")]) == 1 + len(names)
    training = list(csv.DictReader(open(tmp_path / "training.csv")))
    assert [int(r["iterations"]) for r in training] == [2000, 3000]
    assert json.loads((tmp_path / "params.json").read_text())["num_games"] == 4
    # A rerun finds every pair done (and the trees cached): same CSV, nothing replayed.
    before = (tmp_path / "olympiad.csv").read_text()
    again = run_olympiad(tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "olympiad.csv").read_text() == before
    # Other flags in the same directory would mix results: refused.
    other = run_olympiad(tmp_path, "--gamma=0.2")
    assert other.returncode != 0 and "new --results_dir" in other.stderr
