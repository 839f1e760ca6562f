"""PUCT search for a best response to the opponent's average policy (MC-NFSP's best response).

At the searching player's nodes the child maximises ``Q + c P sqrt(N) / (1 + n)`` with the
best-response network's prior ``P`` (AlphaZero's rule, the paper's Sec. 3.2); at the
opponent's nodes the opponent plays its *average* policy, sampled from the average-policy
network, so the search estimates a best response to the average, which is what fictitious
play needs. A new leaf is valued by the best-response network (its value for the player to
move, negated for the opponent); terminal states by their returns.

The search runs on pyspiel states of a sequential game with perfect information. SM-MCTS
(:mod:`smmcts_spiel.search`) solves a different problem (simultaneous moves, no prior,
regret-matching / Exp3 selectors), so nothing here reuses its selectors.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np
import pyspiel


class Networks(Protocol):
    """What the search asks of the networks, for the player to move in ``state``."""

    def best_response(self, state: pyspiel.State) -> tuple[np.ndarray, float]:
        """Prior over all actions (zero on illegal ones) and the mover's value."""

    def average(self, state: pyspiel.State) -> np.ndarray:
        """Average-policy probabilities over all actions (zero on illegal ones)."""


class _Node:
    __slots__ = ("state", "player", "probs", "legal", "children", "visits", "value_sum",
                 "total")

    def __init__(self, state: pyspiel.State, player: int, probs: np.ndarray):
        self.state = state
        self.player = player
        self.probs = probs
        self.legal = state.legal_actions()
        self.children: dict[int, _Node | float] = {}
        self.visits = np.zeros(len(probs))
        self.value_sum = np.zeros(len(probs))
        self.total = 0


def search(state: pyspiel.State, networks: Networks, num_simulations: int, c_puct: float,
           rng: np.random.Generator) -> np.ndarray:
    """Visit frequencies of the root's actions after ``num_simulations`` simulations.

    The player to move at ``state`` searches; the frequencies are the improved policy the
    best-response network is trained towards and that the player samples its move from.
    """
    if num_simulations < 1:
        raise ValueError(f"num_simulations must be >= 1, got {num_simulations}")
    if state.is_terminal() or state.is_chance_node() or state.is_simultaneous_node():
        raise ValueError("MC-NFSP's search needs a decision state of a sequential game "
                         "without chance nodes")
    me = state.current_player()
    root, _ = _expand(state.clone(), me, networks)
    for _ in range(num_simulations):
        _simulate(root, me, networks, c_puct, rng)
    return root.visits / root.visits.sum()


def _expand(state: pyspiel.State, me: int, networks: Networks) -> tuple[_Node, float]:
    """A new node and its value for ``me`` (the searching player)."""
    player = state.current_player()
    prior, value = networks.best_response(state)
    if player == me:
        return _Node(state, player, prior), value
    return _Node(state, player, networks.average(state)), -value


def _simulate(node: _Node, me: int, networks: Networks, c_puct: float,
              rng: np.random.Generator) -> None:
    path = []
    while True:
        action = _select(node, me, c_puct, rng)
        path.append((node, action))
        child = node.children.get(action)
        if child is None:
            state = node.state.child(action)
            if state.is_terminal():
                value = float(state.returns()[me])
                node.children[action] = value
            else:
                child, value = _expand(state, me, networks)
                node.children[action] = child
            break
        if not isinstance(child, _Node):  # a terminal child: its return for ``me``
            value = child
            break
        node = child
    for n, a in path:
        n.visits[a] += 1
        n.value_sum[a] += value
        n.total += 1


def _select(node: _Node, me: int, c_puct: float, rng: np.random.Generator) -> int:
    legal = node.legal
    if len(legal) == 1:
        return legal[0]
    if node.player != me:
        p = node.probs[legal]
        return legal[rng.choice(len(legal), p=p / p.sum())]
    visits = node.visits[legal]
    q = np.divide(node.value_sum[legal], visits, out=np.zeros(len(legal)), where=visits > 0)
    u = c_puct * node.probs[legal] * math.sqrt(node.total + 1) / (1.0 + visits)
    return legal[int(np.argmax(q + u))]
