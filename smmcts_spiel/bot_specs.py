"""Bot spec strings: every bot we ship, named in OpenSpiel's game-string syntax.

A spec is ``name`` or ``name(key=value,...)``; :func:`make_bot` builds a fresh, seeded
``pyspiel.Bot`` from it for one seat of a game::

    smmcts(selector=rm,gamma=0.05,time_limit=0.1)   our SMMCTSBot (SM-MCTS); evaluator=auto
                                                    (the bot's default), random_rollout or
                                                    heuristic (kernel engine), rollout,
                                                    goofspiel or oshi_zumo (Python, generic
                                                    engine); rollouts=N playouts per leaf;
                                                    threads=N trees searched at once;
                                                    parallel=tree: N threads grow one tree,
                                                    virtual_loss=true: with in-flight losses;
                                                    threads=auto: what pays on the game
    mmcts(training_iterations=100000,gamma=0.1)     MMCTSBot, trained when built
    mmcts(file=trees/x.npz,final_strategy=empirical)  MMCTSBot on a saved Phantom TTT search
    belief_sampler                                  the Belief Sampler (Phantom TTT)
    oos(delta=0.9,epsilon=0.6,time_limit=0.1)       OOSBot (Online Outcome Sampling; compiled
                                                    where the game has an information kernel);
                                                    preset=paper: the AAMAS 2015 settings
    sm_oos(epsilon=0.3,time_limit=0.1)              SMOOSBot: the AIJ 2016 study's SM-OOS
                                                    (perfect information between stages;
                                                    preset=paper: epsilon 0.6);
                                                    evaluator=random_rollout or heuristic
    is_smmcts(selector=exp3,gamma=0.1,iterations=1000)  ISSMMCTSBot (information sets)
    ismcts(time_limit=0.1,worlds=auto)              OpenSpiel's ISMCTSBot, any game with
                                                    information states; iterations=N
                                                    simulations per move (default 100),
                                                    uct_c=2, final_policy=max_visit
    mcts(time_limit=0.1,engine=cpp)                 OpenSpiel's MCTSBot, Python or C++;
                                                    seats=first or second: both seats by
                                                    one mover's rule (symmetric games)
    equilibrium                                     samples the exact solution (solver)
    doab(time_limit=0.1,evaluator=heuristic)        DOABBot: iterative-deepening DOAB with an
                                                    evaluation function (the AIJ 2016 study's
                                                    online DOAB); max_depth=N joint moves
    random                                          uniform random
    nfsp(file=run.npz)                              average policy of an MC-NFSP / ANFSP checkpoint
    cpp(bot=uniform_random,...)                     any bot in pyspiel.registered_bots()

Budgets are per move: ``iterations`` and/or ``time_limit`` (seconds); giving only
``time_limit`` searches by time alone. ``ismcts(simulations=N)``, the old name of its
``iterations``, still works (with a deprecation warning).
"""

from __future__ import annotations

import inspect
import math
import os
import typing

import pyspiel
from absl import logging

from smmcts_spiel import checks, extras
from smmcts_spiel.bots import (
    BeliefSamplerBot,
    DOABBot,
    ISSMMCTSBot,
    MMCTSBot,
    OOSBot,
    SMMCTSBot,
    SMOOSBot,
)
from smmcts_spiel.bots.equilibrium_bot import EquilibriumBot
from smmcts_spiel.bots.openspiel_bots import ISMCTSBot, TurnBasedMCTSBot
from smmcts_spiel.exact import solver
from smmcts_spiel.games.kernels import EVALUATORS as KERNEL_EVALUATORS
from smmcts_spiel.imperfect.mmcts_phantom_ttt import PhantomTTTMultipleTreeSearch
from smmcts_spiel.search import evaluators

