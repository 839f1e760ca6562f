"""The head-to-head protocol of Lisy, Lanctot, Bowling (AAMAS 2015), on the rated tournament
runner: our imperfect-information bots against OpenSpiel's ISMCTS and a random player.

Settings (--setting):

  gs6_descending  II-Goofspiel(6) as the paper's experiments played it: point cards in a
                  fixed, descending order (the paper's text says increasing, 0..N-1; the
                  runs behind its figures, ``IIGS_1_6``, used GTLibrary's GSGameInfo with
                  seed 1, which reverses the order: N-1..0), win/loss returns; OpenSpiel's
                  cards are 1..N instead of 0..N-1;
  gs6_ascending   the same with the points ascending, as the paper's text states it;
  gs6_random      the same with the point order dealt at random;
  phantom_ttt     OpenSpiel's Phantom Tic-Tac-Toe;
  leduc_poker     OpenSpiel's Leduc poker (the paper's larger poker is Generic Poker);
                  with --duplicate each deal is played twice, seats swapped (duplicate
                  poker), and intervals are over deals.

A gauntlet (``scripts/tournament.py --opponents``): every bot of --bots plays every
opponent of --opponents, both seats, --num_games games per ordered pair (so 2 x
--num_games per pair; the paper's tables: at least 500 games per cell), --time_limit
seconds per move for every searching bot. Fresh bots for every game (one search per
game, kept between its moves). The runner is resumable (finished chunks of games stay in
--results_dir); writes games.csv, pairs.csv (mean return with its 95% interval), ratings
(Elo) and tournament.md there.

  python experiments/imperfect/imperfect_protocol.py --setting=gs6_descending --time_limit=0.1
  python experiments/imperfect/imperfect_protocol.py --setting=gs6_descending --time_limit=1 \\
      --bots="oos" --opponents="ismcts"
  python experiments/imperfect/imperfect_protocol.py --summarize=results/imperfect_protocol \\
      --out=results/imperfect_protocol/summary

--summarize plays nothing: it gathers the pairs.csv of every run below the folder into
<out>.csv (setting, time per move, bot, opponent, games, mean return of the bot with its 95%
interval, wins / draws / losses) and <out>.png (the means with their intervals).

Timing-sensitive: run it on a quiet machine, one process pinned to a core (e.g.
``taskset -c 1``); interrupting it (Ctrl-C, SIGTERM) keeps every finished chunk.
"""

from __future__ import annotations

import csv
import glob
import os
import subprocess
import sys

from absl import app, flags

from smmcts_spiel import experiments
from smmcts_spiel.experiments import cli, outputs

#: Protocol settings -> game string.
SETTINGS = {
    "gs6_descending": "goofspiel(num_cards=6,imp_info=True,points_order=descending)",
    "gs6_ascending": "goofspiel(num_cards=6,imp_info=True,points_order=ascending)",
    "gs6_random": "goofspiel(num_cards=6,imp_info=True,points_order=random)",
    "phantom_ttt": "phantom_ttt",
    "leduc_poker": "leduc_poker",
}
#: Our bots, as chosen by measurement (NOTES.md beside this program): OOS with its
#: defaults and with the paper's settings, information-set SM-MCTS.
BOTS = "oos;oos(preset=paper);is_smmcts"
OPPONENTS = "ismcts;random"

_SETTING = flags.DEFINE_enum("setting", "gs6_descending", list(SETTINGS), "Which game.")
_TIME_LIMIT = flags.DEFINE_float("time_limit", 0.1, "Seconds per move of every searching bot.")
_BOTS = flags.DEFINE_string("bots", BOTS, "Semicolon-separated bot specs (ours).")
_OPPONENTS = flags.DEFINE_string("opponents", OPPONENTS, "Semicolon-separated opponents.")
_NUM_GAMES = flags.DEFINE_integer("num_games", 200, "Games per ordered pair (x2 per pair).",
                                  lower_bound=1)
_CHUNK = flags.DEFINE_integer("chunk", 10, "Games per resumable job.", lower_bound=1)
_NUM_WORKERS = flags.DEFINE_integer("num_workers", 1, "Games played at once, each in a process "
                                    "of its own (give each a core of its own).",
                                    lower_bound=1)
_SEED = cli.define_seed("Base seed of every game.")
_DUPLICATE = flags.DEFINE_bool("duplicate", False, "Duplicate deals: each deal played twice, "
                               "seats swapped, same chance outcomes (tournament.py --duplicate).")
_RESULTS_DIR = flags.DEFINE_string("results_dir", None, "Output directory (default: "
                                   "results/imperfect_protocol/<setting>_<time_limit>s).")
_PUBLISH = cli.define_publish("into the committed results")
_DRY_RUN = flags.DEFINE_bool("dry_run", False, "Print the tournament command, run nothing.")
_SUMMARIZE = flags.DEFINE_string("summarize", None, "Play nothing: summarise the runs below "
                                 "this folder (each a --results_dir of this script).")
_OUT = flags.DEFINE_string("out", None, "Output prefix of --summarize (default: "
                           "<folder>/summary).")
flags.register_validator("time_limit", cli.positive_finite,
                         "--time_limit must be a positive, finite number of seconds")


