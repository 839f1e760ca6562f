"""Exploitability of online search in imperfect-information games.

Two kinds of strategy are scored with OpenSpiel's ``exploitability.nash_conv``:

* **root** strategies, built by one run from the root of the game and read after ``t``
  iterations (one sampled episode each, update players alternating): OOS without a target
  (its average strategy; at the root OOS is outcome-sampling MCCFR with an incremental
  tree) and OpenSpiel's C++ ``OutcomeSamplingMCCFRSolver`` (the reference implementation
  of the same estimator, one episode per ``run_iteration``);
* **online** strategies, the way a bot plays a game, assembled by the paper's *full
  stitching* (Lisy, Lanctot, Bowling 2015, Sec. 5): each player's information sets are
  visited from the root in the order of play; at each the method searches with the given
  budget per move, starting from the memory its searches at the player's EARLIER
  information sets on the way there left (the tables or trees a bot keeps between moves;
  each branch gets its own copy), and the strategy it would play there is recorded. So
  the strategy at an information set is exactly what a bot that started the game afresh
  would play there. OOS (targeted) plays as its bot with the preset or settings given;
  OpenSpiel's ISMCTS (a fresh tree at every move, as its bot) its normalised visit counts
  (a mixed strategy; the bot's default, the most visited action, is pure and more
  exploitable); information-set SM-MCTS (RM) its visit frequencies, its trees kept.

The budget per move is a number of iterations or of seconds (the time includes finding
the information set and drawing worlds, as in the bots). A simultaneous game (Goofspiel)
is scored and searched on its turn-based conversion. Every search's randomness comes from
the job's seed and the information state string, so results with an iteration budget do
not depend on the order of evaluation.
"""

from __future__ import annotations

import copy
import time
import zlib
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability

from smmcts_spiel.bots.openspiel_bots import ISMCTSBot
from smmcts_spiel.games.kernels.information import information_kernel_for
from smmcts_spiel.imperfect import information_sets, oos
from smmcts_spiel.imperfect.is_smmcts_kernel import information_set_smmcts
from smmcts_spiel.imperfect.oos_kernel import outcome_sampling
from smmcts_spiel.search.smmcts import thresholded

ROOT_METHODS = ("oos_root", "os_mccfr")
#: Online methods and their parameters (OOS: the bot's default preset, the paper's, then
#: the issue-14 remedies one at a time: exploration in regret matching, playing the
#: current strategy, less targeting). ``online_point(..., params=...)`` overrides them.
ONLINE_METHODS: dict[str, dict[str, Any]] = {
    "oos": oos.preset_settings("default"),
    "oos_average": oos.preset_settings("default", final_strategy="average", threshold=0.0),
    "oos_paper": oos.preset_settings("paper"),
    "oos_gamma": dict(delta=0.9, epsilon=0.6, gamma=0.01, weighting=False,
                      final_strategy="average"),
    "oos_current": dict(delta=0.9, epsilon=0.6, gamma=0.0, weighting=False,
                        final_strategy="current"),
    "oos_delta05": dict(delta=0.5, epsilon=0.6, gamma=0.0, weighting=False,
                        final_strategy="average"),
    "ismcts": dict(uct_c=2.0, final_policy="normalized_visits"),
    "is_smmcts_rm": dict(selector="rm", gamma=0.1, final_strategy="empirical"),
    "is_smmcts": dict(selector="exp3", gamma=0.1,  # ISSMMCTSBot's defaults
                      final_strategy="empirical_no_exploration"),
}
METHODS = ROOT_METHODS + tuple(ONLINE_METHODS)
BUDGET_KINDS = ("iterations", "seconds")


def scored_game(game_string: str) -> pyspiel.Game:
    """The game the strategies are scored on: turn-based if ``game_string`` is simultaneous."""
    game = pyspiel.load_game(game_string)
    return information_sets.check_sequential_search_game(game, "the exploitability study")


def num_information_sets(game_string: str) -> int:
    """Decision information sets of the scored game (what an online strategy searches)."""
    return len(policy_lib.TabularPolicy(scored_game(game_string)).state_lookup)


# ---------------------------------------------------------------------------- root curves
class _CppPolicy(policy_lib.Policy):
    """A policy of OpenSpiel's C++ solver, answering OpenSpiel's Python evaluator."""

    def __init__(self, game, cpp_policy):
        super().__init__(game, [0, 1])
        self._policy = cpp_policy

    def action_probabilities(self, state, player_id=None):
        return dict(self._policy.action_probabilities(state))


