"""Information-set SM-MCTS: the paper's selectors at information sets, determinised worlds.

Each player owns a tree of its own information sets (``information_state_string``), like
MMCTS, and at each node one selector of :mod:`smmcts_spiel.search.selectors` (RM, Exp3 or
UCB) over its legal actions. An iteration starts from a world (a full state) the caller
draws, typically a history the searching player cannot tell from the real one, and plays
it out: at a simultaneous node BOTH players choose at once, each from its own information
set (the game is searched directly, not through the turn-based conversion); at a
sequential node the mover does. A player in its tree selects there; the first information
set it reaches that its tree lacks is added and selected at, then that player plays
uniformly at random (the rollout). Chance is sampled. At the end every node the player
chose at learns its reward ``u_p / U`` in [-1, 1] (``U`` the largest absolute utility).

Regret matching needs what the other actions would have earned against the opponent's
(hidden) choice. The child means of the NIPS 2013 paper do not exist here (a node's
children are not indexed by the opponent's action), and per-action means average over
the opponent's PAST play, which biases the regrets (RM then drifts away from the uniform
equilibrium of rock-paper-scissors). So RM learns from importance-sampled values, ``u /
p(a)`` for the sampled action and 0 for the others: an unbiased estimate of every
action's value, as Exp3's; the ``gamma`` exploration bounds ``1 / p(a)``. Exp3 and UCB
learn from the sampled reward alone.

This is a heuristic for imperfect information (strategy fusion, non-locality): unlike OOS
it has no convergence guarantee; the final strategy is ``empirical`` (visit frequencies)
or ``average`` (mean sampling distribution).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks
from smmcts_spiel.search.selectors import parse_selector, selector_factory

FINAL_STRATEGIES = ("empirical", "average")


class InfoSetNode:
    """One information set of one player: its selector and per-action statistics."""

    __slots__ = ("selector", "counts", "reward_sums", "strategy_sums", "visits", "total")

    def __init__(self, selector):
        n = len(selector.probabilities())
        self.selector = selector
        self.counts = [0] * n
        self.reward_sums = [0.0] * n
        self.strategy_sums = [0.0] * n
        self.visits = 0
        self.total = 0.0

    def update(self, i: int, reward: float, probs) -> None:
        if self.selector.uses_action_values:
            # Importance-sampled values: unbiased for what each action would have earned.
            values = [0.0] * len(probs)
            values[i] = reward / probs[i]
            self.selector.update(i, reward, values)
        else:
            self.selector.update(i, reward)
        for k, p in enumerate(probs):
            self.strategy_sums[k] += p
        self.counts[i] += 1
        self.reward_sums[i] += reward
        self.visits += 1
        self.total += reward

    def strategy(self, final_strategy: str) -> list[float]:
        weights = self.counts if final_strategy == "empirical" else self.strategy_sums
        total = sum(weights)
        n = len(weights)
        return [w / total for w in weights] if total > 0 else [1.0 / n] * n


class InformationSetSMMCTS:
    """Both players' information-set trees and the iterations that grow them.

    Args:
      game: two-player zero-sum game with information state strings, sequential or
        simultaneous.
      selector: "rm", "exp3" or "ucb" (no "m" variants: there is no node mean to pass up).
      gamma: exploration of RM and Exp3, in (0, 1].
      c: UCB exploration constant.
      final_strategy: "empirical" or "average".
      seed: seeds every random choice of the search.
    """

    def __init__(self, game: pyspiel.Game, selector: str = "rm", gamma: float = 0.05,
                 c: float = 1.4, final_strategy: str = "empirical", seed: int | None = None):
        checks.check_game(game, "Information-set SM-MCTS", perfect_information=False,
                          information_states=True, zero_sum_only=True)
        base, mean = parse_selector(selector)
        if mean:
            raise ValueError(f"selector {selector!r}: the 'm' variants propagate node means, "
                             f"which information-set trees do not have; use {base!r}")
        if final_strategy not in FINAL_STRATEGIES:
            raise ValueError(f"final_strategy must be one of {', '.join(FINAL_STRATEGIES)}, "
                             f"got {final_strategy!r}")
        self.game = game
        self.final_strategy = final_strategy
        self._new_selector = selector_factory(base, gamma, c)
        self._rng = random.Random(seed)
        self._scale = 1.0 / (max(abs(game.min_utility()), abs(game.max_utility())) or 1.0)
        self.nodes: dict[tuple[int, str], InfoSetNode] = {}
        self.iterations = 0

    def reseed(self, seed: int | None) -> None:
        """Draw the following iterations from a fresh generator seeded with ``seed``."""
        self._rng = random.Random(seed)

    def run(self, world: Callable[[], pyspiel.State], iterations: int | None = None,
            time_limit: float | None = None) -> int:
        """Iterates from ``world()`` states until a budget runs out; returns the count."""
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        done = 0
        while iterations is None or done < iterations:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            self.iterate(world())
            done += 1
        return done

    def _choose(self, state, player, expanded, visited):
        actions = state.legal_actions(player)
        if expanded[player]:
            return actions[int(self._rng.random() * len(actions))]
        key = (player, state.information_state_string(player))
        node = self.nodes.get(key)
        if node is None:
            node = self.nodes[key] = InfoSetNode(self._new_selector(len(actions)))
            expanded[player] = True
        probs = list(node.selector.probabilities())
        i = node.selector.select(self._rng.random())
        visited.append((player, node, i, probs))
        return actions[i]

    def iterate(self, state: pyspiel.State) -> None:
        """One iteration from ``state`` (modified in place; pass a clone)."""
        expanded = [False, False]
        visited: list = []
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                u, acc = self._rng.random(), 0.0
                action = outcomes[-1][0]
                for a, p in outcomes:
                    acc += p
                    if u < acc:
                        action = a
                        break
                state.apply_action(action)
            elif state.is_simultaneous_node():
                state.apply_actions([self._choose(state, p, expanded, visited) for p in (0, 1)])
            else:
                state.apply_action(self._choose(state, state.current_player(), expanded,
                                                visited))
        returns = state.returns()
        for player, node, i, probs in visited:
            node.update(i, returns[player] * self._scale, probs)
        self.iterations += 1

    def strategy(self, state: pyspiel.State, player: int):
        """(actions, final strategy) of ``player`` at ``state``; uniform off the tree."""
        actions = state.legal_actions(player)
        node = self.nodes.get((player, state.information_state_string(player)))
        if node is None:
            return actions, [1.0 / len(actions)] * len(actions)
        return actions, node.strategy(self.final_strategy)

    def policy(self) -> ISPolicy:
        return ISPolicy(self)

    def reset(self) -> None:
        self.nodes.clear()
        self.iterations = 0


class ISPolicy(policy_lib.Policy):
    """The final strategies of both trees as an OpenSpiel policy of ``game``."""

    def __init__(self, search: InformationSetSMMCTS):
        super().__init__(search.game, [0, 1])
        self._search = search

    def action_probabilities(self, state, player_id=None):
        if player_id is None:
            player_id = state.current_player()
        actions, probs = self._search.strategy(state, player_id)
        return dict(zip(actions, probs))
