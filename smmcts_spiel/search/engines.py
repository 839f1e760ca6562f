"""Which engine searches a game, and with how many trees: :func:`make_search`.

The engines are one algorithm (:class:`smmcts_spiel.search.smmcts.SMMCTS`, the reference)
in three forms: compiled on a game kernel (:mod:`.kernel_engine`), over pyspiel states with
compiled arrays (:mod:`.array_engine`, any game) and in Python objects (:mod:`.smmcts`).
Several threads search a tree each (:mod:`.root_parallel`) or grow one tree together (the
kernel engine's ``threads``).
"""

from __future__ import annotations

import random
from typing import Any

import pyspiel
from absl import logging

from smmcts_spiel import checks
from smmcts_spiel.games import kernels
from smmcts_spiel.search import in_flight, kernel_engine, thread_counts
from smmcts_spiel.search.array_engine import ArraySMMCTS
from smmcts_spiel.search.kernel_engine import KernelSMMCTS
from smmcts_spiel.search.root_parallel import RootParallelSearch
from smmcts_spiel.search.smmcts import SMMCTS
from smmcts_spiel.search.tree_arrays import DEFAULT_MAX_MEMORY

ENGINES = ("auto", "kernel", "generic", "reference")
#: How threads > 1 share a search: a tree each (root parallelism) or one tree (tree parallelism).
PARALLEL = ("root", "tree")

Search = KernelSMMCTS | ArraySMMCTS | SMMCTS | RootParallelSearch


def make_search(game: pyspiel.Game, rng: random.Random, engine: str = "auto",
                evaluator: Any = None, threads: int | str = 1, parallel: str | None = None,
                max_memory: int = DEFAULT_MAX_MEMORY, caller: str = "SMMCTSBot",
                virtual_loss: bool = False, **options: Any) -> Search:
    """The SM-MCTS search of ``game`` that ``SMMCTSBot`` runs (its docstring explains
    ``engine``, ``evaluator``, ``threads``, ``parallel``, ``virtual_loss`` and
    ``max_memory``).

    ``threads="auto"``: :func:`.thread_counts.auto_threads` once the engine is chosen, one
    shared tree unless ``parallel`` says otherwise (``parallel=None``: "tree" with ``auto``,
    "root" with a number).

    ``engine="auto"`` takes the kernel engine when a kernel covers the game and no Python
    evaluator is given, else the generic one; also the generic one, with a warning, where
    one kernel tree could not hold its widest iterations within ``max_memory``. Each tree's
    seed is drawn from ``rng`` (63 bits, one per tree); ``options`` (selector, gamma, c,
    final_strategy, threshold) go to every tree. ``caller`` names the caller in the log.

    Raises ValueError on an unknown engine or ``parallel``, a bad ``threads``,
    ``virtual_loss`` or ``max_memory``, threads > 1 without the kernel engine, the virtual
    loss with several root-parallel trees, an evaluator of the wrong kind for the engine,
    or root-parallel trees that cannot share ``max_memory``.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    threads = thread_counts.check_setting(threads)
    if parallel is None:
        parallel = "tree" if threads == thread_counts.AUTO else "root"
    if parallel not in PARALLEL:
        raise ValueError(f"parallel must be one of {', '.join(PARALLEL)} (how threads > 1 "
                         f"share the work), got {parallel!r}")
    virtual_loss = in_flight.check_virtual_loss(virtual_loss)
    max_memory = checks.check_count(max_memory, "max_memory (bytes)", minimum=1)
    kernel = kernels.kernel_for(game)
    auto = threads == thread_counts.AUTO
    if engine == "auto":
        engine = _automatic_engine(game, kernel, evaluator, 1 if auto else int(threads),
                                   max_memory, caller)
    if auto:
        threads = thread_counts.auto_threads(game, engine == "kernel" and kernel is not None)
        if kernel and max_memory < kernel_engine.minimum_memory(kernel, threads):
            threads = 1  # (what fits the memory the caller gave)
    threads = int(threads)
    if virtual_loss and parallel == "root" and threads > 1:
        raise ValueError("virtual_loss=True needs parallel='tree': root parallelism's trees "
                         "share nothing, so no iteration is in flight in another's tree")
    if threads > 1 and engine != "kernel":
        raise ValueError(
            f"threads={threads} needs the kernel engine, but this bot runs the {engine} "
            "engine" + (f" (no game kernel covers {game})" if kernel is None else "")
            + ": its time goes to pyspiel and Python, which hold Python's global "
            "interpreter lock, so parallel trees would only take turns; use threads=1")
    # Tree parallelism: one tree, grown by every thread.
    trees = 1 if parallel == "tree" else threads
    seeds = [rng.getrandbits(63) for _ in range(trees)]
    searches: list[KernelSMMCTS | ArraySMMCTS | SMMCTS]
    if engine == "kernel":
        if evaluator is not None and not isinstance(evaluator, str):
            raise ValueError("engine='kernel' takes a kernel evaluator name "
                             f"({', '.join(kernels.EVALUATORS)}); a Python evaluator "
                             "needs engine='generic'")
        default = kernel.default_evaluator if kernel else "random_rollout"
        # Root parallelism: max_memory is the trees' in all, an equal share each.
        tree_memory = max_memory // trees
        if trees > 1 and kernel and tree_memory < kernel_engine.minimum_memory(kernel):
            need = trees * kernel_engine.minimum_memory(kernel)
            raise ValueError(f"max_memory={max_memory} bytes is shared by the {trees} "
                             f"trees of threads={threads}, and each needs at least "
                             f"{need // trees} for {game}: give max_memory >= {need}, "
                             "or fewer threads")
        searches = [KernelSMMCTS(game, evaluator=evaluator or default, seed=seed,
                                 max_memory=tree_memory, threads=threads // trees,
                                 virtual_loss=virtual_loss, **options) for seed in seeds]
    else:
        if isinstance(evaluator, str):
            raise ValueError(f"evaluator {evaluator!r} names a kernel evaluator; the "
                             f"{engine} engine takes an object with evaluate(state)")
        if engine == "generic":
            searches = [ArraySMMCTS(game, evaluator=evaluator, seed=seeds[0],
                                    max_memory=max_memory, **options)]
        else:
            searches = [SMMCTS(game, evaluator=evaluator, seed=seeds[0], **options)]
    return searches[0] if trees == 1 else RootParallelSearch(searches)


def _automatic_engine(game: pyspiel.Game, kernel: kernels.GameKernel | None, evaluator: Any,
                      threads: int, max_memory: int, caller: str) -> str:
    """``engine="auto"``: "kernel" or "generic" (see :func:`make_search`)."""
    wants_kernel = evaluator is None or isinstance(evaluator, str)
    engine = "kernel" if wants_kernel and kernel else "generic"
    if kernel is None:
        logging.info("%s: no game kernel covers %s: the generic engine searches its pyspiel "
                     "states (slower; docs/writing_a_kernel.md shows how to add one)",
                     caller, game)
    elif (engine == "kernel" and threads == 1
          and max_memory < kernel_engine.minimum_memory(kernel)):
        logging.warning("%s: the kernel engine needs max_memory >= %d bytes for %s (room "
                        "for its widest iterations), %d given: the generic engine searches "
                        "it", caller, kernel_engine.minimum_memory(kernel), game, max_memory)
        engine = "generic"
    return engine
