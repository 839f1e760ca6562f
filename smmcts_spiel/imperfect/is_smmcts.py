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
chose at learns its reward ``(u_p - min) / (max - min)`` in [0, 1], the game's utility
range mapped onto the range the selectors are analysed for (Exp3: gains in [0, 1]).

Regret matching needs what the other actions would have earned against the opponent's
(hidden) choice. The child means of the NIPS 2013 paper do not exist here (a node's
children are not indexed by the opponent's action), and per-action means average over
the opponent's PAST play, which biases the regrets (RM then drifts away from the uniform
equilibrium of rock-paper-scissors). So RM learns from importance-sampled values, ``u /
p(a)`` for the sampled action and 0 for the others: an unbiased estimate of every
action's value, as Exp3's; the ``gamma`` exploration bounds ``1 / p(a)``. Exp3 and UCB
learn from the sampled reward alone.

This is a heuristic for imperfect information (strategy fusion, non-locality): unlike OOS
it has no convergence guarantee; the final strategy is ``empirical`` (visit frequencies),
``empirical_no_exploration`` (the same with RM's and Exp3's ``gamma / K`` exploration taken
out: ``max(f - gamma/K, 0) / (1 - gamma)``, renormalised) or ``average`` (mean sampling
distribution).

Random numbers: one ``rng.random()`` (a numpy Generator) per iteration for the world, then
one per chance node and per decision (selection or rollout move), in the order of play;
the compiled engine (:mod:`.is_smmcts_kernel`) draws the same numbers in the same order
with the same arithmetic, so both grow the same trees from the same seed.
"""

from __future__ import annotations

import time
from typing import Protocol

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks
from smmcts_spiel.imperfect.information_sets import WorldSampler
from smmcts_spiel.search.selectors import parse_selector, sample_index, selector_factory

FINAL_STRATEGIES = ("empirical", "empirical_no_exploration", "average")
SELECTORS = ("rm", "exp3", "ucb")


def check_selector(selector: str) -> str:
    """The base selector of ``selector`` (rm, exp3 or ucb), or a ValueError naming the fix."""
    base, mean = parse_selector(selector)
    if mean:
        raise ValueError(f"selector {selector!r}: the 'm' variants propagate node means, "
                         f"which information-set trees do not have; use {base!r}")
    if base not in SELECTORS:
        raise ValueError(f"selector {selector!r} is not available here; choose one of "
                         f"{', '.join(SELECTORS)} (rm already learns from the sampled reward "
                         "alone, importance weighted)")
    return base


def check_final_strategy(final_strategy: str) -> str:
    if final_strategy not in FINAL_STRATEGIES:
        raise ValueError(f"final_strategy must be one of {', '.join(FINAL_STRATEGIES)}, "
                         f"got {final_strategy!r}")
    return final_strategy


def without_exploration(probs, gamma: float) -> list[float]:
    """``probs`` with a ``gamma / K`` uniform share taken out (clipped at 0, renormalised;
    ``probs`` itself if nothing is left)."""
    n = len(probs)
    kept = [max(p - gamma / n, 0.0) for p in probs]
    total = sum(kept)
    return [k / total for k in kept] if total > 0.0 else list(probs)


def reward_scale(game: pyspiel.Game) -> tuple[float, float]:
    """(minimum utility, 1 / utility range): ``(u - min) * scale`` maps onto [0, 1]."""
    low, high = game.min_utility(), game.max_utility()
    return low, (1.0 / (high - low) if high > low else 1.0)


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

    def strategy(self, final_strategy: str, gamma: float = 0.0) -> list[float]:
        weights = self.counts if final_strategy != "average" else self.strategy_sums
        total = sum(weights)
        n = len(weights)
        if total <= 0:
            return [1.0 / n] * n
        probs = [w / total for w in weights]
        if final_strategy == "empirical_no_exploration":
            return without_exploration(probs, gamma)
        return probs


class InformationSetSMMCTS:
    """Both players' information-set trees and the iterations that grow them.

    Args:
      game: two-player zero-sum game with information state strings, sequential or
        simultaneous.
      selector: "rm", "exp3" or "ucb" (no "m" variants: there is no node mean to pass up).
      gamma: exploration of RM and Exp3, in (0, 1].
      c: UCB exploration constant (rewards are in [0, 1]).
      final_strategy: one of :data:`FINAL_STRATEGIES`.
      seed: seeds every random choice of the search.
    """

    def __init__(self, game: pyspiel.Game, selector: str = "rm", gamma: float = 0.05,
                 c: float = 1.4, final_strategy: str = "empirical", seed: int | None = None):
        checks.check_game(game, "Information-set SM-MCTS", perfect_information=False,
                          information_states=True, zero_sum_only=True)
        base = check_selector(selector)
        self.game = game
        self.selector = base
        self.gamma = gamma if base != "ucb" else 0.0
        self.final_strategy = check_final_strategy(final_strategy)
        self._new_selector = selector_factory(base, gamma, c)
        self._rng = np.random.default_rng(seed)
        self._low, self._scale = reward_scale(game)
        self.nodes: dict[tuple[int, str], InfoSetNode] = {}
        self.iterations = 0

    def reseed(self, seed: int | None) -> None:
        """Draw the following iterations from a fresh generator seeded with ``seed``."""
        self._rng = np.random.default_rng(seed)

    def worlds(self, state: pyspiel.State, player: int) -> WorldSampler:
        """The worlds of ``player``'s information set at ``state`` (for :meth:`run`)."""
        return WorldSampler(self.game, state, player)

    def run(self, worlds: WorldSampler, iterations: int | None = None,
            time_limit: float | None = None) -> int:
        """Iterates from worlds drawn from ``worlds`` (:meth:`worlds`) until a budget runs
        out; returns the count."""
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        done = 0
        while iterations is None or done < iterations:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            self.iterate(worlds.draw(self._rng.random()))
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
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(outcomes[sample_index(probs, self._rng.random())])
            elif state.is_simultaneous_node():
                state.apply_actions([self._choose(state, p, expanded, visited) for p in (0, 1)])
            else:
                state.apply_action(self._choose(state, state.current_player(), expanded,
                                                visited))
        returns = state.returns()
        for player, node, i, probs in visited:
            node.update(i, (returns[player] - self._low) * self._scale, probs)
        self.iterations += 1

    def strategy(self, state: pyspiel.State, player: int):
        """(actions, final strategy) of ``player`` at ``state``; uniform off the tree."""
        actions = state.legal_actions(player)
        node = self.nodes.get((player, state.information_state_string(player)))
        if node is None:
            return actions, [1.0 / len(actions)] * len(actions)
        return actions, node.strategy(self.final_strategy, self.gamma)

    def policy(self) -> ISPolicy:
        return ISPolicy(self)

    def reset(self) -> None:
        """Forget the trees: a fresh search (a new game)."""
        self.nodes.clear()
        self.iterations = 0


class StrategySearch(Protocol):
    """What :class:`ISPolicy` reads of a search: :class:`InformationSetSMMCTS` or the
    compiled engine (:mod:`smmcts_spiel.imperfect.is_smmcts_kernel`, which imports this
    module)."""

    game: pyspiel.Game

    def strategy(self, state: pyspiel.State, player: int): ...


class ISPolicy(policy_lib.Policy):
    """The final strategies of both trees as an OpenSpiel policy of ``game``."""

    def __init__(self, search: StrategySearch):
        super().__init__(search.game, [0, 1])
        self._search = search

    def action_probabilities(self, state, player_id=None):
        if player_id is None:
            player_id = state.current_player()
        actions, probs = self._search.strategy(state, player_id)
        return dict(zip(actions, probs))
