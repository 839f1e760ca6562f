"""The AIJ 2016 study's tables beside ours: the settings, the paper's figures, the jobs.

Bošanský, Lisý, Lanctot, Čermák, Winands, "Algorithms for computing strategies in two-player
simultaneous move games", Artificial Intelligence 237 (2016), Section 6. Four tables of the
study, each a program of ``experiments/aij2016``:

* exact solving (:data:`EXACT_ROWS`, :func:`exact_job`): BI, DO, BIAB and DOAB
  (:mod:`smmcts_spiel.exact.pruned_induction`) per game, each solve in its own process
  within a budget;
* convergence and offline speed (:data:`OFFLINE_GAMES`, :func:`sampler_job`): a sampler
  searching from the root for cumulative search-thread CPU seconds, its iterations and the
  exact NashConv (the paper's "error") of its strategy at each checkpoint;
* head-to-head (:data:`MATCH_GAMES`, :func:`paper_bot_spec`): the paper's online games and
  its tuned exploration per game as bot specs, for the tournament runner;
* UCT's tie-breaking on biased rock-paper-scissors (:data:`TIE_BREAKING`,
  :func:`tie_breaking_job`): its Section 6.3, the exact NashConv of each selector's visit
  frequencies after as many iterations as the paper's.

The paper's own figures are a CSV of the experiment (:func:`read_paper_figures`), each row
citing its section and the words of the paper's LaTeX source it comes from.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel

from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.exact import exploitability, pruned_induction, solver
from smmcts_spiel.experiments.outputs import replaced_file
from smmcts_spiel.experiments.runner import Result, call_within, write_params
from smmcts_spiel.imperfect.sm_oos import SMOOS, preset_settings

# ---------------------------------------------------------------------------------------
# The paper's figures

#: The columns of the paper's figures file, in order.
PAPER_COLUMNS = ("table", "row", "setting", "method", "opponent", "relation", "figure",
                 "plus_minus", "unit", "hardware", "source", "quote")
PAPER_TABLES = ("exact", "speed", "convergence", "head_to_head", "tie_breaking")
#: How a figure relates to the paper's words: exactly, at least, at most, about.
RELATIONS = ("=", ">", "<", "~")


def read_paper_figures(path: str | os.PathLike) -> list[dict]:
    """The rows of the paper's figures file, ``figure`` (and ``plus_minus`` where given) as
    floats; ValueError naming the file and line of a malformed row."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != PAPER_COLUMNS:
            raise ValueError(f"{path}: the columns must be {', '.join(PAPER_COLUMNS)}, got "
                             f"{reader.fieldnames}")
        rows = []
        for line, row in enumerate(reader, 2):
            try:
                row["figure"] = float(row["figure"])
                row["plus_minus"] = float(row["plus_minus"]) if row["plus_minus"] else None
            except ValueError:
                raise ValueError(f"{path}:{line}: figure {row['figure']!r} or plus_minus "
                                 f"{row['plus_minus']!r} is not a number") from None
            if row["table"] not in PAPER_TABLES or row["relation"] not in RELATIONS:
                raise ValueError(f"{path}:{line}: table {row['table']!r} or relation "
                                 f"{row['relation']!r} unknown")
            rows.append(row)
    return rows


def paper_figure(figures: Sequence[dict], table: str, row: str, method: str, unit: str,
                 opponent: str = "") -> dict | None:
    """The paper's figure of ``method`` (against ``opponent``) on ``row`` of ``table`` in
    ``unit``, or None where the paper gives none (only a plot, or nothing)."""
    for figure in figures:
        if (figure["table"], figure["row"], figure["method"], figure["unit"],
                figure["opponent"]) == (table, row, method, unit, opponent):
            return figure
    return None


def shown(figure: dict | None) -> str:
    """A paper's figure as the paper states it: ``> 9000``, ``~ 600``, ``0.64``; ``-``."""
    if figure is None:
        return "-"
    value = f"{figure['figure']:.4g}"
    return value if figure["relation"] == "=" else f"{figure['relation']} {value}"


