"""Selection functions of SM-MCTS: Regret Matching, Exp3 and decoupled UCB.

Regret matching comes in two forms: ``rm`` updates every action's regret with the child
means (the paper's text), ``rmb`` ("bandit RM") only sees the sampled reward and
importance-weights it, as GTLibrary's RMSelector does (:func:`bandit_regret_update`).

Each player at each node of the search tree owns one selector, which sees only its own
actions and its own rewards, in [0, 1] as the paper's analysis assumes: the engine maps
player 1's utility onto [0, 1] and gives player 2 one minus that
(:func:`smmcts_spiel.search.smmcts.reward_range`). Regret matching only compares rewards,
so any positive scale and offset give it the same strategies; the engines feed it their
earlier units (utility / largest absolute utility) so that committed results reproduce
bit for bit. A selector has one interface:

* ``probabilities()``: the distribution it samples from now (for the average strategy);
* ``select(u)``: an action, given one uniform random number ``u`` in [0, 1);
* ``update(action, reward, action_values)``: learn from this iteration. ``action_values[i]``
  is what action ``i`` would have earned against the opponent's sampled action (the
  sampled reward for ``action`` itself, the child's mean for the others); only regret
  matching uses it.

The arithmetic lives in the module-level ``*_probabilities`` / ``sample_index`` /
``ucb_index*`` functions, written in the subset of Python that numba compiles, so the
compiled engines (:mod:`smmcts_spiel.search.tree_arrays`,
:mod:`smmcts_spiel.search.matrix_tree_engine`) run exactly the same formulas.
"""

from __future__ import annotations

import math

from smmcts_spiel import checks

SELECTOR_NAMES = ("rm", "rmb", "exp3", "ucb")
#: Each selector's exploration when none is given: RM's is the paper's; Exp3's and UCB's
#: were measured with rewards in [0, 1] against exact solutions (experiments/tune_exploration/,
#: docs/search_and_bots.md).
DEFAULT_GAMMA = {"rm": 0.05, "rmb": 0.05, "exp3": 0.1}
DEFAULT_C = 0.5
#: UCB's tie tolerance when none is given: equal bounds only (see :func:`ucb_index_random_ties`).
DEFAULT_TIE_TOLERANCE = 0.0

# ----------------------------------------------------------------------------------------
# Shared arithmetic (plain loops: works on lists here, compiled by numba on arrays there).


def regret_matching_probabilities(regrets, gamma, out):
    """Eq. (3) mixed with exploration: gamma/|A| + (1 - gamma) r+[i] / sum r+."""
    n = len(regrets)
    positive_sum = 0.0
    for r in regrets:
        if r > 0.0:
            positive_sum += r
    explore = gamma / n
    keep = 1.0 - gamma
    if positive_sum > 0.0:
        for i in range(n):
            r = regrets[i]
            out[i] = explore + keep * (r / positive_sum if r > 0.0 else 0.0)
    else:
        uniform = explore + keep * (1.0 / n)
        for i in range(n):
            out[i] = uniform
    return out


def regret_matching_sample(regrets, gamma, u):
    """``sample_index(regret_matching_probabilities(regrets, gamma, p), u)`` without the
    distribution ``p``: the selection of the compiled engines where nothing else reads it
    (regret matching's Update does not; the average strategy and bandit RM do).

    The same draw from the same ``u``, computed with fewer rounding steps: the sum of the
    positive regrets in four interleaved partial sums, and the cumulative distribution as
    ``(i + 1) gamma/|A| + (1 - gamma) / sum r+ * (r+[0] + ... + r+[i])`` (no division per
    action). The two can differ only where ``u`` lies within rounding error (about
    ``1e-16``) of a boundary of the cumulative distribution.
    """
    n = len(regrets)
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    quads = n - n % 4
    for i in range(0, quads, 4):
        s0 += max(regrets[i], 0.0)
        s1 += max(regrets[i + 1], 0.0)
        s2 += max(regrets[i + 2], 0.0)
        s3 += max(regrets[i + 3], 0.0)
    for i in range(quads, n):
        s0 += max(regrets[i], 0.0)
    positive_sum = (s0 + s1) + (s2 + s3)
    if positive_sum <= 0.0:  # the uniform distribution
        return min(int(u * n), n - 1)
    explore = gamma / n
    scale = (1.0 - gamma) / positive_sum
    cumulative = 0.0
    for i in range(n - 1):
        cumulative += max(regrets[i], 0.0)
        if u < (i + 1) * explore + scale * cumulative:
            return i
    return n - 1


def bandit_regret_update(regrets, action, reward, probability):
    """Bandit regret matching (GTLibrary's RMSelector, after Hart and Mas-Colell 2001).

    With the reward ``v`` in [0, 1] (GTLibrary maps its utilities in [-1, 1] to
    ``(u + 1) / 2``, the engines' map on a symmetric range): ``r[action] += v / p_action``,
    then ``r[i] -= v`` for every i: an unbiased estimate of the regret update when
    ``probability`` is the chance the sampling distribution (exploration included) gave
    ``action``.
    """
    regrets[action] += reward / probability
    for i in range(len(regrets)):
        regrets[i] -= reward


