"""Where the repository's programs live, for the tests that run them by file name: the user
tools in scripts/, each experiment's in experiments/<name>/ (and the experiments' own tools
in experiments/), the speed programs in benchmarks/. A program can so move between these
folders without its tests changing."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
USER_TOOLS = ROOT / "scripts"


def _programs() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted([*USER_TOOLS.glob("*.py"), *(ROOT / "experiments").glob("*.py"),
                        *(ROOT / "experiments").glob("*/*.py"),
                        *(ROOT / "benchmarks").glob("*.py")]):
        if path.name.startswith("_"):
            continue
        if path.name in found:
            raise RuntimeError(f"two programs named {path.name}: {found[path.name]}, {path}")
        found[path.name] = path
    return found


#: File name -> path of every program.
PROGRAMS = _programs()


def program(name: str) -> Path:
    """The path of the program ``name`` (``"fig2.py"``) wherever it lives."""
    try:
        return PROGRAMS[name]
    except KeyError:
        raise KeyError(f"no program {name!r} in scripts/, experiments/ or benchmarks/") from None
