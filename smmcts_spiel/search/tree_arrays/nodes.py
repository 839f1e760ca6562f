"""Read-only views of the nodes of an array tree (the interface of the reference engine's
``SearchNode``)."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pyspiel

from smmcts_spiel.search.smmcts import final_probabilities
from smmcts_spiel.search.tree_arrays.layout import (
    AVERAGE,
    CHANCE,
    CHILD,
    COUNT,
    KIND,
    N1,
    N2,
    SLOT,
    TERMINAL,
    VISITS,
    X,
)


class ArrayTree(Protocol):
    """What a node view reads of its search (:class:`.tree_search.ArrayTreeSearch`)."""

    nodes_i: np.ndarray
    nodes_f: np.ndarray
    slots: np.ndarray

    def node_actions(self, index: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        ...

    def child_index(self, node: int, player_actions) -> int:
        ...


class ArrayNode:
    """A read-only view of one node of an array tree (the interface of ``SearchNode``)."""

    __slots__ = ("_search", "index")

    def __init__(self, search: ArrayTree, index: int):
        self._search = search
        self.index = index

    def _field(self, field: int) -> int:
        return int(self._search.nodes_i[field, self.index])

    @property
    def is_terminal(self) -> bool:
        return self._field(KIND) == TERMINAL

    @property
    def is_chance(self) -> bool:
        return self._field(KIND) == CHANCE

    @property
    def is_open(self) -> bool:
        return self._field(CHILD) >= 0

    @property
    def visits(self) -> int:
        return int(self._search.nodes_f[VISITS, self.index])

    @property
    def total(self) -> float:
        return float(self._search.nodes_f[X, self.index])

    def mean(self) -> float:
        return self.total / self.visits

    @property
    def actions(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Each player's pyspiel actions (``(INVALID_ACTION,)`` for a player not moving)."""
        if self.is_terminal or self.is_chance:
            raise ValueError("only decision nodes list actions")
        actions = self._search.node_actions(self.index)
        if actions is None:
            raise ValueError("only opened decision nodes list actions")
        return actions

    @property
    def mover(self) -> int | None:
        """The only player to move here, or None at a simultaneous node."""
        first, second = self.actions
        if first == (pyspiel.INVALID_ACTION,):
            return 1
        if second == (pyspiel.INVALID_ACTION,):
            return 0
        return None

    def _slots(self, field: int, player: int) -> np.ndarray:
        fields = self._search.nodes_i[:, self.index].tolist()  # one read, not three
        n1, n2, s = fields[N1], fields[N2], fields[SLOT]
        start, n = (s, n1) if player == 0 else (s + n1, n2)
        return self._search.slots[field, start:start + n]

    def player_counts(self, player: int) -> list[int]:
        """``player``'s visit counts per action (of an opened node)."""
        return self._slots(COUNT, player).astype(np.int64).tolist()

    def player_strategy_sums(self, player: int) -> list[float]:
        """``player``'s sums of sampling distributions (of an opened node)."""
        return self._slots(AVERAGE, player).tolist()

    def player_row(self, field: str, player: int) -> np.ndarray:
        """``player``'s "counts" (int64) or "strategy_sums" as a new array (of an opened
        node): what a merged root adds over the trees."""
        if field == "counts":
            return self._slots(COUNT, player).astype(np.int64)
        return self._slots(AVERAGE, player).copy()

    @property
    def counts(self) -> tuple[list[int], list[int]]:
        if not self.is_open:
            first, second = self.actions
            return [0] * len(first), [0] * len(second)
        return self.player_counts(0), self.player_counts(1)

    @property
    def strategy_sums(self) -> tuple[list[float], list[float]]:
        """Each player's sums of sampling distributions (kept for the average strategy)."""
        if not self.is_open:
            first, second = self.actions
            return [0.0] * len(first), [0.0] * len(second)
        return self.player_strategy_sums(0), self.player_strategy_sums(1)

    def strategy(self, player: int, final_strategy: str = "empirical",
                 exploration: float = 0.0, threshold: float = 0.0) -> list[float]:
        """The final strategy of ``player`` here (see ``smmcts.final_probabilities``)."""
        if not self.is_open or self.is_chance:
            raise ValueError("only decision nodes the search has opened (visited twice) have "
                             "strategies; the search's strategy(state, player) answers anywhere")
        return final_probabilities(self._slots(COUNT, player).tolist(),
                                   self.player_strategy_sums(player), final_strategy,
                                   exploration, threshold)

    def child(self, player_actions) -> ArrayNode | None:
        """The child after the given action of each player (chance: one action), or None."""
        index = self._search.child_index(self.index, player_actions)
        return None if index < 0 else ArrayNode(self._search, index)