#: The class each kind of bot builds: a spec's parameters are its constructor's (read from
#: its signature and type hints), less :data:`NOT_IN_SPECS`, plus :data:`SPEC_ONLY`.
#: ``random``, ``nfsp`` and ``cpp`` build OpenSpiel's bots or a saved policy.
BOT_CLASSES: dict[str, type[typing.Any] | None] = {
    "smmcts": SMMCTSBot, "mmcts": MMCTSBot, "belief_sampler": BeliefSamplerBot, "oos": OOSBot,
    "is_smmcts": ISSMMCTSBot, "ismcts": ISMCTSBot, "mcts": TurnBasedMCTSBot,
    "equilibrium": EquilibriumBot, "doab": DOABBot, "sm_oos": SMOOSBot, "random": None,
    "nfsp": None, "cpp": None,
}
#: Constructor parameters no spec gives: the seat and seed (the runner's), objects (a
#: search, a solution, a progress callback) and the bounds a runner leaves at their defaults.
NOT_IN_SPECS: dict[str, tuple[str, ...]] = {
    "smmcts": ("max_memory",), "mmcts": ("search", "progress"),
    "equilibrium": ("solution", "max_states", "limits"),
}
_SEAT = ("game", "player_id", "seed")


class _IntegerOrAuto(type):
    def __instancecheck__(cls, value) -> bool:
        return ((isinstance(value, int) and not isinstance(value, bool))
                or (isinstance(value, str) and value == "auto"))


class ThreadCount(metaclass=_IntegerOrAuto):
    """The type of a spec's ``threads``: an integer or ``auto`` (``isinstance`` says which
    values are; nothing is built of it)."""


#: Spec parameters that are not the constructor's, or not of its type: an evaluator's name
#: and its rollouts (smmcts), its threads (a number or ``auto``), a saved search or run
#: (``file``), ismcts' per-move budget under the name every other bot gives it.
SPEC_ONLY: dict[str, dict[str, type]] = {
    "smmcts": {"evaluator": str, "rollouts": int, "threads": ThreadCount},
    "mmcts": {"file": str},
    "ismcts": {"iterations": int}, "nfsp": {"file": str}, "doab": {"evaluator": str},
    "sm_oos": {"evaluator": str},
}


def spec_parameters(cls: type[typing.Any] | None, hidden: tuple[str, ...] = (),
                    spec_only: dict[str, type] | None = None) -> dict[str, type]:
    """The parameters (and their types) of a spec of bots of class ``cls``: its
    constructor's, in order, each of its annotated type (``int | None``: ``int``), without
    the seat, the seed and ``hidden``; then those of ``spec_only`` (which win over the
    constructor's type). TypeError for a parameter without a type, which a spec could not
    check."""
    spec_only = spec_only or {}
    params: dict[str, type] = {}
    if cls is not None:
        hints = typing.get_type_hints(cls.__init__)
        for name in list(inspect.signature(cls.__init__).parameters)[1:]:
            if name in _SEAT or name in hidden:
                continue
            if name in spec_only:
                params[name] = spec_only[name]
                continue
            types = [t for t in typing.get_args(hints.get(name)) or (hints.get(name),)
                     if t is not type(None)]
            if len(types) != 1 or not isinstance(types[0], type):
                raise TypeError(f"{cls.__name__}({name}=...) needs a type hint of one type "
                                f"for bot specs (or an entry in SPEC_ONLY), got "
                                f"{hints.get(name)!r}")
            params[name] = types[0]
    return {**params, **spec_only}


#: Parameters (and their types) each kind of bot takes; ``cpp`` passes its own through.
BOT_PARAMS: dict[str, dict[str, type]] = {
    kind: spec_parameters(cls, NOT_IN_SPECS.get(kind, ()), SPEC_ONLY.get(kind))
    for kind, cls in BOT_CLASSES.items()}
