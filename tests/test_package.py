"""The package layout: games/ and bots/ are installed as smmcts_spiel.games / .bots."""

import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

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
