"""experiments/check_unchanged.py: what its comparison accepts as unchanged and what not."""

import importlib.util
import json
import subprocess
import sys

import pytest
from programs import program

PATH = program("check_unchanged.py")
_spec = importlib.util.spec_from_file_location("check_unchanged", PATH)
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

GAMES = "game,seed,return_first,seconds\ngs,7,1.0,0.783\ngs,8,-1.0,0.004\n"


def test_identical_files_are_the_same():
    assert check.compare_file(b"a,b\n1,2\n", b"a,b\n1,2\n", ".csv", []) == (True, "identical")


def test_a_csv_differing_only_in_its_seconds_column_is_the_same_and_says_so():
    slower = GAMES.replace("0.783", "1.250")
    same, how = check.compare_file(GAMES.encode(), slower.encode(), ".csv", [])
    assert same and how == "the same but the run columns seconds"


def test_a_csv_differing_in_a_result_is_not_the_same():
    other = GAMES.replace("1.0,0.783", "0.0,0.783")
    same, how = check.compare_file(GAMES.encode(), other.encode(), ".csv", [])
    assert not same and "return_first" in how
    longer = GAMES + "gs,9,1.0,0.1\n"
    assert not check.compare_file(GAMES.encode(), longer.encode(), ".csv", [])[0]


def test_json_run_fields_are_listed_and_result_fields_count():
    before = {"games": 2, "wall_seconds": 3.1, "written_at_utc": "2026-01-01T00:00:00Z",
              "stages": {"search_seconds": 2.0, "mean": [0.1, 0.2]}}
    after = {**before, "wall_seconds": 9.9, "stages": {"search_seconds": 2.5,
                                                       "mean": [0.1, 0.2]}}
    same, how = check.compare_file(json.dumps(before).encode(), json.dumps(after).encode(),
                                   ".json", [])
    assert same and how == "the same but the run fields stages.search_seconds, wall_seconds"
    changed = {**before, "stages": {"search_seconds": 2.0, "mean": [0.1, 0.3]}}
    same, how = check.compare_file(json.dumps(before).encode(), json.dumps(changed).encode(),
                                   ".json", [])
    assert not same and "stages.mean.1" in how


def test_a_rename_is_applied_to_the_file_before_and_named():
    before = b"Found by scripts/fig3.py --protocol=screen\n"
    after = b"Found by experiments/fig3/fig3.py --protocol=screen\n"
    assert not check.compare_file(before, after, ".md", [])[0]
    same, how = check.compare_file(before, after, ".md",
                                   [("scripts/fig3.py", "experiments/fig3/fig3.py")])
    assert same and "scripts/fig3.py read as experiments/fig3/fig3.py" in how


def test_binary_files_must_be_identical():
    assert check.compare_file(b"\x89PNG\x00\x01", b"\x89PNG\x00\x02", ".png", []) == (
        False, "binary files differ")


def test_the_program_reports_a_missing_file_and_exits_1(tmp_path):
    for side in ("before", "after"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "fig2.csv").write_text("t,e1\n1,0.5\n")
    (tmp_path / "before" / "nfsp.csv").write_text("40,0.98\n")
    result = subprocess.run([sys.executable, str(PATH), f"--before={tmp_path / 'before'}",
                             f"--after={tmp_path / 'after'}"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1, result.stderr
    assert "ONLY    nfsp.csv: only before" in result.stdout
    assert "same    fig2.csv: identical" in result.stdout and "CHANGED" in result.stdout


@pytest.mark.parametrize("args", [["--record=docs/unchanged"], ["--before=x"],
                                  ["--record=r", "--before=x", "--after=y"],
                                  ["--before=x", "--after=y", "--renamed=nothing"]])
def test_usage_errors_before_any_run(args, tmp_path):
    result = subprocess.run([sys.executable, str(PATH), *args], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "r").exists()
