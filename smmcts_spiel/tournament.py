"""Round-robin tournaments at equal time per move: jobs, per-pair results, Elo ratings.

Every ordered pair of distinct bots plays ``num_games`` games of every game (so each pair
meets ``2 num_games`` times, both seats equally; a gauntlet plays only the pairs with one
of the last ``num_opponents`` bots), in chunks that are resumable jobs for
:func:`smmcts_spiel.experiments.run_jobs` (:func:`tournament_jobs`). Game ``g`` of ordered
pair ``p`` of game number ``k`` is seeded by the match runner's
``game_seed(seed, k * 10**6 + p, g)`` (:mod:`smmcts_spiel.match`).

Duplicate deals (``duplicate=True``, as in the ACPC's duplicate poker): game ``g`` of the
ordered pair (B, A) takes the seed of game ``g`` of (A, B), so the two games of a deal see
the same chance outcomes seat by seat (the match runner draws chance from the game's seed
alone) with the bots' seats swapped; a pair's interval is then computed over deals (the
mean of A's two returns per deal), which removes most of the luck of the deal.

Ratings are a Bradley-Terry fit (:func:`fit_elo`): bot ``i`` scores ``s = 1, 1/2, 0``
(win, draw, loss) against ``j`` with expected score ``1 / (1 + 10**((r_j - r_i) / 400))``
(the Elo scale); the ratings maximise the likelihood of the scores (``choix``), with one
virtual draw per pair of bots so that a perfect record has a finite rating, and are centred
on mean 0. Their 95% intervals come from a seeded percentile bootstrap over games
(``scipy.stats.bootstrap``).
"""

from __future__ import annotations

import csv
import itertools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyspiel

from smmcts_spiel import checks, reports
from smmcts_spiel.experiments import outputs
from smmcts_spiel.match import BotLike, MatchResult, bot_label

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


def tournament_jobs(games: Sequence[str], bots: Sequence[BotLike], num_games: int, chunk: int,
                    seed: int, num_opponents: int = 0,
                    duplicate: bool = False) -> dict[str, dict]:
    """``{key: play_games arguments}`` for every chunk of every ordered pair of every game
    (:func:`ordered_pairs`; a pair's seeds do not depend on ``num_opponents``). With
    ``duplicate`` the ordered pair (j, i) plays with the seeds of (i, j) for i < j."""
    checks.check_count(num_games, "num_games", minimum=1)
    checks.check_count(chunk, "chunk", minimum=1)
    objects = [bot_label(b) for b in bots if isinstance(b, pyspiel.Bot)]
    if objects:
        raise ValueError(f"{objects[0]} is a bot object: a tournament's jobs need specs or "
                         "factories (game, player_id, seed) -> pyspiel.Bot (module-level "
                         "functions, which worker processes can load and a resumed run "
                         "recognises)")
    labels = [bot_label(b) for b in bots]
    if len(set(labels)) != len(labels) or len(bots) < 2:
        raise ValueError(f"a tournament needs at least two distinct bots, got {labels}")
    jobs = {}
    played = set(ordered_pairs(len(bots), num_opponents))
    permutations = list(itertools.permutations(range(len(bots)), 2))
    for k, game in enumerate(games):
        for p, (first, second) in enumerate(permutations):
            if (first, second) not in played:
                continue
            seeds_of = (permutations.index((second, first)) if duplicate and first > second
                        else p)
            for start in range(0, num_games, chunk):
                stop = min(start + chunk, num_games)
                jobs[f"game{k}_pair{p}_games{start}-{stop}"] = {
                    "game": game, "first": bots[first], "second": bots[second],
                    "base_seed": seed, "pair_index": k * GAME_STRIDE + seeds_of,
                    "start": start, "stop": stop}
    return jobs