def below_paper_verdict(low: float, high: float, paper: dict) -> str:
    """Whether an interval ``[low, high]`` lies below the paper's figure: "met" (its top
    below it), "missed" (its bottom above it), else "undecided"; where the paper gives only
    a lower bound ("> 1"), an interval above the bound is undecided: the paper's figure may
    lie above it too."""
    if high < paper["figure"]:
        return "met"
    if low > paper["figure"] and paper["relation"] != ">":
        return "missed"
    return "undecided"


def write_table(out: str, columns: Sequence[str], rows: Sequence[dict],
                draw: Callable[[str], None], params: Mapping, **timings: float) -> None:
    """A table's outputs: ``<out>.csv`` of ``rows``, ``<out>.png`` drawn by ``draw(path)``
    and ``<out>.json`` of ``params`` and ``timings`` (each replaced whole)."""
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with replaced_file(out + ".csv", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)
    draw(out + ".png")
    write_params(out + ".json", params, **timings)
    print(f"wrote {out}.csv/.png/.json")


def finish_log_panel(ax, title: str, xlabel: str, ylabel: str, legend_size: int) -> None:
    """A NashConv panel's common finish: log x axis, labels, grid, legend, and a y axis from
    0 where nothing finite set its top."""
    ax.set_xscale("log")
    ax.set_title(title, fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=legend_size)
    if not math.isfinite(ax.get_ylim()[1]):
        ax.set_ylim(0, None)


# ---------------------------------------------------------------------------------------
# Exact solving


@dataclass(frozen=True)
class ExactRow:
    """A row of the exact-solving table: its game strings (one per instance: the paper
    averages several fixed card sequences, several random games) and why it does not fit,
    if it does not."""

    setting: str
    game: str  # with {instance} where the row has several instances
    does_not_fit: str = ""

    def games(self, instances: int) -> list[str]:
        if "{instance}" not in self.game:
            return [self.game]
        return [self.game.format(instance=k) for k in range(instances)]


def _goofspiel(cards: int, chance: bool, returns: str) -> str:
    if chance:
        return (f"goofspiel(num_cards={cards},points_order=random,imp_info=False,"
                f"returns_type={returns})")
    return (f"smmcts_goofspiel(num_cards={cards},points_order=shuffled,"
            "points_seed={instance},returns_type=" + returns + ")")


def _exact_rows() -> dict[str, ExactRow]:
    rows = {}
    for cards in (5, 6, 7):
        for chance in (False, True):
            for utilities, returns in (("wtl", "win_loss"), ("points", "point_difference")):
                sequence = "stochastic sequence (chance)" if chance else "fixed sequence"
                rows[f"gs{cards}_{'chance' if chance else 'fixed'}_{utilities}"] = ExactRow(
                    f"Goofspiel, {cards} cards, {sequence}, "
                    f"{'win/tie/lose' if utilities == 'wtl' else 'point utilities'}",
                    _goofspiel(cards, chance, returns))
    for coins, size in ((10, 3), (13, 4), (18, 4)):
        horizon = coins + 2  # every round costs a player with coins at least one
        rows[f"oz{coins}_k{size}_wtl"] = ExactRow(
            f"Oshi-Zumo, {coins} coins, K = {size}, M = 1, win/tie/lose",
            f"oshi_zumo(coins={coins},size={size},horizon={horizon},min_bid=1)")
        rows[f"oz{coins}_k{size}_points"] = ExactRow(
            f"Oshi-Zumo, {coins} coins, K = {size}, M = 1, point utilities",
            f"smmcts_oshi_zumo(coins={coins},size={size},horizon={horizon},min_bid=1,"
            "returns_type=position)")
    for n in (4, 5):
        for depth in range(4, 9):
            rows[f"peg{n}_d{depth}"] = ExactRow(
                f"pursuit-evasion, {n} x {n}, depth {depth} (our default start)",
                f"smmcts_pursuit_evasion(grid_size={n},depth={depth})")
    rows["peg4_d4_mixed"] = ExactRow(
        "pursuit-evasion, 4 x 4, depth 4, a start without a pure equilibrium (the "
        "convergence game; the paper's start is not given)",
        "smmcts_pursuit_evasion(depth=4,evader_start=1,pursuer1_start=0,pursuer2_start=3)")
    for width in range(5, 10):
        for rows_ in (width - 1, width):
            rows[f"tron{rows_}x{width}"] = ExactRow(
                f"Tron, {rows_} x {width}", f"smmcts_tron(rows={rows_},cols={width})")
    for depth in range(2, 8):
        nodes = sum(16 ** k for k in range(depth + 1))
        rows[f"rg4_d{depth}"] = ExactRow(
            f"random game, correlated utilities (edge sums), 4 actions, depth {depth}",
            f"smmcts_random_stacked_matrix(depth={depth},branching=4,utilities=edge_sum,"
            "seed={instance})",
            "" if nodes <= 5_000_000 else
            f"an explicit tree of {nodes:.2g} nodes, beyond explicit trees' 5,000,000")
    return rows


