"""Round-robin tournaments at equal time per move: jobs, per-pair results, Elo ratings.

Every ordered pair of distinct bots plays ``num_games`` games of every game (so each pair
meets ``2 num_games`` times, both seats equally; a gauntlet plays only the pairs with one
of the last ``num_opponents`` bots), in chunks that are resumable jobs for
:func:`smmcts_spiel.experiments.run_jobs` (:func:`tournament_jobs`). Game ``g`` of ordered
pair ``p`` of game number ``k`` is seeded by the match runner's
``game_seed(seed, k * 10**6 + p, g)`` (:mod:`smmcts_spiel.match`).

Ratings are a Bradley-Terry fit (:func:`fit_elo`): bot ``i`` scores ``s = 1, 1/2, 0``
(win, draw, loss) against ``j`` with expected score ``1 / (1 + 10**((r_j - r_i) / 400))``
(the Elo scale); the ratings maximise the likelihood of the scores, with one virtual draw
per pair of bots so that a perfect record has a finite rating, and are centred on mean 0.
Their 95% intervals come from a seeded bootstrap over games.
"""

from __future__ import annotations

import csv
import itertools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from smmcts_spiel import checks
from smmcts_spiel.match import MatchResult

#: Pair indices of different games are this far apart, so no two games share seeds.
GAME_STRIDE = 10**6
ELO_SCALE = 400 / math.log(10)  # rating points per unit of log-odds


#: The columns of a tournament's ``games.csv`` that its tables are computed from.
GAMES_CSV_COLUMNS = ("game", "first", "second", "return_first", "return_second")


