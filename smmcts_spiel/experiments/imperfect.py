"""Exploitability of online search in imperfect-information games (issue 14).

Two kinds of strategy are scored with OpenSpiel's ``exploitability.nash_conv``:

* **root** strategies, built by one run from the root of the game and read after
  ``t`` iterations: OOS without a target (its average strategy; at the root OOS is
  outcome-sampling MCCFR with an incremental tree) and OpenSpiel's
  ``outcome_sampling_mccfr`` (the reference implementation of the same estimator);
* **online** strategies, the way a bot plays: at every information set a FRESH search
  of ``t`` iterations from that information set, and the strategy it would play there.
  OOS (targeted, ``delta`` 0.9) plays its average strategy; OpenSpiel's ``ISMCTSBot``
  its normalised visit counts (a mixed strategy; its default, the most visited action,
  is pure and more exploitable); information-set SM-MCTS (RM) its visit frequencies.
  Every information set is searched with the same budget, so the comparison is at equal
  iterations per move.

A simultaneous game (Goofspiel) is scored on its turn-based conversion, which all these
searches play. Every job's randomness comes from its seed (and, for online strategies,
the information state string), so results do not depend on the order of evaluation.
"""

from __future__ import annotations

import random
import time
import zlib

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability, ismcts, mcts
from open_spiel.python.algorithms import outcome_sampling_mccfr as os_mccfr

from smmcts_spiel.search import information_sets
from smmcts_spiel.search.is_smmcts import InformationSetSMMCTS
from smmcts_spiel.search.oos import OutcomeSampling

ROOT_METHODS = ("oos_root", "os_mccfr")
ONLINE_METHODS = ("oos", "ismcts", "is_smmcts_rm")
METHODS = ROOT_METHODS + ONLINE_METHODS


def scored_game(game_string: str) -> pyspiel.Game:
    """The game the strategies are scored on: turn-based if ``game_string`` is simultaneous."""
    game = pyspiel.load_game(game_string)
    return information_sets.check_sequential_search_game(game, "the exploitability study")


def num_information_sets(game_string: str) -> int:
    """Decision information sets of the scored game (what an online strategy searches)."""
    return len(policy_lib.TabularPolicy(scored_game(game_string)).state_lookup)


def root_curve(game_string: str, method: str, checkpoints, seed: int) -> dict[str, np.ndarray]:
    """NashConv of a root strategy after each number of iterations in ``checkpoints``."""
    game = scored_game(game_string)
    checkpoints = sorted(int(t) for t in checkpoints)
    if method == "oos_root":
        search = OutcomeSampling(game, delta=0.0, epsilon=0.6, seed=seed)
        step, current = (lambda n: search.run(n)), search.policy
    elif method == "os_mccfr":
        np.random.seed(seed)  # OpenSpiel's solver draws from numpy's global generator
        solver = os_mccfr.OutcomeSamplingSolver(game)

        def step(n):
            for _ in range(n):
                solver.iteration()
        current = solver.average_policy
    else:
        raise ValueError(f"unknown root method {method!r}; choose one of {ROOT_METHODS}")
    nash_conv, seconds = [], []
    done, elapsed = 0, 0.0
    for t in checkpoints:
        start = time.perf_counter()
        step(t - done)
        elapsed += time.perf_counter() - start
        done = t
        nash_conv.append(exploitability.nash_conv(game, current()))
        seconds.append(elapsed)
    return {"iterations": np.array(checkpoints), "nash_conv": np.array(nash_conv),
            "seconds": np.array(seconds)}


class OnlinePolicy(policy_lib.Policy):
    """At each information set, what a fresh search from there would play (cached)."""

    def __init__(self, game: pyspiel.Game, search):
        super().__init__(game, [0, 1])
        self._search = search
        self._cache: dict[tuple[int, str], dict[int, float]] = {}
        self.search_seconds = 0.0

    def action_probabilities(self, state, player_id=None):
        player = state.current_player()
        key = (player, state.information_state_string(player))
        if key not in self._cache:
            actions = state.legal_actions()
            if len(actions) == 1:
                self._cache[key] = {actions[0]: 1.0}
            else:
                start = time.perf_counter()
                self._cache[key] = dict(self._search(state, _key_seed(key)))
                self.search_seconds += time.perf_counter() - start
        return self._cache[key]


def _key_seed(key) -> int:
    return zlib.crc32(f"{key[0]}|{key[1]}".encode())


def online_search(game: pyspiel.Game, method: str, iterations: int, seed: int):
    """``search(state, key_seed) -> [(action, p), ...]``: one fresh search by ``method``."""
    if method == "oos":
        def search(state, key_seed):
            oos = OutcomeSampling(game, delta=0.9, epsilon=0.6, seed=seed ^ key_seed)
            oos.set_target(information_sets.information_set(game, state))
            oos.run(iterations)
            return zip(*oos.average_strategy(state))
    elif method == "ismcts":
        def search(state, key_seed):
            rng = np.random.RandomState((seed ^ key_seed) % 2**32)
            bot = ismcts.ISMCTSBot(
                game, mcts.RandomRolloutEvaluator(1, rng), 2.0, iterations,
                random_state=rng,
                final_policy_type=ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT)
            bot.set_resampler(information_sets.WorldSampler(
                game, state, state.current_player(), random.Random(seed ^ key_seed)))
            return bot.get_policy(state)
    elif method == "is_smmcts_rm":
        def search(state, key_seed):
            rng = random.Random(seed ^ key_seed)
            tree = InformationSetSMMCTS(game, "rm", gamma=0.1, seed=rng.getrandbits(63))
            tree.run(information_sets.WorldSampler(game, state, state.current_player(), rng),
                     iterations)
            return zip(*tree.strategy(state, state.current_player()))
    else:
        raise ValueError(f"unknown online method {method!r}; choose one of {ONLINE_METHODS}")
    return search


def online_point(game_string: str, method: str, iterations: int,
                 seed: int) -> dict[str, np.ndarray]:
    """NashConv of the online strategy of ``method`` at ``iterations`` per information set."""
    game = scored_game(game_string)
    policy = OnlinePolicy(game, online_search(game, method, int(iterations), seed))
    nash_conv = exploitability.nash_conv(game, policy)
    return {"iterations": np.array([iterations]), "nash_conv": np.array([nash_conv]),
            "seconds": np.array([policy.search_seconds])}


def exploitability_job(game: str, method: str, iterations, seed: int) -> dict[str, np.ndarray]:
    """One job of ``scripts/imperfect_exploitability.py``: a root curve over the
    checkpoints ``iterations``, or one online point (``iterations`` a single budget)."""
    if method in ROOT_METHODS:
        return root_curve(game, method, iterations, seed)
    (budget,) = iterations
    return online_point(game, method, budget, seed)
