"""The command-line programs, installed as ``smmcts_spiel.scripts``.

From a checkout each runs as ``python scripts/<name>.py``; after ``pip install`` also as the
console script ``smmcts-<name>`` (underscores as dashes), whose entry point
``smmcts_spiel.scripts:<name>`` is the launcher that :func:`__getattr__` makes.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable


def __getattr__(name: str) -> Callable[[], None]:
    """The launcher of the program ``scripts/<name>.py``: runs its ``main`` with its flags
    exactly as ``python scripts/<name>.py`` does."""
    if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
        raise AttributeError(f"module {__name__!r} has no program {name!r}")

    def launch() -> None:
        from smmcts_spiel.experiments import cli

        cli.run(importlib.import_module(f"{__name__}.{name}").main)

    return launch
