"""The optional extras of ``pyproject.toml`` and one clear line when one is missing.

The default install plays, solves and reproduces the paper; ``plot`` draws the figures,
``ray`` runs experiments on a Ray cluster and ``nfsp`` brings JAX for MC-NFSP / ANFSP. Code
that needs an extra imports its modules inside :func:`required` (libraries: an
``ImportError`` naming the extra) or :func:`script_needs` (scripts: one line on stderr and
exit status 1, no traceback)::

    with extras.script_needs("nfsp", "experiments/nfsp/nfsp_poker.py"):
        from smmcts_spiel.nfsp import anfsp
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

#: The top-level modules each extra installs (the ones our code imports).
EXTRAS: dict[str, tuple[str, ...]] = {
    "plot": ("matplotlib",),
    "ray": ("ray",),
    "nfsp": ("jax", "jaxlib", "flax", "optax", "chex", "orbax"),
}


class MissingExtraError(ImportError):
    """An optional extra is not installed; the message names it and how to install it."""


def message(extra: str, purpose: str, module: str) -> str:
    return (f"{purpose} needs the optional extra '{extra}' (missing module {module!r}): "
            f"pip install 'smmcts-spiel[{extra}]'")


@contextlib.contextmanager
def required(extra: str, purpose: str) -> Iterator[None]:
    """Imports inside need ``extra``: a missing module of it raises
    :class:`MissingExtraError` naming the extra; any other missing module is a bug and
    propagates as it is."""
    if extra not in EXTRAS:
        raise ValueError(f"no extra {extra!r}; extras: {', '.join(EXTRAS)}")
    try:
        yield
    except ModuleNotFoundError as error:
        module = (error.name or "").split(".")[0]
        if module not in EXTRAS[extra]:
            raise
        raise MissingExtraError(message(extra, purpose, module)) from None


@contextlib.contextmanager
def script_needs(extra: str, script: str) -> Iterator[None]:
    """:func:`required` for a script: a missing extra ends it with one line on stderr
    (exit status 1), before any work."""
    try:
        with required(extra, script):
            yield
    except MissingExtraError as error:
        sys.exit(str(error))
