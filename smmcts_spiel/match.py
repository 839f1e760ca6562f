"""Matches between bots, for any two-player zero-sum or constant-sum game, perfect or
imperfect information. A bot is a spec string (:mod:`smmcts_spiel.bot_specs`), a factory
``(game, player_id, seed) -> pyspiel.Bot`` (a user's own bot, built afresh for every game)
or a ``pyspiel.Bot`` object (played as it is in every game it is given, restarted by
``evaluate_bots``: it must play whichever seat it gets; a factory is the safer choice).

Every game is played by fresh bots from one seed, so games are independent and can be
spread over workers: game ``g`` of the ordered pair number ``p`` (first bot in seat 0)
uses ``seed = game_seed(base_seed, p, g)``; the first bot is seeded with ``seed``, the
second with ``seed + 1``, chance with ``numpy.random.RandomState(seed)``.
:func:`play_games` plays a range of such games (a job for
:func:`smmcts_spiel.experiments.run_jobs`); :func:`play_match` alternates the seats.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import pyspiel
from absl import logging
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots
from tqdm.auto import tqdm

from smmcts_spiel import checks, reports
from smmcts_spiel.bot_specs import check_spec, information_warning, make_bot, own_budget
from smmcts_spiel.reports import tables

#: A bot of a match: a spec string, a factory ``(game, player_id, seed) -> pyspiel.Bot``,
#: or a ``pyspiel.Bot`` object.
BotLike: TypeAlias = str | pyspiel.Bot | Callable[[pyspiel.Game, int, int], pyspiel.Bot]


def bot_label(bot: BotLike) -> str:
    """How tables name ``bot``: its spec, or the name of its factory or class."""
    if isinstance(bot, str):
        return bot
    if not isinstance(bot, pyspiel.Bot) and hasattr(bot, "__qualname__"):
        return bot.__qualname__
    return type(bot).__name__


def build_bot(bot: BotLike, game: pyspiel.Game, player_id: int, seed: int) -> pyspiel.Bot:
    """The ``pyspiel.Bot`` that plays seat ``player_id`` of one game of ``game``."""
    if isinstance(bot, str):
        return make_bot(bot, game, player_id, seed)
    if isinstance(bot, pyspiel.Bot):
        return bot
    if not callable(bot):
        raise ValueError(f"a bot is a spec string, a pyspiel.Bot or a factory (game, "
                         f"player_id, seed) -> pyspiel.Bot; got {bot!r}")
    built = bot(game, player_id, seed)
    if not isinstance(built, pyspiel.Bot):
        raise ValueError(f"the bot factory {bot_label(bot)} returned {built!r}, not a "
                         "pyspiel.Bot")
    return built


def game_seed(base_seed: int, pair_index: int, game_index: int) -> int:
    """The seed of one game: a 31-bit int (pyspiel bots take 32-bit signed seeds)."""
    state = np.random.SeedSequence([base_seed, pair_index, game_index]).generate_state(1)[0]
    return int(state) % (2**31 - 2)


def check_match_game(game: pyspiel.Game) -> None:
    """Matches need two players whose utilities sum to a constant, and a game that can be
    played (one random game is played to check it)."""
    checks.check_game(game, "a match", perfect_information=False)
    checks.check_playable(game)


def check_bots(bots: Iterable[BotLike], games: Iterable[pyspiel.Game]) -> None:
    """Refuse (ValueError) a bot that cannot play one of the games, before any game: a spec
    (:func:`~smmcts_spiel.bot_specs.check_spec`), a factory (built for both seats)."""
    bots = list(bots)
    for game in games:
        for bot in bots:
            if isinstance(bot, str):
                check_spec(bot, game)
            elif not isinstance(bot, pyspiel.Bot):
                for seat in range(game.num_players()):
                    try:
                        build_bot(bot, game, seat, seed=0)
                    except (ValueError, pyspiel.SpielError) as e:
                        raise ValueError(f"{bot_label(bot)} cannot play {game}: {e}") from None


def warn_about_bots(specs: Iterable[BotLike], games: Iterable[pyspiel.Game],
                    time_limit: float | None = None) -> None:
    """Check every spec against every game (ValueError, :func:`check_bots`), and log a
    warning for each bot that makes the matches unequal: a searching bot that keeps its own
    budget when the others get ``time_limit`` seconds per move, a perfect-information search
    on a game of imperfect information."""
    bots, games = list(specs), list(games)
    check_bots(bots, games)
    named = [spec for spec in bots if isinstance(spec, str)]  # a user's bots: no warnings
    if time_limit is not None:
        for spec in named:
            budget = own_budget(spec, time_limit)
            if budget:
                logging.warning("%s plays at its own budget (%s), not at %g s per move",
                                spec, budget, time_limit)
    for game in games:
        for spec in named:
            warning = information_warning(spec, game)
            if warning:
                logging.warning("%s", warning)


def play_game(game: pyspiel.Game, first: BotLike, second: BotLike, seed: int) -> np.ndarray:
    """One game, ``first`` in seat 0 (seeded ``seed``), ``second`` in seat 1 (``seed + 1``)."""
    bots = [build_bot(first, game, 0, seed), build_bot(second, game, 1, seed + 1)]
    return np.asarray(evaluate_bots(game.new_initial_state(), bots,
                                    np.random.RandomState(seed)), dtype=float)


def play_games(game: str, first: BotLike, second: BotLike, base_seed: int, pair_index: int,
               start: int, stop: int) -> dict[str, np.ndarray]:
    """Games ``start..stop-1`` of one ordered pair: ``returns`` (games x 2) and ``seconds``.

    Takes only plain arguments (specs, or factories that pickle: module-level functions),
    so it runs as a job on a process pool or Ray.
    """
    loaded = pyspiel.load_game(game)
    returns, seconds = [], []
    for g in range(start, stop):
        begin = time.perf_counter()
        returns.append(play_game(loaded, first, second, game_seed(base_seed, pair_index, g)))
        seconds.append(time.perf_counter() - begin)
    return {"returns": np.array(returns, dtype=float).reshape(-1, 2),
            "seconds": np.array(seconds)}


@dataclass
class MatchResult:
    """Outcomes from the first bot's point of view."""

    bot_a: str
    bot_b: str
    # bot A's return in each game, relative to the game's zero point
    returns: list[float] | np.ndarray

    @property
    def games(self) -> int:
        return len(self.returns)

    def _count(self, sign: int) -> int:
        return sum(1 for r in self.returns if np.sign(r) == sign)

    @property
    def wins(self) -> int:
        return self._count(1)

    @property
    def draws(self) -> int:
        return self._count(0)

    @property
    def losses(self) -> int:
        return self._count(-1)

    @property
    def mean(self) -> float:
        return float(np.mean(self.returns))

    @property
    def interval(self) -> reports.Interval:
        """The mean return with its 95% t interval (undefined below two games, or when every
        game had the same return)."""
        return reports.mean_interval(self.returns)

    @property
    def ci95(self) -> float:
        """Half-width of the 95% t interval of the mean return (inf when undefined)."""
        return self.interval.half_width

    def rate(self, sign: int) -> reports.Interval:
        """The rate of A's wins (``sign=1``), draws (0) or losses (-1), Wilson interval."""
        return reports.rate_interval(self._count(sign), self.games)

    @property
    def score(self) -> float:
        """A's mean score: 1 per win, 1/2 per draw."""
        return float(np.mean((np.sign(self.returns) + 1) / 2))


