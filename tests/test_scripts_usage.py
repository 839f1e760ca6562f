"""Every script answers a usage error (unknown flag, stray argument) with status 2, no traceback."""

import pathlib
import subprocess
import sys

import pytest

SCRIPTS = sorted(p.name for p in (pathlib.Path(__file__).resolve().parents[1] /
                                  "scripts").glob("*.py") if not p.name.startswith("_"))


def test_the_scripts_are_found():
    assert {"fig2.py", "fig3.py", "match.py", "tournament.py"} <= set(SCRIPTS)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("bad", ["--no_such_flag=1", "stray_argument"])
def test_usage_errors_exit_with_status_2(script, bad):
    path = pathlib.Path(__file__).resolve().parents[1] / "scripts" / script
    result = subprocess.run([sys.executable, str(path), bad], capture_output=True, text=True,
                            timeout=120)
    if "needs the optional extra" in result.stderr:  # smmcts_spiel.extras.script_needs
        pytest.skip(result.stderr.strip().splitlines()[-1])
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
