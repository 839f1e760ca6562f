"""95% intervals of the project's results, from scipy, and how they are printed.

One helper for every interval the scripts report: :func:`mean_interval` (Student's t, for
mean returns, losses, exploitabilities), :func:`rate_interval` (Wilson, for win / draw /
loss rates, which stays inside [0, 1] and is not zero-width at 0 or n wins) and
:func:`interval_from_standard_error` (a t interval around an estimate whose standard error
is computed otherwise, e.g. stratified by seat). An :class:`Interval` that a sample cannot
give (fewer than two values, or no spread at all) is *undefined* and says so when printed,
instead of a misleading ``+-0.000``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95
_MOST_DIGITS = 8  # decimals of the smallest half-width shown; below it, no spread


@dataclass(frozen=True)
class Interval:
    """An estimate from ``n`` values with its interval ``[low, high]`` (NaN: undefined)."""

    estimate: float
    low: float
    high: float
    n: int
    why_undefined: str = ""

    @property
    def defined(self) -> bool:
        return not self.why_undefined

    @property
    def half_width(self) -> float:
        """Half the width (of a symmetric interval: the ``+-`` term); inf when undefined."""
        return (self.high - self.low) / 2 if self.defined else math.inf

    def format(self, digits: int = 3, sign: bool = True, style: str = "+-") -> str:
        """``+0.250 +- 0.130`` (``style="+-"``) or ``+0.250 [+0.120, +0.380]``
        (``style="[]"``); an undefined interval prints the estimate and why it has none."""
        signed = "+" if sign else ""
        # A value that rounds to zero is shown as 0, never -0.000.
        estimate = f"{round(self.estimate, digits) or 0.0:{signed}.{digits}f}"
        if not self.defined:
            return f"{estimate} ({self.why_undefined})"
        if self.half_width < 5 * 10.0 ** -(_MOST_DIGITS + 1):  # rounding noise, not spread
            return f"{estimate} (no spread: no interval)"
        # Enough decimals that a small but non-zero interval is never shown as 0.000.
        shown = max(digits, min(_MOST_DIGITS,
                                1 - math.floor(math.log10(max(self.half_width, 1e-300)))))
        if style == "[]":
            return f"{estimate} [{self.low:{signed}.{shown}f}, {self.high:{signed}.{shown}f}]"
        return f"{estimate} +- {self.half_width:.{shown}f}"

    def __str__(self) -> str:
        return self.format()


def _undefined(estimate: float, n: int, why: str) -> Interval:
    return Interval(float(estimate), math.nan, math.nan, int(n), why)


def mean_interval(values: Sequence[float] | np.ndarray,
                  confidence: float = CONFIDENCE) -> Interval:
    """The mean of ``values`` with its Student's t interval (``scipy.stats.ttest_1samp``).

    Undefined for a single value, and for values that are all equal (their sample
    variance is zero, so the t interval would claim a certainty that a small sample
    cannot give).
    """
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("an interval needs at least one value")
    if not np.all(np.isfinite(x)):
        raise ValueError("an interval needs finite values")
    mean = float(x.mean())
    if x.size < 2:
        return _undefined(mean, 1, "n=1: too few for an interval")
    if np.all(x == x[0]):
        return _undefined(mean, x.size, f"all {x.size} equal: no interval")
    from scipy import stats  # imported when used: it takes a second to import

    ci = stats.ttest_1samp(x, popmean=0.0).confidence_interval(confidence)
    return Interval(mean, float(ci.low), float(ci.high), int(x.size))


def rate_interval(successes: int, trials: int, confidence: float = CONFIDENCE) -> Interval:
    """The rate ``successes / trials`` with its Wilson score interval
    (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``)."""
    successes, trials = int(successes), int(trials)
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"a rate needs 0 <= successes <= trials and trials >= 1, got "
                         f"{successes} of {trials}")
    from scipy import stats  # imported when used: it takes a second to import

    ci = stats.binomtest(successes, trials).proportion_ci(confidence, method="wilson")
    return Interval(successes / trials, float(ci.low), float(ci.high), trials)


def interval_from_standard_error(estimate: float, standard_error: float, n: int,
                                 degrees_of_freedom: float,
                                 confidence: float = CONFIDENCE) -> Interval:
    """A t interval ``estimate +- t * standard_error`` (``scipy.stats.t.interval``), for an
    estimate whose standard error is computed otherwise (stratified, pooled, ...)."""
    if degrees_of_freedom < 1:
        return _undefined(estimate, n, f"n={n}: too few for an interval")
    if not standard_error > 0:
        return _undefined(estimate, n, f"no spread in {n} values: no interval")
    from scipy import stats  # imported when used: it takes a second to import

    low, high = stats.t.interval(confidence, degrees_of_freedom, loc=estimate,
                                 scale=standard_error)
    return Interval(float(estimate), float(low), float(high), int(n))