#: Every row of the exact-solving table, by key (the paper's figures file's ``row``).
EXACT_ROWS: dict[str, ExactRow] = _exact_rows()
#: The statistics an exact solve records (:class:`pruned_induction.SolveStatistics`).
EXACT_STATISTICS = ("nodes_evaluated", "matrix_games", "serialized_nodes", "settled_by_bounds",
                    "pruned", "window_cuts", "states", "seconds")


def _solve(game: str, method: str, transpositions: bool) -> tuple[float, dict]:
    result = pruned_induction.solve_value(pyspiel.load_game(game), method,
                                          use_transpositions=transpositions,
                                          **solver.size_limits(enforced=False))
    return result.value, dataclasses.asdict(result.statistics)


def exact_job(game: str, method: str, transpositions: bool, max_seconds: float) -> Result:
    """One solve of ``game`` by ``method`` in a forked process, killed after
    ``max_seconds`` of wall-clock time: ``solved`` (1 or 0), ``value`` and the statistics
    (:data:`EXACT_STATISTICS`; ``seconds`` is the solve's processor time), NaN unsolved."""
    outcome = call_within(_solve, (game, method, transpositions), max_seconds)
    if outcome is None:
        return {"solved": np.array(0), "value": np.array(math.nan),
                **{k: np.array(math.nan) for k in EXACT_STATISTICS}}
    value, statistics = outcome
    return {"solved": np.array(1), "value": np.array(value),
            **{k: np.array(float(statistics[k])) for k in EXACT_STATISTICS}}


# ---------------------------------------------------------------------------------------
# Offline sampling: convergence and speed


@dataclass(frozen=True)
class OfflineGame:
    """A game of the paper's offline sampling experiments and its best UCT constant C
    (on rewards in [-1, 1])."""

    setting: str
    game: str
    uct_c: float


