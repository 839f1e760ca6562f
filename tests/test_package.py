"""The package as users install it: games/, bots/ and scripts/ installed under smmcts_spiel,
console scripts for the user tools only, one version, the license, and the type check."""

import importlib
import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import smmcts_spiel

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "smmcts-spiel"


def test_mypy_finds_no_type_errors():
    """`mypy` (configured in pyproject.toml) passes: a new type error fails the suite.

    The cache lives in the venv, so a re-run checks only the changed modules (seconds).
    """
    cache = Path(sys.prefix) / "mypy_cache"
    result = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache)],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, (
        f"mypy found type errors (run `mypy` in the repository root):\n"
        f"{result.stdout[-6000:]}{result.stderr[-2000:]}")


def _console_scripts() -> dict[str, str]:
    entry_points = importlib.metadata.distribution(DISTRIBUTION).entry_points
    return {ep.name: ep.value for ep in entry_points if ep.group == "console_scripts"}


def test_every_script_is_a_console_script_and_loads():
    programs = sorted(p.stem for p in (ROOT / "scripts").glob("*.py")
                      if not p.stem.startswith("_"))
    wanted = {f"smmcts-{name.replace('_', '-')}": f"smmcts_spiel.scripts:{name}"
              for name in programs}
    assert _console_scripts() == wanted, "add the script to [project.scripts] in pyproject.toml"
    for name in programs:  # each entry point resolves to a launcher without running it
        launcher = getattr(importlib.import_module("smmcts_spiel.scripts"), name)
        assert callable(launcher)
    with pytest.raises(AttributeError, match="no program"):
        importlib.import_module("smmcts_spiel.scripts").no_such_program  # noqa: B018


#: The programs a user runs on their own games and bots; every other program is an
#: experiment (experiments/<name>/) or a benchmark (benchmarks/), run from a checkout.
USER_TOOLS = {"demo", "equilibrium_loss", "match", "pool_games", "regret_against_random",
              "tournament"}


def test_console_scripts_are_the_user_tools_only():
    installed = {ep.split(":")[1] for ep in _console_scripts().values()}
    assert installed == USER_TOOLS, ("an experiment or a benchmark goes to experiments/<name>/ "
                                     "or benchmarks/, not scripts/ (no console script)")
    lab = {p.stem for p in [*(ROOT / "experiments").rglob("*.py"),
                            *(ROOT / "benchmarks").glob("*.py")]}
    assert lab and not lab & installed


def test_one_version_source():
    assert importlib.metadata.version(DISTRIBUTION) == smmcts_spiel.__version__
    assert "version =" not in (ROOT / "pyproject.toml").read_text().split("[project]")[1].split(
        "\n[")[0], "the version lives in smmcts_spiel.__version__ only"


# An absolute path of one machine: a home, a mount, a private tool folder.
_MACHINE_PATH = re.compile(r"(?<![\w.:/-])/(?:work|home|Users|root|opt|mnt|srv|scratch|private)/"
                           r"|\b[A-Z]:\\(?:Users|work)\\")


def test_no_machine_local_paths_in_the_repository():
    """Docs, scripts and code name commands and files any user has (relative paths, plain
    ``python scripts/...``), never a path of the machine they were written on."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: no list of the repository's files")
    found = []
    for name in listed.stdout.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:  # figures, arrays
            continue
        found += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()}"
                  for m in _MACHINE_PATH.finditer(text)]
    assert not found, "machine-local paths:\n" + "\n".join(found)


def test_every_dependency_is_pinned_in_the_constraints_file():
    """scripts/_venv.sh (and so CI) installs with constraints.txt: a dependency added to
    pyproject.toml without its pin would float; a pin outside pyproject's range would fail."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    problems = []
    for text in importlib.metadata.requires(DISTRIBUTION) or []:
        requirement = Requirement(text)
        pinned = pins.get(canonicalize_name(requirement.name))
        if pinned is None:
            problems.append(f"{requirement.name} is not pinned")
        elif not requirement.specifier.contains(pinned, prereleases=True):
            problems.append(f"{requirement.name}=={pinned} is outside {requirement.specifier}")
    assert not problems, ("regenerate constraints.txt (see its header): " + "; ".join(problems))


