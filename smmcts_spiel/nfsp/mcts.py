"""PUCT search for a best response to the opponent's average policy (MC-NFSP's best response).

At the searching player's nodes the child maximises ``Q + c P sqrt(N) / (1 + n)`` with the
best-response network's prior ``P`` (AlphaZero's rule, the paper's Sec. 3.2); at the
opponent's nodes the opponent plays its *average* policy, sampled from the average-policy
network, so the search estimates a best response to the average, which is what fictitious
play needs. Values are in units of the game's largest absolute utility (the value head's
[-1, 1]).

Two trees, one rule:

* :func:`search`, perfect information: the tree's nodes are states, the opponent's
  included; a new leaf is valued by the best-response network (its value for the player to
  move, negated for the opponent), a terminal state by its return.
* :func:`search_information_set`, imperfect information: the tree's nodes are the
  searcher's information sets (``information_state_string``, as single-observer ISMCTS).
  Each simulation starts in a world (a history of the searcher's current information set)
  drawn by the caller, and between two of the searcher's decisions the opponent's moves
  (average policy) and chance are sampled in that world; a new information set is valued by
  the best-response network on the searcher's information-state tensor. With the
  opponent's strategy fixed, finding a best response is a single-agent problem over the
  searcher's information sets, so this tree has no strategy fusion, provided the worlds
  are drawn from the searcher's belief, i.e. in proportion to chance times the opponent's
  reach probability under its average policy (:func:`information_set_worlds`).

SM-MCTS (:mod:`smmcts_spiel.search`) solves a different problem (simultaneous moves, no
prior, regret-matching / Exp3 selectors); from it the information-set search reuses the
enumeration of an information set (:func:`smmcts_spiel.imperfect.information_sets.information_set`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import numpy as np
import pyspiel

from smmcts_spiel.imperfect.information_sets import information_set
from smmcts_spiel.search.selectors import sample_index


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


def utility_scale(game: pyspiel.Game) -> float:
    """The largest absolute utility: returns divided by it are in the value head's [-1, 1]."""
    return float(max(abs(game.max_utility()), abs(game.min_utility())))


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
                value = float(state.returns()[me]) / utility_scale(state.get_game())
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
    return _puct(node, c_puct)


def _puct(node, c_puct: float) -> int:
    """The searcher's choice: the legal action maximising ``Q + c P sqrt(N) / (1 + n)``."""
    legal = node.legal
    if len(legal) == 1:
        return legal[0]
    visits = node.visits[legal]
    q = np.divide(node.value_sum[legal], visits, out=np.zeros(len(legal)), where=visits > 0)
    u = c_puct * node.probs[legal] * math.sqrt(node.total + 1) / (1.0 + visits)
    return legal[int(np.argmax(q + u))]


class _InfoNode:
    """One information set of the searcher: its prior and per-action statistics."""

    __slots__ = ("probs", "legal", "visits", "value_sum", "total")

    def __init__(self, probs: np.ndarray, legal: list[int]):
        self.probs = probs
        self.legal = legal
        self.visits = np.zeros(len(probs))
        self.value_sum = np.zeros(len(probs))
        self.total = 0


def search_information_set(state: pyspiel.State, networks: Networks, num_simulations: int,
                           c_puct: float, rng: np.random.Generator,
                           worlds: Callable[[], pyspiel.State]) -> np.ndarray:
    """Visit frequencies of the root's actions after ``num_simulations`` simulations, each
    from a world ``worlds()`` of the mover's information set at ``state``.

    ``worlds()`` returns a fresh state the search may change (see
    :func:`information_set_worlds`).
    """
    if num_simulations < 1:
        raise ValueError(f"num_simulations must be >= 1, got {num_simulations}")
    if state.is_terminal() or state.is_chance_node() or state.is_simultaneous_node():
        raise ValueError("MC-NFSP's search needs a decision state of a sequential game")
    me = state.current_player()
    scale = utility_scale(state.get_game())
    root = _InfoNode(networks.best_response(state)[0], state.legal_actions())
    tree = {state.information_state_string(me): root}
    for _ in range(num_simulations):
        world = worlds()
        node, path = root, []
        while True:
            action = _puct(node, c_puct)
            path.append((node, action))
            world.apply_action(action)
            _play_others(world, me, networks, rng)
            if world.is_terminal():
                value = float(world.returns()[me]) / scale
                break
            key = world.information_state_string(me)
            child = tree.get(key)
            if child is None:
                prior, value = networks.best_response(world)
                tree[key] = _InfoNode(prior, world.legal_actions())
                break
            node = child
        for n, a in path:
            n.visits[a] += 1
            n.value_sum[a] += value
            n.total += 1
    return root.visits / root.visits.sum()


def _play_others(world: pyspiel.State, me: int, networks: Networks,
                 rng: np.random.Generator) -> None:
    """Sample chance and the opponent's average policy until ``me`` moves or the end."""
    while not world.is_terminal():
        if world.is_chance_node():
            actions, probs = zip(*world.chance_outcomes())
            world.apply_action(actions[sample_index(probs, rng.random())])
        elif world.current_player() == me:
            return
        else:
            legal = world.legal_actions()
            p = networks.average(world)[legal]
            world.apply_action(legal[sample_index(p, rng.random() * p.sum())])


def information_set_worlds(game: pyspiel.Game, state: pyspiel.State, networks: Networks,
                           rng: np.random.Generator) -> Callable[[], pyspiel.State]:
    """A sampler of the histories of the mover's information set at ``state``, drawn from
    the mover's belief when the opponent plays its average policy: in proportion to the
    chance probability times the opponent's reach probability (the mover's own reach is
    the same for all of them)."""
    me = state.current_player()
    infoset = information_set(game, state, me)
    weights = np.array(infoset.chance_probabilities, np.float64)
    for k, history in enumerate(infoset.histories):
        world = game.new_initial_state()
        for action in history:
            if not world.is_chance_node() and world.current_player() != me:
                weights[k] *= networks.average(world)[action]
            world.apply_action(action)
    if not weights.sum() > 0:  # the opponent's policy cannot reach here: chance alone
        weights = np.array(infoset.chance_probabilities, np.float64)
    cumulative = np.cumsum(weights / weights.sum())
    histories = infoset.histories

    def draw() -> pyspiel.State:
        k = min(int(np.searchsorted(cumulative, rng.random(), side="right")), len(histories) - 1)
        world = game.new_initial_state()
        for action in histories[k]:
            world.apply_action(action)
        return world

    return draw
