"""SM-MCTS as an OpenSpiel bot: plays in evaluate_bots, tournaments and anything taking a bot."""

from __future__ import annotations

from typing import Any

import pyspiel

from smmcts_spiel.bots.search_bot import SearchBot, check_decision_state
from smmcts_spiel.search.engines import Search, make_search
from smmcts_spiel.search.tree_arrays import DEFAULT_MAX_MEMORY

#: The bot's final-move threshold: never play an action its final strategy gives less than
#: 10%. Measured against the exact equilibria of oshi_zumo(coins=10,size=3,horizon=20),
#: Goofspiel-6 and two random stacked games at 0.1 s per move (experiments/tournaments): on the
#: same search trees it cuts the expected loss per game against the equilibrium 1.8-5x
#: (Oshi-Zumo 0.41 -> 0.085) without making the play more exploitable by a best reply:
#: the empirical frequencies spread the selectors' exploration and early noise over every
#: action, and the most visited action alone is far more exploitable.
DEFAULT_THRESHOLD = 0.1
#: Settings a game gets when the user leaves them out, by the game's short name, chosen by
#: per-move losses against the game's exact equilibrium at 0.1 s per move and confirmed
#: against OpenSpiel's C++ MCTSBot (experiments/tournaments/, the per-game defaults). A
#: setting given explicitly always wins; the leaf evaluator's per-game choice lives with the
#: game's kernel (``DEFAULT_EVALUATOR``).
GAME_DEFAULTS: dict[str, dict[str, Any]] = {
    # decoupled UCT's most visited move: it lost 0.035 per game against the exact
    # equilibrium of markov_soccer(horizon=20), RM's thresholded empirical strategy 0.183
    "markov_soccer": dict(selector="ucb", final_strategy="most_visited"),
}
#: The bot's settings for a game not in :data:`GAME_DEFAULTS` (None: the selector's own
#: default, :mod:`smmcts_spiel.search.selectors`).
BASE_DEFAULTS: dict[str, Any] = dict(selector="rm", gamma=None, c=None,
                                     final_strategy="empirical", threshold=DEFAULT_THRESHOLD,
                                     tie_tolerance=0.0)


def game_settings(game: pyspiel.Game, **given: Any) -> dict[str, Any]:
    """The search settings for ``game``: those ``given`` (not None), else the game's entry
    of :data:`GAME_DEFAULTS`, else :data:`BASE_DEFAULTS`."""
    settings = {**BASE_DEFAULTS, **GAME_DEFAULTS.get(game.get_type().short_name, {})}
    unknown = set(given) - set(BASE_DEFAULTS)
    if unknown:
        raise TypeError(f"game_settings: unknown settings {', '.join(sorted(unknown))}")
    settings.update({key: value for key, value in given.items() if value is not None})
    return settings


