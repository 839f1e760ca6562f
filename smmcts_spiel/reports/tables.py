"""Tables, all made by one library (tabulate): markdown for files, plain text for terminals."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tabulate import tabulate


def markdown(rows: Iterable[Sequence], headers: Sequence[str],
             align: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured markdown table; ``align`` per column: "left", "right", "center"."""
    return tabulate(list(rows), headers=list(headers), tablefmt="pipe", colalign=align,
                    disable_numparse=True)


def text(rows: Iterable[Sequence], headers: Sequence[str],
         align: Sequence[str] | None = None) -> str:
    """A plain-text table for a terminal."""
    return tabulate(list(rows), headers=list(headers), tablefmt="simple", colalign=align,
                    disable_numparse=True)
