"""How results are summarised and shown: intervals, tables, plots.

* :mod:`.intervals`: 95% intervals, Student's t for means and Wilson for rates (scipy), and
  how they are printed (never ``+-0.000`` on a sample too small to have one);
* :mod:`.tables`: markdown and plain-text tables (tabulate);
* :mod:`.plots`: figures written to PNG files (matplotlib, no global pyplot state).

It depends on no other part of the package, so every layer may use it.
"""

from smmcts_spiel.reports.intervals import (
    CONFIDENCE,
    Interval,
    interval_from_standard_error,
    mean_interval,
    rate_interval,
)

__all__ = ["CONFIDENCE", "Interval", "interval_from_standard_error", "mean_interval",
           "rate_interval"]