class SMMCTSBot(SearchBot):
    """Simultaneous-Move MCTS with Regret Matching, Exp3 or UCB selection.

    Each ``step`` searches from the given state, keeping the subtree of the actual history
    from earlier steps. At a simultaneous node the bot samples its action from its final
    strategy (a pure choice would be exploitable); where it moves alone it plays its most
    frequent action, since a single mover always has a pure best choice. A forced move
    (a single legal action) is played at once, without a search.

    Args:
      game: two-player zero-sum (or constant-sum) game, simultaneous or sequential.
      player_id: 0 or 1.
      selector: "rm", "rmm", "exp3", "exp3m", "ucb" or "ucbm" (trailing "m": propagate
        node means, the paper's RMM / Exp3M). Default (None): the game's entry of
        :data:`GAME_DEFAULTS`, else "rm"; the same holds for ``gamma``, ``c``,
        ``final_strategy`` and ``threshold`` (:func:`game_settings`).
      gamma: exploration of RM and Exp3, in (0, 1]; default (None) 0.05 for RM (the
        paper's), 0.1 for Exp3 (measured, docs/search_and_bots.md).
      c: UCB exploration constant, on rewards in [0, 1]; default (None) 0.5 (measured; the
        old 1.4 on rewards in [-1, 1] is 0.7).
      tie_tolerance: UCB's bounds within this of the best count as tied, one of them drawn
        at random; default (None) 0, equal bounds only. The AIJ 2016 study's UCT ties bounds
        "less than 0.01 apart" on utilities in [-1, 1]: 0.005 here.
      iterations: search iterations per step (None: search by time_limit alone).
      time_limit: seconds per step; the search stops at whichever budget runs out first.
      final_strategy: "empirical" frequencies (the paper's), "average" strategy,
        "average_no_exploration" (the average without the selectors' gamma/|A|
        exploration, GTLibrary's choice) or "most_visited" (play the most visited action);
        default (None) "empirical" unless :data:`GAME_DEFAULTS` says otherwise.
      threshold: final-move thresholding: the bot never plays an action its final strategy
        gives less than this probability (the rest is renormalised; 0: play them all, as
        the paper's SM-MCTS). Default (None) :data:`DEFAULT_THRESHOLD` unless
        :data:`GAME_DEFAULTS` says otherwise. ``policy()`` exports the unthresholded
        strategy (the search's, what an exploitability should score), ``played_policy()``
        the thresholded one the bot plays.
      seed: seeds the search and the bot's own sampling; same seed, same game, same play.
      evaluator: leaf evaluator: an object with OpenSpiel's ``evaluate(state)`` interface
        (generic and reference engines), or the name of a game kernel's compiled evaluator,
        "random_rollout" or "heuristic" (kernel engine). Default: the kernel's
        measured choice (``heuristic`` on oshi_zumo and smmcts_tron, compiled random
        rollouts elsewhere), or one seeded random rollout (run by OpenSpiel in C++ on the
        generic engine, in Python on the reference engine).
      engine: which engine searches (:func:`smmcts_spiel.search.engines.make_search` builds
        it): "kernel" runs whole iterations compiled on the game's numba kernel
        (:mod:`smmcts_spiel.games.kernels`; goofspiel, smmcts_goofspiel, oshi_zumo),
        "generic" searches pyspiel states with the tree statistics in compiled arrays
        (:mod:`smmcts_spiel.search.array_engine`), "reference" with Python objects (the
        small readable engine the others are tested against), "auto" (default) takes the
        kernel when the game has one and no Python evaluator is given, else "generic".
      threads: trees searched at once, one per thread (root parallelism,
        :mod:`smmcts_spiel.search.root_parallel`): each has its own seed and keeps its own
        subtree between moves, ``iterations`` is split over them, and the move is read from
        their summed statistics. At most the cores this process may use; more than 1 needs
        the kernel engine (the others hold Python's global interpreter lock). "auto": what
        pays on this game (:mod:`smmcts_spiel.search.thread_counts`): one shared tree grown
        by the usable cores up to ``AUTO_MAX_THREADS`` on the kernel engine, else 1.
      parallel: how ``threads > 1`` share the work: "root" (the default with a number of
        threads) searches a tree per thread as above (deterministic for a seed under an
        iteration budget); "tree" (the default with "auto") grows one tree with every
        thread (tree parallelism, :class:`KernelSMMCTS` ``threads``): a deeper tree in the
        same time, but not reproducible (the tree depends on the threads' timing).
        docs/search_and_bots.md says when each pays.
      virtual_loss: with ``parallel="tree"``, each thread selects as if the other threads'
        iterations in flight at a node had lost (:mod:`smmcts_spiel.search.in_flight`; the
        stored statistics stay the paper's); False (default): the paper's selection.
      max_memory: bytes the search tree of the kernel and generic engines may take (default
        4 GiB, at most half the machine's memory; with root parallelism the trees' in all,
        an equal share each); a search that fills it stops and plays from the tree it has
        (one warning in the log; uniformly where it could not open the root), so a long
        time limit never exhausts memory. Where the kernel engine needs
        more than this for its widest iterations, ``engine="auto"`` with one thread takes
        the generic engine (one warning). The reference engine has no bound.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, selector: str | None = None,
                 gamma: float | None = None, c: float | None = None,
                 iterations: int | None = 1000,
                 time_limit: float | None = None, final_strategy: str | None = None,
                 seed: int | None = None, evaluator=None, engine: str = "auto",
                 threshold: float | None = None, threads: int | str = 1,
                 max_memory: int = DEFAULT_MAX_MEMORY, parallel: str | None = None,
                 virtual_loss: bool = False, tie_tolerance: float | None = None):
        super().__init__(game, player_id, iterations, time_limit, seed)
        options = game_settings(game, selector=selector, gamma=gamma, c=c,
                                final_strategy=final_strategy, threshold=threshold,
                                tie_tolerance=tie_tolerance)
        self._search: Search = make_search(game, self._rng, engine=engine, evaluator=evaluator,
                                           threads=threads, parallel=parallel,
                                           virtual_loss=virtual_loss, max_memory=max_memory,
                                           **options)

    def restart_at(self, state: pyspiel.State) -> None:
        self.check_state(state)
        self._search.set_root(state)

    def policy(self):
        """Both players' final strategies as the search has them, without the final-move
        ``threshold``: what an exploitability should score (uniform where unsearched)."""
        return self._search.policy(threshold=0.0)

    def played_policy(self):
        """Both players' final strategies after the final-move ``threshold``: what
        ``step_with_policy`` reports and the bot samples from at a simultaneous node."""
        return self._search.policy()

    def step_with_policy(self, state: pyspiel.State):
        """Search, then return (this player's final strategy as (action, p) pairs, action).

        A forced move (one legal action) is returned at once, as OpenSpiel's bots do: a
        search could not change it, and on a time limit it would spend the whole move (a
        game of the default Oshi-Zumo has hundreds of them). The tree is left as it is, and
        the next step finds its place from the state's history; no random number is drawn.
        """
        self.check_state(state)
        legal = check_decision_state(state, self.player_id, "SMMCTSBot")
        if len(legal) == 1:
            return [(legal[0], 1.0)], legal[0]
        node = self._search.run(state, self.iterations, self.time_limit)
        if not node.is_open:
            # The search could not open the root within max_memory (more joint actions
            # than the tree may hold; the search said so in the log): its strategy there
            # is uniform.
            return [(a, 1.0 / len(legal)) for a in legal], self._rng.choice(legal)
        actions = node.actions[self.player_id]
        probs = node.strategy(self.player_id, self._search.final_strategy,
                              self._search.exploration, self._search.threshold)
        if node.mover is None:
            action = self._rng.choices(actions, weights=probs)[0]
        else:
            counts = node.counts[self.player_id]
            action = actions[max(range(len(actions)), key=counts.__getitem__)]
        return list(zip(actions, probs)), action

