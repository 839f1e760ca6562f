"""The user tools (the command-line programs a user runs on their own games and bots),
installed as ``smmcts_spiel.scripts``; the experiments and benchmarks live in the checkout's
``experiments/`` and ``benchmarks/`` and are not installed.

From a checkout each runs as ``python scripts/<name>.py``; after ``pip install`` also as the
console script ``smmcts-<name>`` (underscores as dashes), whose entry point
``smmcts_spiel.scripts:<name>`` is the launcher that :func:`__getattr__` makes.
"""

from __future__ import annotations

import ast
import importlib.util
import runpy
import sys
from collections.abc import Callable


def __getattr__(name: str) -> Callable[[], None]:
    """The launcher of the program ``scripts/<name>.py``: runs it as ``__main__``, exactly as
    ``python scripts/<name>.py`` does, so that its flags are the main module's (``--help``
    lists them) and its docstring is the help's text."""
    spec = None if name.startswith("_") else importlib.util.find_spec(f"{__name__}.{name}")
    if spec is None:
        raise AttributeError(f"module {__name__!r} has no program {name!r}")

    def launch() -> None:
        # absl's help prints __main__'s docstring (here the console script's stub, which
        # has none) and the flags defined by __main__ (the program, run under that name).
        source = spec.loader.get_source(spec.name) if spec.loader else None
        sys.modules["__main__"].__doc__ = ast.get_docstring(ast.parse(source or ""),
                                                            clean=False)
        runpy.run_module(spec.name, run_name="__main__")

    return launch