def read_games_csv(path: str | os.PathLike) -> list[dict]:
    """The games of a ``games.csv`` written by ``scripts/tournament.py`` (returns as floats);
    ValueError naming the file and what is wrong with it."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in GAMES_CSV_COLUMNS if c not in (reader.fieldnames or ())]
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ValueError(f"cannot read {os.fspath(path)}: {e}") from None
    if missing:
        raise ValueError(f"{os.fspath(path)} has no column {missing[0]!r}: a games.csv "
                         f"written by scripts/tournament.py has {', '.join(GAMES_CSV_COLUMNS)}")
    if not rows:
        raise ValueError(f"{os.fspath(path)} holds no games")
    for line, row in enumerate(rows, 2):
        for column in ("return_first", "return_second"):
            try:
                value = float(row[column])
            except (TypeError, ValueError):
                raise ValueError(f"{os.fspath(path)}, line {line}: {column} "
                                 f"{row[column]!r} is not a number") from None
            row[column] = value
            if not math.isfinite(value):
                raise ValueError(f"{os.fspath(path)}, line {line}: {column} is not finite")
    return rows


def ordered_pairs(num_bots: int, num_opponents: int = 0) -> list[tuple[int, int]]:
    """Round robin: every ordered pair of distinct bots. With ``num_opponents`` (the last
    bots of the list) a gauntlet: every other bot against each opponent, both seats."""
    pairs = list(itertools.permutations(range(num_bots), 2))
    if num_opponents:
        first_opponent = num_bots - num_opponents
        pairs = [(i, j) for i, j in pairs if (i >= first_opponent) != (j >= first_opponent)]
    return pairs


def tournament_jobs(games: Sequence[str], bots: Sequence[str], num_games: int, chunk: int,
                    seed: int, num_opponents: int = 0) -> dict[str, dict]:
    """``{key: play_games arguments}`` for every chunk of every ordered pair of every game
    (:func:`ordered_pairs`; a pair's seeds do not depend on ``num_opponents``)."""
    checks.check_count(num_games, "num_games", minimum=1)
    checks.check_count(chunk, "chunk", minimum=1)
    if len(set(bots)) != len(bots) or len(bots) < 2:
        raise ValueError(f"a tournament needs at least two distinct bots, got {list(bots)}")
    jobs = {}
    played = set(ordered_pairs(len(bots), num_opponents))
    for k, game in enumerate(games):
        for p, (first, second) in enumerate(itertools.permutations(range(len(bots)), 2)):
            if (first, second) not in played:
                continue
            for start in range(0, num_games, chunk):
                stop = min(start + chunk, num_games)
                jobs[f"game{k}_pair{p}_games{start}-{stop}"] = {
                    "game": game, "first": bots[first], "second": bots[second],
                    "base_seed": seed, "pair_index": k * GAME_STRIDE + p, "start": start,
                    "stop": stop}
    return jobs


@dataclass
class PairResult(MatchResult):
    """Bot A against bot B on one game, over both seats; returns from A's point of view
    (A's return minus half the utility sum, per game)."""

    game: str = ""


def pair_results(game: str, bots: Sequence[str], per_pair: dict[tuple[int, int], np.ndarray],
                 half_sum: float) -> list[PairResult]:
    """Both seats of every unordered pair that played: ``per_pair[(i, j)]`` holds the
    (games x 2) returns of the games with bot ``i`` in seat 0 and bot ``j`` in seat 1."""
    results = []
    none = np.zeros((0, 2))
    for i, j in itertools.combinations(range(len(bots)), 2):
        if (i, j) not in per_pair and (j, i) not in per_pair:
            continue
        a_first = per_pair.get((i, j), none)[:, 0] - half_sum
        a_second = per_pair.get((j, i), none)[:, 1] - half_sum
        results.append(PairResult(bots[i], bots[j], np.concatenate([a_first, a_second]),
                                   game=game))
    return results


def fit_elo(num_bots: int, winners: np.ndarray, losers: np.ndarray,
            scores: np.ndarray) -> np.ndarray:
    """Bradley-Terry ratings (Elo scale, mean 0) from games ``winners[g]`` vs ``losers[g]``
    where ``winners[g]`` scored ``scores[g]`` (1, 1/2 or 0), plus one virtual draw per pair
    of bots (which also ties together bots that never met, as in a gauntlet)."""
    pairs = list(itertools.combinations(range(num_bots), 2))
    a = np.concatenate([winners, [i for i, _ in pairs]]).astype(int)
    b = np.concatenate([losers, [j for _, j in pairs]]).astype(int)
    s = np.concatenate([scores, np.full(len(pairs), 0.5)])

    def negative_log_likelihood(r):
        d = r[a] - r[b]
        nll = np.sum(s * np.logaddexp(0, -d) + (1 - s) * np.logaddexp(0, d))
        p = 1 / (1 + np.exp(-d))
        grad_d = p - s
        grad = np.bincount(a, grad_d, num_bots) - np.bincount(b, grad_d, num_bots)
        return nll, grad

    fit = optimize.minimize(negative_log_likelihood, np.zeros(num_bots), jac=True,
                            method="L-BFGS-B")
    r = fit.x - fit.x.mean()
    return r * ELO_SCALE


def elo_with_intervals(num_bots: int, winners, losers, scores, bootstrap: int = 200,
                       seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ratings and their 95% bootstrap intervals (games resampled with replacement)."""
    checks.check_count(bootstrap, "bootstrap", minimum=1)
    winners, losers, scores = map(np.asarray, (winners, losers, scores))
    ratings = fit_elo(num_bots, winners, losers, scores)
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(bootstrap):
        k = rng.integers(len(scores), size=len(scores))
        samples.append(fit_elo(num_bots, winners[k], losers[k], scores[k]))
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    return ratings, low, high


def elo_games(results: Sequence[PairResult], bots: Sequence[str]):
    """(first bots, second bots, scores of the first) of every game in ``results``."""
    index = {b: k for k, b in enumerate(bots)}
    a, b, s = [], [], []
    for r in results:
        a += [index[r.bot_a]] * r.games
        b += [index[r.bot_b]] * r.games
        s += list((np.sign(r.returns) + 1) / 2)
    return np.array(a), np.array(b), np.array(s)
