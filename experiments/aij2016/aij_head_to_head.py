"""The AIJ 2016 study's head-to-head tables, ours beside the paper's, through the tournament
runner (scripts/tournament.py): seats alternating, 95% intervals.

Each pair of --pairs is ``GAME: ROW vs COLUMN``: GAME a key of the paper's online games
(smmcts_spiel.experiments.aij2016.MATCH_GAMES: Goofspiel-13 with chance and with 10 known
sequences, Oshi-Zumo(50, 3) with and without the samplers' evaluation, Tron 13 x 13 with
and without, pursuit-evasion 10 x 10 from 10 seeded starts), ROW and COLUMN each
``LABEL=SPEC`` (any bot spec) or a LABEL alone: the paper's algorithm with the exploration
of that game's table (DOAB, OOS, UCT, EXP3, RM, RAND) or SMMCTS, our tuned default. The
label names the paper's cell beside ours (the row's win rate against the column, or its
points). Every pair plays --num_games games per seat (default: the protocol's, 100 at
1 s per move, 300 at 0.1 s), spread evenly over the game's instances, at the game's time
per move (1 s on Goofspiel-13 and Oshi-Zumo(50, 3), 0.1 s elsewhere; --time_limit instead,
for a quick look; a spec with its own budget keeps it), each pair a resumable tournament
in --results_dir. DOAB is the online DOAB bot (spec doab, iterative deepening with the
game's evaluation function), OOS the study's SM-OOS (spec sm_oos, preset paper, the table's
epsilon).

  python experiments/aij2016/aij_head_to_head.py \\
      --pairs="oz50: DOAB vs OOS" --num_games=1 --time_limit=0.02

A verdict per pair on the row's mean return (its 95% t interval over games): "ahead" above
0, "behind" below, else "level". Writes <out>.csv (one row per pair), <out>.png (our win
rates with intervals, the paper's as crosses) and <out>.json, by default
results/aij2016/aij_head_to_head.*; --publish writes experiments/aij2016/results/. Times per
move need a free core per game played at once: keep --num_workers=1 on a busy machine.
"""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass

from absl import flags

import smmcts_spiel  # noqa: F401  (registers the smmcts_* games)
from smmcts_spiel import bot_specs, experiments, tournament
from smmcts_spiel.experiments import aij2016, cli

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PAPER_FIGURES = os.path.join(HERE, "paper_figures.csv")
TOURNAMENT = os.path.join(HERE, os.pardir, os.pardir, "scripts", "tournament.py")
SCALE = ("num_games",)
#: The protocol's games per seat and pair, by time per move.
PROTOCOL_GAMES = {1.0: 100, 0.1: 300}
#: The pre-registered pairs: our default against DOAB on every game that fits (the target),
#: then the paper's samplers against DOAB, then the Goofspiel pairs the issue quotes.
PLAYABLE = [k for k, g in aij2016.MATCH_GAMES.items() if not g.does_not_fit
            and not k.endswith("_points")]
#: On a game "with the samplers' evaluation" our default and DOAB are the bots they are
#: without it (the flag sets the paper's samplers; DOAB evaluates on both): one match, played
#: once, on the game without.
TARGET_PAIRS = [f"{g}: SMMCTS vs DOAB" for g in PLAYABLE
                if not aij2016.MATCH_GAMES[g].evaluation]
PAPER_PAIRS = ([f"{g}: {s} vs DOAB" for g in PLAYABLE for s in ("RM", "UCT", "EXP3", "OOS")]
               + ["gs13_chance: RM vs OOS", "gs13_chance: RM vs EXP3"])

_PAIRS = flags.DEFINE_string("pairs", "; ".join(TARGET_PAIRS),
                             "Pairs 'GAME: ROW vs COLUMN' separated by ';' (module docstring).")
_NUM_GAMES = flags.DEFINE_integer("num_games", None, "Games per seat and pair (default: the "
                                  "protocol's, 100 at 1 s per move, 300 at 0.1 s).",
                                  lower_bound=1)
_TIME_LIMIT = flags.DEFINE_float("time_limit", None, "Seconds per move on every game (default: "
                                  "each game's, 1 s or 0.1 s as the paper's tables).",
                                  lower_bound=1e-3)
_CHUNK = flags.DEFINE_integer("chunk", 10, "Games per resumable job.", lower_bound=1)
_SEED = cli.define_seed("Base seed of every tournament.")
_WORKERS = flags.DEFINE_integer("num_workers", 1, "Worker processes of each tournament (keep "
                                "1 on a busy machine: time budgets need a free core).",
                                lower_bound=1)
_RESULTS_DIR = flags.DEFINE_string("results_dir", "results/aij2016/head_to_head",
                                   "One tournament folder per pair (resumable).")
