"""Where experiments write, so that a quick look never replaces a published result.

Scripts write into ``results/`` (git-ignored) by default. The committed results under the
project's ``docs/`` and ``data/`` are written only when asked (``--publish``), and a run
never replaces a finished result of a larger scale without ``--force``: :func:`check_output`
refuses both before any work starts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

RESULTS_DIR = "results"
PUBLISHED_DIRS = ("docs", "data")
_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def published_dir(path: str | os.PathLike) -> str | None:
    """The published folder (``docs`` or ``data``, of the project or of the current
    directory) that ``path`` lies in, or None."""
    target = Path(path).resolve()
    for root in {_PROJECT_ROOT, Path.cwd().resolve()}:
        for name in PUBLISHED_DIRS:
            if target.is_relative_to(root / name):
                return str(root / name)
    return None


def check_output(paths: Sequence[str | os.PathLike], *, publish: bool) -> None:
    """Refuse to write ``paths`` (files or folders) into docs/ or data/ without ``publish``."""
    for path in paths:
        folder = published_dir(path)
        if folder and not publish:
            raise ValueError(
                f"{os.fspath(path)} is in {folder}, where the committed results live; pass "
                f"--publish to replace them, or write elsewhere (the default is under "
                f"{RESULTS_DIR}/)")


def make_dir(path: str | os.PathLike, what: str = "results folder") -> None:
    """``os.makedirs(path, exist_ok=True)``; ValueError naming the folder when it cannot be
    created (a file in the way, no permission, ...)."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot create the {what} {os.fspath(path)}: "
                         f"{e.strerror or e}; choose another folder") from None


def read_json_object(path: str | os.PathLike) -> dict:
    """The JSON object stored in ``path``; ValueError saying why when it cannot be read."""
    try:
        with open(path) as f:
            value = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(str(e)) from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def check_not_smaller(params_path: str | os.PathLike, params: Mapping, scale: Sequence[str],
                      *, force: bool) -> None:
    """Refuse to replace the finished result recorded in ``params_path`` by a smaller run.

    ``scale`` names the parameters that measure a run's size (games, runs, iterations...;
    None means "all", larger than any number). A parameter file that cannot be read is
    reported, not silently replaced.
    """
    if force or not os.path.exists(params_path):
        return
    try:
        old = read_json_object(params_path)
    except ValueError as e:
        raise ValueError(f"{os.fspath(params_path)} (the record of the result this run "
                         f"would replace) is unreadable: {e}; pass --force to replace it") \
            from None
    smaller = [f"{k}={params[k]} < {old[k]}" for k in scale
               if k in old and _less(params.get(k), old[k])]
    if smaller:
        raise ValueError(
            f"{os.fspath(params_path)} records a larger finished run than this one "
            f"({', '.join(smaller)}); pass --force to replace it, or write elsewhere "
            f"with --out")


def _less(new, old) -> bool:
    if new is None or isinstance(new, (list, dict, str)):
        return False
    if old is None:  # "all": any limit is smaller.
        return True
    try:
        return new < old
    except TypeError:
        return False