BOT_KINDS = tuple(BOT_PARAMS)
#: The parameters of each of OpenSpiel's C++ bots (``cpp(bot=...)``) that it reads; pyspiel
#: ignores any other key, so a misspelt one is refused here.
CPP_BOT_PARAMS: dict[str, dict[str, type]] = {
    "uniform_random": {"seed": int},
    "fixed_action_preference": {"actions": str},  # preferred actions, e.g. 2:0:1
    "uniform_restricted_actions": {"policy_name": str},  # poker: AlwaysCall, AlwaysFold, ...
}
_INT64_MAX = 2**63 - 1
#: The per-move budget parameters of each kind of bot that searches while it plays.
SEARCH_BUDGETS: dict[str, tuple[str, ...]] = {
    "smmcts": ("iterations", "time_limit"), "mcts": ("iterations", "time_limit"),
    "oos": ("iterations", "time_limit"), "is_smmcts": ("iterations", "time_limit"),
    "sm_oos": ("iterations", "time_limit"),
    "ismcts": ("iterations", "simulations", "time_limit"),
    "mmcts": ("iterations", "training_iterations"), "doab": ("max_depth", "time_limit")}
#: Old parameter names still accepted, with a deprecation warning: {(bot, old): new}.
RENAMED = {("ismcts", "simulations"): "iterations"}
_WARNED: set[tuple[str, str]] = set()
#: Bots that search the full game state, so see hidden information in imperfect games.
PERFECT_INFORMATION_KINDS = ("smmcts", "mcts", "equilibrium")

_LOADED_SEARCHES: dict[str, PhantomTTTMultipleTreeSearch] = {}  # file -> search (read-only)


def parse_bot_spec(spec: str) -> dict:
    """``"smmcts(selector=rm,iterations=500)"`` -> ``{"name": "smmcts", ...}``, checked.

    The bot's name and parameters are checked (a misspelt one gets a suggestion), and so are
    the values every bot refuses anyway (budgets, probabilities), so that a runner refuses a
    bad spec before playing; the bot itself checks the rest when it is built.
    """
    if not isinstance(spec, str):
        raise ValueError(f"a bot spec is a string such as 'smmcts(iterations=1000)', "
                         f"got {spec!r}")
    _check_keys(spec)
    try:
        params = dict(pyspiel.game_parameters_from_string(spec.strip()))
    except pyspiel.SpielError as e:
        raise ValueError(f"malformed bot spec {spec!r}: {e}. Expected name or "
                         "name(key=value,...), e.g. smmcts(selector=rm,iterations=1000)") from None
    kind = params.get("name")
    if kind not in BOT_PARAMS:
        raise ValueError(f"unknown bot {kind!r} in spec {spec!r}"
                         f"{checks.did_you_mean(str(kind), BOT_KINDS)}; "
                         f"known bots: {', '.join(BOT_KINDS)}")
    if kind == "cpp":
        return _checked_cpp_params(spec, params)
    _check_types(spec, kind, params, BOT_PARAMS[kind])
    _rename(spec, kind, params)
    for key, value in params.items():
        try:
            if key != "name":
                _check_value(kind, key, value)
        except ValueError as e:
            raise ValueError(f"bot spec {spec!r}: {e}") from None
    return params


def _rename(spec: str, kind: str, params: dict) -> None:
    """Old parameter names (:data:`RENAMED`) in place of the new, one warning per name."""
    for (bot, old), new in RENAMED.items():
        if bot != kind or old not in params:
            continue
        if new in params:
            raise ValueError(f"bot spec {spec!r} gives both {old} and {new} (its new name); "
                             f"give {new} only")
        params[new] = params.pop(old)
        if (bot, old) not in _WARNED:
            _WARNED.add((bot, old))
            logging.warning("%s(%s=...) is deprecated: write %s(%s=...)", bot, old, bot, new)


def _check_keys(spec: str) -> None:
    """Refuse what pyspiel's parser lets through or reports obscurely: a key given twice
    (the last would silently win) and an integer beyond 64 bits ("CHECK_TRUE(success)")."""
    _, _, inner = spec.strip().partition("(")
    seen, depth, start = set(), 0, 0
    for i, char in enumerate(inner.removesuffix(")") + ","):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char != "," or depth:
            continue
        key, _, value = inner[start:i].partition("=")
        key, value, start = key.strip(), value.strip(), i + 1
        if key in seen:
            raise ValueError(f"bot spec {spec!r} gives {key} twice; give it once")
        seen.add(key)
        if value.lstrip("+-").isdigit() and abs(int(value)) > _INT64_MAX:
            raise ValueError(f"bot spec {spec!r}: {key}={value} is beyond a 64-bit integer; "
                             "give a smaller number")


