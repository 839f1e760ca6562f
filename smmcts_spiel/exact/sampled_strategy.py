"""Exact exploitability of a behaviour strategy known by samples at its decision points.

A search bot's online strategy is only known through its answers: at each decision point
(a player and a state, or an information set) we hold ``S`` sampled distributions, e.g. the
move distributions of ``S`` searches with their own seeds. The strategy at the point is
their (weighted) mean; this module evaluates that profile exactly and says how far the
sampling leaves it from the strategy itself:

* :func:`decision_points` lists the points to ask: every player with more than one legal
  action at a reachable decision state (a forced move is not asked), one point per
  transposition class (games with a transposition key,
  :func:`smmcts_spiel.exact.transpositions.transposition_key`) or per history, and per
  information set in games of imperfect information;
* :func:`evaluate` computes e1, e2 and NashConv of the mean profile, and the same for
  ``bootstrap`` replicates that redraw the ``S`` samples (the same redraw of sample indices
  at every point, so samples that belong together across points, e.g. one seed's bot,
  stay together): the replicates' standard deviation is the reported standard error, and
  their mean minus the estimate the bootstrap estimate of the estimate's bias.

Best responses are exact: on games with perfect information between stages one backward
recursion over the states (memoised over transpositions when the points are), carrying
every replicate at once; on games of imperfect information OpenSpiel's ``best_response``
on the game (its turn-based conversion if it is simultaneous). A strategy whose answer
at a state depends on more than its point key (a transposition class, a history, an
information set) is outside what the points can express.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import best_response as best_response_lib

from smmcts_spiel import checks
from smmcts_spiel.exact import exploitability, solver, turn_based

#: Default limit on the states a best response walks (:func:`decision_points` refuses a
#: game estimated above it before walking it): the recursion is Python, about 20 us a state.
MAX_STATES = 1_000_000
#: Default bootstrap replicates behind the standard error.
BOOTSTRAP = 200


@dataclass(frozen=True)
class DecisionPoint:
    """A place where a player chooses among more than one action.

    ``key`` names the point (player, and the state's transposition key, history or
    information state); ``history`` is one history that reaches it (``state.history()``;
    the simultaneous moves of a round flattened, player 1's first); ``actions`` are the
    player's legal actions, the columns of every sampled distribution at the point.
    """

    key: str
    player: int
    history: tuple[int, ...]
    actions: tuple[int, ...]


@dataclass(frozen=True)
class DecisionPoints:
    """The decision points of one game, and how a state is mapped to its point."""

    game: pyspiel.Game
    points: tuple[DecisionPoint, ...]
    perfect_information: bool  # perfect information between stages: our recursion
    transpositions: bool  # points keyed by transposition class (else history / infoset)
    states: int  # distinct states walked (the best response's size)

    def key(self, state: pyspiel.State, player: int) -> str:
        """The key of ``player``'s point at ``state``."""
        return point_key(self, state, player)

    def __len__(self) -> int:
        return len(self.points)


def _state_key_function(game: pyspiel.Game, perfect: bool, transpositions: bool
                        ) -> Callable[[pyspiel.State, int], Hashable]:
    if not perfect:
        return lambda state, player: state.information_state_string(player)
    key = solver.solution_key(game, transpositions)
    return lambda state, player: key(state)


def point_key(points: DecisionPoints, state: pyspiel.State, player: int) -> str:
    """``"<player>|<key>"``: a string, so that points travel to worker processes and into
    result files, and are the same in every process."""
    function = _state_key_function(points.game, points.perfect_information,
                                   points.transpositions)
    return f"{player}|{function(state, player)!r}"


def has_perfect_information_between_stages(game: pyspiel.Game) -> bool:
    """Whether our solver's recursion applies (else OpenSpiel's best response is used)."""
    try:
        solver.check_game(game)
    except ValueError:
        return False
    return True


def movers(state: pyspiel.State) -> list[int]:
    """The players who choose at a decision state (more than one legal action)."""
    players = (0, 1) if state.is_simultaneous_node() else (state.current_player(),)
    return [p for p in players if len(state.legal_actions(p)) > 1]


def decision_points(game: pyspiel.Game | str, *, transpositions: bool = True,
                    max_states: int | None = MAX_STATES,
                    how_to_lift: str = "pass max_states=None (or a larger limit)"
                    ) -> DecisionPoints:
    """Every decision point of ``game`` (see :class:`DecisionPoint`), in the order of a
    depth-first walk.

    ``transpositions``: on games with perfect information between stages and a
    transposition key, one point per transposition class (the strategy must answer alike
    in transposed states); otherwise one per history. Games of imperfect information have
    one point per information set. A game estimated above ``max_states`` states
    (:func:`smmcts_spiel.exact.size_estimate.estimate_size`; None: no limit) is refused
    (:class:`smmcts_spiel.exact.size_estimate.GameTooLarge`) before anything is walked;
    ``how_to_lift`` ends that message (a script names its flag).
    """
    game = checks.load_game(game)
    checks.check_game(game, "the exact best response", perfect_information=False,
                      zero_sum_only=True)
    perfect = has_perfect_information_between_stages(game)
    if not perfect and not game.get_type().provides_information_state_string:
        raise ValueError(f"{game} has imperfect information but no information state strings: "
                         "its strategies cannot be told apart by information set")
    transpositions = perfect and transpositions and solver.transposition_key(game) is not None
    if max_states is not None:
        estimate = solver.estimate_size(game, use_transpositions=transpositions)
        if estimate.states > max_states:
            raise solver.GameTooLarge(
                f"an exact best response in {game} walks about "
                f"{checks.approximately(estimate.states)} states ({estimate}), more than "
                f"the limit of {max_states:g}; choose a smaller game (fewer cards, coins or "
                f"rounds), or {how_to_lift} to walk it anyway")
    key_of = _state_key_function(game, perfect, transpositions)
    state_key = solver.solution_key(game, transpositions) if perfect else None
    seen: set = set()
    found: dict[str, DecisionPoint] = {}
    stack = [game.new_initial_state()]
    states = 0
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state_key is not None:
            k = state_key(state)
            if k in seen:
                continue
            seen.add(k)
        states += 1
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in reversed(state.chance_outcomes()))
            continue
        for player in movers(state):
            key = f"{player}|{key_of(state, player)!r}"
            if key not in found:
                found[key] = DecisionPoint(key, player, tuple(state.history()),
                                           tuple(state.legal_actions(player)))
        stack.extend(reversed(solver_children(state)))
    return DecisionPoints(game, tuple(found.values()), perfect, transpositions, states)


