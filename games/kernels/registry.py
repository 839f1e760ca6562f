"""Which kernel describes a loaded game: :class:`GameKernel`, :func:`kernel_for`, user
kernels (:func:`register_kernel`) and their dispatch (:func:`dispatch_for`)."""

from __future__ import annotations

import hashlib
import pathlib
import types
from dataclasses import dataclass

import numba
import numba.extending
import numpy as np
import pyspiel
from absl import logging

from smmcts_spiel import compiling
from smmcts_spiel.games.kernels.base import MAX_DEPTH, MAX_JOINT_ACTIONS, Uncovered
from smmcts_spiel.games.kernels.dispatch import MODULES

USER_CODE = -1  # the code of a registered user kernel
_USER_MODULES: list[types.ModuleType] = []
# Leaf evaluators of the evaluator slot, by name -> code, and the module function of each
# (a kernel without a heuristic evaluates with its rollout).
EVALUATORS = {"random_rollout": 0, "heuristic": 1}
_EVALUATOR_FUNCTIONS = {"random_rollout": "rollout", "heuristic": "heuristic"}
_COMPILED = ("initial_state", "status", "legal_actions", "chance_outcomes", "apply_actions",
             "apply_chance", "rewards", "returns", "rollout")
_REQUIRED = ("DEFAULT_EVALUATOR", "parameters", "limits") + _COMPILED
_logged: set[str] = set()  # games whose uncovered parameters were logged


@dataclass(frozen=True, eq=False)
class GameKernel:
    """A game's kernel: its module and ``code``, parameter arrays, size limits, utilities."""

    code: int  # the module's index in the built-in dispatch, or USER_CODE
    name: str  # the game's short name
    module: types.ModuleType
    params: np.ndarray  # int64
    data: np.ndarray  # float64
    max_actions: int  # of one player at one node
    max_chance_outcomes: int
    max_depth: int  # nodes on a root-to-terminal path, the terminal included
    min_utility: float  # player 0's smallest return
    max_utility: float  # player 0's largest return
    utility_sum: float  # player 0's return + player 1's return at every terminal

    def initial_state(self) -> np.ndarray:
        return self.module.initial_state(self.params)

    @property
    def default_evaluator(self) -> str:
        """The leaf evaluator chosen by measurement for this game (a key of EVALUATORS)."""
        return self.module.DEFAULT_EVALUATOR

    @property
    def evaluators(self) -> tuple[str, ...]:
        """The names (keys of EVALUATORS) of the leaf evaluators this kernel has."""
        return tuple(name for name, function in _EVALUATOR_FUNCTIONS.items()
                     if hasattr(self.module, function))


def kernel_for(game: pyspiel.Game) -> GameKernel | None:
    """The kernel of ``game`` (a loaded pyspiel game), or None if no kernel covers it.

    Registered user kernels come first, then the built-in ones. Where a kernel describes
    the game but not these parameters, one log line (once per game) says which and why.
    """
    module, code = _module_for(game)
    if module is None:
        return None
    try:
        return kernel_from_module(game, module, code)
    except Uncovered as reason:
        text = str(game)
        if text not in _logged:
            _logged.add(text)
            logging.warning("%s has no game kernel (%s): SM-MCTS searches it with the "
                            "generic engine", text, reason)
        return None