def root_curve(game_string: str, method: str, checkpoints, seed: int) -> dict[str, np.ndarray]:
    """NashConv of a root strategy after each number of iterations in ``checkpoints``."""
    game = pyspiel.load_game(game_string)
    scored = scored_game(game_string)
    checkpoints = sorted(int(t) for t in checkpoints)
    if method == "oos_root":
        search = outcome_sampling(game, delta=0.0, epsilon=0.6, seed=seed)
        search.run(1)  # compiles before the clock starts; counted below
        step, current = (lambda n: search.run(n)), search.policy
        done = 1
    elif method == "os_mccfr":
        solver = pyspiel.OutcomeSamplingMCCFRSolver(scored, 0.6, seed)

        def step(n):
            for _ in range(n):
                solver.run_iteration()

        def current():
            return _CppPolicy(scored, solver.average_policy())
        done = 0
    else:
        raise ValueError(f"unknown root method {method!r}; choose one of {ROOT_METHODS}")
    nash_conv, seconds = [], []
    elapsed = 0.0
    for t in checkpoints:
        start = time.perf_counter()
        step(t - done)
        elapsed += time.perf_counter() - start
        done = t
        nash_conv.append(exploitability.nash_conv(scored, current()))
        seconds.append(elapsed)
    return {"iterations": np.array(checkpoints), "nash_conv": np.array(nash_conv),
            "seconds": np.array(seconds)}


# ---------------------------------------------------------------------------- online
def _key_seed(seed: int, player: int, info: str) -> int:
    return (seed * 1_000_003 + zlib.crc32(f"{player}|{info}".encode())) % 2**63


class OnlineSearcher:
    """How one online method searches at an information set of ``game`` (the scored,
    sequential game), with the memory a bot keeps between moves.

    ``fresh()`` is the memory of a bot at the start of a game, ``copy(memory)`` an
    independent copy, ``search(memory, state, key_seed)`` searches from ``state`` (the
    memory changes) and returns the (action, probability) pairs the bot would play.
    """

    def __init__(self, game_string: str, method: str, iterations: int | None,
                 time_limit: float | None, seed: int, params: dict | None = None):
        if method not in ONLINE_METHODS:
            raise ValueError(f"unknown online method {method!r}; choose one of "
                             f"{', '.join(ONLINE_METHODS)}")
        self.game = pyspiel.load_game(game_string)
        self.scored = scored_game(game_string)
        self.method = method
        self.params = dict(ONLINE_METHODS[method], **(params or {}))
        self.iterations, self.time_limit = iterations, time_limit
        self.seed = seed
        self.searches = 0
        self.search_seconds = 0.0
        self.search_iterations = 0
        # IS-SM-MCTS: compiled on the game itself where it has a kernel (its keys answer the
        # scored turn-based states too), else over the scored game's pyspiel states.
        self._searched = (self.game if information_kernel_for(self.game) is not None
                          else self.scored)
        if method.startswith("is_smmcts"):  # the bots load it themselves; OOS has no worlds
            # Load the compiled information-set walk now, not in the first timed search.
            information_sets.load_compiled_walk(self.scored)
        if method == "ismcts":
            self._bots = [ISMCTSBot(self.scored, p, simulations=iterations, time_limit=time_limit,
                                    uct_c=self.params["uct_c"], worlds="information_set",
                                    final_policy=self.params["final_policy"], seed=seed + p)
                          for p in (0, 1)]

    def fresh(self):
        if self.method.startswith("oos"):
            p = self.params
            # The compiled engine loads its code when built, not in the first timed search.
            return outcome_sampling(self.game, delta=p["delta"], epsilon=p["epsilon"],
                                    gamma=p["gamma"], weighting=p["weighting"], seed=self.seed)
        if self.method.startswith("is_smmcts"):
            p = self.params
            return information_set_smmcts(self._searched, selector=p["selector"],
                                          gamma=p["gamma"], final_strategy=p["final_strategy"],
                                          seed=self.seed)
        return None

    def copy(self, memory):
        if memory is None:
            return None
        return memory.copy() if hasattr(memory, "copy") else copy.deepcopy(memory)

    def search(self, memory, state: pyspiel.State, key_seed: int):
        player = state.current_player()
        start = time.perf_counter()
        if self.method.startswith("oos"):
            memory.reseed(key_seed)
            memory.target(state, player)
            left = None if self.time_limit is None else max(
                self.time_limit - (time.perf_counter() - start), 1e-9)
            self.search_iterations += memory.run(self.iterations, left)
            actions, probs = memory.strategy(state, player, self.params["final_strategy"])
            policy = list(zip(actions, thresholded(probs, self.params.get("threshold", 0.0))))
        elif self.method.startswith("is_smmcts"):
            memory.reseed(key_seed)
            worlds = memory.worlds(state, player)
            left = None if self.time_limit is None else max(
                self.time_limit - (time.perf_counter() - start), 1e-9)
            self.search_iterations += memory.run(worlds, self.iterations, left)
            policy = list(zip(*memory.strategy(state, player)))
        else:
            bot = self._bots[player]
            before = bot.total_simulations
            policy = bot.step_with_policy(state)[0]
            self.search_iterations += bot.total_simulations - before
        self.search_seconds += time.perf_counter() - start
        self.searches += 1
        return policy