def _check_types(spec: str, kind: str, params: dict, allowed: dict[str, type]) -> None:
    """Each parameter known to ``kind`` and of its type (in place: an integer or a number
    such as ``1e-3`` that pyspiel leaves as text becomes a float where a float is wanted)."""
    for key, value in params.items():
        cpp = kind in CPP_BOT_PARAMS
        if key == "name" or (cpp and key == "bot"):
            continue
        if key not in allowed:
            raise ValueError(f"unknown parameter {key!r} in bot spec {spec!r}"
                             f"{checks.did_you_mean(key, allowed)}; "
                             f"{kind} takes: {', '.join(allowed) or 'no parameters'}")
        wanted = allowed[key]
        if wanted is float and not isinstance(value, bool):
            try:
                params[key] = value = float(value)
            except ValueError:
                pass
        if cpp and wanted is str and isinstance(value, int) and not isinstance(value, bool):
            params[key] = value = str(value)  # fixed_action_preference's actions=2
        if not isinstance(value, wanted) or (isinstance(value, bool) and wanted is not bool):
            raise ValueError(f"parameter {key}={value!r} in bot spec {spec!r} must be "
                             f"{_TYPE_NAMES.get(wanted, wanted.__name__)}")


_TYPE_NAMES = {int: "an integer", float: "a number (e.g. 0.05 or 1e-3)", str: "a name",
               bool: "true or false", ThreadCount: "an integer or auto"}


def _checked_cpp_params(spec: str, params: dict) -> dict:
    """``cpp(bot=name,...)``: a registered C++ bot and the parameters it reads."""
    name = params.get("bot")
    if name not in pyspiel.registered_bots():
        raise ValueError(f"cpp bot spec {spec!r} needs bot=<one of "
                         f"{', '.join(pyspiel.registered_bots())}>"
                         f"{checks.did_you_mean(str(name), pyspiel.registered_bots())}")
    if name in CPP_BOT_PARAMS:
        _check_types(spec, name, params, CPP_BOT_PARAMS[name])
    if isinstance(params.get("seed"), int) and not 0 <= params["seed"] < 2**31:
        raise ValueError(f"bot spec {spec!r}: seed must be in 0 .. 2**31 - 1, got "
                         f"{params['seed']}")
    return params


def _check_value(kind: str, key: str, value) -> None:
    """The ranges every bot refuses, checked on the spec (before any bot is built)."""
    if key in ("iterations", "simulations", "rollouts", "training_iterations", "max_depth"):
        minimum = 0 if kind == "mmcts" else 1
        checks.check_count(value, key, minimum=minimum)
    elif key == "time_limit":
        checks.check_budget(None, value)
    elif key in ("gamma", "delta", "epsilon", "threshold"):
        checks.check_probability(value, key)
    elif key in ("c", "uct_c", "tie_tolerance") and not 0 <= value < math.inf:
        raise ValueError(f"{key} must be a non-negative finite number, got {value!r}")