@dataclass
class PairResult(MatchResult):
    """Bot A against bot B on one game, over both seats; returns from A's point of view
    (A's return minus half the utility sum, per game: A in seat 0 first, then A in seat 1).
    With ``duplicate`` game ``g`` of each half is the same deal, and the interval is over
    deals (A's mean return per deal); wins, draws and losses still count games."""

    game: str = ""
    duplicate: bool = False

    @property
    def deal_returns(self) -> np.ndarray:
        """A's mean return per deal (duplicate) or per game."""
        returns = np.asarray(self.returns, dtype=float)
        if not self.duplicate:
            return returns
        half = len(returns) // 2
        return (returns[:half] + returns[half:]) / 2

    @property
    def interval(self) -> reports.Interval:
        return reports.mean_interval(self.deal_returns)


def pair_results(game: str, bots: Sequence[str], per_pair: dict[tuple[int, int], np.ndarray],
                 half_sum: float, duplicate: bool = False) -> list[PairResult]:
    """Both seats of every unordered pair that played: ``per_pair[(i, j)]`` holds the
    (games x 2) returns of the games with bot ``i`` in seat 0 and bot ``j`` in seat 1. With
    ``duplicate`` row ``g`` of (i, j) and of (j, i) must be the same deal (ValueError if the
    two seats played different numbers of games)."""
    results = []
    none = np.zeros((0, 2))
    for i, j in itertools.combinations(range(len(bots)), 2):
        if (i, j) not in per_pair and (j, i) not in per_pair:
            continue
        a_first = per_pair.get((i, j), none)[:, 0] - half_sum
        a_second = per_pair.get((j, i), none)[:, 1] - half_sum
        if duplicate and len(a_first) != len(a_second):
            raise ValueError(f"duplicate deals: {bots[i]} played {len(a_first)} games in the "
                             f"first seat and {len(a_second)} in the second against "
                             f"{bots[j]}; every deal needs both")
        results.append(PairResult(bots[i], bots[j], np.concatenate([a_first, a_second]),
                                  game=game, duplicate=duplicate))
    return results


def fit_elo(num_bots: int, winners: np.ndarray, losers: np.ndarray,
            scores: np.ndarray) -> np.ndarray:
    """Bradley-Terry ratings (Elo scale, mean 0) from games ``winners[g]`` vs ``losers[g]``
    where ``winners[g]`` scored ``scores[g]`` (1, 1/2 or 0), plus one virtual draw per pair
    of bots (which also ties together bots that never met, as in a gauntlet).

    The maximum-likelihood fit is ``choix.ilsr_pairwise``'s. A game counts as two
    comparisons (a win both, a draw one each way, a loss none), so that draws are half
    wins: the likelihood is twice that of the scores, with the same maximum.
    """
    winners, losers = np.asarray(winners, dtype=int), np.asarray(losers, dtype=int)
    won = np.rint(2 * np.asarray(scores, dtype=float)).astype(int)  # comparisons won of 2
    if np.any((won < 0) | (won > 2)):
        raise ValueError("scores must be 1 (win), 1/2 (draw) or 0 (loss)")
    comparisons = []
    for a, b, k in zip(winners.tolist(), losers.tolist(), won.tolist()):
        comparisons += [(a, b)] * k + [(b, a)] * (2 - k)
    for a, b in itertools.combinations(range(num_bots), 2):
        comparisons += [(a, b), (b, a)]
    import choix  # imported when used: with scipy.stats it takes a second to import

    strength = choix.ilsr_pairwise(num_bots, comparisons, tol=1e-10)
    return (strength - strength.mean()) * ELO_SCALE


