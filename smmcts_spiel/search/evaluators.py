"""Leaf evaluators for the search, with OpenSpiel's evaluator interface.

An evaluator scores a new leaf: ``evaluate(state)`` returns every player's value and
``prior(state)`` a list of ``(action, probability)`` pairs, as in OpenSpiel's
``open_spiel.python.algorithms.mcts``. Any object with that interface can be given to the
search; the default is one seeded random rollout.
"""

from __future__ import annotations

import random

import pyspiel


class RandomRolloutEvaluator:
    """One uniformly random playout per evaluation, from a seeded generator.

    At simultaneous nodes each player's action is drawn uniformly and independently. Like
    OpenSpiel's evaluators it returns every player's return.
    """

    def __init__(self, n_rollouts: int = 1, seed: int | None = None):
        if n_rollouts < 1:
            raise ValueError(f"n_rollouts must be >= 1, got {n_rollouts}")
        self.n_rollouts = n_rollouts
        self._rng = random.Random(seed)

    def evaluate(self, state: pyspiel.State) -> list[float]:
        rng = self._rng
        total = None
        for _ in range(self.n_rollouts):
            working = state.clone()
            while not working.is_terminal():
                if working.is_chance_node():
                    working.apply_action(sample_chance(working.chance_outcomes(), rng.random()))
                elif working.is_simultaneous_node():
                    # Per player: Python-defined games do not take flat joint actions.
                    working.apply_actions([rng.choice(working.legal_actions(p) or
                                                      [pyspiel.INVALID_ACTION])
                                           for p in range(working.num_players())])
                else:
                    working.apply_action(rng.choice(working.legal_actions()))
            returns = working.returns()
            total = returns if total is None else [a + b for a, b in zip(total, returns)]
        return [v / self.n_rollouts for v in total]

    def prior(self, state: pyspiel.State):
        """Uniform prior, for interface compatibility with OpenSpiel's evaluators."""
        if state.is_chance_node():
            return state.chance_outcomes()
        actions = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(actions)) for a in actions]


def sample_chance(outcomes, u: float) -> int:
    """The chance outcome that the uniform number ``u`` in [0, 1) picks."""
    acc = 0.0
    for action, prob in outcomes:
        acc += prob
        if u < acc:
            return action
    return outcomes[-1][0]
