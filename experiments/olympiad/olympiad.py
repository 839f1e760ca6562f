"""The Phantom Tic-Tac-Toe olympiad of the MMCTS poster: every ordered pair of bots.

Bots: MMCTS snapshots (one training run with one seed, saved after each budget, like the
poster's MMCTS-500K/5M/50M), Random, the Belief Sampler and OpenSpiel's Python ISMCTSBot
(random rollouts, worlds from the Belief Sampler's belief). Each ordered pair plays
``--num_games`` games (``--ismcts_num_games`` for pairs with ISMCTS, which is slow).

Writes into ``--results_dir``:
  params.json     the flags of the run (a rerun with other flags refuses to mix results);
  training.csv    per MMCTS snapshot: iterations, cumulated wall time, nodes per tree;
  olympiad.csv    per ordered pair: wins / draws / losses of the first player, 95% intervals;
  olympiad.md     the table: rows = first player, columns = second player, cells = wins% /
                  losses% of the first player with 95% Wilson intervals;
  olympiad_compact.md  the same without intervals (the poster's layout).
The games are played by the shared match runner (:func:`smmcts_spiel.match.play_games`,
bots from spec strings) as resumable jobs (:func:`smmcts_spiel.experiments.run_jobs`):
finished chunks of games are kept in ``results_dir/games/``, so an interrupted run resumes
where it stopped; a chunk file that does not check out is reported and played again.
Trained trees are cached in ``--trees_dir`` (large: do not commit them) and reused only if
they check out and were trained with these flags.

  .venv/bin/python experiments/olympiad/olympiad.py             # into results/olympiad
  .venv/bin/python experiments/olympiad/olympiad.py --publish   # replace the committed results/
"""

from __future__ import annotations

import csv
import json
import os
import re
import time

import numpy as np
import pyspiel
from absl import app, flags, logging

from smmcts_spiel import experiments, match, reports
from smmcts_spiel.experiments import cli
from smmcts_spiel.imperfect import mmcts
from smmcts_spiel.imperfect.mmcts_phantom_ttt import PhantomTTTMultipleTreeSearch

# The committed results of this experiment (written with --publish).
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

FLAGS = flags.FLAGS
flags.DEFINE_string("game", "phantom_ttt", "Classical Phantom Tic-Tac-Toe game string.")
flags.DEFINE_integer("num_games", 1000, "Games per ordered pair of bots.", lower_bound=1)
flags.DEFINE_integer("ismcts_num_games", None, "Games per ordered pair involving ISMCTS "
                     "(default: --num_games).", lower_bound=1)
flags.DEFINE_list("mmcts", ["500K:exp3_no_exploration", "5M:exp3_no_exploration",
                            "50M:exp3_no_exploration", "50M:empirical"],
                  "MMCTS bots as ITERATIONS:FINAL_POLICY (K and M suffixes allowed); all "
                  "are snapshots of one training run.")
flags.DEFINE_float("gamma", 0.05, "Exp3 exploration probability of the MMCTS training.")
flags.DEFINE_integer("ismcts_simulations", 100, "ISMCTS simulations per move (0: no ISMCTS).",
                     lower_bound=0)
flags.DEFINE_float("ismcts_uct_c", 2.0, "ISMCTS exploration constant.", lower_bound=0)
flags.DEFINE_list("baselines", ["Random", "BeliefSampler", "ISMCTS"],
                  "Baseline bots to include (Random, BeliefSampler, ISMCTS).")
cli.define_seed("Seed of the training and of every game.")
flags.DEFINE_integer("num_workers", 2, "Worker processes playing the games.", lower_bound=1)
flags.DEFINE_integer("chunk", 50, "Games per task handed to a worker.", lower_bound=1)
flags.DEFINE_string("results_dir", None, "Where the CSV/markdown/params go (default: "
                    "results/olympiad, or experiments/olympiad/results with --publish).")
cli.define_publish("the committed results (experiments/olympiad/results by default)")
flags.DEFINE_string("trees_dir", None, "Cache of trained trees (default: results_dir/trees).")
flags.register_validator("gamma", lambda g: 0 < g <= 1, "gamma must be in (0, 1]")


def parse_count(text: str) -> int:
    """``"500K"`` -> 500000, ``"5M"`` -> 5000000."""
    text = text.strip().upper()
    scale = {"K": 1_000, "M": 1_000_000}.get(text[-1:], 1)
    digits = text[:-1] if scale > 1 else text
    try:
        return int(float(digits) * scale)
    except ValueError:
        raise ValueError(f"not an iteration count: {text!r} (use e.g. 500K, 5M, 1000)") from None


