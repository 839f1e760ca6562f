"""A kernel's leaf evaluator on pyspiel states, for searches that walk pyspiel states.

The compiled searches call a kernel's ``heuristic`` on kernel states; a search over
pyspiel states (the depth-limited solvers of :mod:`smmcts_spiel.exact.depth_limit`) has
only the pyspiel state. :class:`KernelStateValue` replays the state's history into a
kernel state and evaluates it there. States come in families (a search evaluates the
children of one parent after another), so the kernel state after every prefix of a
history it replayed is kept, filed under the history: a sibling costs one move, not a
replay from the start; :meth:`KernelStateValue.reset` drops them (between moves of a game).
The kept states are those of histories with an entry per player's move, as
``apply_actions`` makes them; a history with a flat joint action (one entry for a joint
move of a Python game) is replayed from the start every time.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL
from smmcts_spiel.games.kernels.registry import GameKernel


class KernelStateValue:
    """``value(state)``: player 1's (pyspiel player 0's) value of a pyspiel state by the
    kernel's ``heuristic`` (exact at terminals), or by another function of the kernel
    module with its signature (``function``)."""

    def __init__(self, kernel: GameKernel, function: str = "heuristic", seed: int | None = 0):
        if not hasattr(kernel.module, function):
            raise ValueError(f"the kernel of {kernel.name} has no {function} function")
        self.kernel = kernel
        self.function = getattr(kernel.module, function)
        self._rng = np.random.default_rng(seed)
        self._actions = np.zeros((2, max(1, kernel.max_actions)), np.int64)
        self._initial = kernel.initial_state()
        # (history, move number) -> kernel state; the move number tells a flat joint action
        # (one entry, one move) from two entries of one move
        self._states: dict[tuple[tuple[int, ...], int], np.ndarray] = {((), 0): self._initial}

    def reset(self) -> None:
        """Forget the kept kernel states."""
        self._states = {((), 0): self._initial}

    def __call__(self, state: pyspiel.State) -> float:
        k = self.kernel
        return float(self.function(self.kernel_state(state).copy(), k.params, k.data,
                                   self._rng))

    def kernel_state(self, state: pyspiel.State) -> np.ndarray:
        """The kernel state of ``state`` (kept: do not modify it)."""
        history = tuple(state.history())
        moves = state.move_number()
        found = self._states.get((history, moves))
        if found is not None:
            return found
        for back in (1, 2)[:len(history)]:  # the parent: a chance or single move, or a
            # joint move, back
            parent = self._states.get((history[:-back], moves - 1))
            if parent is not None and self._entries(parent) == back:
                return self._replay(state, history, len(history) - back, moves - 1)
        return self._replay(state, history, 0, 0)

    def _entries(self, current: np.ndarray) -> int:
        """History entries of the next move from ``current``: two for a joint move."""
        k, module = self.kernel, self.kernel.module
        if module.status(current, k.params, k.data) != DECISION:
            return 1
        both = (module.legal_actions(current, k.params, k.data, 0, self._actions[0]) and
                module.legal_actions(current, k.params, k.data, 1, self._actions[1]))
        return 2 if both else 1

    def _replay(self, state: pyspiel.State, history: tuple[int, ...], start: int,
                moves: int) -> np.ndarray:
        """Play ``history`` from its kept prefix of length ``start``, keeping the states on
        the way; a history with flat joint actions (one entry for a joint move of a Python
        game: their tuples could equal another state's) is replayed from the start and
        nothing of it kept."""
        k, module = self.kernel, self.kernel.module
        params, data = k.params, k.data
        players = None
        if start == 0:
            players = [entry.player for entry in state.full_history()]
            flat = pyspiel.PlayerId.SIMULTANEOUS in players
        else:
            flat = False
        current = self._initial.copy() if flat else self._states[history[:start], moves].copy()
        i = start
        while i < len(history):
            kind = module.status(current, params, data)
            if kind == TERMINAL:
                raise ValueError(f"history {list(history)} goes on past a terminal state of "
                                 f"the kernel of {k.name}")
            if kind == CHANCE:
                module.apply_chance(current, params, data, history[i])
                i += 1
            else:
                n0 = module.legal_actions(current, params, data, 0, self._actions[0])
                n1 = module.legal_actions(current, params, data, 1, self._actions[1])
                if players is not None and players[i] == pyspiel.PlayerId.SIMULTANEOUS:
                    index1, index0 = divmod(history[i], n0)  # player 0 the low digit
                    a0, a1 = self._actions[0][index0], self._actions[1][index1]
                    i += 1
                elif n0 and n1:
                    a0, a1 = history[i], history[i + 1]
                    i += 2
                elif n0:
                    a0, a1 = history[i], -1
                    i += 1
                else:
                    a0, a1 = -1, history[i]
                    i += 1
                module.apply_actions(current, params, data, a0, a1)
            moves += 1
            if not flat:
                self._states[history[:i], moves] = current.copy()
        return current if flat else self._states[history, moves]
