"""Bot specs and matches: parsing, seat alternation, OpenSpiel bots, the results table."""

import subprocess
import sys
from pathlib import Path

import pyspiel
import pytest

from smmcts_spiel import match
from smmcts_spiel.bots import SMMCTSBot

ROOT = Path(__file__).resolve().parents[1]
GOOFSPIEL = pyspiel.load_game("goofspiel(num_cards=3,imp_info=False,points_order=descending)")


def test_spec_parsing_uses_openspiel_syntax():
    assert match.parse_bot_spec("smmcts(selector=exp3,gamma=0.1,iterations=5000)") == {
        "name": "smmcts", "selector": "exp3", "gamma": 0.1, "iterations": 5000}
    assert match.parse_bot_spec(" random ") == {"name": "random"}


@pytest.mark.parametrize("spec, message", [
    ("smmcts(selector=rm", "malformed bot spec"),
    ("alphazero", "unknown bot"),
    ("smmcts(depth=3)", "unknown parameter"),
    ("cpp(bot=nope)", "needs bot="),
    ("smmcts(selector=cfr)", "unknown selector"),
])
def test_bad_specs_are_named(spec, message):
    with pytest.raises(ValueError, match=message):
        match.make_bot(spec, GOOFSPIEL, 0, seed=0)


def test_make_bot_builds_each_kind():
    assert isinstance(match.make_bot("smmcts(selector=ucb,c=2.0)", GOOFSPIEL, 1, 0), SMMCTSBot)
    assert isinstance(match.make_bot("mcts(iterations=10)", GOOFSPIEL, 0, 0),
                      match.TurnBasedMCTSBot)
    assert isinstance(match.make_bot("random", GOOFSPIEL, 0, 0), pyspiel.Bot)
    assert isinstance(match.make_bot("cpp(bot=uniform_random,seed=3)", GOOFSPIEL, 0, 0),
                      pyspiel.Bot)


def test_match_alternates_seats_and_is_reproducible():
    a = match.play_match(GOOFSPIEL, "smmcts(iterations=200)", "random", 6, seed=4,
                         progress=False)
    b = match.play_match(GOOFSPIEL, "smmcts(iterations=200)", "random", 6, seed=4,
                         progress=False)
    assert a.returns == b.returns and a.games == 6
    assert a.wins + a.draws + a.losses == 6


def test_a_bot_against_itself_is_even_in_matching_pennies():
    game = pyspiel.load_game("matrix_mp")
    result = match.play_match(game, "smmcts(iterations=300)", "smmcts(iterations=300)", 400,
                              seed=1, progress=False)
    assert abs(result.mean) < result.ci95 + 0.05


def test_openspiel_mcts_plays_simultaneous_games_without_seeing_the_other_move():
    # In matching pennies a bot that saw its opponent's move would win every game as player 1.
    game = pyspiel.load_game("matrix_mp")
    result = match.play_match(game, "random", "mcts(iterations=50)", 200, seed=2,
                              progress=False)
    assert abs(result.mean) < 0.25


def test_round_robin_and_table():
    results = match.round_robin(GOOFSPIEL, ["smmcts(iterations=50)", "mcts(iterations=50)",
                                            "random"], 2, progress=False)
    assert [(r.bot_a, r.bot_b) for r in results] == [
        ("smmcts(iterations=50)", "mcts(iterations=50)"),
        ("smmcts(iterations=50)", "random"), ("mcts(iterations=50)", "random")]
    table = match.format_table(results)
    assert "wins" in table and len(table.splitlines()) == 4


def test_match_script_reports_a_bad_game_clearly():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "match.py"),
                           "--game=no_such_game", "--num_games=1"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "cannot load game 'no_such_game'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_match_script_reports_bad_parameters_of_our_games_clearly():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "match.py"),
                           "--game=smmcts_random_stacked_matrix(depth=0)", "--num_games=1"],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "depth must be an integer >= 1" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_match_script_refuses_a_general_sum_game():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "match.py"),
                           "--game=matrix_pd", "--num_games=1"], capture_output=True, text=True)
    assert proc.returncode != 0 and "zero-sum" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_match_script_prints_the_table():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "match.py"),
         "--game=goofspiel(num_cards=3,imp_info=False)", "--bot_a=smmcts(iterations=50)",
         "--bot_b=random", "--num_games=2"], capture_output=True, text=True, check=True)
    assert "smmcts(iterations=50)" in proc.stdout and "mean return A" in proc.stdout