def solver_children(state: pyspiel.State) -> list[pyspiel.State]:
    """Every successor of a decision state (each joint action, or each action)."""
    rows, cols = solver.legal_actions(state, 0), solver.legal_actions(state, 1)
    return [child for row in solver.joint_children(state, rows, cols) for child in row]


def key_seed(seed: int, key: str) -> int:
    """A seed for ``key``'s point, the same in every process and for every chunking."""
    return (seed * 1_000_003 + zlib.crc32(key.encode())) % 2**31


# ----------------------------------------------------------------------------------------
# Reports


@dataclass(frozen=True)
class SampledReport(exploitability.Report):
    """Exploitability of a sampled strategy, with the bootstrap behind its error.

    ``worst_case`` / ``best_case`` (hence ``e1``, ``e2``, ``nash_conv``) are those of the
    mean strategy; ``worst_cases`` / ``best_cases`` of the bootstrap replicates.
    ``game_value`` is NaN when it could not be computed (imperfect information without
    OpenSpiel's sequence-form LP at hand): then e1 and e2 are NaN, NashConv is not.
    """

    worst_cases: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    best_cases: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    samples: int = 0  #: samples per decision point
    points: int = 0  #: decision points asked
    seconds: float = 0.0  #: wall-clock seconds of the whole estimate (set by the caller)
    searches: int = 0  #: calls of the strategy's source (set by the caller)
    search_seconds: float = 0.0  #: their time, summed over workers (set by the caller)

    def _stderr(self, values: np.ndarray) -> float:
        if self.samples < 2 or len(values) < 2:
            return float("nan")
        return float(np.std(values, ddof=1))

    @property
    def stderr(self) -> float:
        """Bootstrap standard error of ``nash_conv`` (NaN with fewer than 2 samples)."""
        return self._stderr(self.best_cases - self.worst_cases)

    @property
    def e1_stderr(self) -> float:
        return self._stderr(self.worst_cases)

    @property
    def e2_stderr(self) -> float:
        return self._stderr(self.best_cases)

    @property
    def bias(self) -> float:
        """Bootstrap estimate of ``nash_conv``'s bias: replicates' mean minus the estimate.
        A best response gains from the samples' noise, so it is usually positive."""
        if self.samples < 2 or not len(self.best_cases):
            return float("nan")
        return float(np.mean(self.best_cases - self.worst_cases) - self.nash_conv)

    def __repr__(self) -> str:
        return (f"SampledReport(e1={self.e1!r}, e2={self.e2!r}, nash_conv={self.nash_conv!r}, "
                f"stderr={self.stderr!r}, bias={self.bias!r}, samples={self.samples}, "
                f"points={self.points}, seconds={self.seconds!r})")


