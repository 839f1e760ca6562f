"""Exact exploitability of a bot as it plays: its answers at every decision point, evaluated.

A bot in a match searches anew at every decision point, so the strategy it plays is the
collection of its answers. :func:`online_exploitability` asks a bot (a spec of
:mod:`smmcts_spiel.bot_specs`, or a factory ``(game, player, seed) -> pyspiel.Bot``) for
its move distribution at every decision point of a small game (``samples`` times, each
with its own seed), and evaluates the profile exactly with
:func:`smmcts_spiel.exact.sampled_strategy.evaluate` (e1, e2, NashConv, a bootstrap
standard error over the searches). docs/online_exploitability.md defines what it measures.

What a bot plays at a point (:func:`played_distribution`): the distribution its action is
drawn from. A bot that provides a policy (``step_with_policy``) samples its move from the
distribution it returns, which is then used as it is (no sampling noise beyond the
search's own); SMMCTSBot where it moves alone plays its most visited action, and a bot
that only returns an action (``step``) is scored by that action, so there ``samples``
searches give the empirical distribution.

``history`` says which bot answers at a point:

* ``"fresh"``: a new bot, restarted at the point's state (``restart_at``), one search;
  transposed states share their point (the bot's answer must depend on the position only);
* ``"stitched"``: a bot that played the game from its start along the point's history, as
  in a match (it stepped at each of its own earlier decision points, the history's action
  applied whatever it chose, and was told of every other move), then answers at the point:
  the *full stitching* of Lisy, Lanctot and Bowling (2015). Sample ``i`` is the same bot
  (seed) at every point;
* ``"played"``: the same bots, each sample weighted by the probability that its bot played
  the history's own earlier actions itself, so the strategy at a point is the bot's move
  distribution there given that it reached the point (the behaviour strategy equivalent to
  the bot's play over its seeds, Kuhn's theorem). Samples whose bot would never have
  played the history get weight 0.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pyspiel

from smmcts_spiel import bot_specs, checks, match
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import sampled_strategy
from smmcts_spiel.exact.sampled_strategy import DecisionPoint, SampledReport
from smmcts_spiel.experiments import runner
from smmcts_spiel.imperfect import information_sets

HISTORIES = ("fresh", "stitched", "played")
#: Default searches per decision point: 2 is the least a standard error needs; more shrink
#: the error and the bias (docs/online_exploitability.md).
SAMPLES = 4
#: Jobs an estimate is split into at most (the progress bar's and a resumed run's unit).
MAX_JOBS = 200

BotFactory = Callable[[pyspiel.Game, int, int], pyspiel.Bot]


def played_distribution(bot: pyspiel.Bot, state: pyspiel.State, player: int,
                        name: str = "the bot") -> dict[int, float]:
    """The distribution ``bot`` draws its move from at ``state`` (one search): the policy
    of ``step_with_policy`` for a bot that provides one (SMMCTSBot moving alone: its move,
    its most visited action), else the action of ``step``. An action or policy outside the
    legal actions, or a move outside the returned policy, is refused (ValueError)."""
    legal = state.legal_actions(player)
    if bot.provides_policy():
        policy, action = bot.step_with_policy(state)
        _check_action(action, legal, name, state)
        if isinstance(bot, SMMCTSBot) and not state.is_simultaneous_node():
            return {int(action): 1.0}
        probs = dict(policy)
        try:
            p = checks.check_distribution(probs, legal, state)
        except ValueError as e:
            raise ValueError(f"{name} (player {player}) returned a policy that is not a "
                             f"distribution over its legal actions: {e}") from None
        if p[legal.index(action)] <= 0:
            raise ValueError(f"{name} (player {player}) played {action}, to which the policy "
                             f"it returned gives probability 0, at\n{state}")
        return {a: q for a, q in zip(legal, p, strict=True) if q > 0}
    action = bot.step(state)
    _check_action(action, legal, name, state)
    return {int(action): 1.0}


def _check_action(action, legal: list[int], name: str, state: pyspiel.State) -> None:
    if action not in legal:
        raise ValueError(f"{name} returned the illegal action {action!r} (legal: {legal}) "
                         f"at\n{state}")


# ----------------------------------------------------------------------------------------
# The job: samples at a chunk of decision points


def _sample_seed(seed: int, key: str, sample: int, history: str) -> int:
    # "fresh": every (point, sample) its own seed; otherwise sample i is one bot everywhere.
    return sampled_strategy.key_seed(seed, f"{key}#{sample}" if history == "fresh"
                                     else f"#{sample}")


def _answer(game: pyspiel.Game, bot: str | BotFactory, point: DecisionPoint, seed: int,
            history: str) -> tuple[dict[int, float], float, int]:
    """(the played distribution at ``point``, the weight, searches) for one sample."""
    name = match.bot_label(bot)
    player = point.player
    instance = match.build_bot(bot, game, player, seed)
    searches = 0
    if history == "fresh":
        state = information_sets.replay(game, point.history)
        instance.restart_at(state)
        return played_distribution(instance, state, player, name), 1.0, 1
    # Replay the game along the history as a match does (evaluate_bots), the bot
    # stepping at each of its moves and told of the others.
    state = game.new_initial_state()
    instance.restart_at(state)
    weight = 1.0
    moves = list(point.history)
    k = 0
    while k < len(moves):
        if state.is_chance_node():
            instance.inform_action(state, pyspiel.PlayerId.CHANCE, moves[k])
            state.apply_action(moves[k])
            k += 1
            continue
        if state.is_simultaneous_node():
            own, step = moves[k + player], 2
        else:
            own, step = moves[k], 1
        if state.is_simultaneous_node() or state.current_player() == player:
            if state.legal_actions(player):
                dist = played_distribution(instance, state, player, name)
                searches += 1
                weight *= dist.get(own, 0.0)
        else:
            instance.inform_action(state, state.current_player(), own)
        if step == 2:
            state.apply_actions(moves[k:k + 2])
        else:
            state.apply_action(own)
        k += step
    dist = played_distribution(instance, state, player, name)
    return dist, (weight if history == "played" else 1.0), searches + 1


def sample_points(game: str, bot: str | BotFactory, points: list, samples: int, seed: int,
                  history: str) -> dict[str, np.ndarray]:
    """One job: ``samples`` answers at each of ``points`` (``[key, player, history,
    actions]`` lists), as ``distributions`` (points x samples x most actions, over each
    point's actions), ``weights`` (points x samples), ``seconds`` and ``searches``."""
    loaded = pyspiel.load_game(game)
    width = max((len(p[3]) for p in points), default=1)
    distributions = np.zeros((len(points), samples, width))
    weights = np.ones((len(points), samples))
    searches = 0
    start = time.perf_counter()
    for n, (key, player, moves, actions) in enumerate(points):
        point = DecisionPoint(key, player, tuple(moves), tuple(actions))
        for i in range(samples):
            dist, weights[n, i], count = _answer(loaded, bot, point,
                                                 _sample_seed(seed, key, i, history), history)
            searches += count
            for a, p in dist.items():
                distributions[n, i, actions.index(a)] = p
    return {"distributions": distributions, "weights": weights,
            "seconds": np.array(time.perf_counter() - start), "searches": np.array(searches)}


# ----------------------------------------------------------------------------------------
# The estimate


def check_bot(bot: str | BotFactory, game: pyspiel.Game) -> None:
    """Refuse a bot that cannot have a strategy here: a malformed spec, or a search of the
    full state on a game of imperfect information (its answer at an information set would
    depend on the hidden state it was shown, which is not a strategy)."""
    if isinstance(bot, pyspiel.Bot):
        raise ValueError(f"bot is a {type(bot).__name__} object, but every decision point "
                         "needs a fresh bot (one search each, its own seed): pass a spec "
                         "string or a factory (game, player, seed) -> pyspiel.Bot")
    if not isinstance(bot, str):
        if not callable(bot):
            raise ValueError(f"bot must be a bot spec string (e.g. 'smmcts(time_limit=0.1)') "
                             f"or a factory (game, player, seed) -> pyspiel.Bot; got "
                             f"{type(bot).__name__}")
        return
    kind = bot_specs.parse_bot_spec(bot)["name"]
    if (kind in bot_specs.PERFECT_INFORMATION_KINDS
            and not sampled_strategy.has_perfect_information_between_stages(game)):
        raise ValueError(
            f"{bot.strip()} reads the full state of {game}, a game of imperfect "
            "information: its answer at an information set depends on the hidden cards or "
            "moves it is shown, so it has no strategy to evaluate; use an information-set "
            "search (oos, is_smmcts, ismcts)")


def online_exploitability(game: pyspiel.Game | str, bot: str | BotFactory, *,
                          samples: int = SAMPLES, seed: int = 0, history: str = "fresh",
                          bootstrap: int = sampled_strategy.BOOTSTRAP,
                          transpositions: bool = True,
                          max_states: int | None = sampled_strategy.MAX_STATES,
                          results_dir: str | os.PathLike | None = None,
                          backend: str = "serial", workers: int | None = None,
                          ray_address: str | None = None,
                          value: float | None = None, progress: bool = True,
                          pool: ProcessPoolExecutor | None = None) -> SampledReport:
    """e1, e2 and NashConv of the strategy ``bot`` plays in ``game``, exactly, with the
    bootstrap standard error of its ``samples`` searches per decision point.

    Args:
      game: a small two-player zero-sum game (or its string): perfect information between
        stages (Goofspiel, Oshi-Zumo, Blotto, random stacked matrix games, ...) or imperfect
        information with information state strings (Kuhn, Leduc, II-Goofspiel).
      bot: a bot spec (``"smmcts(time_limit=0.1)"``) or a factory ``(game, player, seed)
        -> pyspiel.Bot``: a module-level function or class, which the process pool and Ray
        can load and a resumed estimate recognises by its qualified name (a factory object
        is recorded by its ``repr``, which must then say what it builds).
      samples: searches per decision point, each with its own seed.
      seed: base seed of every search (the results do not depend on the backend).
      history: ``"fresh"``, ``"stitched"`` or ``"played"`` (module docstring).
      bootstrap: replicates of the bootstrap behind ``stderr`` and ``bias``.
      transpositions: with ``history="fresh"``, ask once per transposition class.
      max_states: refuse at once a game whose best response would walk more states
        (:func:`smmcts_spiel.exact.sampled_strategy.decision_points`; None: no limit).
      results_dir: where finished chunks of points are saved, so that an interrupted
        estimate resumes; None: a temporary folder, removed afterwards.
      backend, workers, ray_address: :func:`smmcts_spiel.experiments.run_jobs`'s
        (``"serial"``, ``"process"``, ``"ray"``); timed budgets want one search per core.
      value: the game value, if known (otherwise computed, see ``evaluate``).
      progress: a tqdm bar over the chunks of points.
      pool: a process pool (:func:`smmcts_spiel.experiments.runner.process_pool`) shared by
        several estimates with ``backend="process"``, so its workers start once.

    Returns a :class:`~smmcts_spiel.exact.sampled_strategy.SampledReport` whose
    ``seconds`` is the wall-clock time of the whole estimate and ``searches`` the bot's
    searches (``search_seconds`` their time, summed over workers).
    """
    start = time.perf_counter()
    game = checks.load_game(game)
    if history not in HISTORIES:
        raise ValueError(f"history must be one of {', '.join(HISTORIES)}, got {history!r}")
    samples = checks.check_count(samples, "samples", minimum=1)
    bootstrap = checks.check_count(bootstrap, "bootstrap", minimum=0)
    if backend not in runner.BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(runner.BACKENDS)}, got "
                         f"{backend!r}")
    check_bot(bot, game)
    points = sampled_strategy.decision_points(
        game, transpositions=transpositions and history == "fresh", max_states=max_states)
    # One answer per player before anything is written: a bot that cannot be built or
    # plays illegally is refused now.
    for player in (0, 1):
        first = next((p for p in points.points if p.player == player), None)
        if first is not None:
            _answer(game, bot, first, _sample_seed(seed, first.key, 0, history), "fresh")
    chunk = max(1, math.ceil(len(points) / MAX_JOBS))
    chunks = [points.points[n:n + chunk] for n in range(0, len(points), chunk)]
    jobs: dict[str, dict[str, Any]] = {
        f"points_{n:05d}": dict(game=str(game), bot=bot,
                                points=[[p.key, p.player, list(p.history), list(p.actions)]
                                        for p in part],
                                samples=samples, seed=seed, history=history)
        for n, part in enumerate(chunks)}
    with tempfile.TemporaryDirectory(prefix="online_exploitability_") as scratch:
        results = runner.run_jobs(sample_points, jobs, results_dir=results_dir or scratch,
                                  workers=workers, backend=backend,
                                  ray_address=ray_address, progress=progress,
                                  desc=f"{match.bot_label(bot)} on {game.get_type().short_name}",
                                  pool=pool)
    answers: dict[str, tuple] = {}
    searches, search_seconds = 0, 0.0
    for key, part in zip(jobs, chunks, strict=True):
        result = results[key]
        for n, point in enumerate(part):
            answers[point.key] = (result["distributions"][n, :, :len(point.actions)],
                                  result["weights"][n])
        searches += int(result["searches"])
        search_seconds += float(result["seconds"])
    report = sampled_strategy.evaluate(points, answers, bootstrap=bootstrap, seed=seed,
                                       value=value)
    return dataclasses.replace(report, seconds=time.perf_counter() - start,
                               searches=searches, search_seconds=search_seconds)
