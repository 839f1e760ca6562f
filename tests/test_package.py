"""The package layout: games/ and bots/ are installed as smmcts_spiel.games / .bots."""

import importlib
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_subpackages_import_under_smmcts_spiel_from_this_install():
    games = importlib.import_module("smmcts_spiel.games")
    bots = importlib.import_module("smmcts_spiel.bots")
    assert Path(games.__file__).parent == ROOT / "games"
    assert Path(bots.__file__).parent == ROOT / "bots"


def test_wheel_maps_games_and_bots_under_smmcts_spiel(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True)
    (wheel,) = tmp_path.glob("smmcts_spiel-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "smmcts_spiel/games/__init__.py" in names
    assert "smmcts_spiel/bots/__init__.py" in names
    assert not [n for n in names if n.startswith(("games/", "bots/"))]
    # A normal (non-editable) install of that wheel imports both subpackages from itself.
    # (-S skips the .pth hook of this editable install; site-packages still gives pyspiel.)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, capture_output=True)
    probe = ("import smmcts_spiel.games as g, smmcts_spiel.bots as b; "
             "print(g.__file__); print(b.__file__)")
    search_path = os.pathsep.join([str(target), sysconfig.get_paths()["purelib"]])
    out = subprocess.run([sys.executable, "-S", "-c", probe], env={"PYTHONPATH": search_path},
                         cwd=tmp_path, check=True, capture_output=True, text=True).stdout.split()
    assert all(path.startswith(str(target)) for path in out), out


PLAY_ONE_GAME = """
import numpy as np
import pyspiel
import smmcts_spiel
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots
from smmcts_spiel.bots import MMCTSBot, SMMCTSBot

game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=False)")
bots = [SMMCTSBot(game, p, iterations=200, seed=p) for p in (0, 1)]
print("goofspiel", evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0)))
phantom = pyspiel.load_game("smmcts_phantom_ttt")
bots = [MMCTSBot(phantom, p, training_iterations=500, seed=p) for p in (0, 1)]
print("phantom_ttt", evaluate_bots(phantom.new_initial_state(), bots, np.random.RandomState(0)))
"""


@pytest.mark.slow
def test_a_plain_pip_install_imports_and_plays(tmp_path):
    """``pip install .`` without extras is enough for the README's quick start."""
    venv = tmp_path / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(ROOT)],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    played = subprocess.run([str(python), "-c", PLAY_ONE_GAME], cwd=tmp_path,
                            capture_output=True, text=True)
    assert played.returncode == 0, played.stderr[-3000:]
    assert "goofspiel" in played.stdout and "phantom_ttt" in played.stdout