def decreasing_gamma(gamma, t):
    """Exploration that vanishes: ``min(1, gamma / sqrt(t))`` at a selector's t-th use.

    A constant gamma leaves an exploitability floor of about gamma per level; this
    schedule (as GTLibrary's commented-out ``d_t = gamma / sqrt(t)``) removes it.
    """
    return min(1.0, gamma / math.sqrt(t))


def exp3_probabilities(reward_sums, gamma, out):
    """Eq. (4): (1 - gamma) softmax(eta w) + gamma/|A|, eta = gamma/|A|, w = x - max x."""
    n = len(reward_sums)
    eta = gamma / n
    top = reward_sums[0]
    for i in range(1, n):
        if reward_sums[i] > top:
            top = reward_sums[i]
    total = 0.0
    for i in range(n):
        out[i] = math.exp(eta * (reward_sums[i] - top))
        total += out[i]
    for i in range(n):
        out[i] = (1.0 - gamma) * out[i] / total + gamma / n
    return out


def sample_index(probabilities, u):
    """Inverse-CDF sample: the first i with u < p[0] + ... + p[i]."""
    n = len(probabilities)
    acc = 0.0
    for i in range(n - 1):
        acc += probabilities[i]
        if u < acc:
            return i
    return n - 1


def ucb_index_random_ties(reward_sums, counts, c, tie_tolerance, u):
    """:func:`ucb_index` with ties broken by the uniform number ``u`` in [0, 1): the
    ``floor(u k)``-th of the ``k`` untried actions, else of the ``k`` actions whose bound is
    within ``tie_tolerance`` of the largest (0: equal bounds only). The AIJ 2016 study's UCT
    counts bounds "less than 0.01 apart" on utilities in [-1, 1] as tied (its Sections
    4.4.1 and 6.3: the randomisation that brings decoupled UCT close to an equilibrium), a
    tolerance of 0.005 on our rewards in [0, 1]."""
    n = len(counts)
    untried = 0
    total = 0
    for i in range(n):
        if counts[i] == 0:
            untried += 1
        total += counts[i]
    if untried > 0:
        target = min(int(u * untried), untried - 1)
        for i in range(n):
            if counts[i] == 0:
                if target == 0:
                    return i
                target -= 1
    log_total = math.log(total)
    best_value = -math.inf
    ties = 0
    for i in range(n):
        value = reward_sums[i] / counts[i] + c * math.sqrt(log_total / counts[i])
        if value > best_value:
            best_value = value
            ties = 1
        elif value == best_value:
            ties += 1
    floor = best_value - tie_tolerance
    if tie_tolerance > 0.0:
        ties = 0
        for i in range(n):
            if reward_sums[i] / counts[i] + c * math.sqrt(log_total / counts[i]) >= floor:
                ties += 1
    target = min(int(u * ties), ties - 1)
    for i in range(n):
        value = reward_sums[i] / counts[i] + c * math.sqrt(log_total / counts[i])
        if value >= floor:
            if target == 0:
                return i
            target -= 1
    return n - 1


def ucb_index(reward_sums, counts, c):
    """argmax mean[i] + c sqrt(ln n / n[i]); untried actions first, ties to the lowest i."""
    n = len(counts)
    total = 0
    for i in range(n):
        if counts[i] == 0:
            return i
        total += counts[i]
    log_total = math.log(total)
    best = 0
    best_value = -math.inf
    for i in range(n):
        value = reward_sums[i] / counts[i] + c * math.sqrt(log_total / counts[i])
        if value > best_value:
            best_value = value
            best = i
    return best


# ----------------------------------------------------------------------------------------
# Selector objects used by the generic engine.


class RegretMatchingSelector:
    """Regret matching with gamma-on-policy exploration and the paper's regret update."""

    uses_action_values = True
    __slots__ = ("regrets", "gamma", "_probs", "_fresh")

    def __init__(self, num_actions: int, gamma: float):
        self.regrets = [0.0] * num_actions
        self.gamma = gamma
        self._probs = [0.0] * num_actions
        self._fresh = False

    def probabilities(self) -> list[float]:
        if not self._fresh:
            regret_matching_probabilities(self.regrets, self.gamma, self._probs)
            self._fresh = True
        return self._probs

    def select(self, u: float) -> int:
        if not self._fresh:
            regret_matching_probabilities(self.regrets, self.gamma, self._probs)
            self._fresh = True
        return sample_index(self._probs, u)

    def update(self, action: int, reward: float, action_values) -> None:
        regrets = self.regrets
        for i in range(len(regrets)):
            regrets[i] += action_values[i] - reward
        self._fresh = False


class BanditRegretMatchingSelector(RegretMatchingSelector):
    """Regret matching that only sees the sampled reward (:func:`bandit_regret_update`)."""

    uses_action_values = False
    __slots__ = ()

    def update(self, action: int, reward: float, action_values=None) -> None:
        # The probability the action had when it was chosen: r is unchanged since then.
        bandit_regret_update(self.regrets, action, reward, self.probabilities()[action])
        self._fresh = False


