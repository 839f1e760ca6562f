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
Finished pairs are appended to olympiad.csv as they complete, so an interrupted run resumes
where it stopped; a row that does not add up (truncated, edited, unknown bots) is reported
and its pair played again. Trained trees are cached in ``--trees_dir`` (large: do not
commit them) and reused only if they check out and were trained with these flags.

  .venv/bin/python scripts/olympiad.py                 # into results/olympiad
  .venv/bin/python scripts/olympiad.py --publish       # replace the committed data/olympiad
"""

from __future__ import annotations

import csv
import json
import multiprocessing
import os
import time

import numpy as np
import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import evaluate_bots
from scipy import stats
from tqdm import tqdm

from smmcts_spiel import experiments
from smmcts_spiel.bots import BeliefSamplerBot, MMCTSBot
from smmcts_spiel.bots.belief_sampler import ismcts_bot
from smmcts_spiel.search import mmcts
from smmcts_spiel.search.mmcts_phantom_ttt import PhantomTTTMultipleTreeSearch

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
flags.DEFINE_integer("ismcts_simulations", 100, "ISMCTS simulations per move (0: no ISMCTS).")
flags.DEFINE_float("ismcts_uct_c", 2.0, "ISMCTS exploration constant.")
flags.DEFINE_list("baselines", ["Random", "BeliefSampler", "ISMCTS"],
                  "Baseline bots to include (Random, BeliefSampler, ISMCTS).")
flags.DEFINE_integer("seed", 0, "Seed of the training and of every game.")
flags.DEFINE_integer("num_workers", 2, "Worker processes playing the games.", lower_bound=1)
flags.DEFINE_integer("chunk", 50, "Games per task handed to a worker.", lower_bound=1)
flags.DEFINE_string("results_dir", None, "Where the CSV/markdown/params go (default: "
                    "results/olympiad, or data/olympiad with --publish).")
flags.DEFINE_bool("publish", False, "Write the committed results (data/olympiad by default); "
                  "needed for any output under docs/ or data/.")
flags.DEFINE_string("trees_dir", None, "Cache of trained trees (default: results_dir/trees).")
flags.register_validator("gamma", lambda g: 0 < g <= 1, "gamma must be in (0, 1]")

_SEARCHES: dict[int, PhantomTTTMultipleTreeSearch] = {}  # iterations -> snapshot
_BOTS: dict[str, tuple] = {}  # name -> (kind, arguments)


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


def bot_specs() -> dict[str, tuple]:
    """Bot name -> (kind, arguments), in table order."""
    specs = {}
    for spec in FLAGS.mmcts:
        count, _, policy = spec.partition(":")
        policy = mmcts.check_final_strategy(policy or "empirical")
        iterations = parse_count(count)
        specs[f"MMCTS-{short_count(iterations)}-{policy}"] = ("mmcts", iterations, policy)
    for name in FLAGS.baselines:
        if name not in ("Random", "BeliefSampler", "ISMCTS"):
            raise ValueError(f"unknown baseline {name!r}: choose Random, BeliefSampler, ISMCTS")
        if name == "ISMCTS" and FLAGS.ismcts_simulations <= 0:
            continue
        specs[name] = (name,)
    return specs


def make_bot(game, name: str, player: int, seed: int):
    kind = _BOTS[name]
    if kind[0] == "mmcts":
        return MMCTSBot(game, player, training_iterations=0, search=_SEARCHES[kind[1]],
                        final_strategy=kind[2], seed=seed)
    if kind[0] == "Random":
        return pyspiel.make_uniform_random_bot(player, seed)
    if kind[0] == "BeliefSampler":
        return BeliefSamplerBot(game, player, seed=seed)
    return ismcts_bot(game, FLAGS.ismcts_simulations, seed=seed, uct_c=FLAGS.ismcts_uct_c)


def play_chunk(task):
    """Plays games ``start..stop`` of one ordered pair; returns first-player W/D/L."""
    first, second, pair_index, start, stop = task
    game = pyspiel.load_game(FLAGS.game)
    results = np.zeros(3, np.int64)
    for g in range(start, stop):
        seed = int(np.random.SeedSequence([FLAGS.seed, pair_index, g]).generate_state(1)[0])
        seed %= 2**31 - 2  # pyspiel bots take 32-bit signed seeds
        bots = [make_bot(game, first, 0, seed), make_bot(game, second, 1, seed + 1)]
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots,
                                              np.random.RandomState(seed))
        results[0 if returns[0] > 0 else (1 if returns[0] == 0 else 2)] += 1
    return first, second, results


def train_snapshots(game, trees_dir: str, results_dir: str) -> None:
    """Trains one MMCTS run, saving (or loading) a snapshot at each budget."""
    budgets = sorted({kind[1] for kind in _BOTS.values() if kind[0] == "mmcts"})
    rows = []
    search = None
    elapsed = 0.0
    for iterations in budgets:
        path = os.path.join(trees_dir, f"mmcts_{FLAGS.game}_gamma{FLAGS.gamma}_seed"
                                       f"{FLAGS.seed}_{iterations}.npz")
        meta = path + ".json"
        expected = dict(game=FLAGS.game, gamma=FLAGS.gamma, seed=FLAGS.seed,
                        iterations=iterations)
        cached = load_cached(path, meta, expected)
        if cached is not None:
            search, elapsed = cached
        else:
            if search is None:
                search = PhantomTTTMultipleTreeSearch(game, FLAGS.gamma, FLAGS.seed)
            start = time.perf_counter()
            search.train(iterations - search.iterations, progress=True)
            elapsed += time.perf_counter() - start
            search.save(path)
            with open(meta, "w") as f:
                json.dump({"wall_seconds": elapsed}, f)
        _SEARCHES[iterations] = PhantomTTTMultipleTreeSearch.load(path, **expected)
        rows.append({"iterations": iterations, "wall_seconds": round(elapsed, 1),
                     "nodes_player0": int(search.num_nodes[0]),
                     "nodes_player1": int(search.num_nodes[1]),
                     "training_x_win_rate": round(search.outcomes[0] / search.iterations, 4)})
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
        print(f"cached tree {path} is unusable ({e}); training it again")
        return None
    return search, elapsed


def wilson(k: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(int(k), int(n)).proportion_ci(0.95, method="wilson")
    return ci.low, ci.high


FIELDS = ["first", "second", "games", "wins", "draws", "losses", "win_rate", "win_low",
          "win_high", "loss_rate", "loss_low", "loss_high"]


def pair_row(first: str, second: str, wdl) -> dict:
    n = int(sum(wdl))
    wl, wh = wilson(wdl[0], n)
    ll, lh = wilson(wdl[2], n)
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


def read_rows(csv_path: str, names: list[str], games_of) -> dict:
    """The finished pairs of ``csv_path``; rows that do not check out are reported and
    dropped (the file is rewritten without them), so their pairs are played again."""
    rows, bad = {}, []
    if not os.path.exists(csv_path):
        return rows
    with open(csv_path, newline="") as f:
        lines = list(csv.DictReader(f))
    for number, r in enumerate(lines, start=2):
        try:
            first, second = r["first"], r["second"]
            wdl = [int(r[k]) for k in ("wins", "draws", "losses")]
            if first not in names or second not in names:
                raise ValueError(f"unknown bots {first!r}, {second!r}")
            if min(wdl) < 0 or sum(wdl) != games_of(first, second) \
                    or int(r["games"]) != sum(wdl):
                raise ValueError(f"{sum(wdl)} games recorded, {games_of(first, second)} "
                                 "expected")
            row = pair_row(first, second, np.array(wdl))
            if any(not np.isclose(float(r[k]), row[k]) for k in FIELDS[6:]):
                raise ValueError("rates do not match the counts")
        except (KeyError, TypeError, ValueError) as e:
            bad.append(f"line {number}: {e}")
            continue
        rows[(first, second)] = row
    if bad:
        print(f"{csv_path}: dropping {len(bad)} bad rows, their pairs are played again:\n  "
              + "\n  ".join(bad))
        tmp = csv_path + ".tmp"
        with open(tmp, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows.values())
        os.replace(tmp, csv_path)
    return rows


def main(argv):
    del argv
    try:
        game = pyspiel.load_game(FLAGS.game)
        results_dir = FLAGS.results_dir or ("data/olympiad" if FLAGS.publish
                                            else "results/olympiad")
        trees_dir = FLAGS.trees_dir or os.path.join(results_dir, "trees")
        experiments.check_output([results_dir, trees_dir], publish=FLAGS.publish)
        _BOTS.update(bot_specs())
    except (pyspiel.SpielError, ValueError) as e:
        raise app.UsageError(str(e), exitcode=2) from None
    os.makedirs(results_dir, exist_ok=True)
    os.makedirs(trees_dir, exist_ok=True)
    params = {name: FLAGS[name].value for name in (
        "game", "num_games", "ismcts_num_games", "mmcts", "gamma", "ismcts_simulations",
        "ismcts_uct_c", "baselines", "seed")}
    params_path = os.path.join(results_dir, "params.json")
    csv_path = os.path.join(results_dir, "olympiad.csv")
    if os.path.exists(params_path) and os.path.exists(csv_path):
        try:
            with open(params_path) as f:
                saved = json.load(f)
        except (OSError, ValueError) as e:
            raise app.UsageError(f"{params_path} is unreadable ({e}); it records the flags of "
                                 f"{csv_path}: restore it or use another --results_dir",
                                 exitcode=2) from None
        if saved != params:
            raise app.UsageError(f"{results_dir} holds results of a run with other flags "
                                 f"({params_path}); use another --results_dir", exitcode=2)
    with open(params_path, "w") as f:
        json.dump(params, f, indent=2)
    names = list(_BOTS)
    train_snapshots(game, trees_dir, results_dir)

    def games_of(first: str, second: str) -> int:
        if "ISMCTS" in (first, second) and FLAGS.ismcts_num_games:
            return FLAGS.ismcts_num_games
        return FLAGS.num_games

    rows = read_rows(csv_path, names, games_of)
    tasks, pending = [], {}
    for pair_index, (first, second) in enumerate((a, b) for a in names for b in names):
        if (first, second) in rows:
            continue
        n = games_of(first, second)
        pending[(first, second)] = [np.zeros(3, np.int64), n]
        tasks += [(first, second, pair_index, s, min(s + FLAGS.chunk, n))
                  for s in range(0, n, FLAGS.chunk)]
    # Slow (ISMCTS) tasks first, so the workers finish together.
    tasks.sort(key=lambda t: "ISMCTS" not in t[:2])
    new_file = not os.path.exists(csv_path)
    with open(csv_path, "a", newline="") as f, \
            multiprocessing.get_context("fork").Pool(
                FLAGS.num_workers, experiments.die_with_parent, (os.getpid(),)) as pool, \
            experiments.exit_on_sigterm():
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        if new_file:
            writer.writeheader()
        with tqdm(total=sum(t[4] - t[3] for t in tasks), desc="games", unit="game") as bar:
            for first, second, wdl in pool.imap_unordered(play_chunk, tasks):
                acc = pending[(first, second)]
                acc[0] += wdl
                bar.update(int(wdl.sum()))
                if acc[0].sum() == acc[1]:
                    rows[(first, second)] = pair_row(first, second, acc[0])
                    writer.writerow(rows[(first, second)])
                    f.flush()
                    write_markdown(os.path.join(results_dir, "olympiad.md"), names, rows)
    write_markdown(os.path.join(results_dir, "olympiad.md"), names, rows)
    write_markdown(os.path.join(results_dir, "olympiad_compact.md"), names, rows, False)
    print(open(os.path.join(results_dir, "olympiad.md")).read())


if __name__ == "__main__":
    app.run(main)
