"""Simultaneous-Move MCTS (Alg. 1 of Lisy et al., NIPS 2013) over pyspiel states: the
reference engine.

The small readable statement of the algorithm, in Python objects, that the compiled
engines (:mod:`.array_engine`, SMMCTSBot's generic path, and :mod:`.kernel_engine`) are
tested against; ``SMMCTSBot(engine="reference")`` plays with it. The pieces follow
OpenSpiel's ``mcts.py``: an evaluator scores new leaves, a :class:`SearchNode` holds the
statistics of one state, and :class:`SMMCTS` runs iterations and answers strategy
queries; the bot (``smmcts_spiel.bots``) wraps it.

One iteration descends the tree. At a decision node that still has an untried joint
action it tries one (one uniform draw ``u`` picks the ``floor(u * untried)``-th untried
joint action ``i * n2 + j``), adds the child, evaluates it with one rollout and returns;
otherwise each player picks its own action with its own selector.
Every node records the sum ``X`` and count ``n`` of the values passed through it; a node
returns the sampled value, or ``X / n`` in the mean-propagating variants (RMM, Exp3M,
UCBM). A node where only one player moves is a 1 x n stage; chance nodes are sampled.
Values are player 1's utility ``u1``. Each selector sees its own player's reward in [0, 1],
as in the paper: player 1 gets ``(u1 - lo) / (hi - lo)`` and player 2 one minus that, with
``[lo, hi]`` the range of player 1's utility (:func:`reward_range`). Regret matching only
compares rewards (``x - u``), so it is unchanged by that map in exact arithmetic; it keeps
the arithmetic it had before the map (``u_p / scale``, ``scale`` the largest absolute
utility), so that committed RM results reproduce bit for bit.
"""

from __future__ import annotations

import abc
import random
import time
from collections.abc import Sequence
from typing import Any, Protocol

import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks, trees
from smmcts_spiel.search.evaluators import RandomRolloutEvaluator, sample_chance
from smmcts_spiel.search.selectors import (
    DEFAULT_TIE_TOLERANCE,
    check_tie_tolerance,
    exploration,
    parse_selector,
    selector_factory,
)

FINAL_STRATEGIES = ("empirical", "average", "average_no_exploration", "most_visited")
#: The final strategies that :func:`final_probabilities` computes from the visit counts
#: alone (it ignores ``strategy_sums`` for them): a caller need not gather the sums.
COUNTS_ONLY = ("empirical", "most_visited")


def final_probabilities(counts, strategy_sums, final_strategy: str,
                        exploration: float, threshold: float = 0.0) -> list[float]:
    """A node's final strategy for one player from its statistics.

    "empirical": visit frequencies ``n_a / n`` (the paper's); "average": the mean of the
    selector's sampling distributions; "average_no_exploration": that mean with the
    selector's uniform exploration removed, ``(p_a - exploration / |A|) / (1 - exploration)``
    clipped at 0 and renormalised (GTLibrary's choice); "most_visited": all mass on the most
    visited action (the lowest on ties). Uniform while the node has no statistics.

    ``threshold`` (thresholding, Ganzfried & Sandholm 2012): then drop every action below
    that probability (the most likely ones always stay) and renormalise, so that the
    exploration and the noise of the first iterations, spread over many actions, are not
    played.
    """
    n = len(counts)
    if sum(counts) <= 0:
        return [1.0 / n] * n
    if final_strategy == "most_visited":
        best = max(range(n), key=counts.__getitem__)
        return [1.0 if a == best else 0.0 for a in range(n)]
    weights = counts if final_strategy in COUNTS_ONLY else strategy_sums  # "empirical"
    total = sum(weights)
    if total <= 0:
        return [1.0 / n] * n
    probs = [w / total for w in weights]
    if final_strategy == "average_no_exploration" and exploration < 1.0:
        kept = [max(0.0, (p - exploration / n) / (1.0 - exploration)) for p in probs]
        if sum(kept) > 0:
            probs = [k / sum(kept) for k in kept]
    return thresholded(probs, threshold)


