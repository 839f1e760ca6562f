"""DOABBot: the study's online DOAB, iterative deepening with an evaluation function.

Bošanský, Lisý, Lanctot, Čermák, Winands, "Algorithms for computing strategies in
two-player simultaneous move games", AIJ 237 (2016), Section 5.1, and GTLibrary's
``SimAlphaBetaAlgorithm`` (the version of the paper's experiments): at every move, solve the
game cut off 1, 2, ... joint moves down by DOAB (double oracle with serialized alpha-beta
bounds, :mod:`smmcts_spiel.exact.pruned_induction`), the cut-off states valued by the
evaluation function, until the time is up (:mod:`smmcts_spiel.exact.iterative_deepening`);
sample the move from the deepest finished search's equilibrium strategy at the root.

Between moves the searches' solutions are kept: a depth-``d`` search solved the states one
joint move down to depth ``d - 1`` (where the pruning did not skip them), so the next move
starts at depth ``d`` with that strategy in hand, as the paper does; where the pruning left
the state unsolved it starts at depth 1.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.bots.evaluation_functions import evaluation_function, forget
from smmcts_spiel.bots.search_bot import PolicyBot, check_decision_state
from smmcts_spiel.exact import depth_limit, iterative_deepening, size_estimate
from smmcts_spiel.exact.pruned_induction import check_method
from smmcts_spiel.exact.transpositions import solution_key
from smmcts_spiel.games import simultaneous


class DOABBot(PolicyBot):
    """Plays by iterative-deepening DOAB with an evaluation function (see the module).

    Args:
      game: a two-player zero-sum (or constant-sum) game with perfect information between
        stages and explicit chance, simultaneous or sequential.
      player_id: 0 or 1.
      time_limit: seconds per move (None: no limit). The searches stop deepening when
        the next depth is not predicted to fit, and a depth still running at the limit is
        stopped and dropped.
      max_depth: the deepest search, in joint moves (None: no limit). With neither budget
        the bot solves the game exactly at every move (refused where the solver's size
        estimate says the game is too large).
      evaluator: the value of a state at the depth limit: ``"heuristic"`` (the game
        kernel's, the paper's evaluation function on the study's games), another name of
        :data:`~smmcts_spiel.bots.evaluation_functions.EVALUATORS`, or a function of a
        state giving player 1's value within the game's utility range.
      method: the solver of the depth-limited games, ``"doab"`` (the paper's), ``"do"``,
        ``"biab"`` or ``"bi"``.
      seed: seeds the move sampling.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, time_limit: float | None = None,
                 max_depth: int | None = None,
                 evaluator: str | Callable[[pyspiel.State], float] = "heuristic",
                 method: str = "doab", seed: int | None = None):
        super().__init__()
        self.player_id = checks.check_player_id(player_id)
        checks.check_game(game, "DOABBot", explicit_chance=True,
                          hint="use oos or is_smmcts for such games")
        if time_limit is not None:
            checks.check_budget(None, time_limit)
        if max_depth is not None:
            checks.check_count(max_depth, "max_depth", minimum=1)
        self.time_limit = None if time_limit is None else float(time_limit)
        self.max_depth = math.inf if max_depth is None else int(max_depth)
        self.method = check_method(method)
        self.exact = time_limit is None and max_depth is None
        if self.exact:
            try:
                size_estimate.check_size(game)
            except size_estimate.GameTooLarge as e:
                raise ValueError(f"DOABBot without time_limit or max_depth solves the whole "
                                 f"game at every move, and {str(e).split('; choose')[0]}; "
                                 "give it a time_limit or a "
                                 "max_depth (with an evaluation function)") from None
            self._evaluation = None
        else:
            self._evaluation = evaluation_function(
                game, evaluator, seed, otherwise=", or max_depth=None and no time_limit to "
                "solve it exactly")
        self._game = game
        self._key = solution_key(game)
        self._rng = np.random.default_rng(seed)
        self._previous: depth_limit.DepthResult | None = None
        self.last_deepening: iterative_deepening.Deepening | None = None
        self.clock: Callable[[], float] = time.perf_counter

    def restart_at(self, state: pyspiel.State) -> None:
        checks.check_state_game(state, str(self._game), "DOABBot")
        self.restart()

    def restart(self) -> None:
        self._previous = None

    def step_with_policy(self, state: pyspiel.State):
        """Search, then return (the root strategy as (action, p) pairs, a sampled action)."""
        checks.check_state_game(state, str(self._game), "DOABBot")
        legal = check_decision_state(state, self.player_id, "DOABBot")
        if len(legal) == 1:
            return [(legal[0], 1.0)], legal[0]
        found = self.search(state)
        strategy = found.result.strategies[self.player_id]
        actions = list(strategy)
        probs = np.clip([strategy[a] for a in actions], 0.0, None)
        action = actions[self._rng.choice(len(actions), p=probs / probs.sum())]
        return list(zip(actions, probs.tolist())), int(action)

    def search(self, state: pyspiel.State) -> depth_limit.DepthResult:
        """The deepest depth-limited solve of ``state`` this move's budget allows (kept for
        the next move; ``last_deepening`` says how it went)."""
        forget(self._evaluation)
        state = simultaneous.per_player_history(state)  # keys as the search files them
        fallback = self._reusable(state)
        start_depth: float = 1 if fallback is None else min(fallback[1] + 1, self.max_depth)
        if self.exact:
            start_depth, fallback = math.inf, None

        def search_depth(depth: float, deadline: float | None) -> depth_limit.DepthResult:
            return depth_limit.search(state, depth, self._evaluation, self.method,
                                      deadline=deadline, clock=self.clock)

        deepening = iterative_deepening.deepen(
            search_depth, start_depth=start_depth, max_depth=self.max_depth,
            time_limit=self.time_limit, fallback=fallback,
            complete=lambda r: r.complete, lost=self._lost, clock=self.clock)
        self.last_deepening = deepening
        self._previous = deepening.result
        return deepening.result

    def _reusable(self, state: pyspiel.State) -> tuple[depth_limit.DepthResult, int] | None:
        """The last search's solution of ``state`` as a result of depth ``r``, with ``r``
        the most moves it had left there; None if that search did not solve it."""
        previous = self._previous
        if previous is None or previous.depth == math.inf:
            return None
        k = self._key(state)
        table = previous.result.table
        for left in range(int(previous.depth) - 1, 0, -1):
            solved = table.get((k, left))
            if solved is not None and solved.strategies[self.player_id]:
                return depth_limit.reused(solved, left, previous), left
        return None

    def _lost(self, found: depth_limit.DepthResult) -> bool:
        """Whether a search shows this player's game lost (its value the least it can get)."""
        game = self._game
        own = found.result.value
        least = game.min_utility()
        if self.player_id == 1:
            own = (game.utility_sum() or 0.0) - own
            least = (game.utility_sum() or 0.0) - game.max_utility()
        tolerance = 1e-9 * (game.max_utility() - game.min_utility())
        return own <= least + tolerance
