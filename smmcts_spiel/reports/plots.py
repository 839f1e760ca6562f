"""Figures written to PNG files: one place for matplotlib's set-up and the project's styles.

Every figure of the scripts is drawn inside :func:`saved_figure`, which makes a
``matplotlib.figure.Figure`` (no global pyplot state, no display needed), lays it out and
writes it; :func:`curve` draws a mean with its band (an interval, a standard error, a
min-max range) and :func:`interval_bars` grouped bars with their intervals. Needs the
``plot`` extra (matplotlib).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from smmcts_spiel import extras

#: One colour per selector in every figure of the SM-MCTS experiments; an "M" (mean)
#: variant has a lighter shade of its selector's colour and a dashed line.
SELECTOR_COLORS = {"rm": "tab:red", "rmm": "tab:orange", "exp3": "tab:blue",
                   "exp3m": "tab:cyan", "rmb": "tab:green", "rmbm": "tab:olive",
                   "ucb": "tab:purple", "ucbm": "tab:pink"}
MEAN_VARIANTS = ("rmm", "exp3m", "rmbm", "ucbm")


def selector_style(method: str) -> tuple[str | None, str]:
    """(colour, line style) of a selector's curve: the "M" (mean) variant dashed."""
    return SELECTOR_COLORS.get(method), "--" if method in MEAN_VARIANTS else "-"


def selector_label(method: str) -> str:
    """``rmm`` -> ``RMM``, ``exp3m`` -> ``Exp3M``."""
    return method.upper().replace("EXP", "Exp")


@contextlib.contextmanager
def saved_figure(path: str | os.PathLike, figsize: tuple[float, float],
                 dpi: int = 110) -> Iterator[Any]:
    """A new figure, laid out (``tight_layout``) and written to ``path`` when the block ends
    without an error."""
    with extras.required("plot", "drawing figures"):
        from matplotlib.figure import Figure
    figure = Figure(figsize=figsize)
    yield figure
    figure.tight_layout()
    figure.savefig(os.fspath(path), dpi=dpi)


def curve(ax, x: ArrayLike, mean: ArrayLike, low: ArrayLike | None = None,
          high: ArrayLike | None = None, *, label: str, color: str | None = None,
          style: str = "-", alpha: float = 0.2, **line_kw) -> Any:
    """A line through ``mean`` and, if given, a band from ``low`` to ``high`` in its colour."""
    line, = ax.plot(x, mean, style, color=color, label=label, **line_kw)
    if low is not None and high is not None:
        ax.fill_between(x, low, high, color=line.get_color(), alpha=alpha, linewidth=0)
    return line


def exploitability_curve(ax, points: Sequence[Mapping], method: str, label: str | None = None,
                         style: str | None = None, alpha: float = 0.2) -> Any:
    """A selector's mean exploitability against iterations with a +-1 standard error band,
    from the rows of a convergence CSV (``t``, ``mean_e1``, ``standard_error``)."""
    mean = np.array([p["mean_e1"] for p in points], dtype=float)
    error = np.array([p["standard_error"] for p in points], dtype=float)
    color, default_style = selector_style(method)
    return curve(ax, [p["t"] for p in points], mean, mean - error, mean + error,
                 label=label or selector_label(method), color=color,
                 style=style or default_style, alpha=alpha)


def log_axes(ax, grid_alpha: float = 0.3) -> None:
    """Log-log axes with a light major grid (convergence curves)."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="major", alpha=grid_alpha)


def interval_bars(ax, groups: Sequence[str],
                  series: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
                  max_label: int = 40) -> None:
    """Grouped bars: for each series ``name: (values, lows, highs)`` (one of each per group)
    a bar per group with its interval as an error bar (an interval that does not contain
    its estimate, as a bootstrap's may not, is drawn up to the estimate), and the series'
    legend to the right of the axes, where it covers no bar."""
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(groups))
    for k, (name, (values, lows, highs)) in enumerate(series.items()):
        values, lows, highs = (np.asarray(v, dtype=float) for v in (values, lows, highs))
        ax.bar(x + (k - (len(series) - 1) / 2) * width, values, width, label=name,
               yerr=[np.maximum(values - lows, 0), np.maximum(highs - values, 0)], capsize=3)
    ax.set_xticks(x, [g if len(g) < max_label else g[:max_label - 3] + "..." for g in groups],
                  rotation=15, ha="right", fontsize=7)
    ax.axhline(0, color="black", lw=0.5)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