def load_compiled_code(game: pyspiel.Game, bots: Iterable[BotLike]) -> None:
    """Build each spec's bot once, so that numba compiles (or loads from its cache) the
    bot's code here, before a progress bar starts its clock, not inside the first game."""
    for bot in bots:
        if isinstance(bot, str):
            make_bot(bot, game, 0, 0)


def play_match(game: pyspiel.Game, bot_a: BotLike, bot_b: BotLike, num_games: int,
               seed: int = 0, progress: bool = True) -> MatchResult:
    """``num_games`` games of A against B, A taking seat 0 in even games and seat 1 in odd.

    Game ``k`` is game ``k`` of the ordered pair (A, B) (pair index 0) when ``k`` is even,
    of (B, A) (pair index 1) when odd. Returns are relative to the game's zero point, so for
    a constant-sum game A's "return" is its utility minus half the utility sum.
    """
    check_match_game(game)
    checks.check_count(num_games, "num_games", minimum=1)
    check_bots([bot_a, bot_b], [game])
    load_compiled_code(game, [bot_a, bot_b])
    half_sum = game.utility_sum() / 2
    returns = []
    label_a, label_b = bot_label(bot_a), bot_label(bot_b)
    for k in tqdm(range(num_games), desc=f"{label_a} vs {label_b}", disable=not progress,
                  leave=False):
        seat_a = k % 2
        first, second = (bot_a, bot_b) if seat_a == 0 else (bot_b, bot_a)
        result = play_game(game, first, second, game_seed(seed, seat_a, k))
        returns.append(float(result[seat_a] - half_sum))
    return MatchResult(label_a, label_b, returns)


def round_robin(game: pyspiel.Game, specs: list[BotLike], num_games: int, seed: int = 0,
                progress: bool = True) -> list[MatchResult]:
    """Every pair of distinct specs plays one match of ``num_games`` games; every spec is
    checked against the game before the first."""
    check_match_game(game)
    check_bots(specs, [game])
    pairs = list(itertools.combinations(specs, 2))
    results = []
    for k, (a, b) in enumerate(tqdm(pairs, desc="round robin", disable=not progress)):
        results.append(play_match(game, a, b, num_games, seed=seed + k, progress=progress))
    return results


def format_table(results: list[MatchResult]) -> str:
    """A plain-text table: one row per match, from the first bot's point of view, with the
    95% intervals of A's win rate (Wilson) and mean return (t)."""
    rows = [[r.bot_a, r.bot_b, r.games, r.wins, r.draws, r.losses,
             r.rate(1).format(digits=2, sign=False, style="[]"), r.interval.format()]
            for r in results]
    return tables.text(rows, ["bot A", "bot B", "games", "wins", "draws", "losses",
                              "win rate A [95%]", "mean return A (95% interval)"])