def test_license_is_the_apache_2_text():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert importlib.metadata.metadata(DISTRIBUTION)["License-Expression"] == "Apache-2.0"


def test_subpackages_import_under_smmcts_spiel_from_this_install():
    games = importlib.import_module("smmcts_spiel.games")
    bots = importlib.import_module("smmcts_spiel.bots")
    assert Path(games.__file__).parent == ROOT / "games"
    assert Path(bots.__file__).parent == ROOT / "bots"


def test_the_source_folder_without_its_mapping_says_how_to_install(tmp_path):
    """Python finding the clone's smmcts_spiel/ before an install that maps games/ and bots/
    into it (a plain ``pip install .`` used from the clone's root) gets one clear error,
    not a circular-import message. (-S skips this editable install's .pth hook.)"""
    result = subprocess.run([sys.executable, "-S", "-c", "import smmcts_spiel"],
                            env={"PYTHONPATH": str(ROOT)}, cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 1
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("ImportError: smmcts_spiel was imported from its source folder")
    assert "pip install -e ." in message and "circular" not in result.stderr


def test_wheel_maps_games_and_bots_under_smmcts_spiel(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True)
    (wheel,) = tmp_path.glob("smmcts_spiel-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "smmcts_spiel/games/__init__.py" in names
    assert "smmcts_spiel/bots/__init__.py" in names
    assert "smmcts_spiel/scripts/match.py" in names
    assert not [n for n in names if n.startswith(("games/", "bots/", "scripts/", "experiments/",
                                                  "benchmarks/"))]
    assert not [n for n in names if "/fig2" in n or "/bench_" in n]  # the lab stays out
    assert not [n for n in names if n.endswith(("/demo", "/test", ".sh"))]  # dev tools stay
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
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
    """``pip install .`` without extras is enough to play, and gives the console scripts."""
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
    # The console script runs the program as `python scripts/match.py` would, from anywhere.
    matched = subprocess.run(
        [str(venv / "bin" / "smmcts-match"), "--game=goofspiel(num_cards=3,imp_info=False)",
         "--bot_a=random", "--bot_b=random", "--num_games=2"],
        cwd=tmp_path, capture_output=True, text=True)
    assert matched.returncode == 0, matched.stderr[-3000:]
    assert "games per pair: 2" in matched.stdout
    usage = subprocess.run([str(venv / "bin" / "smmcts-tournament"), "--no_such_flag=1"],
                           cwd=tmp_path, capture_output=True, text=True)
    assert usage.returncode == 2 and "no_such_flag" in usage.stderr, usage.stderr[-2000:]


@pytest.mark.slow
def test_the_demo_is_reproducible_and_names_its_result_files(tmp_path):
    """Two runs of scripts/demo.py print the same table and write the same results."""
    outputs = []
    for run in ("first", "second"):
        out = tmp_path / run
        result = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "demo.py"), "--num_games=4",
             "--iterations=200", f"--results_dir={out}"],
            cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
        assert f"{out / 'results.csv'}" in result.stdout and f"{out / 'demo.png'}" in result.stdout
        assert "compiling kernels, once" in result.stderr  # the progress bar
        table = result.stdout.split("Time:")[0].replace(str(out), "<out>")
        outputs.append((table, (out / "results.csv").read_text()))
    assert outputs[0] == outputs[1]


def test_a_missing_extra_is_named_in_one_line(monkeypatch):
    from smmcts_spiel import extras

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    with pytest.raises(extras.MissingExtraError, match=r"needs the optional extra 'plot'.*"
                       r"pip install 'smmcts-spiel\[plot\]'"):
        with extras.required("plot", "the figure"):
            import matplotlib  # noqa: F401
    monkeypatch.setitem(sys.modules, "no_such_module_of_ours", None)
    with pytest.raises(ModuleNotFoundError) as error:  # not an extra's module: a bug, as it is
        with extras.required("plot", "the figure"):
            import no_such_module_of_ours  # noqa: F401
    assert not isinstance(error.value, extras.MissingExtraError)
    script = ("import sys; sys.modules['jax'] = None\n"
              "from smmcts_spiel import extras\n"
              "with extras.script_needs('nfsp', 'scripts/x.py'):\n    import jax\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "scripts/x.py needs the optional extra 'nfsp' (missing module 'jax'): "
        "pip install 'smmcts-spiel[nfsp]'"]