# ----------------------------------------------------------------------------------------
# Evaluation


def replicate_strategies(points: DecisionPoints, samples: Mapping[str, tuple],
                         bootstrap: int, seed: int) -> tuple[dict[str, np.ndarray], int]:
    """``{key: (R, A) array}``: the mean strategy (row 0) and ``bootstrap`` replicates at
    every point, and the number of samples ``S`` per point.

    ``samples[key] = (distributions, weights)``: an ``(S, A)`` array over the point's
    actions and ``S`` non-negative weights (None: equal). A point's strategy is the
    weighted mean of its distributions; where every weight of a replicate is 0, uniform.
    """
    missing = [p.key for p in points.points if p.key not in samples]
    if missing:
        raise ValueError(f"no samples for {len(missing)} of {len(points)} decision points, "
                         f"e.g. {missing[0]}")
    counts = {np.asarray(samples[p.key][0]).shape[0] for p in points.points}
    if len(counts) > 1:
        raise ValueError(f"every decision point needs the same number of samples; got "
                         f"{sorted(counts)}")
    n = counts.pop() if counts else 1
    if n < 1:
        raise ValueError("every decision point needs at least one sample")
    rng = np.random.default_rng(seed)
    draws = np.vstack([np.ones((1, n)), rng.multinomial(n, np.full(n, 1.0 / n), size=bootstrap)])
    strategies = {}
    for point in points.points:
        distributions, weights = samples[point.key]
        distributions = np.asarray(distributions, dtype=float)
        if distributions.shape[1:] != (len(point.actions),):
            raise ValueError(f"samples at {point.key} have shape {distributions.shape}; "
                             f"expected ({n}, {len(point.actions)}) for actions {point.actions}")
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
        scaled = draws * w
        total = scaled.sum(axis=1, keepdims=True)
        uniform = np.full(len(point.actions), 1.0 / len(point.actions))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(total > 0, (scaled @ distributions) / total, uniform)
        strategies[point.key] = mean
    return strategies, n


def evaluate(points: DecisionPoints, samples: Mapping[str, tuple], *,
             bootstrap: int = BOOTSTRAP, seed: int = 0, value: float | None = None,
             use_cpp_br: bool = False) -> SampledReport:
    """Exploitability of the sampled strategy at ``points`` (see :func:`replicate_strategies`
    for ``samples``), with ``bootstrap`` replicates for its error.

    ``value``: the game value v* if known; otherwise our solver computes it (perfect
    information between stages) or OpenSpiel's sequence-form LP (imperfect information,
    when cvxpy is installed; else e1 and e2 are NaN). ``use_cpp_br``: OpenSpiel's C++
    best response on games of imperfect information.
    """
    bootstrap = checks.check_count(bootstrap, "bootstrap", minimum=0)
    strategies, n = replicate_strategies(points, samples, bootstrap, seed)
    game = points.game
    if points.perfect_information:
        walk = _ReplicateBestResponses(points, strategies, bootstrap + 1)
        worst, best = solver.with_recursion_limit(
            lambda: walk.values(game.new_initial_state()), game)
        if value is None:
            value = solver.game_value(game, max_states=None, max_seconds=None,
                                      max_stage_cells=None)
    else:
        worst, best = _openspiel_best_responses(points, strategies, bootstrap + 1, use_cpp_br)
        if value is None:
            value = _sequence_form_value(game)
    return SampledReport(float(value), float(worst[0]), float(best[0]),
                         worst_cases=np.asarray(worst[1:]), best_cases=np.asarray(best[1:]),
                         samples=n, points=len(points))