def with_time_limit(spec: str, time_limit: float | None) -> str:
    """``spec`` searching ``time_limit`` seconds per move, if its bot searches while playing.

    A spec that names its own budget (``iterations``, ``simulations``, ``time_limit``) keeps
    it; a bot that does not search (random, equilibrium, ...) is returned unchanged; a bot
    that searches but cannot search by time (``mmcts``) is refused with a ValueError unless
    its spec names its budget. The text of ``spec`` is kept (``time_limit`` is appended), so
    bot labels stay those the user wrote.
    """
    if time_limit is None:
        return spec
    params = parse_bot_spec(spec)
    kind = params["name"]
    budget = SEARCH_BUDGETS.get(kind, ())
    if not budget or any(key in params for key in budget):
        return spec
    if "time_limit" not in BOT_PARAMS[kind]:
        raise ValueError(
            f"{spec.strip()} cannot search by time ({kind} takes no time_limit), so it cannot "
            f"play at {time_limit:g} s per move; name its budget in the spec to play it at "
            f"that budget ({kind} takes {', '.join(budget)}), or leave it out")
    text = spec.strip()
    name, _, rest = text.partition("(")
    inner = rest.rstrip()[:-1].strip() if rest else ""
    return f"{name.strip()}({inner + ',' if inner else ''}time_limit={time_limit:g})"


def own_budget(spec: str, time_limit: float | None = None) -> str | None:
    """The budget a searching bot's spec names itself (``iterations=500``), or None; a
    ``time_limit`` equal to the match's ``time_limit`` (given by :func:`with_time_limit`)
    is not a budget of its own."""
    params = parse_bot_spec(spec)
    named = [f"{key}={params[key]:g}" for key in SEARCH_BUDGETS.get(params["name"], ())
             if key in params and not (key == "time_limit" and params[key] == time_limit)]
    return ",".join(named) or None


def information_warning(spec: str, game: pyspiel.Game) -> str | None:
    """Why ``spec`` plays ``game`` unfairly, or None: a perfect-information search given a
    game of imperfect information reads the whole state, hidden cards and moves included."""
    kind = parse_bot_spec(spec)["name"]
    information = game.get_type().information
    perfect = (pyspiel.GameType.Information.PERFECT_INFORMATION,
               pyspiel.GameType.Information.ONE_SHOT)
    if kind not in PERFECT_INFORMATION_KINDS or information in perfect:
        return None
    return (f"{spec.strip()} searches the full state of {game}, a game of imperfect "
            "information: it sees what its opponent hides (cards, moves); for a fair match "
            "use ismcts, oos or is_smmcts")


def check_spec(spec: str, game: pyspiel.Game) -> None:
    """Refuse (ValueError) a spec whose bot cannot play ``game``, so that a run stops before
    its first game rather than in the middle: the bot is built for both seats, untrained
    (an mmcts) and unsolved (an equilibrium bot: the solver's checks only)."""
    params = parse_bot_spec(spec)
    try:
        if params["name"] == "equilibrium":
            solver.check_game(game)
            solver.check_size(game)
            return
        if params["name"] == "mmcts":
            params.update(training_iterations=0, iterations=0)
        for seat in range(game.num_players()):
            _build(dict(params), spec, game, seat, seed=0)
    except (ValueError, pyspiel.SpielError) as e:
        raise ValueError(f"{spec.strip()} cannot play {game}: {e}") from None


def make_bot(spec: str, game: pyspiel.Game, player_id: int, seed: int) -> pyspiel.Bot:
    """A fresh bot for ``player_id`` from a spec string, seeded with ``seed``."""
    return _build(parse_bot_spec(spec), spec, game, player_id, seed)


def _build(params: dict, spec: str, game: pyspiel.Game, player_id: int,
           seed: int) -> pyspiel.Bot:
    kind = params.pop("name")
    if kind in ("smmcts", "mcts", "oos", "is_smmcts", "sm_oos") and "time_limit" in params:
        params.setdefault("iterations", None)  # time alone, unless both are given
    if kind == "smmcts":
        return _smmcts_bot(game, player_id, seed, params)
    if kind == "mmcts":
        return _mmcts_bot(game, player_id, seed, params)
    if kind == "ismcts":
        if "time_limit" in params:
            params.setdefault("iterations", None)  # time alone, unless both are given
        if "iterations" in params:  # the bot's own name for its per-move budget
            params["simulations"] = params.pop("iterations")
    bot_class = BOT_CLASSES[kind]
    if bot_class is not None:  # the spec's parameters are its constructor's
        return bot_class(game, player_id, seed=seed, **params)
    if kind == "random":
        return pyspiel.make_uniform_random_bot(player_id, seed)
    if kind == "nfsp":
        return _nfsp_bot(game, player_id, seed, params)
    name = params.pop("bot")
    try:
        return pyspiel.load_bot(name, game, player_id, params)
    except pyspiel.SpielError as e:
        raise ValueError(f"bot spec {spec!r}: OpenSpiel's {name} bot cannot play {game} "
                         f"as player {player_id} with these parameters ({e})") from None