def kernel_from_module(game: pyspiel.Game, module: types.ModuleType,
                       code: int = USER_CODE) -> GameKernel:
    """The kernel ``module`` (a module following :mod:`.base`) gives ``game``.

    Raises :class:`Uncovered` when the module or the kernel engine cannot describe it.
    """
    check_module(module)
    params, data = module.parameters(game)
    if game.num_players() != 2:
        raise Uncovered(f"{game.num_players()} players: kernels describe two-player games")
    utility_sum = game.utility_sum()
    if utility_sum is None:
        raise Uncovered("general-sum returns: kernels describe zero-sum and constant-sum "
                        "games")
    information = game.get_type().information
    if information not in (pyspiel.GameType.Information.PERFECT_INFORMATION,
                           pyspiel.GameType.Information.ONE_SHOT):
        raise Uncovered("imperfect information: SM-MCTS kernels describe games whose state "
                        "both players see")
    params = _integers(params, f"{module.__name__}.parameters() params",
                       "non-integer parameters belong in data (float64)")
    data = np.ascontiguousarray(data, np.float64)
    limits = _integers(module.limits(params), f"{module.__name__}.limits()",
                       "counts of actions, chance outcomes and nodes")
    actions, outcomes, depth = (int(x) for x in limits)
    _check_state(module.initial_state(params), module)
    if actions * actions > MAX_JOINT_ACTIONS:
        raise Uncovered(f"{actions} actions per player: more joint actions than the "
                        f"{MAX_JOINT_ACTIONS:,} a compiled node holds")
    if depth > MAX_DEPTH:
        raise Uncovered(f"games of up to {depth:,} nodes: longer than the {MAX_DEPTH:,} "
                        "the kernel engine plans for")
    if hasattr(module, "utility_range"):
        low, high = module.utility_range(params, data)
    else:
        low, high = game.min_utility(), game.max_utility()
    return GameKernel(code, game.get_type().short_name, module, params, data, actions,
                      max(1, outcomes), depth, float(low), float(high), float(utility_sum))


def register_kernel(module: types.ModuleType) -> None:
    """Make :func:`kernel_for` (so SMMCTSBot) use ``module`` for the games it names.

    ``module`` follows the protocol of :mod:`.base`. A registered kernel comes before the
    built-in ones (it may replace one). The kernel engine compiles an engine of its own for
    it once per process (numba does not cache it: tens of seconds); check it first with
    :func:`check_kernel`.
    """
    check_module(module)
    compiling.watch(module.__name__)
    if module not in _USER_MODULES:
        _USER_MODULES.insert(0, module)


def unregister_kernel(module: types.ModuleType) -> None:
    """Undo :func:`register_kernel`."""
    if module in _USER_MODULES:
        _USER_MODULES.remove(module)


def check_module(module: types.ModuleType) -> None:
    """Raise ValueError unless ``module`` has what the protocol of :mod:`.base` asks: every
    function and constant, a known ``DEFAULT_EVALUATOR`` (with its function), and numba
    functions where compiled code calls them."""
    name = module.__name__
    missing = [f for f in _REQUIRED if not hasattr(module, f)]
    if not hasattr(module, "SHORT_NAMES") and not hasattr(module, "describes"):
        missing.insert(0, "SHORT_NAMES (or describes)")
    if missing:
        raise ValueError(f"kernel module {name} lacks {', '.join(missing)} "
                         "(the protocol of smmcts_spiel.games.kernels.base)")
    evaluator = module.DEFAULT_EVALUATOR
    if not isinstance(evaluator, str) or evaluator not in EVALUATORS:
        raise ValueError(f"kernel module {name}: DEFAULT_EVALUATOR must be one of "
                         f"{', '.join(map(repr, EVALUATORS))}, got {evaluator!r}")
    if not hasattr(module, _EVALUATOR_FUNCTIONS[evaluator]):
        raise ValueError(f"kernel module {name}: DEFAULT_EVALUATOR is {evaluator!r} but the "
                         f"module has no {_EVALUATOR_FUNCTIONS[evaluator]} function")
    compiled = _COMPILED + (("heuristic",) if hasattr(module, "heuristic") else ())
    plain = [f for f in compiled if not numba.extending.is_jitted(getattr(module, f))]
    if plain:
        raise ValueError(f"kernel module {name}: {', '.join(plain)} must be numba functions "
                         "(compiled searches call them): decorate each with "
                         "@numba.njit(cache=True)")