_OUT = flags.DEFINE_string("out", None, "Output prefix: writes .csv, .png, .json (default: "
                           "results/aij2016/aij_head_to_head, or experiments/aij2016/results/"
                           "aij_head_to_head with --publish).")
_PUBLISH = cli.define_publish("the committed results (experiments/aij2016/results)")
_FORCE = flags.DEFINE_bool("force", False, "Replace a finished result of a larger scale.")

COLUMNS = ["game", "row", "column", "row_spec", "column_spec", "time_limit", "games",
           "mean_return", "low", "high", "verdict", "ours", "ours_low", "ours_high", "unit",
           "paper", "paper_plus_minus"]


@dataclass(frozen=True)
class Pair:
    game: str  # a key of MATCH_GAMES
    row: str
    row_spec: str
    column: str
    column_spec: str

    @property
    def folder(self) -> str:
        text = f"{self.game}|{self.row_spec}|{self.column_spec}"
        slug = "".join(c if c.isalnum() else "_" for c in f"{self.game}_{self.row}_{self.column}")
        return f"{slug}_{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def parse_bot(text: str, game: aij2016.MatchGame) -> tuple[str, str]:
    label, _, spec = (part.strip() for part in text.partition("="))
    if not label:
        raise ValueError(f"a bot {text!r} without a label: write LABEL or LABEL=spec")
    return label, spec or aij2016.paper_bot_spec(label, game)


def parse_pairs(text: str) -> list[Pair]:
    """The pairs of --pairs, each bot spec checked on the game; ValueError naming the flag."""
    pairs = []
    for item in cli.split(text):
        key, colon, bots = item.partition(":")
        key = key.strip()
        if not colon or " vs " not in bots:
            raise ValueError(f"--pairs: {item!r} is not 'GAME: ROW vs COLUMN'")
        if key not in aij2016.MATCH_GAMES:
            raise ValueError(f"--pairs: unknown game {key!r}; the games are "
                             f"{', '.join(aij2016.MATCH_GAMES)}")
        game = aij2016.MATCH_GAMES[key]
        if game.does_not_fit:
            raise ValueError(f"--pairs: {key} does not fit: {game.does_not_fit}")
        row, column = bots.split(" vs ", 1)
        try:
            pair = Pair(key, *parse_bot(row, game), *parse_bot(column, game))
        except ValueError as e:
            raise ValueError(f"--pairs: {item!r}: {e}") from None
        if pair.row_spec == pair.column_spec:
            raise ValueError(f"--pairs: {item!r} plays a bot against itself")
        loaded = cli.load_game(game.games[0], "--pairs")
        for spec in (pair.row_spec, pair.column_spec):
            try:  # as the tournament builds it: with the time per move
                bot_specs.check_spec(bot_specs.with_time_limit(spec, time_per_move(pair)),
                                     loaded)
            except ValueError as e:
                raise ValueError(f"--pairs: {item!r}: {e}") from None
        pairs.append(pair)
    if not pairs:
        raise ValueError("--pairs: no pair given")
    return pairs


def time_per_move(pair: Pair) -> float:
    """--time_limit, or the pair's game's time per move (the paper's)."""
    return _TIME_LIMIT.value or aij2016.MATCH_GAMES[pair.game].time_limit