def short_count(n: int) -> str:
    for suffix, scale in (("M", 1_000_000), ("K", 1_000)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{suffix}"
    return str(n)


def snapshot_path(trees_dir: str, iterations: int) -> str:
    """Where the MMCTS snapshot after ``iterations`` is cached (a bot-spec-safe name)."""
    game = re.sub(r"[^A-Za-z0-9_.-]", "_", FLAGS.game)
    return os.path.join(trees_dir, f"mmcts_{game}_gamma{FLAGS.gamma}_seed{FLAGS.seed}_"
                                   f"{iterations}.npz")


def olympiad_bots(trees_dir: str) -> dict[str, str]:
    """Bot name -> bot spec (:mod:`smmcts_spiel.bot_specs`), in table order."""
    specs = {}
    for spec in FLAGS.mmcts:
        count, _, policy = spec.partition(":")
        policy = mmcts.check_final_strategy(policy or "empirical")
        iterations = parse_count(count)
        specs[f"MMCTS-{short_count(iterations)}-{policy}"] = (
            f"mmcts(file={snapshot_path(trees_dir, iterations)},final_strategy={policy})")
    for name in FLAGS.baselines:
        if name not in ("Random", "BeliefSampler", "ISMCTS"):
            raise ValueError(f"unknown baseline {name!r}: choose Random, BeliefSampler, ISMCTS")
        if name == "ISMCTS" and FLAGS.ismcts_simulations <= 0:
            continue
        specs[name] = {"Random": "random", "BeliefSampler": "belief_sampler",
                       "ISMCTS": f"ismcts(iterations={FLAGS.ismcts_simulations},"
                                 f"uct_c={FLAGS.ismcts_uct_c})"}[name]
    return specs


def train_snapshots(game, budgets: list[int], trees_dir: str, results_dir: str) -> None:
    """Trains one MMCTS run, saving (or loading) a snapshot at each budget."""
    rows = []
    search = None
    elapsed = 0.0
    for iterations in sorted(budgets):
        path = snapshot_path(trees_dir, iterations)
        expected = dict(game=FLAGS.game, gamma=FLAGS.gamma, seed=FLAGS.seed,
                        iterations=iterations)
        cached = load_cached(path, path + ".json", expected)
        if cached is not None:
            search, elapsed = cached
        else:
            if search is None:
                search = PhantomTTTMultipleTreeSearch(game, FLAGS.gamma, FLAGS.seed)
            start = time.perf_counter()
            search.train(iterations - search.iterations, progress=True)
            elapsed += time.perf_counter() - start
            search.save(path)
            with open(path + ".json", "w") as f:
                json.dump({"wall_seconds": elapsed}, f)
        rows.append({"iterations": iterations, "wall_seconds": round(elapsed, 1),
                     "nodes_player0": int(search.num_nodes[0]),
                     "nodes_player1": int(search.num_nodes[1]),
                     "training_x_win_rate": round(search.outcomes[0] / search.iterations, 4)})
    if rows:
        with open(os.path.join(results_dir, "training.csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def load_cached(path: str, meta: str, expected: dict):
    """(search, wall seconds) of a cached snapshot, or None (reported) if it is unusable."""
    if not (os.path.exists(path) and os.path.exists(meta)):
        return None
    try:
        search = PhantomTTTMultipleTreeSearch.load(path, **expected)
        with open(meta) as f:
            elapsed = float(json.load(f)["wall_seconds"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        logging.warning("cached tree %s is unusable (%s); training it again", path, e)
        return None
    return search, elapsed


FIELDS = ["first", "second", "games", "wins", "draws", "losses", "win_rate", "win_low",
          "win_high", "loss_rate", "loss_low", "loss_high"]


def pair_row(first: str, second: str, wdl) -> dict:
    n = int(sum(wdl))
    win, loss = reports.rate_interval(wdl[0], n), reports.rate_interval(wdl[2], n)
    wl, wh, ll, lh = win.low, win.high, loss.low, loss.high
    return {"first": first, "second": second, "games": n, "wins": int(wdl[0]),
            "draws": int(wdl[1]), "losses": int(wdl[2]), "win_rate": wdl[0] / n,
            "win_low": wl, "win_high": wh, "loss_rate": wdl[2] / n, "loss_low": ll,
            "loss_high": lh}


def write_markdown(path: str, names: list[str], rows: dict, intervals: bool = True) -> None:
    """The table; without ``intervals`` cells are just ``wins / losses`` in whole percent."""
    lines = ["Phantom Tic-Tac-Toe olympiad: rows = first player (x), columns = second "
             "player (o); cell = wins % / losses % of the first player" + (
                 ", 95% Wilson intervals in brackets, n = games." if intervals else
                 " (intervals and game counts: olympiad.md)."), "",
             "| P1 \\ P2 | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    for first in names:
        cells = []
        for second in names:
            r = rows.get((first, second))
            if r is None:
                cells.append("")
                continue
            if not intervals:
                cells.append(f"{100 * r['win_rate']:.0f} / {100 * r['loss_rate']:.0f}")
                continue
            cells.append(f"{100 * r['win_rate']:.1f} [{100 * r['win_low']:.1f}, "
                         f"{100 * r['win_high']:.1f}] / {100 * r['loss_rate']:.1f} "
                         f"[{100 * r['loss_low']:.1f}, {100 * r['loss_high']:.1f}] "
                         f"(n={r['games']})")
        lines.append(f"| {first} | " + " | ".join(cells) + " |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    try:
        run()
    except (pyspiel.SpielError, ValueError) as e:
        raise app.UsageError(str(e), exitcode=2) from None


def run() -> None:
    game = cli.load_game(FLAGS.game)
    match.check_match_game(game)
    results_dir = FLAGS.results_dir or (RESULTS if FLAGS.publish else "results/olympiad")
    trees_dir = FLAGS.trees_dir or os.path.join(results_dir, "trees")
    experiments.check_output([results_dir, trees_dir], publish=FLAGS.publish)
    experiments.check_params(results_dir, {name: FLAGS[name].value for name in (
        "game", "num_games", "ismcts_num_games", "mmcts", "gamma", "ismcts_simulations",
        "ismcts_uct_c", "baselines", "seed")})
    os.makedirs(trees_dir, exist_ok=True)
    bots = olympiad_bots(trees_dir)
    names = list(bots)
    train_snapshots(game, sorted({parse_count(s.partition(":")[0]) for s in FLAGS.mmcts}),
                    trees_dir, results_dir)

    # One job per chunk of games of an ordered pair; the runner keeps finished chunks.
    jobs, chunks = {}, {}
    for pair_index, (first, second) in enumerate((a, b) for a in names for b in names):
        n = FLAGS.num_games
        if "ISMCTS" in (first, second) and FLAGS.ismcts_num_games:
            n = FLAGS.ismcts_num_games
        keys = [f"pair{pair_index}_games{s}-{min(s + FLAGS.chunk, n)}"
                for s in range(0, n, FLAGS.chunk)]
        chunks[(first, second)] = keys
        for key, s in zip(keys, range(0, n, FLAGS.chunk)):
            jobs[key] = {"game": FLAGS.game, "first": bots[first], "second": bots[second],
                         "base_seed": FLAGS.seed, "pair_index": pair_index, "start": s,
                         "stop": min(s + FLAGS.chunk, n)}
    # Slow (ISMCTS) jobs first, so the workers finish together.
    slow = {key for (a, b), keys in chunks.items() if "ISMCTS" in (a, b) for key in keys}
    jobs = {key: jobs[key] for key in sorted(jobs, key=lambda k: k not in slow)}
    results = experiments.run_jobs(match.play_games, jobs,
                                   results_dir=os.path.join(results_dir, "games"),
                                   workers=FLAGS.num_workers, desc="chunks of games")
    rows = {}
    for pair, keys in chunks.items():
        first_returns = np.concatenate([results[key]["returns"][:, 0] for key in keys])
        wdl = np.array([(first_returns > 0).sum(), (first_returns == 0).sum(),
                        (first_returns < 0).sum()], np.int64)
        rows[pair] = pair_row(*pair, wdl)
    with open(os.path.join(results_dir, "olympiad.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows.values())
    write_markdown(os.path.join(results_dir, "olympiad.md"), names, rows)
    write_markdown(os.path.join(results_dir, "olympiad_compact.md"), names, rows, False)
    print(open(os.path.join(results_dir, "olympiad.md")).read())


if __name__ == "__main__":
    cli.run(main)
