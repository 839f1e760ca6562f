"""The ``pyspiel.Bot`` plumbing every search bot shares.

A search bot owns a search (``self.search``) with ``policy()`` and ``reset()``, a per-move
budget (``iterations`` and/or ``time_limit`` seconds) and a seeded generator for its own
sampling; it plays through ``step_with_policy``, which each bot defines. Everything else a
``pyspiel.Bot`` answers is the same for all of them, and lives here.
"""

from __future__ import annotations

import random

import pyspiel

from smmcts_spiel import checks


class SearchBot(pyspiel.Bot):
    """Base of SMMCTSBot, OOSBot and ISSMMCTSBot: checks, budget, seed, policy, restart.

    Subclasses call ``super().__init__`` first (it checks the player id and the budget and
    seeds ``self._rng``), then build ``self._search`` from ``self._rng``, and define
    ``step_with_policy``.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, iterations: int | None,
                 time_limit: float | None, seed: int | None):
        super().__init__()
        self.player_id = checks.check_player_id(player_id)
        self.iterations, self.time_limit = checks.check_budget(iterations, time_limit)
        self._game = game
        self._rng = random.Random(seed)

    @property
    def search(self):
        """The underlying search (its tables or tree, and strategies)."""
        return self._search

    def policy(self):
        """Both players' current strategies as an OpenSpiel policy (uniform where unsearched)."""
        return self._search.policy()

    def check_state(self, state: pyspiel.State) -> None:
        """Refuse a state of another game than the bot's (its search would not fit it)."""
        checks.check_state_game(state, str(self._game), type(self).__name__)

    def restart_at(self, state: pyspiel.State) -> None:
        self.check_state(state)

    def restart(self) -> None:
        self._search.reset()

    def inform_action(self, state, player_id, action) -> None:
        """Nothing to do: the next step finds its place from the state itself."""

    def inform_actions(self, state, actions) -> None:
        """Nothing to do: the next step finds its place from the state itself."""

    def provides_policy(self) -> bool:
        return True

    def step(self, state: pyspiel.State) -> int:
        return self.step_with_policy(state)[1]
