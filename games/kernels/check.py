"""``check_kernel``: a game kernel against its pyspiel game, move by move on random play.

A kernel that disagrees with its game would make the kernel engine search another game
than the one being played, silently; this check plays random trajectories through both
and compares, at every state, everything a search reads: the node's kind (the terminal
step included), both players' legal actions, the chance outcomes and their
probabilities, both players' rewards and returns, the leaf evaluators' values and the
kernel's size limits (an engine sizes its arrays by them). At the visited states, while a
budget lasts, it also applies every joint action and chance outcome and compares each
child, so a kernel wrong on one joint action of many is caught. The rollout is checked by
its distribution: from the initial state against the returns of the trajectories, and one
move before the end against the exact distribution of the returns one move of random play
reaches there. It stops at the first difference and reports it.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass

import numba
import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.games.kernels.base import CHANCE, DECISION, TERMINAL

_KINDS = {TERMINAL: "terminal", CHANCE: "chance", DECISION: "decision"}
#: The p-value below which the rollout's returns are taken to follow another distribution
#: than uniformly random play's (two tests a check: a correct kernel fails about once in
#: 500,000 checks).
ROLLOUT_P_VALUE = 1e-6
# Budgets of the checks that call a leaf evaluator (each call costs tens of microseconds:
# numba types the Generator argument every time), the first ones visited first: rollouts
# from the initial state, from each state one move before the end, the terminals where
# both evaluators are read and the other states where the heuristic is.
_START_ROLLOUTS = 500
_ROLLOUTS_BEFORE_THE_END = 8
_STATES_BEFORE_THE_END = 100
_TERMINALS = 500
_HEURISTIC_STATES = 1000


@dataclass(frozen=True)
class Mismatch:
    """The first difference between a kernel and its pyspiel game."""

    game: str
    trajectory: int | None  # which random trajectory (0-based); None: over all of them
    move: int | None  # states played from the initial state (0: the initial state itself)
    history: tuple[int, ...]  # the pyspiel history that reaches the state
    field: str  # what differs, e.g. "legal_actions(1)"
    pyspiel_value: object
    kernel_value: object

    def __str__(self) -> str:
        where = ("over all trajectories" if self.trajectory is None else
                 f"trajectory {self.trajectory}, move {self.move} (history "
                 f"{list(self.history)})")
        return (f"{self.game}: {where}: {self.field}: pyspiel {self.pyspiel_value!r}, "
                f"kernel {self.kernel_value!r}")


def check_kernel(game: pyspiel.Game | str, kernel=None, trajectories: int = 1000,
                 seed: int = 0, verbose: bool = True,
                 children: int = 5000) -> Mismatch | None:
    """Play ``trajectories`` uniformly random trajectories (chance by its odds) through
    ``game`` and its kernel and compare them at every state.

    Args:
      game: a pyspiel game or a game string.
      kernel: a :class:`~smmcts_spiel.games.kernels.GameKernel`, a module following the
        protocol of :mod:`smmcts_spiel.games.kernels.base` (a user's kernel), or None for
        the kernel :func:`~smmcts_spiel.games.kernels.kernel_for` picks.
      trajectories: how many games to play (1 or more).
      seed: seeds the random play.
      verbose: print the first mismatch.
      children: most states compared besides the trajectories' own: at each visited state
        (the first visits first) every joint action and chance outcome is applied and the
        child compared, while this budget lasts (tens of microseconds each).

    Returns:
      None if the kernel agreed everywhere, else the first :class:`Mismatch` (also
      printed): the trajectory, the move, the field and both values.

    Raises:
      ValueError: for bad arguments, and for a module that does not follow the protocol
        (a missing function, an unknown ``DEFAULT_EVALUATOR``, plain Python functions
        where numba ones are needed, non-integer ``params``, a non-int64 state, a
        function numba cannot compile with the protocol's argument types).
    """
    from smmcts_spiel.games.kernels import registry  # (registry imports this module)

    trajectories = checks.check_count(trajectories, "trajectories", 1)
    children = checks.check_count(children, "children", 0)
    if isinstance(game, str):
        game = pyspiel.load_game(game)
    if kernel is None:
        kernel = registry.kernel_for(game)
        if kernel is None:
            raise ValueError(f"no game kernel covers {game}: pass the kernel (a module "
                             "following smmcts_spiel.games.kernels.base) to check")
    elif isinstance(kernel, types.ModuleType):
        kernel = registry.kernel_from_module(game, kernel)
    else:
        registry.check_module(kernel.module)
    rng = np.random.default_rng(seed)
    checker = _Checker(game, kernel, rng, children)
    try:
        mismatch = None
        for t in range(trajectories):
            mismatch = checker.play(t)
            if mismatch is not None:
                break
        if mismatch is None:
            mismatch = checker.rollout_distributions()
    except numba.core.errors.TypingError as error:
        raise ValueError(
            f"kernel module {kernel.module.__name__}: a function does not compile with the "
            "protocol's arguments (state: int64 array, params: int64 array, data: float64 "
            "array, out / outcomes: int64 arrays, probs: float64 array, actions and outcomes: "
            f"ints, rng: numpy Generator); numba says: {_first_lines(str(error))}") from None
    if mismatch is not None and verbose:
        print(f"kernel mismatch: {mismatch}")
    return mismatch


class _Checker:
    """Plays one trajectory at a time through a pyspiel game and a kernel."""

    def __init__(self, game: pyspiel.Game, kernel, rng: np.random.Generator, children: int):
        self.game = game
        self.kernel = kernel
        self.module = kernel.module
        self.rng = rng
        self.children_left = children
        self.enumerated: set[tuple[int, ...]] = set()  # histories whose children were compared
        self.heuristic = getattr(self.module, "heuristic", None)
        self.heuristic_states_left = _HEURISTIC_STATES
        self.terminals_left = _TERMINALS
        self.last_move_states_left = _STATES_BEFORE_THE_END
        size = max(kernel.max_actions, kernel.max_chance_outcomes, game.num_distinct_actions(),
                   game.max_chance_outcomes(), 1)
        self.out = np.zeros(size, np.int64)  # larger than the limits: overruns are caught
        self.outcomes = np.zeros(size, np.int64)
        self.probs = np.zeros(size)
        self.start_rollouts: list[float] = []  # rollout returns from the initial state
        self.start_returns: list[float] = []  # the trajectories' returns
        self.uniforms: list[float] = []  # randomized probability transforms (check_last_move)
        self.expected: list[float] = []  # exact mean return where those were drawn
        self.rolled: list[float] = []  # rollout returns there

    def play(self, trajectory: int) -> Mismatch | None:
        """Plays and compares one trajectory."""
        game, kernel, m, rng = self.game, self.kernel, self.module, self.rng
        params, data = kernel.params, kernel.data
        state = game.new_initial_state()
        array = kernel.initial_state()
        move = 0
        while True:
            mismatch = self.compare(state, array, trajectory, move)
            if mismatch is None and (self.terminals_left if state.is_terminal()
                                     else self.heuristic_states_left) > 0:
                if state.is_terminal():
                    self.terminals_left -= 1
                else:
                    self.heuristic_states_left -= 1
                mismatch = self.compare_evaluators(state, array, trajectory, move)
            if mismatch is not None:
                return mismatch
            if state.is_terminal():
                self.start_returns.append(state.returns()[0])
                return None
            if move == 0 and len(self.start_rollouts) < _START_ROLLOUTS:
                mismatch = self.rollout(state, array, trajectory, move)
                if mismatch is not None:
                    return mismatch
            mismatch = self.compare_children(state, array, trajectory, move)
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
                _apply(state, joint)
                m.apply_actions(array, params, data, joint[0], joint[1])
            move += 1
            if move + 1 > kernel.max_depth:
                return _differs(game, trajectory, move, state,
                                "max_depth (states on the path so far)", move + 1,
                                kernel.max_depth)

    def compare(self, state, array, trajectory: int, move: int) -> Mismatch | None:
        """The first field of ``state`` the kernel's ``array`` disagrees on, or None."""
        kernel, m = self.kernel, self.module
        params, data = kernel.params, kernel.data

        def differs(field, theirs, ours):
            return _differs(self.game, trajectory, move, state, field, theirs, ours)

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
            self.outcomes.fill(-1)
            k = int(m.chance_outcomes(array, params, data, self.outcomes, self.probs))
            expected = state.chance_outcomes()
            if not 0 <= k <= len(self.outcomes):
                return differs("chance_outcomes (the number of outcomes returned)",
                               len(expected), k)
            if self.outcomes[:k].tolist() != [a for a, _ in expected]:
                return differs("chance_outcomes", [a for a, _ in expected],
                               self.outcomes[:k].tolist())
            for (_, p), q in zip(expected, self.probs[:k].tolist()):
                if p != q and not _close(p, q):
                    return differs("chance_probabilities", [p for _, p in expected],
                                   self.probs[:k].tolist())
            if k > kernel.max_chance_outcomes:
                return differs("max_chance_outcomes", k, kernel.max_chance_outcomes)
        for p in (0, 1):
            # pyspiel lists the chance outcomes as every player's legal actions at a chance
            # node; the protocol has none there (no player moves), nor at a terminal.
            self.out.fill(-1)
            k = int(m.legal_actions(array, params, data, p, self.out))
            expected = state.legal_actions(p) if kind == DECISION else []
            where = " (none at a chance node)" if kind == CHANCE else ""
            if not 0 <= k <= len(self.out):
                return differs(f"legal_actions({p}){where} (the number of actions returned)",
                               len(expected), k)
            if self.out[:k].tolist() != expected:
                return differs(f"legal_actions({p}){where}", expected, self.out[:k].tolist())
            if k > kernel.max_actions:
                return differs("max_actions", k, kernel.max_actions)
        return None

    def compare_evaluators(self, state, array, trajectory: int, move: int) -> Mismatch | None:
        """The leaf evaluators: finite, within the utility range, exact at a terminal (the
        rollout here only at terminals: elsewhere by its distribution)."""
        kernel = self.kernel
        low, high = kernel.min_utility, kernel.max_utility
        slack = 1e-9 * max(1.0, abs(low), abs(high))
        evaluators = {"heuristic": self.heuristic}
        if state.is_terminal():
            evaluators["rollout"] = self.module.rollout
        for name, evaluator in evaluators.items():
            if evaluator is None:
                continue
            value = float(evaluator(array.copy(), kernel.params, kernel.data, self.rng))
            if not (math.isfinite(value) and low - slack <= value <= high + slack):
                return _differs(self.game, trajectory, move, state,
                                f"{name} value within [min_utility, max_utility]",
                                (low, high), value)
            if state.is_terminal() and not _close(state.returns()[0], value):
                return _differs(self.game, trajectory, move, state,
                                f"{name} at a terminal (player 0's return)",
                                state.returns()[0], value)
        return None

    def rollout(self, state, array, trajectory: int, move: int) -> Mismatch | None:
        """One rollout from the initial state, kept for the distribution test."""
        kernel = self.kernel
        value = float(kernel.module.rollout(array.copy(), kernel.params, kernel.data, self.rng))
        low, high = kernel.min_utility, kernel.max_utility
        if not (math.isfinite(value) and low - 1e-9 <= value <= high + 1e-9):
            return _differs(self.game, trajectory, move, state,
                            "rollout value within [min_utility, max_utility]", (low, high),
                            value)
        self.start_rollouts.append(value)
        return None

    def compare_children(self, state, array, trajectory: int, move: int) -> Mismatch | None:
        """Every child of the state (each joint action or chance outcome), while the
        budget lasts; where all children are terminal, the rollout's returns against the
        exact distribution of theirs."""
        kernel, m = self.kernel, self.module
        params, data = kernel.params, kernel.data
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            count = len(outcomes)
        else:
            lists = [state.legal_actions(p) or [-1] for p in (0, 1)]
            count = len(lists[0]) * len(lists[1])
        if count > self.children_left:
            return None
        history = tuple(state.history())
        if history in self.enumerated:
            return None
        self.enumerated.add(history)
        self.children_left -= count
        if state.is_chance_node():
            moves = outcomes
        else:
            moves = [((a0, a1), 1.0 / count) for a0 in lists[0] for a1 in lists[1]]
        ends: list[tuple[float, float]] = []  # (pyspiel's return, probability) of terminals
        for action, probability in moves:
            child, twin = state.clone(), array.copy()
            if state.is_chance_node():
                child.apply_action(action)
                m.apply_chance(twin, params, data, action)
            else:
                _apply(child, list(action))
                m.apply_actions(twin, params, data, action[0], action[1])
            mismatch = self.compare(child, twin, trajectory, move + 1)
            if mismatch is not None:
                return mismatch
            if child.is_terminal():
                ends.append((child.returns()[0], probability))
        if len(ends) == len(moves) and self.last_move_states_left > 0:
            self.last_move_states_left -= 1
            return self.check_last_move(state, array, ends, trajectory, move)
        return None

    def check_last_move(self, state, array, ends, trajectory: int, move: int
                        ) -> Mismatch | None:
        """Rollouts from a state whose every child is terminal: each return must be one of
        the children's; their randomized probability integral transforms (uniform on
        [0, 1] exactly when the rollout follows the exact distribution) are kept for
        :meth:`rollout_distributions`."""
        kernel = self.kernel
        values = sorted({value for value, _ in ends})
        probs = [sum(p for v, p in ends if v == value) for value in values]
        below = np.concatenate([[0.0], np.cumsum(probs)])
        for _ in range(_ROLLOUTS_BEFORE_THE_END):
            value = float(kernel.module.rollout(array.copy(), kernel.params, kernel.data,
                                                self.rng))
            k = next((k for k, v in enumerate(values) if _close(v, value)), None)
            if k is None:
                return _differs(self.game, trajectory, move, state,
                                "rollout return one move before the end (the returns of the "
                                "moves from here)", values, value)
            self.uniforms.append(below[k] + self.rng.random() * probs[k])
            self.rolled.append(value)
            self.expected.append(float(np.dot(values, probs)))
        return None

    def rollout_distributions(self) -> Mismatch | None:
        """The rollout's returns against uniformly random play's: from the initial state
        (two-sample Kolmogorov-Smirnov against the trajectories' returns) and one move
        before the end (Kolmogorov-Smirnov of the transforms against uniform)."""
        from scipy import stats  # here: importing the bots must not import scipy.stats

        game = str(self.game)
        if len(self.start_rollouts) > 1:
            p = stats.ks_2samp(self.start_rollouts, self.start_returns, method="asymp").pvalue
            if p < ROLLOUT_P_VALUE:
                return Mismatch(game, None, 0, (), "mean rollout return from the initial state "
                                f"(two-sample Kolmogorov-Smirnov p = {p:.1e} against the "
                                f"{len(self.start_returns)} trajectories' returns)",
                                round(float(np.mean(self.start_returns)), 6),
                                round(float(np.mean(self.start_rollouts)), 6))
        if len(self.uniforms) > 1:
            p = stats.kstest(self.uniforms, "uniform").pvalue
            if p < ROLLOUT_P_VALUE:
                return Mismatch(game, None, None, (), "mean rollout return one move before "
                                f"the end (Kolmogorov-Smirnov p = {p:.1e} over "
                                f"{len(self.uniforms)} rollouts from "
                                f"{len(self.uniforms) // _ROLLOUTS_BEFORE_THE_END} states "
                                "against the exact distributions there)",
                                round(float(np.mean(self.expected)), 6),
                                round(float(np.mean(self.rolled)), 6))
        return None


def _apply(state: pyspiel.State, joint: list[int]) -> None:
    if state.is_simultaneous_node():
        state.apply_actions(joint)
    else:
        state.apply_action(joint[state.current_player()])


def _differs(game, trajectory, move, state, field, theirs, ours) -> Mismatch:
    return Mismatch(str(game), trajectory, move, tuple(state.history()), field, theirs, ours)


def _sample(probs, u: float) -> int:
    total = 0.0
    for k, p in enumerate(probs):
        total += p
        if u < total:
            return k
    return len(probs) - 1


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _first_lines(text: str, lines: int = 6) -> str:
    return " ".join(line.strip() for line in text.strip().splitlines()[:lines] if line.strip())
