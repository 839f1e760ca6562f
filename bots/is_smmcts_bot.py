"""ISSMMCTSBot: information-set SM-MCTS (the paper's selectors at information sets)."""

from __future__ import annotations

import time

import pyspiel

from smmcts_spiel.bots.search_bot import SearchBot
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.imperfect.information_sets import WorldSampler
from smmcts_spiel.imperfect.is_smmcts import InformationSetSMMCTS
from smmcts_spiel.search.selectors import sample_index


class ISSMMCTSBot(SearchBot):
    """Searches from worlds drawn from its information set, plays its final strategy there.

    Every iteration starts from a history the bot cannot tell from the real one, drawn by
    chance probability (:class:`~smmcts_spiel.imperfect.information_sets.WorldSampler`); the
    trees persist between moves. The bot samples its move from the final strategy at its
    information set (a pure choice would be exploitable).

    Args:
      game: two-player zero-sum game with information state strings (sequential, or
        simultaneous such as ``goofspiel(imp_info=True)``, searched directly).
      player_id: 0 or 1.
      selector: "rm", "exp3" or "ucb".
      gamma: exploration of RM and Exp3; c: UCB's constant.
      iterations: iterations per move (None: by time_limit alone).
      time_limit: seconds per move, including drawing the information set.
      final_strategy: "empirical" (visit frequencies) or "average".
      seed: seeds the search, the world sampling and the move sampling.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, selector: str = "rm",
                 gamma: float = 0.05, c: float = 1.4, iterations: int | None = 1000,
                 time_limit: float | None = None, final_strategy: str = "empirical",
                 seed: int | None = None):
        super().__init__(game, player_id, iterations, time_limit, seed)
        self._search = InformationSetSMMCTS(game, selector=selector, gamma=gamma, c=c,
                                            final_strategy=final_strategy,
                                            seed=self._rng.getrandbits(63))
        information_sets.load_compiled_walk(game)  # not in the first timed move

    def step_with_policy(self, state: pyspiel.State):
        """Search, then return (final strategy as (action, p) pairs, sampled action)."""
        start = time.perf_counter()
        self.check_state(state)
        if state.is_terminal() or not state.legal_actions(self.player_id):
            raise ValueError(f"player {self.player_id} has no move to make in this state:\n"
                             f"{state}")
        worlds = WorldSampler(self._game, state, self.player_id, self._rng)
        time_left = (None if self.time_limit is None
                     else max(self.time_limit - (time.perf_counter() - start), 1e-9))
        self._search.run(worlds, self.iterations, time_left)
        actions, probs = self._search.strategy(state, self.player_id)
        action = actions[sample_index(probs, self._rng.random())]
        return list(zip(actions, probs)), action