def tournament_command(setting: str, time_limit: float, bots: str, opponents: str,
                       num_games: int, chunk: int, seed: int, results_dir: str,
                       publish: bool, num_workers: int = 1,
                       duplicate: bool = False) -> list[str]:
    """The command line of the tournament tool (``scripts/tournament.py``, installed as
    ``smmcts_spiel.scripts.tournament``) for one setting of the protocol."""
    return [sys.executable, "-m", "smmcts_spiel.scripts.tournament",
            f"--games={SETTINGS[setting]}", f"--bots={bots}",
            f"--opponents={opponents}", f"--time_limit={time_limit:g}",
            f"--num_games={num_games}", f"--chunk={chunk}", f"--seed={seed}",
            *(["--backend=serial"] if num_workers == 1 else
              ["--backend=process", f"--num_workers={num_workers}"]),
            f"--results_dir={results_dir}",
            *(["--duplicate"] if duplicate else []),
            *(["--publish"] if publish else [])]


def summary_rows(folder: str) -> list[dict]:
    """One row per (run, bot, opponent) of the tournaments below ``folder``."""
    names = {game: name for name, game in SETTINGS.items()}
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "**", "pairs.csv"), recursive=True)):
        params = outputs.read_json_object(os.path.join(os.path.dirname(path),
                                                           "params.json"))
        ours = params["bots"][:len(params["bots"]) - params["opponents"]]
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r["bot_a"] not in ours or r["bot_b"] in ours:
                    continue
                rows.append({"setting": names.get(r["game"], r["game"]) + (
                                 "_duplicate" if params.get("duplicate") else ""),
                             "time_limit": params["time_limit"],
                             "bot": r["bot_a"].replace(f",time_limit={params['time_limit']:g}",
                                                       "").replace(
                                 f"(time_limit={params['time_limit']:g})", ""),
                             "opponent": r["bot_b"].split("(")[0], "games": int(r["games"]),
                             "mean": float(r["mean_a"]), "ci95": float(r["ci95"]),
                             "wins": int(r["wins_a"]), "draws": int(r["draws"]),
                             "losses": int(r["losses_a"])})
    return rows


def plot_summary(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["opponent"], r["time_limit"]) for r in rows})
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for ax, (opponent, time_limit) in zip(axes[0], panels):
        cell = [r for r in rows if (r["opponent"], r["time_limit"]) == (opponent, time_limit)]
        order = list(SETTINGS)
        settings = sorted({r["setting"] for r in cell},
                          key=lambda s: (order.index(s.removesuffix("_duplicate"))
                                         if s.removesuffix("_duplicate") in order
                                         else len(order), s))
        bots = sorted({r["bot"] for r in cell})
        width = 0.8 / len(bots)
        for k, bot in enumerate(bots):
            xs, ys, es = [], [], []
            for i, setting in enumerate(settings):
                for r in cell:
                    if (r["setting"], r["bot"]) == (setting, bot):
                        xs.append(i + (k - (len(bots) - 1) / 2) * width)
                        ys.append(r["mean"])
                        es.append(r["ci95"])
            ax.bar(xs, ys, width, yerr=es, capsize=3, label=bot)
        ax.axhline(0, color="black", lw=0.5)
        ax.set_xticks(range(len(settings)), settings, rotation=15, fontsize=8)
        ax.set_ylabel("mean return of our bot (95% interval)")
        ax.set_title(f"against {opponent}, {time_limit:g} s per move", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summarize(folder: str) -> None:
    out = _OUT.value or os.path.join(folder, "summary")
    try:
        experiments.check_output([out], publish=_PUBLISH.value)
        rows = summary_rows(folder)
    except (ValueError, KeyError) as e:
        raise app.UsageError(f"--summarize={folder}: {e}", exitcode=2) from None
    if not rows:
        raise app.UsageError(f"--summarize={folder}: no finished protocol run below it",
                             exitcode=2)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot_summary(rows, out + ".png")
    for r in rows:
        print(f"{r['setting']:<15} {r['time_limit']:>4g} s  {r['bot']:<22} vs "
              f"{r['opponent']:<7} {r['mean']:+.3f} +- {r['ci95']:.3f}  "
              f"({r['wins']}/{r['draws']}/{r['losses']}, {r['games']} games)")
    print(f"wrote {out}.csv/.png")


def main(argv):
    if _SUMMARIZE.value is not None:
        summarize(_SUMMARIZE.value)
        return
    results_dir = _RESULTS_DIR.value or os.path.join(
        "results", "imperfect_protocol",
        f"{_SETTING.value}_{_TIME_LIMIT.value:g}s" + ("_duplicate" if _DUPLICATE.value else ""))
    try:
        experiments.check_output([results_dir], publish=_PUBLISH.value)
    except ValueError as e:
        raise app.UsageError(str(e), exitcode=2) from None
    command = tournament_command(_SETTING.value, _TIME_LIMIT.value, _BOTS.value,
                                 _OPPONENTS.value, _NUM_GAMES.value, _CHUNK.value,
                                 _SEED.value, results_dir, _PUBLISH.value, _NUM_WORKERS.value,
                                 _DUPLICATE.value)
    print(" ".join(command[1:]), flush=True)
    if _DRY_RUN.value:
        return
    status = subprocess.run(command).returncode
    if status == 2:
        raise app.UsageError("the tournament runner refused the protocol's command (above)",
                             exitcode=2)
    sys.exit(status)


if __name__ == "__main__":
    cli.run(main)
