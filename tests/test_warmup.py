"""``python -m smmcts_spiel.warmup``: every compiled bot of the games named, built and searched
once, so that a later process loads it from numba's cache."""

import subprocess
import sys

import pytest

from smmcts_spiel import warmup


def test_a_simultaneous_game_warms_smmctsbot_and_an_imperfect_one_the_information_searches():
    seconds = warmup.warm_up(["matrix_rps", "kuhn_poker"], progress=False)
    assert list(seconds) == ["SMMCTSBot on matrix_rps", "OOSBot on kuhn_poker",
                             "ISSMMCTSBot on kuhn_poker"]
    assert all(s > 0 for s in seconds.values())


@pytest.mark.parametrize("game, words", [
    ("no_such_game", ["cannot load game", "no_such_game"]),
    ("liars_dice", ["no compiled bot", "liars_dice", "information-set kernel"]),
])
def test_a_game_no_bot_plays_is_refused_before_anything_compiles(game, words):
    with pytest.raises(ValueError) as error:
        warmup.warm_up(["matrix_rps", game], progress=False)
    assert all(w in str(error.value) for w in words)


def test_the_command_line_prints_a_line_per_bot_and_refuses_bad_input_without_traceback():
    ok = subprocess.run([sys.executable, "-m", "smmcts_spiel.warmup", "--quiet", "matrix_mp"],
                        capture_output=True, text=True, timeout=600)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert ok.stdout.split()[-3:] == ["SMMCTSBot", "on", "matrix_mp"]
    bad = subprocess.run([sys.executable, "-m", "smmcts_spiel.warmup", "no_such_game"],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "cannot load game 'no_such_game'" in bad.stderr
