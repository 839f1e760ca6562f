"""Seeded random strategies: inputs for exploitability benchmarks and cross-checks."""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib


def random_tabular_policy(turn_based_game: pyspiel.Game, seed: int) -> policy_lib.TabularPolicy:
    """A TabularPolicy whose every row is a Dirichlet(1, ..., 1) draw over the legal actions."""
    tabular = policy_lib.TabularPolicy(turn_based_game)
    rng = np.random.default_rng(seed)
    for row, mask in zip(tabular.action_probability_array, tabular.legal_actions_mask,
                         strict=True):
        legal = np.flatnonzero(mask)
        row[:] = 0.0
        row[legal] = rng.dirichlet(np.ones(len(legal)))
    return tabular


class RandomInformationStateStrategy:
    """A random strategy on a simultaneous game that depends on the information state only.

    Drawn lazily (Dirichlet(1, ..., 1) per information state) and then fixed.
    """

    def __init__(self, seed: int):
        self._rng = np.random.default_rng(seed)
        self._table: dict = {}

    def action_probabilities(self, state: pyspiel.State, player_id: int) -> dict[int, float]:
        key = (player_id, state.information_state_string(player_id))
        if key not in self._table:
            actions = state.legal_actions(player_id)
            self._table[key] = dict(zip(actions, self._rng.dirichlet(np.ones(len(actions))),
                                        strict=True))
        return self._table[key]