class Exp3Selector:
    """Exp3 (eq. 4) with numerically stable weights; rewards are importance weighted."""

    uses_action_values = False
    __slots__ = ("reward_sums", "gamma", "_probs", "_fresh")

    def __init__(self, num_actions: int, gamma: float):
        self.reward_sums = [0.0] * num_actions
        self.gamma = gamma
        self._probs = [0.0] * num_actions
        self._fresh = False

    def probabilities(self) -> list[float]:
        if not self._fresh:
            exp3_probabilities(self.reward_sums, self.gamma, self._probs)
            self._fresh = True
        return self._probs

    def select(self, u: float) -> int:
        return sample_index(self.probabilities(), u)

    def update(self, action: int, reward: float, action_values=None) -> None:
        # The probability the action had when it was chosen: x is unchanged since then.
        self.reward_sums[action] += reward / self.probabilities()[action]
        self._fresh = False


class UCBSelector:
    """Decoupled UCB1 (UCT): not Hannan consistent, so no Nash guarantee (Shafiei et al.).

    ``select`` breaks ties (untried actions, bounds within ``tie_tolerance`` of the best)
    at random with its ``u``; ``probabilities`` (for the average strategy) puts all mass on
    the lowest maximiser.
    """

    uses_action_values = False
    __slots__ = ("reward_sums", "counts", "c", "tie_tolerance")

    def __init__(self, num_actions: int, c: float,
                 tie_tolerance: float = DEFAULT_TIE_TOLERANCE):
        self.reward_sums = [0.0] * num_actions
        self.counts = [0] * num_actions
        self.c = c
        self.tie_tolerance = tie_tolerance

    def probabilities(self) -> list[float]:
        probs = [0.0] * len(self.counts)
        probs[ucb_index(self.reward_sums, self.counts, self.c)] = 1.0
        return probs

    def select(self, u: float) -> int:
        return ucb_index_random_ties(self.reward_sums, self.counts, self.c,
                                     self.tie_tolerance, u)

    def update(self, action: int, reward: float, action_values=None) -> None:
        self.reward_sums[action] += reward
        self.counts[action] += 1


def parse_selector(name: str) -> tuple[str, bool]:
    """``"rmm"`` -> ``("rm", True)``: the base selector and whether means are propagated."""
    key = str(name).strip().lower()
    for base in SELECTOR_NAMES:
        if key == base:
            return base, False
        if key == base + "m":
            return base, True
    allowed = ", ".join(f"{b}, {b}m" for b in SELECTOR_NAMES)
    raise ValueError(f"unknown selector {name!r}; choose one of {allowed} "
                     "(a trailing 'm' propagates node means: RMM, RMBM, Exp3M, UCBM)")


def exploration(name: str, gamma: float | None, c: float | None) -> tuple[float, float]:
    """``(gamma, c)`` of the selector ``name`` (base or "m" variant), checked; None takes
    the selector's default (:data:`DEFAULT_GAMMA`, :data:`DEFAULT_C`). The one that the
    selector does not use is returned as given (or its default)."""
    base, _ = parse_selector(name)
    gamma = DEFAULT_GAMMA.get(base, DEFAULT_GAMMA["rm"]) if gamma is None else gamma
    c = DEFAULT_C if c is None else c
    if base == "ucb":
        return gamma, check_c(c)
    return check_gamma(gamma), c


def check_gamma(gamma: float) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0 < gamma <= 1:
        raise ValueError("gamma must be in (0, 1] (the exploration probability), "
                         f"got {checks.shown(gamma)!r}")
    return float(gamma)


def check_tie_tolerance(tie_tolerance: float) -> float:
    if (isinstance(tie_tolerance, bool) or not isinstance(tie_tolerance, (int, float))
            or not 0 <= tie_tolerance < math.inf):
        raise ValueError("tie_tolerance must be a finite number >= 0 (UCB bounds within it of "
                         f"the best count as tied), got {checks.shown(tie_tolerance)!r}")
    return float(tie_tolerance)


def check_c(c: float) -> float:
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not c >= 0:
        raise ValueError("c must be a number >= 0 (the UCB exploration constant), "
                         f"got {checks.shown(c)!r}")
    return float(c)


def selector_factory(name: str, gamma: float | None = None, c: float | None = None,
                     tie_tolerance: float = DEFAULT_TIE_TOLERANCE):
    """A function ``num_actions -> selector`` for the base selector ``name`` (None: the
    selector's default exploration, see :func:`exploration`; ``tie_tolerance``: UCB's)."""
    base, _ = parse_selector(name)
    gamma, c = exploration(base, gamma, c)
    tie_tolerance = check_tie_tolerance(tie_tolerance)
    if base == "ucb":
        return lambda num_actions: UCBSelector(num_actions, c, tie_tolerance)
    cls = {"rm": RegretMatchingSelector, "rmb": BanditRegretMatchingSelector,
           "exp3": Exp3Selector}[base]
    return lambda num_actions: cls(num_actions, gamma)
