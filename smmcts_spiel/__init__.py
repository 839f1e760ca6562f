"""Simultaneous-Move Monte Carlo Tree Search for OpenSpiel.

Importing this package registers every game in :mod:`smmcts_spiel.games` with pyspiel,
so ``pyspiel.load_game("smmcts_...")`` works afterwards.
"""

import importlib.util

if importlib.util.find_spec("smmcts_spiel.games") is None:
    # The source tree's smmcts_spiel/ without the install's mapping of games/ and bots/ into
    # it: Python found this folder before the installed package (e.g. run from the clone's
    # root after a plain ``pip install .``).
    raise ImportError(
        f"smmcts_spiel was imported from its source folder {__path__[0]}, where its games/ "
        "and bots/ are not yet mapped into the package: install the clone editable "
        "(`pip install -e .`, or ./scripts/demo, which does) or run Python from another folder")

from smmcts_spiel import games  # noqa: E402, F401  (registers the games)

__version__ = "0.1.0"
