"""While numba compiles our code (seconds on a first run) the library says so on stderr, once
per module; a cache load, which takes a fraction of the time, says nothing; a cache that
cannot be used costs one warning line, never a traceback."""

import os
import subprocess
import sys
import textwrap

import pytest

MODULE = textwrap.dedent("""
    import numba

    @numba.njit(cache=True)
    def add(a, b):
        return a + b

    @numba.njit(cache=True)
    def twice(a):
        return add(a, a)
    """)

PROGRAM = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import smmcts_spiel.games.kernels  # installs the listener, as every compiled package does
    from smmcts_spiel import compiling
    compiling.watch("user_kernel")
    import user_kernel
    assert user_kernel.twice(2) == 4 and user_kernel.add(1.5, 2.0) == 3.5
    """)


def run(folder):
    return subprocess.run([sys.executable, "-c", PROGRAM, str(folder)], capture_output=True,
                          text=True, timeout=300)


def test_a_compile_is_announced_once_per_module_and_a_cache_load_not_at_all(tmp_path):
    (tmp_path / "user_kernel.py").write_text(MODULE)
    first = run(tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    lines = [line for line in first.stderr.splitlines() if "numba is compiling" in line]
    assert lines == ["smmcts_spiel: numba is compiling user_kernel, once: later processes load "
                     "it from numba's cache (seconds to a minute)"]
    second = run(tmp_path)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "numba is compiling" not in second.stderr


def test_a_module_neither_ours_nor_watched_is_not_announced(tmp_path):
    (tmp_path / "user_kernel.py").write_text(MODULE)
    program = PROGRAM.replace('compiling.watch("user_kernel")', "")
    result = subprocess.run([sys.executable, "-c", program, str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "numba is compiling" not in result.stderr


@pytest.mark.parametrize("level, announced", [("INFO", True), ("WARNING", False)])
def test_the_logger_s_level_silences_it(tmp_path, level, announced):
    (tmp_path / "user_kernel.py").write_text(MODULE)
    program = PROGRAM.replace(
        "compiling.watch", f"import logging; logging.getLogger('smmcts_spiel.compiling')"
        f".setLevel(logging.{level}); compiling.watch")
    result = subprocess.run([sys.executable, "-c", program, str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert ("numba is compiling" in result.stderr) == announced


@pytest.mark.parametrize("damage", [b"garbage\n", b""])
def test_a_corrupt_cache_costs_a_compile_and_one_warning_line_not_a_traceback(tmp_path, damage):
    (tmp_path / "user_kernel.py").write_text(MODULE)
    assert run(tmp_path).returncode == 0  # fills the cache
    indexes = list((tmp_path / "__pycache__").glob("user_kernel.*.nbi"))
    assert indexes
    for index in indexes:
        index.write_bytes(damage)
    result = run(tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    warnings = [line for line in result.stderr.splitlines() if "cannot be used" in line]
    assert len(warnings) == 1 and "compiling in memory instead" in warnings[0]
    assert "NUMBA_CACHE_DIR" in warnings[0]


def test_a_cache_folder_that_cannot_be_written_is_named_in_one_warning_line(tmp_path):
    (tmp_path / "user_kernel.py").write_text(MODULE)
    (tmp_path / "a_file").write_text("")
    result = subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path)], capture_output=True,
                            text=True, timeout=300,
                            env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "a_file" / "x")})
    assert result.returncode == 0, result.stderr[-2000:]
    warnings = [line for line in result.stderr.splitlines() if "cannot be written" in line]
    assert len(warnings) == 1 and "a_file" in warnings[0], result.stderr
    assert "Traceback" not in result.stderr
