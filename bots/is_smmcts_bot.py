"""ISSMMCTSBot: information-set SM-MCTS (the paper's selectors at information sets)."""

from __future__ import annotations

import time

import pyspiel

from smmcts_spiel.bots.search_bot import InformationSearchBot
from smmcts_spiel.imperfect.is_smmcts_kernel import information_set_smmcts


class ISSMMCTSBot(InformationSearchBot):
    """Searches from worlds drawn from its information set, plays its final strategy there.

    Every iteration starts from a history the bot cannot tell from the real one, drawn by
    chance probability (the determinisation of ISMCTS); the trees persist between the
    moves of a game, and a new game (``restart_at`` its initial state, or ``restart``)
    starts afresh. The bot samples its move from the final strategy at its information
    set (a pure choice would be exploitable).

    Args:
      game: two-player zero-sum game with information state strings (sequential, or
        simultaneous such as ``goofspiel(imp_info=True)``, searched directly).
      player_id: 0 or 1.
      selector: "rm", "exp3" or "ucb". The defaults (Exp3, ``gamma=0.1``, playing the
        visit frequencies without the exploration) were chosen by measurement against
        OpenSpiel's ISMCTS (experiments/imperfect/NOTES.md).
      gamma: exploration of RM and Exp3; c: UCB's constant (rewards are in [0, 1]).
      iterations: iterations per move (None: by time_limit alone).
      time_limit: seconds per move, including drawing the information set.
      final_strategy: "empirical" (visit frequencies), "empirical_no_exploration" (the same
        without the selector's ``gamma / K`` exploration) or "average" (see
        :mod:`smmcts_spiel.imperfect.is_smmcts`).
      threshold: play only the actions the final strategy gives at least this probability
        (the most likely one always stays), renormalised; ``policy()`` exports the
        unthresholded final strategy, ``played_policy()`` the thresholded one it plays.
      seed: seeds the search, the world sampling and the move sampling.
      engine: "kernel" runs whole iterations compiled on the game's information kernel
        (:mod:`smmcts_spiel.games.kernels.information`), "generic" searches pyspiel states
        (any game), "auto" (default) the kernel when the game has one. Both grow the same
        trees from the same seed.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, selector: str = "exp3",
                 gamma: float = 0.1, c: float = 1.4, iterations: int | None = 1000,
                 time_limit: float | None = None,
                 final_strategy: str = "empirical_no_exploration",
                 seed: int | None = None, threshold: float = 0.0, engine: str = "auto"):
        super().__init__(game, player_id, iterations, time_limit, seed, threshold)
        # The compiled engine loads its code when built, not in the first timed move.
        self._search = information_set_smmcts(game, engine, selector=selector, gamma=gamma,
                                              c=c, final_strategy=final_strategy,
                                              seed=self._rng.getrandbits(63))

    def step_with_policy(self, state: pyspiel.State):
        """Search, then return (final strategy as (action, p) pairs, sampled action)."""
        start = time.perf_counter()
        self.check_state(state)
        if state.is_terminal() or not state.legal_actions(self.player_id):
            raise ValueError(f"player {self.player_id} has no move to make in this state:\n"
                             f"{state}")
        worlds = self._search.worlds(state, self.player_id)
        self.total_iterations += self._search.run(worlds, self.iterations,
                                                  self._seconds_left(start))
        return self._play(*self._search.strategy(state, self.player_id))