#: The offline convergence games whose utilities lie in [-1, 1] (so the paper's C maps onto
#: our UCB's c = C / 2 on [0, 1]), by key (the paper's figures file's ``row``).
OFFLINE_GAMES: dict[str, OfflineGame] = {
    "gs5_fixed_wtl": OfflineGame(
        "Goofspiel, 5 cards, descending prizes (GTLibrary's fixed sequence), win/tie/lose",
        "goofspiel(num_cards=5,points_order=descending,imp_info=False,returns_type=win_loss)",
        5.0),
    "oz10_k3_wtl": OfflineGame("Oshi-Zumo(10, 3, 1), win/tie/lose",
                               "oshi_zumo(coins=10,size=3,horizon=12,min_bid=1)", 2.0),
    "peg4_d4_mixed": OfflineGame(
        "pursuit-evasion, 4 x 4, depth 4, a start without a pure equilibrium",
        "smmcts_pursuit_evasion(depth=4,evader_start=1,pursuer1_start=0,pursuer2_start=3)",
        2.0),
    "tron5x6": OfflineGame("Tron, 5 x 6", "smmcts_tron(rows=5,cols=6)", 5.0),
}
#: The samplers, by the paper's names: SM-MCTS with RM, Exp3 and UCT (SMMCTSBot's kernel
#: engine with the paper's constants), OOS (the paper's SM-OOS, its Algorithm 3, the one
#: OOS its offline runs use), and SMMCTS: our SMMCTSBot with its tuned defaults.
SAMPLERS = ("RM", "EXP3", "UCT", "OOS", "SMMCTS")
#: The paper's exploration of RM and Exp3 (gamma) and of OOS (epsilon, SM-OOS's ``paper``
#: preset: 0.6) offline.
PAPER_GAMMA = 0.1
PAPER_OOS_EPSILON = preset_settings("paper")["epsilon"]
#: The paper's UCT breaks ties at random among the bounds "less than 0.01 apart" (its
#: Sections 4.4.1 and 6.3: "enabled in all of our experiments"; GTLibrary's UCTSelector),
#: on utilities in [-1, 1]: half that on our rewards in [0, 1], as C.
PAPER_UCT_TIE_TOLERANCE = 0.005
_CHUNK = 256


class _Sampler:
    """A search from the root of a game that runs in chunks and exports its strategy."""

    def __init__(self, game: pyspiel.Game, sampler: str, seed: int, uct_c: float,
                 uct_tie_tolerance: float):
        self._root = game.new_initial_state()
        self._oos = None
        if sampler == "OOS":  # SM-OOS from the root, a uniform random playout below its tree
            self._oos = SMOOS(game, epsilon=PAPER_OOS_EPSILON, seed=seed)
            return
        options: dict[str, Any] = {
            "RM": dict(selector="rm", gamma=PAPER_GAMMA, final_strategy="average_no_exploration"),
            "EXP3": dict(selector="exp3", gamma=PAPER_GAMMA,
                         final_strategy="average_no_exploration"),
            "UCT": dict(selector="ucb", c=uct_c / 2, final_strategy="empirical",
                        tie_tolerance=uct_tie_tolerance),
            "SMMCTS": {}}[sampler]
        if sampler != "SMMCTS":
            options.update(engine="kernel", evaluator="random_rollout", threshold=0.0)
        self._bot = SMMCTSBot(game, 0, seed=seed, threads=1, **options)

    def run(self, iterations: int) -> None:
        if self._oos is not None:
            self._oos.run(iterations)
        else:
            self._bot.search.run(self._root, iterations)

    def policy(self):
        return self._oos.policy("average") if self._oos is not None else self._bot.policy()


def sampler_job(game: str, sampler: str, seed: int, checkpoints: Sequence[float],
                uct_c: float, value: float | None, uct_tie_tolerance: float = 0.0) -> Result:
    """``sampler`` (:data:`SAMPLERS`) searching ``game`` from its root until its thread has
    used each of ``checkpoints`` CPU seconds in turn: ``iterations`` and ``cpu_seconds`` at
    each, and with ``value`` (the game's value) the exact ``nash_conv`` of its strategy
    there (NaN without). UCT ties its bounds within ``uct_tie_tolerance``. A short search on
    a copy first compiles the kernels, untimed."""
    loaded = pyspiel.load_game(game)
    _Sampler(loaded, sampler, seed, uct_c, uct_tie_tolerance).run(_CHUNK)  # compiles, untimed
    search = _Sampler(loaded, sampler, seed, uct_c, uct_tie_tolerance)
    iterations, cpu, chunk = 0, 0.0, _CHUNK
    done: dict[str, list[float]] = {"iterations": [], "cpu_seconds": [], "nash_conv": []}
    for mark in checkpoints:
        while cpu < mark:
            start = time.thread_time()
            search.run(chunk)
            spent = time.thread_time() - start
            cpu += spent
            iterations += chunk
            # about 50 ms per call keeps the Python overhead per call small
            chunk = max(_CHUNK, min(4 * chunk, int(chunk * 0.05 / max(spent, 1e-4))))
        done["iterations"].append(iterations)
        done["cpu_seconds"].append(cpu)
        done["nash_conv"].append(math.nan if value is None else
                                 exploitability.evaluate(loaded, search.policy(),
                                                         value=value).nash_conv)
    return {k: np.array(v, dtype=float) for k, v in done.items()}