class _ReplicateBestResponses:
    """Both best-response values of every replicate at once, by one recursion over the
    states (``values(state)`` -> two ``(R,)`` arrays: ``min_br u1(sigma1, br)`` and
    ``max_br u1(br, sigma2)``), memoised by transposition class when the points are."""

    def __init__(self, points: DecisionPoints, strategies: dict[str, np.ndarray],
                 replicates: int):
        self.points = points
        self.strategies = strategies
        self.replicates = replicates
        self.memo: dict | None = {} if points.transpositions else None
        self.state_key = solver.solution_key(points.game, points.transpositions)
        self.point_key = _state_key_function(points.game, True, points.transpositions)

    def strategy(self, state, player: int, actions: list[int]) -> np.ndarray:
        if len(actions) == 1:
            return np.ones((self.replicates, 1))
        return self.strategies[f"{player}|{self.point_key(state, player)!r}"]

    def values(self, state) -> tuple[np.ndarray, np.ndarray]:
        """Consumes ``state``."""
        if self.memo is not None:
            key = self.state_key(state)
            if key in self.memo:
                return self.memo[key]
        result = self._values(state)
        if self.memo is not None:
            self.memo[key] = result
        return result

    def _values(self, state) -> tuple[np.ndarray, np.ndarray]:
        if state.is_terminal():
            r = np.full(self.replicates, float(state.returns()[0]))
            return r, r
        if state.is_chance_node():
            return exploitability.chance_values(self, state)
        rows, cols = solver.legal_actions(state, 0), solver.legal_actions(state, 1)
        x = self.strategy(state, 0, rows) if rows else np.ones((self.replicates, 1))
        y = self.strategy(state, 1, cols) if cols else np.ones((self.replicates, 1))
        children = solver.joint_children(state, rows, cols, consume=True)
        pairs = [[self.values(child) for child in row] for row in children]
        worst = np.stack([np.stack([w for w, _ in row], axis=1) for row in pairs], axis=1)
        best = np.stack([np.stack([b for _, b in row], axis=1) for row in pairs], axis=1)
        # worst[r, i, j], best[r, i, j]: the children's values in replicate r
        return (np.einsum("ri,rij->rj", x, worst).min(axis=1),
                np.einsum("rij,rj->ri", best, y).max(axis=1))


def _openspiel_best_responses(points: DecisionPoints, strategies: dict[str, np.ndarray],
                              replicates: int, use_cpp_br: bool
                              ) -> tuple[np.ndarray, np.ndarray]:
    """OpenSpiel's best responses to every replicate, as a TabularPolicy on the game (its
    turn-based conversion if it is simultaneous)."""
    game = points.game
    scored = turn_based.turn_based_game(game)
    if scored is game:
        pairs = [(s, s) for s in _decision_states(game)]
    else:
        pairs = list(turn_based.paired_states(game))
    tabular = policy_lib.TabularPolicy(scored)
    rows: dict[int, tuple[str, list[int], np.ndarray]] = {}  # policy row -> point, columns
    for scored_state, state in pairs:
        player = scored_state.current_player()
        actions = scored_state.legal_actions()
        if len(actions) == 1:
            continue
        key = f"{player}|{state.information_state_string(player)!r}"
        index = tabular.state_index(scored_state)
        point = strategies[key]
        if index in rows and rows[index][0] != key:
            raise ValueError(f"the information set of player {player + 1} at\n{scored_state}\n"
                             "holds two decision points of the game: its strategies cannot "
                             "be told apart on the turn-based conversion")
        rows[index] = (key, actions, point)
    root = scored.new_initial_state()
    utility_sum = float(game.utility_sum())
    worst = np.empty(replicates)
    best = np.empty(replicates)
    for r in range(replicates):
        for index, (_, actions, point) in rows.items():
            row = np.zeros(tabular.action_probability_array.shape[1])
            row[actions] = point[r]
            tabular.action_probability_array[index] = row
        if use_cpp_br:
            br = [best_response_lib.CPPBestResponsePolicy(scored, p, tabular).value(root)
                  for p in (0, 1)]
        else:
            br = [best_response_lib.BestResponsePolicy(scored, p, tabular).value(root)
                  for p in (0, 1)]
        best[r], worst[r] = br[0], utility_sum - br[1]
    return worst, best


def _decision_states(game: pyspiel.Game):
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        yield state
        stack.extend(state.child(a) for a in state.legal_actions())


def _sequence_form_value(game: pyspiel.Game) -> float:
    """Player 1's value by OpenSpiel's sequence-form LP (needs cvxpy), else NaN."""
    try:
        from open_spiel.python.algorithms import sequence_form_lp
    except ImportError:
        return float("nan")
    value = sequence_form_lp.solve_zero_sum_game(turn_based.turn_based_game(game))[0]
    return float(value)
