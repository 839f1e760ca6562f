"""Bot spec strings: every bot we ship, named in OpenSpiel's game-string syntax.

A spec is ``name`` or ``name(key=value,...)``; :func:`make_bot` builds a fresh, seeded
``pyspiel.Bot`` from it for one seat of a game::

    smmcts(selector=rm,gamma=0.05,time_limit=0.1)   our SMMCTSBot (SM-MCTS); evaluator=auto
                                                    (the bot's default), random_rollout or
                                                    heuristic (kernel engine), rollout,
                                                    goofspiel or oshi_zumo (Python, generic
                                                    engine); rollouts=N playouts per leaf;
                                                    threads=N trees searched at once;
                                                    parallel=tree: N threads grow one tree
    mmcts(training_iterations=100000,gamma=0.1)     MMCTSBot, trained when built
    mmcts(file=trees/x.npz,final_strategy=empirical)  MMCTSBot on a saved Phantom TTT search
    belief_sampler                                  the Belief Sampler (Phantom TTT)
    oos(delta=0.9,epsilon=0.6,time_limit=0.1)       OOSBot (Online Outcome Sampling; compiled
                                                    where the game has an information kernel);
                                                    preset=paper: the AAMAS 2015 settings
    is_smmcts(selector=exp3,gamma=0.1,iterations=1000)  ISSMMCTSBot (information sets)
    ismcts(time_limit=0.1,worlds=auto)              OpenSpiel's ISMCTSBot, any game with
                                                    information states; simulations=N
                                                    per move (default 100), uct_c=2,
                                                    final_policy=max_visit
    mcts(time_limit=0.1,engine=cpp)                 OpenSpiel's MCTSBot, Python or C++;
                                                    seats=first or second: both seats by
                                                    one mover's rule (symmetric games)
    equilibrium                                     samples the exact solution (solver)
    random                                          uniform random
    nfsp(file=run.npz)                              average policy of an MC-NFSP / ANFSP checkpoint
    cpp(bot=uniform_random,...)                     any bot in pyspiel.registered_bots()

Budgets are per move: ``iterations`` (ISMCTS: ``simulations``) and/or ``time_limit``
(seconds); giving only ``time_limit`` searches by time alone.
"""

from __future__ import annotations

import math
import os

import pyspiel

from smmcts_spiel import checks, nfsp
from smmcts_spiel.bots import BeliefSamplerBot, ISSMMCTSBot, MMCTSBot, OOSBot, SMMCTSBot
from smmcts_spiel.bots.equilibrium_bot import EquilibriumBot
from smmcts_spiel.bots.openspiel_bots import ISMCTSBot, TurnBasedMCTSBot
from smmcts_spiel.games.kernels import EVALUATORS as KERNEL_EVALUATORS
from smmcts_spiel.imperfect.mmcts_phantom_ttt import PhantomTTTMultipleTreeSearch
from smmcts_spiel.search import evaluators

#: Parameters (and their types) each kind of bot takes; ``cpp`` passes its own through.
BOT_PARAMS: dict[str, dict[str, type]] = {
    "smmcts": {"selector": str, "gamma": float, "c": float, "iterations": int,
               "time_limit": float, "final_strategy": str, "threshold": float,
               "evaluator": str, "rollouts": int, "engine": str, "threads": int,
               "parallel": str},
    "mmcts": {"training_iterations": int, "gamma": float, "iterations": int,
              "final_strategy": str, "engine": str, "train_from": str, "file": str},
    "belief_sampler": {},
    "oos": {"iterations": int, "time_limit": float, "delta": float, "epsilon": float,
            "engine": str, "gamma": float, "final_strategy": str, "threshold": float,
            "weighting": bool, "preset": str},
    "is_smmcts": {"selector": str, "gamma": float, "c": float, "iterations": int,
                  "time_limit": float, "final_strategy": str, "threshold": float,
                  "engine": str},
    "ismcts": {"simulations": int, "time_limit": float, "uct_c": float, "worlds": str,
               "final_policy": str},
    "mcts": {"iterations": int, "time_limit": float, "uct_c": float, "rollouts": int,
             "engine": str, "seats": str},
    "equilibrium": {},
    "random": {},
    "nfsp": {"file": str},
    "cpp": {},
}
BOT_KINDS = tuple(BOT_PARAMS)
#: The per-move budget parameters of each kind of bot that searches while it plays.
SEARCH_BUDGETS: dict[str, tuple[str, ...]] = {
    "smmcts": ("iterations", "time_limit"), "mcts": ("iterations", "time_limit"),
    "oos": ("iterations", "time_limit"), "is_smmcts": ("iterations", "time_limit"),
    "ismcts": ("simulations", "time_limit"), "mmcts": ("iterations", "training_iterations")}
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
        return params
    allowed = BOT_PARAMS[kind]
    for key, value in params.items():
        if key == "name":
            continue
        if key not in allowed:
            raise ValueError(f"unknown parameter {key!r} in bot spec {spec!r}"
                             f"{checks.did_you_mean(key, allowed)}; "
                             f"{kind} takes: {', '.join(allowed) or 'no parameters'}")
        wanted = allowed[key]
        if wanted is float and isinstance(value, int) and not isinstance(value, bool):
            params[key] = value = float(value)
        elif not isinstance(value, wanted) or (isinstance(value, bool) and wanted is not bool):
            raise ValueError(f"parameter {key}={value!r} in bot spec {spec!r} must be "
                             f"{'an integer' if wanted is int else wanted.__name__}")
        try:
            _check_value(kind, key, value)
        except ValueError as e:
            raise ValueError(f"bot spec {spec!r}: {e}") from None
    return params