def sampler_jobs(keys: Sequence[str], samplers: Sequence[str], seeds: range,
                 checkpoints: Sequence[float],
                 values: Mapping[str, float | None]) -> dict[str, dict]:
    """The :func:`sampler_job` keyword arguments of every game of ``keys``
    (:data:`OFFLINE_GAMES`), sampler and seed, by ``<key>_<sampler>_<seed>``; ``values``
    the games' values by key (None: no NashConv). UCT's jobs carry the paper's tie
    tolerance (a result saved without it is computed again)."""
    return {f"{key}_{sampler}_{seed}": {
        "game": OFFLINE_GAMES[key].game, "sampler": sampler, "seed": seed,
        "checkpoints": list(checkpoints), "uct_c": OFFLINE_GAMES[key].uct_c,
        "value": values[key],
        **({"uct_tie_tolerance": PAPER_UCT_TIE_TOLERANCE} if sampler == "UCT" else {})}
        for key in keys for sampler in samplers for seed in seeds}


# ---------------------------------------------------------------------------------------
# UCT's tie-breaking on biased rock-paper-scissors (the paper's Section 6.3)

#: The game, in the units of the paper's figures (GTLibrary's payoffs, the printed ones / 100).
TIE_BREAKING_GAME = "smmcts_biased_rps(scale=0.01)"
#: Its row in the paper's figures file.
TIE_BREAKING_ROW = "brps"
#: The variants, by name: (selector, tie tolerance; None: the lowest maximiser). UCT-FIRST
#: is the paper's "fully deterministic" UCT (GTLibrary's ``MCTS-UCT``), UCT-EQUAL draws
#: among equal bounds only (our UCB's default), UCT-0.01 the paper's stochastic
#: tie-breaking (``MCTS-RUCT``: bounds less than 0.01 apart tied; the payoffs span 1, as
#: our rewards, so C and the gap carry over unchanged).
TIE_BREAKING: dict[str, tuple[str, float | None]] = {
    "UCT-FIRST": ("ucb", None), "UCT-EQUAL": ("ucb", 0.0), "UCT-0.01": ("ucb", 0.01),
    "RM": ("rm", None), "EXP3": ("exp3", None)}
#: The exploration of each curve of the paper's figures of Section 6.3 (their legends):
#: UCT's C, RM's and Exp3's gamma.
TIE_BREAKING_C = (0.0, 0.2, 0.4, 1.4, 2.0)
TIE_BREAKING_GAMMA = (0.001, 0.01, 0.1, 0.2, 0.5)


def tie_breaking_job(variant: str, exploration: float, checkpoints: Sequence[int],
                     seeds: Sequence[int]) -> Result:
    """The exact ``nash_conv`` (seeds x checkpoints) of :data:`TIE_BREAKING` ``variant``'s
    visit frequencies with UCT's C or RM's and Exp3's gamma ``exploration``, searching
    :data:`TIE_BREAKING_GAME` (the compiled explicit-tree engine) from each seed."""
    from smmcts_spiel import trees
    from smmcts_spiel.search import matrix_tree_engine

    selector, tolerance = TIE_BREAKING[variant]
    ucb = selector == "ucb"
    curves = matrix_tree_engine.exploitability_curves(
        trees.flat.flatten(pyspiel.load_game(TIE_BREAKING_GAME).tree), selector,
        gamma=None if ucb else exploration, c=exploration if ucb else None,
        checkpoints=checkpoints, seeds=seeds, game_value=0.0, tie_tolerance=tolerance)
    return {"nash_conv": curves.nash_conv}