def _integers(values, what: str, fix: str) -> np.ndarray:
    """``values`` as an int64 array, refused where that would change a value (2.5 -> 2)."""
    given = np.asarray(values)
    if given.dtype.kind in "biu":
        return np.ascontiguousarray(given, np.int64)
    try:
        floats = given.astype(np.float64).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be integers (int64), got {given.dtype}: {fix}") from None
    exact = np.isfinite(floats) & (floats == np.round(floats)) & (np.abs(floats) < 2.0**63)
    if not exact.all():
        raise ValueError(f"{what} must be integers (int64), got {given.dtype} values "
                         f"{floats[~exact][:5].tolist()}: {fix}")
    return np.ascontiguousarray(given.astype(np.int64))


def _check_state(state, module: types.ModuleType) -> None:
    """Refuse an initial state the compiled engines cannot type (e.g. float64)."""
    if not isinstance(state, np.ndarray) or state.dtype != np.int64 or state.ndim != 1:
        got = (f"a {state.dtype} array of shape {state.shape}" if isinstance(state, np.ndarray)
               else type(state).__name__)
        raise ValueError(f"kernel module {module.__name__}: initial_state must return a "
                         f"one-dimensional int64 array (np.zeros(n, np.int64)), got {got}")


def _describes(module: types.ModuleType, game: pyspiel.Game) -> bool:
    if hasattr(module, "describes"):
        return module.describes(game)
    return game.get_type().short_name in module.SHORT_NAMES


def _module_for(game: pyspiel.Game) -> tuple[types.ModuleType | None, int]:
    for module in _USER_MODULES:
        if _describes(module, game):
            return module, USER_CODE
    # A kernel that names the game comes before one that describes a family of games (the
    # one-shot kernel would take a one-round pursuit-evasion or Tron game, and not cover it).
    name = game.get_type().short_name
    for code, module in enumerate(MODULES):
        if name in module.SHORT_NAMES:
            return module, code
    for code, module in enumerate(MODULES):
        if _describes(module, game):
            return module, code
    return None, USER_CODE


def source_tag(module: types.ModuleType, engine: tuple[str, ...] = ()) -> str | None:
    """A name for the current source of ``module`` and of the files ``engine`` (the caller's
    compiled code), under which code compiled from them can be cached: the module's name and
    a hash of the files; None for a module without a file."""
    path = getattr(module, "__file__", None)
    if not path or not pathlib.Path(path).is_file():
        return None
    digest = hashlib.sha256()
    for source in (path, *sorted(engine)):
        digest.update(pathlib.Path(source).read_bytes())
    return f"{module.__name__.replace('.', '_')}_{digest.hexdigest()[:16]}"


def dispatch_for(module: types.ModuleType) -> types.ModuleType:
    """Dispatch functions with the signatures of :mod:`.dispatch` that call ``module``'s
    kernel functions whatever the code: what the kernel engine compiles a user kernel's
    engine with (uncached)."""
    namespace = types.ModuleType(f"{module.__name__}_dispatch")
    status_, legal, chance = module.status, module.legal_actions, module.chance_outcomes
    act, act_chance = module.apply_actions, module.apply_chance
    rewards_, returns_ = module.rewards, module.returns
    rollout = module.rollout
    heuristic = getattr(module, "heuristic", module.rollout)

    def dispatched_status(code, state, params, data):
        return status_(state, params, data)

    def dispatched_legal_actions(code, state, params, data, player, out):
        return legal(state, params, data, player, out)

    def dispatched_chance_outcomes(code, state, params, data, outcomes, probs):
        return chance(state, params, data, outcomes, probs)

    def dispatched_apply_actions(code, state, params, data, action0, action1):
        act(state, params, data, action0, action1)

    def dispatched_apply_chance(code, state, params, data, outcome):
        act_chance(state, params, data, outcome)

    def dispatched_rewards(code, state, params, data):
        return rewards_(state, params, data)

    def dispatched_returns(code, state, params, data):
        return returns_(state, params, data)

    def dispatched_evaluate(code, evaluator, state, params, data, rng):
        if evaluator == 0:
            return rollout(state, params, data, rng)
        return heuristic(state, params, data, rng)

    for name, function in list(locals().items()):
        if name.startswith("dispatched_"):
            setattr(namespace, name.removeprefix("dispatched_"), numba.njit(function))
    return namespace
