"""Simultaneous-Move Monte Carlo Tree Search for OpenSpiel.

Importing this package registers every game in :mod:`smmcts_spiel.games` with pyspiel,
so ``pyspiel.load_game("smmcts_...")`` works afterwards.
"""

from smmcts_spiel import games  # noqa: F401  (registers the games)

__version__ = "0.1.0"