def thresholded(probs, threshold: float) -> list[float]:
    """``probs`` without the actions below ``threshold`` (the most likely ones always
    stay), renormalised: thresholding (Ganzfried & Sandholm 2012)."""
    if threshold <= 0.0:
        return list(probs)
    cut = min(threshold, max(probs))
    kept = [p if p >= cut else 0.0 for p in probs]
    return [k / sum(kept) for k in kept]


def check_threshold(threshold: float) -> float:
    """The final-move threshold, checked: a probability in [0, 1)."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not (
            0.0 <= threshold < 1.0):
        raise ValueError(f"threshold must be a probability in [0, 1) (0: keep every action), "
                         f"got {checks.shown(threshold)!r}")
    return float(threshold)

_TERMINAL, _CHANCE, _DECISION = 0, 1, 2


def check_game(game: pyspiel.Game) -> None:
    """Raise ValueError unless SM-MCTS can search ``game``."""
    checks.check_game(game, "SM-MCTS", hint="use smmcts_spiel.bots.MMCTSBot for such games")


def reward_range(game: pyspiel.Game) -> tuple[float, float]:
    """``(lo, hi)``: the range of player 1's utility that the selectors' rewards map onto
    [0, 1] (player 1 gets ``(u1 - lo) / (hi - lo)``, player 2 one minus that).

    pyspiel's ``min_utility()`` / ``max_utility()`` bound every player's return, so player
    1's lies in them and (constant sum) in ``utility_sum`` minus them. An explicit-tree game
    (``smmcts_random_stacked_matrix``, ``smmcts_matrix_tree``) knows player 1's exact range,
    its leaves' (for the paper's games with utilities in [0, 1]: the paper's rewards
    ``u1`` and ``1 - u1``), where pyspiel's range is the symmetric hull ``[-hi, hi]``; so
    does a constant-sum matrix game (its row player's payoffs). With player 1's exact range,
    player 2's reward ``1 - (u1 - lo) / (hi - lo)`` is its own utility ``S - u1`` mapped
    from its own range ``[S - hi, S - lo]``.
    """
    tree = getattr(game, "tree", None)  # a Python game loaded by name is the object itself
    if isinstance(tree, trees.MatrixTree):
        lo, hi = trees.utility_range(tree.root)
    elif (isinstance(game, pyspiel.MatrixGame)
          and game.get_type().utility != pyspiel.GameType.Utility.ZERO_SUM):
        # Constant sum: pyspiel's range is both players' hull (payoffs A and 100 - A in
        # [1, 4] and [96, 99]: [1, 99], which squeezed player 1's rewards into 3% of [0, 1]).
        lo, hi = float(game.row_utilities().min()), float(game.row_utilities().max())
    else:
        total = game.utility_sum()
        lo = max(game.min_utility(), total - game.max_utility())
        hi = min(game.max_utility(), total - game.min_utility())
    return (float(lo), float(hi)) if hi > lo else (float(lo), float(lo) + 1.0)


def follow_history(node, moves: Sequence[int]):
    """The node reached from ``node`` by pyspiel history entries (one per chance or single
    move, two per joint move), or None where the tree does not go; for the nodes of every
    engine (``is_terminal``, ``is_chance``, ``is_open``, ``mover``, ``child``)."""
    k = 0
    while k < len(moves):
        if node is None or node.is_terminal or not node.is_open:
            return None
        if node.is_chance:
            node, k = node.child((moves[k],)), k + 1
        elif node.mover is None:
            if k + 1 >= len(moves):
                return None
            node, k = node.child((moves[k], moves[k + 1])), k + 2
        else:
            pair = [pyspiel.INVALID_ACTION, pyspiel.INVALID_ACTION]
            pair[node.mover] = moves[k]
            node, k = node.child(pair), k + 1
    return node


class SearchNode:
    """Statistics of one state in the search tree.

    Decision nodes keep both players' legal actions (a player who does not move has the
    single pseudo-action ``pyspiel.INVALID_ACTION``), children indexed by the joint action
    ``i * n2 + j``, one selector per player that has a choice, and the per-action counts
    (empirical frequencies) and, on request, sums of sampling distributions (average
    strategy). A decision node drops its pyspiel state once all its children exist.
    """

    __slots__ = ("kind", "state", "total", "visits", "u1", "mover", "actions", "children",
                 "untried", "selectors", "counts", "strategy_sums", "chance_outcomes")
    kind: int
    state: pyspiel.State  # None once every child of a decision node exists
    total: float
    visits: int
    u1: float  # terminal nodes
    # Decision nodes:
    mover: int | None  # the only player to move, None at a simultaneous node
    actions: tuple[list[int], ...]
    # Chance nodes: outcome -> node; opened decision nodes: joint index -> node or None.
    children: Any
    untried: int
    selectors: tuple[Any, Any]  # a selector per player with a choice, else None
    counts: tuple[list[int], list[int]]
    strategy_sums: tuple[list[float], list[float]] | None
    chance_outcomes: list[tuple[int, float]]  # chance nodes

    def __init__(self, state: pyspiel.State):
        self.state = state
        self.total = 0.0
        self.visits = 0
        self.children = None
        if state.is_terminal():
            self.kind = _TERMINAL
            self.u1 = state.returns()[0]
        elif state.is_chance_node():
            self.kind = _CHANCE
            self.chance_outcomes = state.chance_outcomes()
            self.children = {}
        else:
            self.kind = _DECISION
            if state.is_simultaneous_node():
                self.mover = None
            else:
                self.mover = state.current_player()
            self.actions = tuple(state.legal_actions(p) or [pyspiel.INVALID_ACTION]
                                 for p in (0, 1))

    @property
    def is_terminal(self) -> bool:
        return self.kind == _TERMINAL

    @property
    def is_chance(self) -> bool:
        return self.kind == _CHANCE

    @property
    def is_open(self) -> bool:
        """Whether the node has had its first visit (chance nodes: from the start)."""
        return self.kind == _CHANCE or self.children is not None

    def mean(self) -> float:
        """Mean player-1 value of the iterations through this node."""
        return self.total / self.visits

    def child(self, player_actions: Sequence[int]):
        """The child after the given action of each player (chance: one action), or None."""
        if self.kind == _CHANCE:
            return self.children.get(player_actions[0])
        if self.kind != _DECISION or self.children is None:
            return None
        try:
            i = self.actions[0].index(player_actions[0])
            j = self.actions[1].index(player_actions[1])
        except ValueError:
            return None
        return self.children[i * len(self.actions[1]) + j]

    def strategy(self, player: int, final_strategy: str = "empirical",
                 exploration: float = 0.0, threshold: float = 0.0) -> list[float]:
        """The final strategy of ``player`` here (see :func:`final_probabilities`)."""
        if self.kind != _DECISION:
            raise ValueError("only decision nodes have strategies")
        n = len(self.actions[player])
        if self.children is None:
            return [1.0 / n] * n
        sums = self.strategy_sums[player] if self.strategy_sums else [0.0] * n
        return final_probabilities(self.counts[player], sums, final_strategy, exploration,
                                   threshold)


def strategy_at(search: Any, state: pyspiel.State, player: int,
                threshold: float | None = None) -> dict[int, float]:
    """``player``'s final strategy at ``state`` in ``search`` (a :class:`TreeSearch` or a
    search with the same ``game``, ``find`` and final-strategy options, such as the merged
    trees of a multi-thread search); uniform where the search never went. ``threshold``:
    the final-move threshold to apply (None: the search's own ``threshold``)."""
    threshold = search.threshold if threshold is None else threshold
    state = checks.state_of_game(state, search.game, f"the policy of {type(search).__name__}")
    node = search.find(state)
    if (node is not None and node.is_open and not node.is_chance and not node.is_terminal
            and node.mover in (None, player)):
        return dict(zip(node.actions[player],
                        node.strategy(player, search.final_strategy, search.exploration,
                                      threshold)))
    actions = state.legal_actions(player)
    return {a: 1.0 / len(actions) for a in actions}


class TreeSearch(abc.ABC):
    """The root and its reuse, node lookup and results, for every SM-MCTS engine.

    A subclass provides ``_new_root`` and ``_reroot``. Its nodes answer ``is_terminal``,
    ``is_chance``, ``is_open``, ``mover``, ``actions``, ``strategy`` and ``child``.
    """

    root: Any  # the root node, or None before the first search

    def __init__(self, game: pyspiel.Game, selector: str, gamma: float | None,
                 c: float | None, final_strategy: str, threshold: float = 0.0,
                 tie_tolerance: float = DEFAULT_TIE_TOLERANCE):
        """Check and keep the options every engine takes (see :class:`SMMCTS`)."""
        check_game(game)
        base, self.propagate_mean = parse_selector(selector)
        gamma, c = exploration(base, gamma, c)
        self.tie_tolerance = check_tie_tolerance(tie_tolerance)
        if final_strategy not in FINAL_STRATEGIES:
            raise ValueError(f"final_strategy must be one of {', '.join(FINAL_STRATEGIES)}, "
                             f"got {final_strategy!r}")
        self.game = game
        self.selector = selector
        self.base_selector, self.gamma, self.c = base, gamma, c
        self.final_strategy = final_strategy
        self.threshold = check_threshold(threshold)
        self._track_average = final_strategy.startswith("average")
        # The uniform exploration the selectors mix in (removed by average_no_exploration).
        self.exploration = 0.0 if base == "ucb" else float(gamma)
        lo, hi = reward_range(game)
        self._reward_low, self._inv_reward_range = lo, 1.0 / (hi - lo)
        # Regret matching's arithmetic (see the module docstring).
        scale = max(abs(game.min_utility()), abs(game.max_utility())) or 1.0
        self._inv_scale = 1.0 / scale
        self._utility_sum = game.utility_sum()
        self.root = None
        self._root_history: list[int] = []
        self.last_iterations = 0  # iterations of the last run

    def set_root(self, state: pyspiel.State):
        """Make ``state`` the root, keeping the subtree of the current tree if it has one."""
        node = self.find(state)
        if node is not None:
            self.root, self._root_history = self._reroot(node), state.history()
            return self.root
        self.root, self._root_history = None, state.history()
        self.root = self._new_root(state)
        return self.root

    def reset(self) -> None:
        self.root, self._root_history = None, []

    @abc.abstractmethod
    def _new_root(self, state: pyspiel.State) -> Any:
        """The root node of a fresh tree for ``state``."""

    @abc.abstractmethod
    def _reroot(self, node: Any) -> Any:
        """Make the tree's ``node`` the root; returns the node as it is then."""

    def find(self, state: pyspiel.State):
        """The tree's node for ``state``, or None if the search never went there."""
        if self.root is None:
            return None
        history = state.history()
        if history[:len(self._root_history)] != self._root_history:
            return None
        return follow_history(self.root, history[len(self._root_history):])

    def strategy(self, state: pyspiel.State, player: int,
                 threshold: float | None = None) -> dict[int, float]:
        """``player``'s final strategy at ``state``: uniform where the search never went.

        ``state`` is a state of the searched game or of its turn-based conversion (as
        OpenSpiel's evaluators give); a state of any other game is refused (ValueError).
        ``threshold``: the final-move threshold (None: the search's ``threshold``; 0: the
        search's strategy as it is).
        """
        return strategy_at(self, state, player, threshold)

    def policy(self, threshold: float | None = None) -> SearchPolicy:
        """The final strategies as an OpenSpiel policy (``threshold`` as in :meth:`strategy`)."""
        return SearchPolicy(self, threshold)


class SMMCTS(TreeSearch):
    """The search: Alg. 1 with a selector per player at every node.

    Args:
      game: a two-player zero-sum or constant-sum game with perfect information between
        stages (simultaneous or sequential).
      selector: "rm", "exp3" or "ucb"; with a trailing "m" ("rmm", "exp3m", "ucbm") nodes
        propagate their mean value instead of the sampled one.
      gamma: exploration of RM and Exp3, in (0, 1]; None: the selector's default
        (``selectors.DEFAULT_GAMMA``: RM 0.05, Exp3 0.1).
      c: exploration constant of UCB on rewards in [0, 1]; None: ``selectors.DEFAULT_C``
        (0.5).
      tie_tolerance: UCB's bounds within this of the best are tied, one of them drawn at
        random (0: equal bounds only; the AIJ 2016 study's UCT: 0.005 on rewards in [0, 1],
        ``selectors.ucb_index_random_ties``).
      final_strategy: one of FINAL_STRATEGIES (see :func:`final_probabilities`):
        "empirical" (frequencies n_i / n, the paper's) or "average" (the mean
        of the sampling distributions).
      threshold: final-move thresholding: actions the final strategy gives less than this
        probability are dropped and the rest renormalised (0: none).
      evaluator: scores a new leaf; anything with OpenSpiel's ``evaluate(state)`` returning
        every player's return. Default: one random rollout seeded from ``seed``.
      seed: seeds every random choice of the search.
    """

    def __init__(self, game: pyspiel.Game, selector: str = "rm", gamma: float | None = None,
                 c: float | None = None, final_strategy: str = "empirical", evaluator=None,
                 seed: int | None = None, threshold: float = 0.0,
                 tie_tolerance: float = DEFAULT_TIE_TOLERANCE):
        super().__init__(game, selector, gamma, c, final_strategy, threshold, tie_tolerance)
        self._make_selector = selector_factory(self.base_selector, self.gamma, self.c,
                                               self.tie_tolerance)
        self._rng = random.Random(seed)
        self.evaluator = evaluator or RandomRolloutEvaluator(seed=self._rng.getrandbits(63))

    # -- tree management ---------------------------------------------------------------

    def _new_root(self, state: pyspiel.State) -> SearchNode:
        return SearchNode(state.clone())

    @staticmethod
    def _reroot(node: SearchNode) -> SearchNode:
        return node

    # -- running -----------------------------------------------------------------------

    def run(self, state: pyspiel.State, iterations: int | None = 1000,
            time_limit: float | None = None) -> SearchNode:
        """Search from ``state`` until ``iterations`` are done or ``time_limit`` seconds pass.

        Pass ``iterations=None`` to search by time alone. Returns the root node.
        """
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        if state.is_terminal():
            raise ValueError("cannot search from a terminal state: the game is over")
        root = self.set_root(state)
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        done = 0
        try:
            while iterations is None or done < iterations:
                self._simulate(root)
                done += 1
                if deadline is not None and done % 16 == 0 and time.perf_counter() >= deadline:
                    break
        except BaseException:
            # An iteration cut short (a KeyboardInterrupt) leaves half-updated statistics
            # (a child never evaluated): drop the tree, so the search stays usable.
            self.reset()
            raise
        self.last_iterations = done
        return root

    def _simulate(self, node: SearchNode) -> float:
        """One iteration of Alg. 1 below ``node``; returns RetVal in player 1's utility."""
        if node.kind == _TERMINAL:
            return node.u1
        if node.kind == _CHANCE:
            action = sample_chance(node.chance_outcomes, self._rng.random())
            child = node.children.get(action)
            if child is None:
                child_state = node.state.clone()
                child_state.apply_action(action)
                child = node.children[action] = SearchNode(child_state)
            u1 = self._simulate(child)
            node.total += u1
            node.visits += 1
            return node.total / node.visits if self.propagate_mean else u1
        if node.children is None:
            self._open(node)
        if node.untried:
            # A uniformly random joint action among those never tried (one draw, as in
            # the compiled engines).
            target = min(int(self._rng.random() * node.untried), node.untried - 1)
            joint = [k for k, child in enumerate(node.children) if child is None][target]
            node.untried -= 1
            n2 = len(node.actions[1])
            i, j = divmod(joint, n2)
            child_state = node.state.clone()
            if node.mover is None:
                child_state.apply_actions([node.actions[0][i], node.actions[1][j]])
            else:
                child_state.apply_action(node.actions[node.mover][i if node.mover == 0 else j])
            if not node.untried:
                node.state = None  # every child exists: the state is no longer needed
            child = node.children[joint] = SearchNode(child_state)
            u1 = child.u1 if child.kind == _TERMINAL else self.evaluator.evaluate(child_state)[0]
            child.total += u1
            child.visits += 1
            self._update(node, i, j, u1)
            return u1
        rng = self._rng
        sel1, sel2 = node.selectors
        i = sel1.select(rng.random()) if sel1 is not None else 0
        j = sel2.select(rng.random()) if sel2 is not None else 0
        u1 = self._simulate(node.children[i * len(node.actions[1]) + j])
        node.total += u1
        node.visits += 1
        self._update(node, i, j, u1)
        return node.total / node.visits if self.propagate_mean else u1

    def _open(self, node: SearchNode) -> None:
        """First visit of a decision node: create its children table and selectors."""
        n1, n2 = len(node.actions[0]), len(node.actions[1])
        node.children = [None] * (n1 * n2)
        node.untried = n1 * n2
        node.selectors = (self._make_selector(n1) if n1 > 1 else None,
                          self._make_selector(n2) if n2 > 1 else None)
        node.counts = ([0] * n1, [0] * n2)
        node.strategy_sums = ([0.0] * n1, [0.0] * n2) if self._track_average else None

    def _update(self, node: SearchNode, i: int, j: int, u1: float) -> None:
        """Update(h, i, j, u1): each player's selector learns from its own reward."""
        node.counts[0][i] += 1
        node.counts[1][j] += 1
        sel1, sel2 = node.selectors
        if node.strategy_sums is not None:  # tracking the average strategy
            for selector, sums in zip(node.selectors, node.strategy_sums):
                if selector is not None:
                    for a, p in enumerate(selector.probabilities()):
                        sums[a] += p
        selector = sel1 if sel1 is not None else sel2
        if selector is None:
            return
        if selector.uses_action_values:
            self._regret_update(node, i, j, u1)
            return
        reward1 = (u1 - self._reward_low) * self._inv_reward_range
        if sel1 is not None:
            sel1.update(i, reward1)
        if sel2 is not None:
            sel2.update(j, 1.0 - reward1)

    def _regret_update(self, node: SearchNode, i: int, j: int, u1: float) -> None:
        """Regret matching's Update: each action's value against the opponent's sampled
        action (the child's mean, or the sample itself), in units ``u_p / scale``."""
        inv_scale = self._inv_scale
        utility_sum = self._utility_sum
        sel1, sel2 = node.selectors
        n2 = len(node.actions[1])
        if sel1 is not None:
            reward = u1 * inv_scale
            values = [reward if a == i or child is None else child.total / child.visits
                      * inv_scale for a, child in enumerate(node.children[j::n2])]
            sel1.update(i, reward, values)
        if sel2 is not None:
            reward = (utility_sum - u1) * inv_scale
            values = [reward if b == j or child is None else
                      (utility_sum - child.total / child.visits) * inv_scale
                      for b, child in enumerate(node.children[i * n2:(i + 1) * n2])]
            sel2.update(j, reward, values)

    # -- results -----------------------------------------------------------------------



class StrategySource(Protocol):
    """What :class:`SearchPolicy` reads: a search (one tree or merged root-parallel trees)."""

    game: pyspiel.Game

    def strategy(self, state: pyspiel.State, player: int,
                 threshold: float | None = None) -> dict[int, float]: ...


class SearchPolicy(policy_lib.Policy):
    """The search's final strategy as an OpenSpiel policy on the (simultaneous) game.

    ``action_probabilities(state, player_id)`` answers for any state of the original game
    or of its ``convert_to_turn_based`` game (so OpenSpiel's ``exploitability`` and
    ``nash_conv`` can evaluate it there): the tree's strategy where the search went, uniform
    elsewhere; a state of another game is refused. It reads the live tree, so it reflects
    every search run so far. ``threshold``: the final-move threshold applied (None: the
    search's own; 0: none).
    """

    def __init__(self, search: StrategySource, threshold: float | None = None):
        super().__init__(search.game, [0, 1])
        self._search = search
        self._threshold = threshold

    def action_probabilities(self, state, player_id=None):
        if player_id is None:
            if state.is_simultaneous_node():
                raise ValueError("at a simultaneous node give player_id (0 or 1)")
            player_id = state.current_player()
        return self._search.strategy(state, player_id, self._threshold)
