"""experiments/imperfect/imperfect_protocol.py: the tournament command it builds and --summarize."""

from __future__ import annotations

import csv
import json
import pathlib
import subprocess
import sys

from programs import program

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = program("imperfect_protocol.py")


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_dry_run_prints_the_tournament_command_with_its_workers():
    result = run("--setting=phantom_ttt", "--time_limit=0.5", "--num_workers=2", "--dry_run")
    assert result.returncode == 0, result.stderr
    assert "--games=phantom_ttt" in result.stdout and "--time_limit=0.5" in result.stdout
    assert "--backend=process --num_workers=2" in result.stdout
    assert "--backend=serial" not in result.stdout


def write_run(folder: pathlib.Path, game: str, rows: list[list]) -> None:
    folder.mkdir(parents=True)
    (folder / "params.json").write_text(json.dumps({
        "bots": ["oos(time_limit=0.1)", "is_smmcts(time_limit=0.1)", "ismcts(time_limit=0.1)",
                 "random"], "opponents": 2, "time_limit": 0.1, "games": [game]}))
    with open(folder / "pairs.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["game", "bot_a", "bot_b", "games", "mean_a", "ci95", "wins_a",
                         "draws", "losses_a", "score_a"])
        writer.writerows([[game, *row] for row in rows])


def test_summarize_keeps_our_bots_against_the_opponents(tmp_path):
    game = "goofspiel(num_cards=6,imp_info=True,points_order=descending)"
    write_run(tmp_path / "runs" / "gs6_descending_0.1s", game, [
        ["oos(time_limit=0.1)", "ismcts(time_limit=0.1)", 400, 0.07, 0.074, 129, 170, 101, 0.535],
        ["is_smmcts(time_limit=0.1)", "random", 400, 0.5425, 0.08, 299, 19, 82, 0.77],
        ["oos(time_limit=0.1)", "is_smmcts(time_limit=0.1)", 40, -0.1, 0.3, 10, 16, 14, 0.45],
        ["ismcts(time_limit=0.1)", "random", 40, 0.4, 0.2, 28, 0, 12, 0.7]])
    result = run(f"--summarize={tmp_path / 'runs'}", f"--out={tmp_path / 'summary'}")
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["setting"], r["bot"], r["opponent"], r["games"], r["mean"], r["ci95"],
             r["wins"], r["draws"], r["losses"]) for r in rows] == [
        ("gs6_descending", "oos", "ismcts", "400", "0.07", "0.074", "129", "170", "101"),
        ("gs6_descending", "is_smmcts", "random", "400", "0.5425", "0.08", "299", "19", "82")]
    assert (tmp_path / "summary.png").stat().st_size > 0


def test_summarize_of_a_folder_without_runs_is_refused(tmp_path):
    result = run(f"--summarize={tmp_path}", f"--out={tmp_path / 'summary'}")
    assert result.returncode == 2
    assert "no finished protocol run" in result.stderr
    assert not (tmp_path / "summary.csv").exists()
