"""Simultaneous-Move Monte Carlo Tree Search for OpenSpiel.

Importing this package registers every game in :mod:`smmcts_spiel.games` with pyspiel,
so ``pyspiel.load_game("smmcts_...")`` works afterwards.

The public API is ``smmcts_spiel.__all__``; each name is imported on first use, so
``import smmcts_spiel`` stays quick (it compiles nothing and imports no optional extra):

* **Bots** (``pyspiel.Bot``): :class:`SMMCTSBot` (SM-MCTS with RM, Exp3 or UCB),
  :class:`OOSBot` (Online Outcome Sampling), :class:`ISSMMCTSBot` (SM-MCTS at information
  sets), :class:`MMCTSBot` (multiple-tree MCTS with Exp3), :class:`BeliefSamplerBot`
  (Phantom Tic-Tac-Toe), :class:`EquilibriumBot` (plays an exact equilibrium),
  :class:`DOABBot` (iterative-deepening DOAB with an evaluation function),
  :class:`SMOOSBot` (Online Outcome Sampling for simultaneous-move games), and
  OpenSpiel's MCTS and ISMCTS adapted to these games, :class:`TurnBasedMCTSBot` and
  :class:`ISMCTSBot`.
* **Bots by name, matches**: :func:`make_bot` builds a bot from a spec string such as
  ``"smmcts(selector=rm,iterations=1000)"`` (:func:`parse_bot_spec` reads one);
  :func:`play_match` plays two of them with alternating seats, :func:`round_robin` every
  pair, and :func:`format_table` prints their results (:class:`MatchResult`).
* **Exact solving**: :func:`game_value` and :func:`solve` (a :class:`Solution`: values
  and equilibrium strategies of every state, an OpenSpiel policy) by backward induction,
  :func:`tree_value` and :func:`solve_tree` on explicit matrix trees,
  :func:`save_solution` and :func:`load_solution` (checked on reading); a game estimated
  too large to solve raises :class:`GameTooLarge`.
* **Exploitability**: :func:`exploitability` gives e1, e2 and NashConv of a strategy
  profile (e.g. ``bot.policy()``), exactly (:mod:`smmcts_spiel.exact.exploitability`);
  :func:`online_exploitability` those of the strategy a bot *plays* (its answer at every
  decision point of a small game, searched anew), with a bootstrap error
  (docs/online_exploitability.md).
* **Game kernels** (whole searches compiled with numba): :func:`kernel_for` finds the
  :class:`GameKernel` of a game, :func:`register_kernel` and :func:`unregister_kernel` add
  and remove one of your own, :func:`check_kernel` compares a kernel with its pyspiel game
  (docs/writing_a_kernel.md).

Everything else is in the subpackages and modules below (docs/architecture.md says
what lives where): :mod:`smmcts_spiel.search` (the perfect-information engines and the
selectors), :mod:`smmcts_spiel.imperfect` (OOS, IS-SM-MCTS, MMCTS),
:mod:`smmcts_spiel.exact` (solving and exploitability), :mod:`smmcts_spiel.trees`
(explicit matrix trees), :mod:`smmcts_spiel.games` (the games and their kernels),
:mod:`smmcts_spiel.bots`, and the applications (bot specs, matches, tournaments,
experiments, MC-NFSP).
"""

import importlib
import importlib.util

if importlib.util.find_spec("smmcts_spiel.games") is None:
    # The source tree's smmcts_spiel/ without the install's mapping of games/ and bots/ into
    # it: Python found this folder before the installed package (e.g. run from the clone's
    # root after a plain ``pip install .``).
    raise ImportError(
        f"smmcts_spiel was imported from its source folder {__path__[0]}, where its games/ "
        "and bots/ are not yet mapped into the package: install the clone editable "
        "(`pip install -e .`, or ./scripts/demo, which does) or run Python from another folder")

from smmcts_spiel import games  # noqa: E402, F401  (registers the games)

__version__ = "0.1.0"

#: Public name -> (module, name there): imported on first use (PEP 562), since most of
#: them import numba, and some scipy or tabulate.
_API = {
    "SMMCTSBot": ("smmcts_spiel.bots.smmcts_bot", "SMMCTSBot"),
    "OOSBot": ("smmcts_spiel.bots.oos_bot", "OOSBot"),
    "ISSMMCTSBot": ("smmcts_spiel.bots.is_smmcts_bot", "ISSMMCTSBot"),
    "MMCTSBot": ("smmcts_spiel.bots.mmcts_bot", "MMCTSBot"),
    "BeliefSamplerBot": ("smmcts_spiel.bots.belief_sampler", "BeliefSamplerBot"),
    "EquilibriumBot": ("smmcts_spiel.bots.equilibrium_bot", "EquilibriumBot"),
    "DOABBot": ("smmcts_spiel.bots.doab_bot", "DOABBot"),
    "SMOOSBot": ("smmcts_spiel.bots.sm_oos_bot", "SMOOSBot"),
    "TurnBasedMCTSBot": ("smmcts_spiel.bots.openspiel_bots", "TurnBasedMCTSBot"),
    "ISMCTSBot": ("smmcts_spiel.bots.openspiel_bots", "ISMCTSBot"),
    "make_bot": ("smmcts_spiel.bot_specs", "make_bot"),
    "parse_bot_spec": ("smmcts_spiel.bot_specs", "parse_bot_spec"),
    "play_match": ("smmcts_spiel.match", "play_match"),
    "round_robin": ("smmcts_spiel.match", "round_robin"),
    "format_table": ("smmcts_spiel.match", "format_table"),
    "MatchResult": ("smmcts_spiel.match", "MatchResult"),
    "game_value": ("smmcts_spiel.exact.solver", "game_value"),
    "solve": ("smmcts_spiel.exact.solver", "solve"),
    "Solution": ("smmcts_spiel.exact.solution", "Solution"),
    "tree_value": ("smmcts_spiel.exact.solver", "tree_value"),
    "solve_tree": ("smmcts_spiel.exact.solver", "solve_tree"),
    "save_solution": ("smmcts_spiel.exact.solution_file", "save_solution"),
    "load_solution": ("smmcts_spiel.exact.solution_file", "load_solution"),
    "GameTooLarge": ("smmcts_spiel.exact.size_estimate", "GameTooLarge"),
    "exploitability": ("smmcts_spiel.exact.exploitability", "evaluate"),
    "online_exploitability": ("smmcts_spiel.experiments.online", "online_exploitability"),
    "kernel_for": ("smmcts_spiel.games.kernels", "kernel_for"),
    "register_kernel": ("smmcts_spiel.games.kernels", "register_kernel"),
    "unregister_kernel": ("smmcts_spiel.games.kernels", "unregister_kernel"),
    "check_kernel": ("smmcts_spiel.games.kernels", "check_kernel"),
    "GameKernel": ("smmcts_spiel.games.kernels", "GameKernel"),
}

#: The subpackages and modules, also imported on first use (``smmcts_spiel.search`` works
#: after ``import smmcts_spiel``); the API reference documents them in this order.
_SUBMODULES = ("bots", "games", "search", "imperfect", "exact", "trees", "bot_specs", "match",
               "tournament", "experiments", "nfsp", "reports", "checks", "extras")

__all__ = [*_API, *_SUBMODULES]  # in the order above, the order of the API reference


def __getattr__(name: str):
    """A public name's object or a submodule, imported on first use."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")  # the import binds the name
    if name not in _API:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _API[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
