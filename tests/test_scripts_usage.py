"""Every program (user tools, experiments, benchmarks) answers a usage error (unknown flag,
stray argument) with status 2, no traceback."""

import ast
import pathlib
import re
import subprocess
import sys

import pytest
from programs import PROGRAMS

SCRIPTS = sorted(PROGRAMS)
#: The user tools, each installed as the console script smmcts-<name>.
USER_TOOLS = sorted(name for name, path in PROGRAMS.items() if path.parent.name == "scripts")


def test_the_scripts_are_found():
    assert {"fig2.py", "fig3.py", "match.py", "tournament.py", "bench_bot.py"} <= set(SCRIPTS)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("bad", ["--no_such_flag=1", "stray_argument"])
def test_usage_errors_exit_with_status_2(script, bad):
    result = subprocess.run([sys.executable, str(PROGRAMS[script]), bad], capture_output=True,
                            text=True, timeout=120)
    if "needs the optional extra" in result.stderr:  # smmcts_spiel.extras.script_needs
        pytest.skip(result.stderr.strip().splitlines()[-1])
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def _console_script(script: str) -> pathlib.Path:
    """The installed console script smmcts-<name> of scripts/<name>.py (in this venv)."""
    return pathlib.Path(sys.executable).parent / f"smmcts-{script[:-3].replace('_', '-')}"


@pytest.mark.parametrize("script", [
    s if s == "match.py" else pytest.param(s, marks=pytest.mark.slow) for s in USER_TOOLS])
def test_the_console_scripts_help_shows_the_docstring_and_the_programs_flags(script):
    """``smmcts-match --help`` printed four lines of absl's and exited with status 1."""
    path = pathlib.Path(__file__).resolve().parents[1] / "scripts" / script
    source = path.read_text()
    first_line = ast.get_docstring(ast.parse(source)).splitlines()[0]
    own = re.findall(r'DEFINE_\w+\(\s*"(\w+)"', source)
    own += [name for call, name in (("define_seed(", "seed"), ("define_runner_flags(", "seed"),
                                    ("define_publish(", "publish"),
                                    ("define_solver_limits(", "solver_limits"))
            if call in source]
    result = subprocess.run([str(_console_script(script)), "--help"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith(first_line)
    shown = re.findall(r"^  --(?:\[no\])?(\w+)", result.stdout, re.MULTILINE)
    assert own and set(own) <= set(shown), shown


def test_a_console_scripts_usage_error_names_a_help_flag_that_works():
    result = subprocess.run([str(_console_script("match.py")), "--num_games=0"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "run smmcts-match --help to see its flags" in result.stderr
