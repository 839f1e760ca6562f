"""The ``pyspiel.Bot`` plumbing every search bot shares.

A search bot owns a search (``self.search``) with ``policy()`` and ``reset()``, a per-move
budget (``iterations`` and/or ``time_limit`` seconds) and a seeded generator for its own
sampling; it plays through ``step_with_policy``, which each bot defines. Everything else a
``pyspiel.Bot`` answers is the same for all of them, and lives here.

Two strategies, two names: ``policy()`` is the search's own strategy (what an
exploitability should score, as OpenSpiel's bots' policies are), ``played_policy()`` the
one the bot plays and ``step_with_policy`` reports: the same after the final-move
threshold (thresholding, Ganzfried & Sandholm 2012), which makes play stronger against
most opponents but is not the strategy the search converges to.
"""

from __future__ import annotations

import random
import time

import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks
from smmcts_spiel.search.selectors import sample_index
from smmcts_spiel.search.smmcts import check_threshold, thresholded


class PolicyBot(pyspiel.Bot):
    """Base of every bot that plays by ``step_with_policy`` and reads its place from each
    state it is given: ``step`` is that action, the moves it is told of need nothing."""

    def inform_action(self, state, player_id, action) -> None:
        """Nothing to do: the next step finds its place from the state itself."""

    def inform_actions(self, state, actions) -> None:
        """Nothing to do: the next step finds its place from the state itself."""

    def provides_policy(self) -> bool:
        return True

    def step(self, state: pyspiel.State) -> int:
        return self.step_with_policy(state)[1]


def check_decision_state(state: pyspiel.State, player_id: int, bot: str) -> list[int]:
    """``player_id``'s legal actions at ``state``; ValueError where it has no move (a
    terminal or chance state, or the other player's turn)."""
    if state.is_terminal():
        raise ValueError(f"{bot}.step called at a terminal state: the game is over")
    if state.is_chance_node():
        raise ValueError(f"{bot}.step called at a chance node: chance moves are sampled by "
                         "the game runner, not by a bot")
    legal = state.legal_actions(player_id)
    if not legal:
        raise ValueError(f"{bot} (player {player_id}) has no move here: it is player "
                         f"{state.current_player()}'s turn")
    return legal


class SearchBot(PolicyBot):
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

    def policy(self) -> policy_lib.Policy:
        """Both players' strategies as the search has them, without the final-move
        threshold: the strategy an exploitability should score (uniform where unsearched)."""
        return self._search.policy()

    def played_policy(self) -> policy_lib.Policy:
        """Both players' strategies as the bot plays them (what ``step_with_policy``
        reports): :meth:`policy` after the final-move threshold."""
        raise NotImplementedError

    def check_state(self, state: pyspiel.State) -> None:
        """Refuse a state of another game than the bot's (its search would not fit it)."""
        checks.check_state_game(state, str(self._game), type(self).__name__)

    def restart_at(self, state: pyspiel.State) -> None:
        self.check_state(state)

    def restart(self) -> None:
        self._search.reset()


class InformationSearchBot(SearchBot):
    """Base of OOSBot and ISSMMCTSBot: one fresh search per game, a per-move time left for
    the search after finding the information set, and a thresholded sampled move.

    Subclasses call ``super().__init__`` (which also checks ``threshold``) and define
    ``step_with_policy`` from :meth:`_seconds_left` and :meth:`_play`.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, iterations: int | None,
                 time_limit: float | None, seed: int | None, threshold: float = 0.0):
        super().__init__(game, player_id, iterations, time_limit, seed)
        self.threshold = check_threshold(threshold)
        self.total_iterations = 0  # over all moves and games, for reports

    def restart_at(self, state: pyspiel.State) -> None:
        """A new game (or a game resumed elsewhere): a fresh search."""
        super().restart_at(state)
        self.restart()

    def _seconds_left(self, start: float) -> float | None:
        """What is left of this move's time limit (None: no limit) since ``start``
        (``time.perf_counter()`` when the move began)."""
        if self.time_limit is None:
            return None
        return max(self.time_limit - (time.perf_counter() - start), 1e-9)

    def played_policy(self) -> policy_lib.Policy:
        return ThresholdedPolicy(self._played_strategies(), self.threshold)

    def _played_strategies(self) -> policy_lib.Policy:
        """The strategies the bot thresholds and plays (the search's final strategy)."""
        return self._search.policy()

    def _play(self, actions: list[int], probs) -> tuple[list[tuple[int, float]], int]:
        """(the played strategy as (action, p) pairs, an action sampled from it): the final
        strategy ``probs`` without the actions below ``threshold``."""
        played = thresholded(probs, self.threshold)
        return list(zip(actions, played)), actions[sample_index(played, self._rng.random())]


class ThresholdedPolicy(policy_lib.Policy):
    """A policy with the actions below ``threshold`` dropped at every state and the rest
    renormalised (the most likely ones always stay): what a thresholding bot plays."""

    def __init__(self, policy: policy_lib.Policy, threshold: float):
        super().__init__(policy.game, policy.player_ids)
        self._policy = policy
        self._threshold = threshold

    def action_probabilities(self, state, player_id=None):
        probs = self._policy.action_probabilities(state, player_id)
        return dict(zip(probs, thresholded(list(probs.values()), self._threshold)))
