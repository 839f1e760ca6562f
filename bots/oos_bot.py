"""OOSBot: Online Outcome Sampling (Lisy et al. 2015) as a ``pyspiel.Bot``."""

from __future__ import annotations

import random
import time

import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.search import information_sets
from smmcts_spiel.search.oos import OOSPolicy, OutcomeSampling
from smmcts_spiel.search.selectors import sample_index


class OOSBot(pyspiel.Bot):
    """Searches with OOS targeted at its current information set, plays the average strategy.

    The tables of both players persist between moves (and games, until ``restart``), so
    every move reuses what the earlier searches learned; each iteration still starts at
    the root of the game, which is what makes the average strategy converge.

    Args:
      game: two-player zero-sum game with information state strings, sequential or
        simultaneous (searched through its turn-based conversion).
      player_id: 0 or 1.
      iterations: OOS iterations per move (None: by time_limit alone).
      time_limit: seconds per move (finding the information set included); the search
        stops at whichever budget runs out first.
      delta: probability that an iteration targets the current information set.
      epsilon: the update player's exploration.
      seed: seeds the search and the move sampling.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, iterations: int | None = 1000,
                 time_limit: float | None = None, delta: float = 0.9, epsilon: float = 0.6,
                 seed: int | None = None):
        super().__init__()
        self.player_id = checks.check_player_id(player_id)
        self.iterations, self.time_limit = checks.check_budget(iterations, time_limit)
        self._rng = random.Random(seed)
        self._search = OutcomeSampling(game, delta=delta, epsilon=epsilon,
                                       seed=self._rng.getrandbits(63))

    @property
    def search(self) -> OutcomeSampling:
        return self._search

    def policy(self) -> OOSPolicy:
        """The average strategy built so far, as a policy of ``search.search_game``."""
        return self._search.policy()

    def restart_at(self, state: pyspiel.State) -> None:
        """Nothing to do: the tables cover the whole game and stay valid."""

    def restart(self) -> None:
        self._search.reset()

    def inform_action(self, state, player_id, action) -> None:
        """Nothing to do: the search always starts at the root."""

    def inform_actions(self, state, actions) -> None:
        """Nothing to do: the search always starts at the root."""

    def provides_policy(self) -> bool:
        return True

    def step_with_policy(self, state: pyspiel.State):
        """Search, then return (average strategy as (action, p) pairs, sampled action)."""
        start = time.perf_counter()
        checks.check_state_game(state, str(self._search.game), "OOSBot")
        decision = information_sets.decision_state(self._search.search_game, state,
                                                   self.player_id)
        self._search.set_target(information_sets.information_set(
            self._search.search_game, decision, self.player_id))
        time_left = (None if self.time_limit is None
                     else max(self.time_limit - (time.perf_counter() - start), 1e-9))
        self._search.run(self.iterations, time_left)
        actions, probs = self._search.average_strategy(decision, self.player_id)
        action = actions[sample_index(probs, self._rng.random())]
        return list(zip(actions, probs)), action

    def step(self, state: pyspiel.State) -> int:
        return self.step_with_policy(state)[1]