def elo_with_intervals(num_bots: int, winners, losers, scores, bootstrap: int = 200,
                       seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ratings and their 95% percentile bootstrap intervals (``scipy.stats.bootstrap``,
    ``bootstrap`` resamples of the games with replacement, seeded)."""
    checks.check_count(bootstrap, "bootstrap", minimum=1)
    winners, losers, scores = map(np.asarray, (winners, losers, scores))
    ratings = fit_elo(num_bots, winners, losers, scores)
    if len(scores) < 2:
        nan = np.full(num_bots, np.nan)
        return ratings, nan, nan
    from scipy import stats  # imported when used: it takes a second to import

    result = stats.bootstrap(
        (np.arange(len(scores)),),
        lambda games: fit_elo(num_bots, winners[games], losers[games], scores[games]),
        n_resamples=bootstrap, vectorized=False, method="percentile",
        confidence_level=reports.CONFIDENCE, random_state=np.random.default_rng(seed))
    return ratings, result.confidence_interval.low, result.confidence_interval.high


def pairs_by_game(rows: Sequence[dict], games: Sequence[str], bots: Sequence[str],
                  half_sums: dict[str, float],
                  duplicate: bool = False) -> dict[str, list[PairResult]]:
    """The pair results of every game of the games ``rows`` (as :func:`read_games_csv`
    returns them); ``half_sums[game]`` is half the game's utility sum (a return's zero).
    With ``duplicate`` (rows need ``game_index``) only the deals both seats finished count,
    each pair's games in the order of their index."""
    index = {b: k for k, b in enumerate(bots)}
    pairs = {}
    for game in games:
        per_pair: dict[tuple[int, int], dict] = {}
        for r in rows:
            if r["game"] == game:
                key = (index[r["first"]], index[r["second"]])
                games_of = per_pair.setdefault(key, {})
                deal = int(r["game_index"]) if duplicate else len(games_of)
                games_of[deal] = [r["return_first"], r["return_second"]]
        if duplicate:
            for i, j in list(per_pair):
                both = sorted(set(per_pair[(i, j)]) & set(per_pair.get((j, i), {})))
                per_pair[(i, j)] = {g: per_pair[(i, j)][g] for g in both}
        pairs[game] = pair_results(
            game, bots, {k: np.array([v[g] for g in sorted(v)], dtype=float).reshape(-1, 2)
                         for k, v in per_pair.items()}, half_sums[game], duplicate)
    return pairs


def ratings_by_game(pairs: dict[str, list[PairResult]], bots: Sequence[str],
                    bootstrap: int = 200, seed: int = 0) -> dict[str, tuple]:
    """Ratings with their intervals (:func:`elo_with_intervals`) per game and over all
    games (label ``"all games"``)."""
    ratings = {}
    for label, results in [*pairs.items(), ("all games", sum(pairs.values(), []))]:
        ratings[label] = elo_with_intervals(len(bots), *elo_games(results, bots),
                                            bootstrap=bootstrap, seed=seed)
    return ratings


def write_pairs_csv(path: str | os.PathLike, pairs: dict[str, list[PairResult]]) -> None:
    """One row per game and pair: A's mean return over both seats with the half-width of
    its 95% t interval (empty when undefined), wins / draws / losses, score."""
    with outputs.replaced_file(path, newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["game", "bot_a", "bot_b", "games", "mean_a", "ci95", "wins_a",
                         "draws", "losses_a", "score_a"])
        for game, results in pairs.items():
            for r in results:
                interval = r.interval
                writer.writerow([game, r.bot_a, r.bot_b, r.games, f"{r.mean:.4f}",
                                 f"{interval.half_width:.4f}" if interval.defined else "",
                                 r.wins, r.draws, r.losses, f"{r.score:.4f}"])


def write_ratings_csv(path: str | os.PathLike, bots: Sequence[str], ratings: dict) -> None:
    """One row per set of games (each game, all games) and bot: Elo and its interval."""
    with outputs.replaced_file(path, newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["games", "bot", "elo", "elo_low", "elo_high"])
        for label, (r, lo, hi) in ratings.items():
            for k, bot in enumerate(bots):
                writer.writerow([label, bot, f"{r[k]:.1f}", f"{lo[k]:.1f}", f"{hi[k]:.1f}"])


def elo_games(results: Sequence[PairResult],
              bots: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first bots, second bots, scores of the first) of every game in ``results``."""
    index = {b: k for k, b in enumerate(bots)}
    a, b, s = [], [], []
    for r in results:
        a += [index[r.bot_a]] * r.games
        b += [index[r.bot_b]] * r.games
        s += list((np.sign(r.returns) + 1) / 2)
    return np.array(a), np.array(b), np.array(s)