# ---------------------------------------------------------------------------------------
# Head-to-head


@dataclass(frozen=True)
class MatchGame:
    """A game of the paper's head-to-head tables: its game strings (one per instance,
    played in equal numbers), time per move, the paper's exploration per sampler (its
    table's header), whether the samplers evaluate leaves with the game's heuristic, the
    unit of the paper's cells, and why it does not fit, if it does not."""

    setting: str
    games: tuple[str, ...]
    time_limit: float
    exploration: dict[str, float]  # OOS epsilon, UCT C on [-1, 1], EXP3 and RM gamma
    evaluation: bool = False
    points_scale: float = 0.0  # 0: a win-rate table; else the paper's points per our return
    first_seat_only: bool = False  # the row plays seat 0 (asymmetric game)
    does_not_fit: str = ""

    @property
    def unit(self) -> str:
        return "points" if self.points_scale else "win %"


def _fixed_goofspiel(returns: str) -> tuple[str, ...]:
    return tuple(f"smmcts_goofspiel(num_cards=13,points_order=shuffled,points_seed={s},"
                 f"returns_type={returns})" for s in range(10))


def pursuit_evasion_starts(grid_size: int, depth: int, count: int,
                           seed: int) -> list[tuple[int, int, int]]:
    """``count`` start cells (evader, unit 1, unit 2) drawn as the paper describes: each
    unit at most ``floor(2 depth / 3)`` moves from the evader, on none of her cell; seeded
    (the paper's GTLibrary draws are not reproduced)."""
    rng = np.random.default_rng(seed)
    reach = (2 * depth) // 3
    starts: list[tuple[int, int, int]] = []
    while len(starts) < count:
        evader = int(rng.integers(grid_size * grid_size))
        er, ec = divmod(evader, grid_size)
        near = [c for c in range(grid_size * grid_size) if c != evader
                and abs(c // grid_size - er) + abs(c % grid_size - ec) <= reach]
        unit1, unit2 = (int(c) for c in rng.choice(near, 2))
        starts.append((evader, unit1, unit2))
    return starts


#: The paper's head-to-head games, by key (the paper's figures file's ``row``).
MATCH_GAMES: dict[str, MatchGame] = {
    "gs13_chance": MatchGame(
        "Goofspiel, 13 cards, stochastic sequence, win rate",
        ("goofspiel(num_cards=13,points_order=random,imp_info=False,returns_type=win_loss)",),
        1.0, {"OOS": 0.2, "UCT": 0.6, "EXP3": 0.3, "RM": 0.1}),
    "gs13_fixed": MatchGame(
        "Goofspiel, 13 cards, 10 known sequences, win rate", _fixed_goofspiel("win_loss"), 1.0,
        {"OOS": 0.3, "UCT": 0.8, "EXP3": 0.2, "RM": 0.1}),
    "gs13_fixed_points": MatchGame(
        "Goofspiel, 13 cards, 10 known sequences, point utilities (ours pay half the "
        "difference)", _fixed_goofspiel("point_difference"), 1.0,
        {"OOS": 0.3, "UCT": 0.8, "EXP3": 0.2, "RM": 0.1}, points_scale=2.0),
    "oz50": MatchGame(
        "Oshi-Zumo, 50 coins, K = 3, M = 1, win rate",
        ("oshi_zumo(coins=50,size=3,horizon=52,min_bid=1)",), 1.0,
        {"OOS": 0.2, "UCT": 0.4, "EXP3": 0.8, "RM": 0.1}),
    "oz50_points": MatchGame(
        "Oshi-Zumo, 50 coins, K = 3, M = 1, point utilities",
        ("smmcts_oshi_zumo(coins=50,size=3,horizon=52,min_bid=1,returns_type=position)",), 1.0,
        {"OOS": 0.2, "UCT": 0.4, "EXP3": 0.8, "RM": 0.1}, points_scale=1.0),
    "oz50_eval": MatchGame(
        "Oshi-Zumo, 50 coins, K = 3, M = 1, win rate, the samplers evaluate leaves",
        ("oshi_zumo(coins=50,size=3,horizon=52,min_bid=1)",), 1.0,
        {"OOS": 0.3, "UCT": 0.8, "EXP3": 0.8, "RM": 0.1}, evaluation=True),
    "random": MatchGame(
        "random games, 5 actions, depth 15, correlated utilities", (), 0.1,
        {"OOS": 0.1, "UCT": 1.5, "EXP3": 0.6, "RM": 0.3},
        does_not_fit="25^15 leaves: far beyond an explicit tree's 5,000,000 nodes"),
    "tron13": MatchGame("Tron, 13 x 13, win rate", ("smmcts_tron(rows=13,cols=13)",), 0.1,
                        {"OOS": 0.1, "UCT": 0.6, "EXP3": 0.5, "RM": 0.1}),
    "tron13_eval": MatchGame("Tron, 13 x 13, win rate, the samplers evaluate leaves",
                             ("smmcts_tron(rows=13,cols=13)",), 0.1,
                             {"OOS": 0.1, "UCT": 2.0, "EXP3": 0.1, "RM": 0.2},
                             evaluation=True),
    "peg10": MatchGame(
        "pursuit-evasion, 10 x 10, 15 moves, 10 seeded random starts, win rate of the "
        "evader (the row, seat 0)",
        tuple(f"smmcts_pursuit_evasion(grid_size=10,depth=15,evader_start={e},"
              f"pursuer1_start={p1},pursuer2_start={p2})"
              for e, p1, p2 in pursuit_evasion_starts(10, 15, 10, seed=0)), 0.1,
        {"OOS": 0.3, "UCT": 0.8, "EXP3": 0.5, "RM": 0.1}, first_seat_only=True),
}
#: The labels of the paper's algorithms (its tables' rows and columns) and ours.
MATCH_LABELS = ("DOAB", "OOS", "UCT", "EXP3", "RM", "RAND", "SMMCTS")


def paper_bot_spec(label: str, game: MatchGame) -> str:
    """The bot spec of the paper's algorithm ``label`` with the exploration of ``game``'s
    table (UCT's C on [-1, 1] is our c = C / 2 on [0, 1], with the paper's random
    tie-breaking, :data:`PAPER_UCT_TIE_TOLERANCE`); SMMCTS is our tuned default.
    DOAB is the online DOAB bot (iterative deepening within the time per move, the runner's
    ``time_limit``) with the game kernel's evaluation function at its depth limit, on every
    game, as the paper's; OOS is SM-OOS (the paper's Algorithm 3, ``sm_oos``), evaluating
    new states like the other samplers where the table has them evaluate leaves."""
    evaluator = "heuristic" if game.evaluation else "random_rollout"
    x = game.exploration
    specs = {
        "DOAB": "doab(evaluator=heuristic)", "RAND": "random", "SMMCTS": "smmcts",
        "RM": f"smmcts(selector=rm,gamma={x['RM']:g},evaluator={evaluator})",
        "EXP3": f"smmcts(selector=exp3,gamma={x['EXP3']:g},evaluator={evaluator})",
        "UCT": (f"smmcts(selector=ucb,c={x['UCT'] / 2:g},"
                f"tie_tolerance={PAPER_UCT_TIE_TOLERANCE:g},evaluator={evaluator})"),
        "OOS": f"sm_oos(preset=paper,epsilon={x['OOS']:g},evaluator={evaluator})"}
    if label not in specs:
        raise ValueError(f"no paper's bot {label!r}; the labels are {', '.join(specs)} (or "
                         "give LABEL=spec)")
    return specs[label]


def decision(low: float, high: float) -> str:
    """The pre-registered verdict on a mean return's 95% interval: ``ahead`` (above 0),
    ``behind`` (below 0), else ``level``."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "undecided"
    return "ahead" if low > 0 else "behind" if high < 0 else "level"
