"""SMOOSBot: the study's SM-OOS (Online Outcome Sampling for simultaneous-move games)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks
from smmcts_spiel.bots.evaluation_functions import EVALUATORS, evaluation_function, forget
from smmcts_spiel.bots.search_bot import SearchBot, check_decision_state
from smmcts_spiel.imperfect.sm_oos import SMOOS, preset_settings
from smmcts_spiel.search.selectors import sample_index

#: The evaluator that keeps the paper's random playout below a new state.
RANDOM_ROLLOUT = "random_rollout"
#: What ``evaluator`` may name.
EVALUATOR_NAMES = (RANDOM_ROLLOUT, *EVALUATORS)


class SMOOSBot(SearchBot):
    """Searches by SM-OOS from the current state, plays its average strategy there.

    Bošanský et al., AIJ 2016, Sections 3.3.2 and 5 (:mod:`smmcts_spiel.imperfect.sm_oos`):
    the tree below the current state is kept from move to move of a game; a new game
    (``restart_at`` its initial state, or ``restart``) starts afresh.

    Args:
      game: two-player zero-sum (or constant-sum) game with perfect information between
        stages, simultaneous or sequential (Goofspiel with ``imp_info=False``, Oshi-Zumo,
        the study's games). For games of imperfect information use ``OOSBot``.
      player_id: 0 or 1.
      iterations: iterations per move (None: by time_limit alone).
      time_limit: seconds per move; the search stops at whichever budget runs out first.
      preset: where ``epsilon`` comes from when not given: ``"paper"`` (the study's 0.6;
        every setting cited in :data:`smmcts_spiel.imperfect.sm_oos.PRESETS`).
      epsilon: the update player's exploration, in (0, 1].
      evaluator: what values a state new to the tree: ``"random_rollout"`` (a uniform
        random playout, the paper's Algorithm 3), ``"heuristic"`` (the game kernel's
        evaluation function, the paper's variant with one), a game's Python evaluator
        (``goofspiel``, ``oshi_zumo``) or a function of a state giving player 1's value.
      seed: seeds the search and the move sampling.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, iterations: int | None = 1000,
                 time_limit: float | None = None, epsilon: float | None = None,
                 evaluator: str | Callable[[pyspiel.State], float] = RANDOM_ROLLOUT,
                 seed: int | None = None, preset: str = "paper"):
        super().__init__(game, player_id, iterations, time_limit, seed)
        settings = preset_settings(preset, epsilon=epsilon)
        self.preset = preset
        if isinstance(evaluator, str) and evaluator not in EVALUATOR_NAMES:
            raise ValueError(f"evaluator must be one of {', '.join(EVALUATOR_NAMES)} or a "
                             f"function of a state, got {checks.shown(evaluator)!r}"
                             f"{checks.did_you_mean(evaluator, EVALUATOR_NAMES)}")
        self._evaluation = (None if evaluator == RANDOM_ROLLOUT else evaluation_function(
            game, evaluator, seed, otherwise=f", or evaluator={RANDOM_ROLLOUT}"))
        self._search = SMOOS(game, settings["epsilon"], self._evaluation,
                             self._rng.getrandbits(63))
        self.total_iterations = 0  # over all moves and games, for reports

    def restart_at(self, state: pyspiel.State) -> None:
        """A new game (or a game resumed elsewhere): a fresh search."""
        super().restart_at(state)
        self.restart()

    def played_policy(self) -> policy_lib.Policy:
        """The average strategies as played (no threshold): :meth:`policy`."""
        return self._search.policy()

    def step_with_policy(self, state: pyspiel.State):
        """Search, then return (the average strategy as (action, p) pairs, an action
        sampled from it)."""
        start = time.perf_counter()
        self.check_state(state)
        check_decision_state(state, self.player_id, "SMOOSBot")
        forget(self._evaluation)
        self._search.set_root(state)
        seconds = None
        if self.time_limit is not None:
            seconds = max(self.time_limit - (time.perf_counter() - start), 1e-9)
        self.total_iterations += self._search.run(self.iterations, seconds)
        actions, probs = self._search.average_strategy(state, self.player_id)
        return list(zip(actions, probs)), actions[sample_index(probs, self._rng.random())]