def _check_value(kind: str, key: str, value) -> None:
    """The ranges every bot refuses, checked on the spec (before any bot is built)."""
    if key in ("iterations", "simulations", "rollouts", "training_iterations"):
        minimum = 0 if kind == "mmcts" else 1
        checks.check_count(value, key, minimum=minimum)
    elif key == "time_limit":
        checks.check_budget(None, value)
    elif key in ("gamma", "delta", "epsilon", "threshold"):
        checks.check_probability(value, key)
    elif key in ("c", "uct_c") and not 0 <= value < math.inf:
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


def make_bot(spec: str, game: pyspiel.Game, player_id: int, seed: int) -> pyspiel.Bot:
    """A fresh bot for ``player_id`` from a spec string, seeded with ``seed``."""
    params = parse_bot_spec(spec)
    kind = params.pop("name")
    if kind in ("smmcts", "mcts", "oos", "is_smmcts") and "time_limit" in params:
        params.setdefault("iterations", None)  # time alone, unless both are given
    if kind == "smmcts":
        return _smmcts_bot(game, player_id, seed, params)
    if kind == "equilibrium":
        return EquilibriumBot(game, player_id, seed=seed)
    if kind == "mcts":
        return TurnBasedMCTSBot(game, player_id, seed=seed, **params)
    if kind == "mmcts":
        return _mmcts_bot(game, player_id, seed, params)
    if kind == "belief_sampler":
        return BeliefSamplerBot(game, player_id, seed=seed)
    if kind == "oos":
        return OOSBot(game, player_id, seed=seed, **params)
    if kind == "is_smmcts":
        return ISSMMCTSBot(game, player_id, seed=seed, **params)
    if kind == "ismcts":
        if "time_limit" in params:
            params.setdefault("simulations", None)  # time alone, unless both are given
        return ISMCTSBot(game, player_id, seed=seed, **params)
    if kind == "random":
        return pyspiel.make_uniform_random_bot(player_id, seed)
    if kind == "nfsp":
        return _nfsp_bot(game, player_id, seed, params)
    name = params.pop("bot", None)
    if name not in pyspiel.registered_bots():
        raise ValueError(f"cpp bot spec {spec!r} needs bot=<one of "
                         f"{', '.join(pyspiel.registered_bots())}>")
    return pyspiel.load_bot(name, game, player_id, params)


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
                         "PhantomTTTMultipleTreeSearch.save (scripts/olympiad.py caches them)")
    params.setdefault("training_iterations", 0)
    if params.get("training_iterations") or params.get("iterations"):
        search = PhantomTTTMultipleTreeSearch.load(path)  # trained further: a private copy
    else:
        if path not in _LOADED_SEARCHES:
            _LOADED_SEARCHES[path] = PhantomTTTMultipleTreeSearch.load(path)
        search = _LOADED_SEARCHES[path]
    return MMCTSBot(game, player_id, seed=seed, search=search, **params)


def _nfsp_bot(game: pyspiel.Game, player_id: int, seed: int, params: dict) -> pyspiel.Bot:
    """The average policy of a saved MC-NFSP or ANFSP run (needs the ``nfsp`` extra)."""
    path = params.get("file")
    if path is None or not os.path.isfile(path):
        raise ValueError(f"nfsp(file={path}): no such file; give a checkpoint saved by "
                         "MCNFSP.save or ANFSP.save (scripts/nfsp_othello.py and "
                         "scripts/nfsp_poker.py write them under results/nfsp/)")
    try:
        from smmcts_spiel.nfsp import checkpoints
        from smmcts_spiel.nfsp.policy import PolicyBot
    except ImportError as e:
        raise ValueError(f"nfsp(file=...): {nfsp.missing_extra(e)}") from None
    run = checkpoints.load_run(path, game)
    return PolicyBot(run.average_policy(), player_id, seed=seed)
