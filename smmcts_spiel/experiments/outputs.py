"""Where experiments write, so that a quick look never replaces a published result.

Scripts write into ``results/`` (git-ignored) by default. Committed results are written only
when asked (``--publish``), and a run never replaces a finished result of a larger scale
without ``--force``: :func:`check_output` refuses both before any work starts. A path holds
committed results when it lies in one of :data:`PUBLISHED_DIRS` of the project or of the
current directory (a check that needs no git), or when git tracks it, a file it names (a
prefix's ``<prefix>.csv``, ``<prefix>_floors.csv``) or a file inside it (a folder).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

RESULTS_DIR = "results"
#: The folders of the project (and of the current directory) where committed results live.
PUBLISHED_DIRS = ("docs", "experiments", "benchmarks")
_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def published_dir(path: str | os.PathLike) -> str | None:
    """The published folder (one of :data:`PUBLISHED_DIRS`, of the project or of the current
    directory) that ``path`` lies in, or None."""
    target = Path(path).resolve()
    for root in {_PROJECT_ROOT, Path.cwd().resolve()}:
        for name in PUBLISHED_DIRS:
            if target.is_relative_to(root / name):
                return str(root / name)
    return None


def tracked_by_git(path: str | os.PathLike) -> str | None:
    """A file git tracks at ``path``, inside it (a folder) or named by it as a prefix
    (``path.*``, ``path_*``), or None (also when git or a repository is missing)."""
    target = Path(path).resolve()
    folder = target if target.is_dir() else target.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    specs = [f":(literal){target}"]  # the file, or every file in the folder
    if not target.is_dir():  # a prefix: the files it names
        escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in str(target))
        specs += [f":(glob){escaped}.*", f":(glob){escaped}_*"]
    try:
        listed = subprocess.run(["git", "-C", str(folder), "ls-files", "-z", "--", *specs],
                                capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):  # no git: the published folders still count
        return None
    if listed.returncode != 0 or not listed.stdout:  # not in a repository, or nothing tracked
        return None
    return os.path.join(str(folder), listed.stdout.split(b"\0")[0].decode(errors="replace"))


def check_output(paths: Sequence[str | os.PathLike | None], *, publish: bool) -> None:
    """Refuse to write ``paths`` (files, folders or output prefixes; None: not written) where
    committed results live without ``publish``."""
    for path in paths:
        if path is None or publish:
            continue
        folder = published_dir(path)
        if folder:
            where = f"is in {folder}, where the committed results live"
        else:
            tracked = tracked_by_git(path)
            if not tracked:
                continue
            where = f"would replace {tracked}, a file git tracks"
        raise ValueError(f"{os.fspath(path)} {where}; pass --publish to replace them, or "
                         f"write elsewhere (the default is under {RESULTS_DIR}/)")


def check_writable(path: str | os.PathLike, flag: str) -> None:
    """Refuse, before any work, a file ``path`` that cannot be written: no such folder, a
    folder in the way, no permission (ValueError naming ``flag``)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        problem = "is a folder"
    elif not os.path.isdir(folder):
        problem = f"is in {folder}, which does not exist"
    elif not os.access(folder, os.W_OK):
        problem = f"is in {folder}, where this process may not write"
    else:
        return
    raise ValueError(f"{flag}={os.fspath(path)} {problem}; choose another file")


@contextlib.contextmanager
def replaced_file(path: str | os.PathLike, mode: str = "w",
                  newline: str | None = None) -> Iterator[IO]:
    """``open(path, mode)`` for writing a whole file at once: it is written beside ``path``
    and renamed onto it at the end, so an interrupted write (Ctrl-C, a failure) leaves the
    old file, never half a new one."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, mode, newline=newline) as f:
            yield f
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def prepare_output_file(path: str | os.PathLike, flag: str, *, publish: bool) -> None:
    """Check that the file a flag names may be written (:func:`check_output`) and make its
    folder (:func:`make_dir`); ValueError otherwise."""
    check_output([path], publish=publish)
    make_dir(os.path.dirname(os.fspath(path)) or ".", f"folder of {flag}")


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
