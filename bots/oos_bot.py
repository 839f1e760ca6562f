"""OOSBot: Online Outcome Sampling (Lisy et al. 2015) as a ``pyspiel.Bot``."""

from __future__ import annotations

import time

import pyspiel

from smmcts_spiel.bots.search_bot import InformationSearchBot
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.imperfect.oos import check_final_strategy, preset_settings
from smmcts_spiel.imperfect.oos_kernel import outcome_sampling


class OOSBot(InformationSearchBot):
    """Searches with OOS targeted at its current information set, plays its final strategy.

    One search per game: the tables of both players persist between the moves of a game,
    so every move reuses what the earlier searches learned, and a new game
    (``restart_at`` its initial state, or ``restart``) starts afresh, as in the paper's
    matches. Each iteration still starts at the root of the game, which is what makes the
    average strategy converge.

    Args:
      game: two-player zero-sum game with information state strings, sequential or
        simultaneous (searched through its turn-based conversion).
      player_id: 0 or 1.
      iterations: OOS iterations per move (None: by time_limit alone).
      time_limit: seconds per move (finding the information set included); the search
        stops at whichever budget runs out first.
      preset: where the settings below (delta to threshold) come from when not given:
        ``"default"`` (ours, chosen by measurement: delta 0.5, epsilon 0.4, gamma 0.01, w_T,
        plays its average strategy thresholded at 0.3) or ``"paper"`` (Lisy, Lanctot,
        Bowling, AAMAS 2015 and GTLibrary: delta 0.9, plays its current strategy as it is;
        every setting cited in :data:`smmcts_spiel.imperfect.oos.PRESETS`).
      delta: probability that an iteration targets the current information set.
      epsilon: the update player's exploration.
      seed: seeds the search and the move sampling.
      gamma: exploration mixed into regret matching (the paper's 0.01).
      weighting: weigh each move's updates by the paper's w_T.
      final_strategy: "average" (the strategy that converges; the default preset's) or
        "current" (the regret-matching strategy at the information set, as the paper's code
        plays).
      threshold: play only the actions the final strategy gives at least this probability
        (thresholding, Ganzfried & Sandholm 2012; the most likely action always stays),
        renormalised (0: play the final strategy as it is). ``policy()`` exports the
        unthresholded average strategy, the one that converges; ``played_policy()`` the
        final strategy after the threshold, the one the bot plays.
      engine: "kernel" runs whole iterations compiled on the game's information kernel
        (:mod:`smmcts_spiel.games.kernels.information`: kuhn_poker, leduc_poker,
        goofspiel(imp_info=True) up to 8 cards, phantom_ttt), "generic" searches pyspiel
        states (any game), "auto" (default) the kernel when the game has one. Both build
        the same tables from the same seed.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, iterations: int | None = 1000,
                 time_limit: float | None = None, delta: float | None = None,
                 epsilon: float | None = None, seed: int | None = None, engine: str = "auto",
                 gamma: float | None = None, final_strategy: str | None = None,
                 threshold: float | None = None, weighting: bool | None = None,
                 preset: str = "default"):
        settings = preset_settings(preset, delta=delta, epsilon=epsilon, gamma=gamma,
                                   weighting=weighting, final_strategy=final_strategy,
                                   threshold=threshold)
        super().__init__(game, player_id, iterations, time_limit, seed, settings.pop("threshold"))
        self.preset = preset
        self.final_strategy = check_final_strategy(settings.pop("final_strategy"))
        self._search = outcome_sampling(game, seed=self._rng.getrandbits(63), engine=engine,
                                        **settings)

    def _played_strategies(self):
        return self._search.policy(self.final_strategy)

    def step_with_policy(self, state: pyspiel.State):
        """Search, then return (played strategy as (action, p) pairs, sampled action)."""
        start = time.perf_counter()
        self.check_state(state)
        decision = information_sets.decision_state(self._search.search_game, state,
                                                   self.player_id)
        self._search.target(decision, self.player_id)
        self.total_iterations += self._search.run(self.iterations, self._seconds_left(start))
        return self._play(*self._search.strategy(decision, self.player_id,
                                                 self.final_strategy))