def games_per_seat(pair: Pair) -> int:
    game = aij2016.MATCH_GAMES[pair.game]
    wanted = _NUM_GAMES.value or PROTOCOL_GAMES.get(game.time_limit, 100)
    return -(-wanted // len(game.games))  # per instance, rounded up


def play(pair: Pair) -> str:
    """Run (or resume) the pair's tournament; the path of its games.csv."""
    game = aij2016.MATCH_GAMES[pair.game]
    folder = os.path.join(_RESULTS_DIR.value, pair.folder)
    command = [sys.executable, TOURNAMENT, f"--games={';'.join(game.games)}",
               f"--bots={pair.row_spec}", f"--opponents={pair.column_spec}",
               f"--time_limit={time_per_move(pair):g}", f"--num_games={games_per_seat(pair)}",
               f"--chunk={_CHUNK.value}", f"--seed={_SEED.value}",
               f"--num_workers={_WORKERS.value}", f"--results_dir={folder}", "--bootstrap=20"]
    if _PUBLISH.value:
        command.append("--publish")
    print(f"{pair.game}: {pair.row} vs {pair.column}: {len(game.games)} instances x "
          f"{games_per_seat(pair)} games per seat at {time_per_move(pair):g} s per move",
          flush=True)
    done = subprocess.run(command, stdout=subprocess.DEVNULL)  # its progress shows on stderr
    if done.returncode != 0:
        raise SystemExit(f"the tournament of {pair.game}: {pair.row} vs {pair.column} failed "
                         f"(status {done.returncode}): {' '.join(command)}")
    return os.path.join(folder, "games.csv")


def summary(pair: Pair, games_csv: str, figures: list[dict]) -> dict:
    """The pair's CSV row: the row bot's mean return (both seats, or seat 0 alone on an
    asymmetric game) over every instance, its verdict, ours in the paper's unit beside
    the paper's cell."""
    game = aij2016.MATCH_GAMES[pair.game]
    rows = tournament.read_games_csv(games_csv)
    row_bot = bot_specs.with_time_limit(pair.row_spec, time_per_move(pair))
    column_bot = bot_specs.with_time_limit(pair.column_spec, time_per_move(pair))
    if game.first_seat_only:
        rows = [r for r in rows if r["first"] == row_bot]
    for r in rows:
        r["game"] = pair.game  # the instances pooled
    results = tournament.pairs_by_game(rows, [pair.game], [row_bot, column_bot],
                                       {pair.game: 0.0})[pair.game]
    interval = results[0].interval
    scale = game.points_scale or 50.0
    offset = 0.0 if game.points_scale else 50.0

    def ours(value: float) -> float:  # a win rate's interval ends within [0, 100]
        if not math.isfinite(value):  # no interval (too few games, or all alike)
            return math.nan
        value = offset + scale * value
        return round(value if game.points_scale else min(100.0, max(0.0, value)), 2)

    paper = aij2016.paper_figure(figures, "head_to_head", pair.game, pair.row, game.unit,
                                 opponent=pair.column)
    return {"game": pair.game, "row": pair.row, "column": pair.column,
            "row_spec": pair.row_spec, "column_spec": pair.column_spec,
            "time_limit": time_per_move(pair), "games": interval.n,
            "mean_return": round(interval.estimate, 4), "low": round(interval.low, 4),
            "high": round(interval.high, 4),
            "verdict": aij2016.decision(interval.low, interval.high),
            "ours": ours(interval.estimate), "ours_low": ours(interval.low),
            "ours_high": ours(interval.high), "unit": game.unit,
            "paper": "" if paper is None else paper["figure"],
            "paper_plus_minus": "" if paper is None else paper["plus_minus"]}


def main(argv):
    del argv
    try:
        out = _OUT.value or (os.path.join(RESULTS, "aij_head_to_head") if _PUBLISH.value
                             else os.path.join("results", "aij2016", "aij_head_to_head"))
        experiments.check_output([out, _RESULTS_DIR.value], publish=_PUBLISH.value)
        pairs = parse_pairs(_PAIRS.value)
        params = {"pairs": [f"{p.game}: {p.row}={p.row_spec} vs {p.column}={p.column_spec}"
                            for p in pairs],
                  "num_games": _NUM_GAMES.value, "time_limit": _TIME_LIMIT.value,
                  "seed": _SEED.value}
        experiments.check_not_smaller(out + ".json", params, SCALE, force=_FORCE.value)
        figures = aij2016.read_paper_figures(PAPER_FIGURES)
    except ValueError as e:
        cli.usage_error(str(e))
    start = time.time()
    table = []
    for pair in pairs:
        table.append(summary(pair, play(pair), figures))
        r = table[-1]
        print(f"  {r['row']} vs {r['column']}: {r['ours']} [{r['ours_low']}, {r['ours_high']}] "
              f"{r['unit']} over {r['games']} games ({r['verdict']}); paper {r['paper']}",
              flush=True)
    aij2016.write_table(out, COLUMNS, table, lambda path: plot(table, path), params,
                        wall_seconds=round(time.time() - start, 1))


def plot(table: list[dict], path: str) -> None:
    from smmcts_spiel.reports import plots

    with plots.saved_figure(path, (max(6.0, 0.8 * len(table) + 2), 4.5)) as figure:
        ax = figure.subplots()
        xs = range(len(table))
        ours = [r["ours"] for r in table]
        ax.errorbar(xs, ours, yerr=[[o - r["ours_low"] for o, r in zip(ours, table)],
                                    [r["ours_high"] - o for o, r in zip(ours, table)]],
                    fmt="o", capsize=3, label="ours, 95% interval")
        paper = [(x, r["paper"]) for x, r in zip(xs, table) if r["paper"] != ""]
        if paper:
            ax.scatter(*zip(*paper), marker="x", color="black", label="the paper")
        ax.set_xticks(list(xs), [f"{r['game']}\n{r['row']} vs {r['column']}" for r in table],
                      rotation=60, fontsize=7)
        ax.set_ylabel("row's win % (ties half) or points")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)


if __name__ == "__main__":
    cli.run(main)