class InformationSetForest:
    """Each player's information sets of a sequential game, as the forest of play: the
    parent of an information set is the player's previous one on the way there (unique
    with perfect recall), reached by the action the player took there."""

    def __init__(self, game: pyspiel.Game):
        self.state: dict[tuple[int, str], pyspiel.State] = {}
        self.children: dict[tuple[int, str], list[tuple[int, str]]] = {}
        self.roots: list[tuple[int, str]] = []
        stack = [(game.new_initial_state(), [None, None])]
        while stack:
            state, last = stack.pop()
            if state.is_terminal():
                continue
            if state.is_chance_node():
                stack.extend((state.child(a), last) for a, _ in reversed(state.chance_outcomes()))
                continue
            player = state.current_player()
            key = (player, state.information_state_string(player))
            if key not in self.state:
                self.state[key] = state
                self.children[key] = []
                parent = last[player]
                (self.roots if parent is None else self.children[parent]).append(key)
            below = list(last)
            below[player] = key
            stack.extend((state.child(a), below) for a in reversed(state.legal_actions()))


def stitched_policy(forest: InformationSetForest, searcher: OnlineSearcher,
                    ) -> dict[tuple[int, str], dict[int, float]]:
    """The paper's full stitching: {(player, information state): strategy played there}."""
    table: dict[tuple[int, str], dict[int, float]] = {}

    def visit(key, memory):
        state = forest.state[key]
        actions = state.legal_actions()
        if len(actions) == 1:
            table[key] = {actions[0]: 1.0}
        else:
            table[key] = dict(searcher.search(memory, state,
                                              _key_seed(searcher.seed, *key)))
        children = forest.children[key]
        for j, child in enumerate(children):
            visit(child, memory if j == len(children) - 1 else searcher.copy(memory))

    for root in forest.roots:
        visit(root, searcher.fresh())
    return table


class TablePolicy(policy_lib.Policy):
    """A strategy given as {(player, information state string): {action: probability}}."""

    def __init__(self, game: pyspiel.Game, table):
        super().__init__(game, [0, 1])
        self._table = table

    def action_probabilities(self, state, player_id=None):
        player = state.current_player()
        return self._table[(player, state.information_state_string(player))]


def online_point(game_string: str, method: str, budget, kind: str, seed: int,
                 params: dict | None = None) -> dict[str, np.ndarray]:
    """NashConv of the stitched online strategy of ``method`` (its settings updated with
    ``params``) with ``budget`` iterations (``kind="iterations"``) or seconds
    (``kind="seconds"``) per move."""
    if kind not in BUDGET_KINDS:
        raise ValueError(f"kind must be one of {BUDGET_KINDS}, got {kind!r}")
    iterations, time_limit = ((int(budget), None) if kind == "iterations"
                              else (None, float(budget)))
    searcher = OnlineSearcher(game_string, method, iterations, time_limit, seed, params)
    forest = InformationSetForest(searcher.scored)
    table = stitched_policy(forest, searcher)
    nash_conv = exploitability.nash_conv(searcher.scored, TablePolicy(searcher.scored, table))
    return {"budget": np.array([budget], float), "nash_conv": np.array([nash_conv]),
            "seconds": np.array([searcher.search_seconds]),
            "searches": np.array([searcher.searches]),
            "iterations_per_search": np.array([searcher.search_iterations
                                               / max(searcher.searches, 1)])}


def exploitability_job(game: str, method: str, budgets, kind: str, seed: int,
                       params: dict | None = None) -> dict[str, np.ndarray]:
    """One job of ``experiments/imperfect/imperfect_exploitability.py``: a root curve over the
    checkpoints ``budgets`` (``kind="root"``), or one online point (one budget; the
    method's settings updated with ``params``)."""
    if method in ROOT_METHODS:
        curve = root_curve(game, method, budgets, seed)
        return {"budget": curve["iterations"].astype(float), "nash_conv": curve["nash_conv"],
                "seconds": curve["seconds"]}
    (budget,) = budgets
    return online_point(game, method, budget, kind, seed, params)
