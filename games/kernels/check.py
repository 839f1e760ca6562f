"""``check_kernel``: a game kernel against its pyspiel game, move by move on random play.

A kernel that disagrees with its game would make the kernel engine search another game
than the one being played, silently; this check plays random trajectories through both
and compares, at every state, everything a search reads: the node's kind (the terminal
step included), both players' legal actions, the chance outcomes and their
probabilities, both players' rewards and returns, and the kernel's size limits (an engine
sizes its arrays by them). It stops at the first difference and reports it.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass

import numpy as np
import pyspiel

from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL

_KINDS = {TERMINAL: "terminal", CHANCE: "chance", DECISION: "decision"}


@dataclass(frozen=True)
class Mismatch:
    """The first difference between a kernel and its pyspiel game."""

    game: str
    trajectory: int  # which random trajectory (0-based)
    move: int  # states played from the initial state (0: the initial state itself)
    history: tuple[int, ...]  # the pyspiel history that reaches the state
    field: str  # what differs, e.g. "legal_actions(1)"
    pyspiel_value: object
    kernel_value: object

    def __str__(self) -> str:
        return (f"{self.game}: trajectory {self.trajectory}, move {self.move} (history "
                f"{list(self.history)}): {self.field}: pyspiel {self.pyspiel_value!r}, "
                f"kernel {self.kernel_value!r}")


def check_kernel(game: pyspiel.Game | str, kernel=None, trajectories: int = 1000,
                 seed: int = 0, verbose: bool = True) -> Mismatch | None:
    """Play ``trajectories`` uniformly random trajectories (chance by its odds) through
    ``game`` and its kernel and compare them at every state.

    Args:
      game: a pyspiel game or a game string.
      kernel: a :class:`~smmcts_spiel.games.kernels.GameKernel`, a module following the
        protocol of :mod:`smmcts_spiel.games.kernels.base` (a user's kernel), or None for
        the kernel :func:`~smmcts_spiel.games.kernels.kernel_for` picks.
      trajectories: how many games to play.
      seed: seeds the random play.
      verbose: print the first mismatch.

    Returns:
      None if the kernel agreed everywhere, else the first :class:`Mismatch` (also
      printed): the trajectory, the move, the field and both values.
    """
    from smmcts_spiel.games.kernels import registry  # (registry imports this module)

    if isinstance(game, str):
        game = pyspiel.load_game(game)
    if kernel is None:
        kernel = registry.kernel_for(game)
        if kernel is None:
            raise ValueError(f"no game kernel covers {game}: pass the kernel (a module "
                             "following smmcts_spiel.games.kernels.base) to check")
    elif isinstance(kernel, types.ModuleType):
        kernel = registry.kernel_from_module(game, kernel)
    rng = np.random.default_rng(seed)
    checker = _Checker(game, kernel)
    for t in range(trajectories):
        mismatch = checker.play(t, rng)
        if mismatch is not None:
            if verbose:
                print(f"kernel mismatch: {mismatch}")
            return mismatch
    return None


class _Checker:
    """Plays one trajectory at a time through a pyspiel game and a kernel."""

    def __init__(self, game: pyspiel.Game, kernel):
        self.game = game
        self.kernel = kernel
        self.module = kernel.module
        size = max(kernel.max_actions, kernel.max_chance_outcomes, game.num_distinct_actions(),
                   game.max_chance_outcomes(), 1)
        self.out = np.zeros(size, np.int64)  # larger than the limits: overruns are caught
        self.outcomes = np.zeros(size, np.int64)
        self.probs = np.zeros(size)

    def play(self, trajectory: int, rng: np.random.Generator) -> Mismatch | None:
        game, kernel, m = self.game, self.kernel, self.module
        params, data = kernel.params, kernel.data
        state = game.new_initial_state()
        array = kernel.initial_state()
        move = 0

        def differs(field, theirs, ours):
            return Mismatch(str(game), trajectory, move, tuple(state.history()), field,
                            theirs, ours)

        while True:
            mismatch = self.compare(state, array, differs)
            if mismatch is not None or state.is_terminal():
                return mismatch
            if move == 0:
                mismatch = self.check_rollout(array, rng, differs)
                if mismatch is not None:
                    return mismatch
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                outcome = outcomes[_sample(probs, rng.random())]
                state.apply_action(outcome)
                m.apply_chance(array, params, data, outcome)
            else:
                joint = [-1, -1]
                for p in (0, 1):
                    actions = state.legal_actions(p)
                    if actions:
                        joint[p] = actions[int(rng.integers(len(actions)))]
                if state.is_simultaneous_node():
                    state.apply_actions(joint)
                else:
                    state.apply_action(joint[state.current_player()])
                m.apply_actions(array, params, data, joint[0], joint[1])
            move += 1
            if move + 1 > kernel.max_depth:
                return differs("max_depth (states on the path so far)", move + 1,
                               kernel.max_depth)

    def compare(self, state, array, differs) -> Mismatch | None:
        """The first field of ``state`` the kernel's ``array`` disagrees on, or None."""
        kernel, m = self.kernel, self.module
        params, data = kernel.params, kernel.data
        kind = TERMINAL if state.is_terminal() else CHANCE if state.is_chance_node() \
            else DECISION
        ours = int(m.status(array, params, data))
        if ours != kind:
            return differs("status", _KINDS[kind], _KINDS.get(ours, ours))
        done = kind == TERMINAL
        total = kernel.utility_sum if done else 0.0
        for field, values, value0 in (("rewards", state.rewards(), m.rewards(array, params, data)),
                                      ("returns", state.returns(), m.returns(array, params, data))):
            for p, ours in enumerate((value0, total - value0)):
                if values[p] != ours and not _close(values[p], ours):
                    return differs(f"{field}({p})", values[p], float(ours))
        if kind == CHANCE:
            k = m.chance_outcomes(array, params, data, self.outcomes, self.probs)
            expected = state.chance_outcomes()
            if self.outcomes[:k].tolist() != [a for a, _ in expected]:
                return differs("chance_outcomes", [a for a, _ in expected],
                               self.outcomes[:k].tolist())
            for (_, p), q in zip(expected, self.probs[:k].tolist()):
                if p != q and not _close(p, q):
                    return differs("chance_probabilities", [p for _, p in expected],
                                   self.probs[:k].tolist())
            if k > kernel.max_chance_outcomes:
                return differs("max_chance_outcomes", k, kernel.max_chance_outcomes)
        elif kind == DECISION:
            for p in (0, 1):
                k = m.legal_actions(array, params, data, p, self.out)
                expected = state.legal_actions(p)
                if self.out[:k].tolist() != expected:
                    return differs(f"legal_actions({p})", expected, self.out[:k].tolist())
                if k > kernel.max_actions:
                    return differs("max_actions", k, kernel.max_actions)
        return None

    def check_rollout(self, array, rng, differs) -> Mismatch | None:
        """A rollout from the state ends with a return in the kernel's utility range."""
        kernel = self.kernel
        value = float(kernel.module.rollout(array.copy(), kernel.params, kernel.data, rng))
        low, high = kernel.min_utility, kernel.max_utility
        if not low - 1e-9 <= value <= high + 1e-9:
            return differs("rollout value within [min_utility, max_utility]",
                           (low, high), value)
        return None


def _sample(probs, u: float) -> int:
    total = 0.0
    for k, p in enumerate(probs):
        total += p
        if u < total:
            return k
    return len(probs) - 1


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