def _smmcts_bot(game: pyspiel.Game, player_id: int, seed: int, params: dict) -> SMMCTSBot:
    """SMMCTSBot; ``evaluator``: ``auto`` (the bot's default), a kernel evaluator name
    (``random_rollout``, ``heuristic``: kernel engine) or a Python evaluator of
    :func:`smmcts_spiel.search.evaluators.make_evaluator` (generic engine)."""
    name = params.pop("evaluator", "auto")
    rollouts = params.pop("rollouts", 1)
    evaluator = None
    if name in KERNEL_EVALUATORS:
        evaluator = name
    elif name != "auto" or rollouts != 1:
        evaluator = evaluators.make_evaluator("rollout" if name == "auto" else name, game,
                                              seed=seed + 2, rollouts=rollouts)
    return SMMCTSBot(game, player_id, seed=seed, evaluator=evaluator, **params)


def _mmcts_bot(game: pyspiel.Game, player_id: int, seed: int, params: dict) -> MMCTSBot:
    """MMCTSBot; with ``file`` it plays a saved Phantom TTT search (loaded once per process
    and shared by every bot that only reads it)."""
    path = params.pop("file", None)
    if path is None:
        return MMCTSBot(game, player_id, seed=seed, **params)
    if not os.path.isfile(path):
        raise ValueError(f"mmcts(file={path}): no such file; give a search saved by "
                         "PhantomTTTMultipleTreeSearch.save (experiments/olympiad/olympiad.py "
                         "caches them)")
    params.setdefault("training_iterations", 0)
    if params.get("training_iterations") or params.get("iterations"):
        search = _load_search(path)  # trained further: a private copy
    else:
        if path not in _LOADED_SEARCHES:
            _LOADED_SEARCHES[path] = _load_search(path)
        search = _LOADED_SEARCHES[path]
    return MMCTSBot(game, player_id, seed=seed, search=search, **params)


def _load_search(path: str) -> PhantomTTTMultipleTreeSearch:
    """The search saved at ``path``; ValueError saying which files the spec takes (the
    loader's advice to delete the file is for the caches it wrote, not a user's file)."""
    try:
        return PhantomTTTMultipleTreeSearch.load(path)
    except ValueError as e:
        reason = str(e).removesuffix("; delete it to train again")
        raise ValueError(f"mmcts(file={path}) takes a search saved by "
                         "PhantomTTTMultipleTreeSearch.save (experiments/olympiad/olympiad.py "
                         f"caches them): {reason}") from None


def _nfsp_bot(game: pyspiel.Game, player_id: int, seed: int, params: dict) -> pyspiel.Bot:
    """The average policy of a saved MC-NFSP or ANFSP run (needs the ``nfsp`` extra)."""
    path = params.get("file")
    if path is None or not os.path.isfile(path):
        raise ValueError(f"nfsp(file={path}): no such file; give a checkpoint saved by "
                         "MCNFSP.save or ANFSP.save (experiments/nfsp/nfsp_othello.py and "
                         "experiments/nfsp/nfsp_poker.py write them under results/nfsp/)")
    try:
        with extras.required("nfsp", "nfsp(file=...)"):
            from smmcts_spiel.nfsp.policy import PolicyBot
            from smmcts_spiel.nfsp.runs import load_run
    except extras.MissingExtraError as error:
        raise ValueError(str(error)) from None
    run = load_run(path, game)
    return PolicyBot(run.average_policy(), player_id, seed=seed)
