"""MMCTSBot: a player of a trained multiple-tree MCTS (Exp3), as a ``pyspiel.Bot``.

The bot trains both players' trees (:mod:`smmcts_spiel.imperfect.mmcts`, or the array engine
of :mod:`smmcts_spiel.imperfect.mmcts_phantom_ttt` on classical Phantom Tic-Tac-Toe) for
``training_iterations`` simulations when it is built (offline), or reuses a search given to
it (trained once, or loaded from disk, and shared by both seats). It plays the final
strategy of its own tree at its information state; with ``iterations`` (the per-move budget,
as for :class:`~smmcts_spiel.bots.SMMCTSBot`) it keeps training before each move, from
its current information state (simulations start from states it cannot tell from the
real one: belief samples in Phantom Tic-Tac-Toe, ``resample_from_infostate`` otherwise) or,
with ``train_from="root"``, from the root of the game.
Off the tree it plays uniformly at random and counts those moves in ``stats``.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.games import phantom_ttt_rules
from smmcts_spiel.imperfect import mmcts
from smmcts_spiel.imperfect.mmcts_phantom_ttt import PhantomTTTMultipleTreeSearch
from smmcts_spiel.search import selectors

ENGINES = ("auto", "generic", "arrays")


def make_search(game: pyspiel.Game, gamma: float = 0.1, seed: int = 0, engine: str = "auto"):
    """An untrained MMCTS search: the array engine for Phantom Tic-Tac-Toe if ``auto``."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "arrays" or (engine == "auto" and phantom_ttt_rules.is_array_phantom_ttt(game)):
        return PhantomTTTMultipleTreeSearch(game, gamma, seed)
    return mmcts.MultipleTreeSearch(game, gamma, seed)


class MMCTSBot(pyspiel.Bot):
    """Plays the MMCTS strategy of ``player_id``'s tree; trains it first if needed.

    ``gamma`` and ``engine`` configure a new search; with ``search`` given they are unused
    (the search keeps its own gamma) and ``training_iterations`` trains the shared search
    further. ``final_strategy`` is one of :data:`smmcts_spiel.imperfect.mmcts.FINAL_STRATEGIES`:
    ``empirical`` (the default: visit frequencies ``n_a / n``, as in SMMCTSBot), ``exp3`` (the
    current Exp3 distribution) or ``exp3_no_exploration``. The bot plays it and
    :meth:`policy` exports it. ``seed`` seeds the new search and the bot's own move sampling.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, training_iterations: int = 100_000,
                 gamma: float = 0.1, seed: int = 0, iterations: int = 0,
                 final_strategy: str = "empirical", search=None, engine: str = "auto",
                 train_from: str = "infostate", progress: bool = False):
        pyspiel.Bot.__init__(self)
        mmcts.check_game(game)
        checks.check_player_id(player_id)
        training_iterations = checks.check_count(training_iterations, "training_iterations")
        self._iterations = checks.check_count(iterations, "iterations")
        self._final_strategy = mmcts.check_final_strategy(final_strategy)
        selectors.check_gamma(gamma)
        if train_from not in ("infostate", "root"):
            raise ValueError(f"train_from must be 'infostate' or 'root', got {train_from!r}")
        self._train_from = train_from
        if search is None:
            search = make_search(game, gamma, seed, engine)
        elif str(search.game) != str(game):
            raise ValueError(f"the search was trained on {search.game}, not {game}")
        search.train(training_iterations, progress=progress)
        self.search = search
        self._player = player_id
        self._rng = np.random.default_rng([seed, player_id])
        self.stats = {"moves": 0, "off_tree_moves": 0}

    def restart_at(self, state: pyspiel.State) -> None:
        checks.check_state_game(state, str(self.search.game), "MMCTSBot")

    def provides_policy(self) -> bool:
        return True

    def policy(self) -> mmcts.MMCTSPolicy:
        """Both players' final strategies (the bot's ``final_strategy``) as an OpenSpiel
        policy: the tree's strategy at every information state, uniform off the tree."""
        return mmcts.MMCTSPolicy(self.search, self._final_strategy)

    def step_with_policy(self, state: pyspiel.State):
        checks.check_state_game(state, str(self.search.game), "MMCTSBot")
        if state.current_player() != self._player:
            raise ValueError(f"it is player {state.current_player()}'s turn, this bot plays "
                             f"{self._player}")
        if self._iterations:
            from_state = state if self._train_from == "infostate" else None
            self.search.train(self._iterations, from_state=from_state)
        policy, in_tree = self.search.policy(state, self._final_strategy)
        self.stats["moves"] += 1
        self.stats["off_tree_moves"] += not in_tree
        actions, probs = zip(*policy, strict=True)
        probs = np.asarray(probs) / np.sum(probs)
        return policy, int(actions[selectors.sample_index(probs, self._rng.random())])

    def step(self, state: pyspiel.State) -> int:
        return self.step_with_policy(state)[1]
