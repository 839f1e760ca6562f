"""Small seeded runs of the experiments, recorded and compared: a change that moves or
restructures code (and so should change no result) is checked by the same runs before and
after it giving the same files.

  python experiments/check_unchanged.py --record=results/unchanged/after
  python experiments/check_unchanged.py --before=results/unchanged/before \\
      --after=results/unchanged/after

Record on the commit before the change too: copy this program out of the checkout first
(``git show HEAD:experiments/check_unchanged.py > /tmp/check_unchanged.py``), check out the
old commit and run the copy with ``--root=.``; it finds each program by its file name in
scripts/, experiments/ or benchmarks/, wherever the commit keeps it.

The runs: Fig. 2 and Fig. 3 (its screen protocol) on tiny grids, the Phantom Tic-Tac-Toe
olympiad, a tournament on Goofspiel and Oshi-Zumo, the imperfect-information protocol and
MC-NFSP on Kuhn poker (skipped without the nfsp extra). Each has an iteration budget, one
worker and a fixed seed, so its results depend on the code alone; about 10 minutes on one
core, most of it compiling. The job files the runs resume from (pickles, arrays) are
removed; the outputs stay.

The comparison: both trees hold the same files; every file is byte for byte the same, except
that a JSON file or a CSV table may differ in the fields that record the run rather than its
result (:data:`RUN_FIELDS`: run times, the moment it was written), and each such difference
is listed. ``--renamed=OLD=NEW`` (repeatable) accepts a program or path renamed by the
change: OLD in a file before is read as NEW, and the files that needed it are listed.
Exit status 0 when the results are unchanged, 1 when they are not.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from absl import flags

from smmcts_spiel import experiments
from smmcts_spiel.experiments import cli

#: Fields (JSON keys, CSV columns) that record a run, not its result.
RUN_FIELDS = re.compile(r"^(.*_)?seconds$|^written_at")

_RECORD = flags.DEFINE_string("record", None, "Record the runs into this folder (replaced).")
_BEFORE = flags.DEFINE_string("before", None, "Compare: the runs recorded before the change.")
_AFTER = flags.DEFINE_string("after", None, "Compare: the runs recorded after the change.")
_RENAMED = flags.DEFINE_multi_string("renamed", [], "OLD=NEW: a name the change renamed "
                                     "(e.g. scripts/fig3.py=experiments/fig3/fig3.py).")
_ROOT = flags.DEFINE_string("root", str(Path(__file__).resolve().parents[1]),
                            "The checkout whose programs --record runs.")

#: The MC-NFSP run: a fixed number of episodes, NashConv after each block (no clock).
NFSP_RUN = """
import csv, sys
import pyspiel
from open_spiel.python.algorithms import exploitability
import smmcts_spiel  # noqa: F401
from smmcts_spiel.nfsp.mc_nfsp import Config, MCNFSP

run = MCNFSP(Config(game="kuhn_poker", hidden=(16,), num_simulations=4, batch_size=16, seed=3))
game = pyspiel.load_game("kuhn_poker")
rows = []
for block in range(3):
    for _ in range(40):
        run.play_episode()
        run.learn()
    rows.append([run.episodes, f"{exploitability.nash_conv(game, run.average_policy()):.12g}"])
with open(sys.argv[1], "w", newline="") as f:
    csv.writer(f).writerows(rows)
"""


def runs(out: Path) -> list[tuple[str, list[str]]]:
    """(program file name, its flags) of every recorded run, writing under ``out``."""
    return [
        ("fig2.py", ["--games=2", "--runs=2", "--iterations=300", "--branchings=2,3",
                     "--gammas=0.1", "--depths=2,3", "--workers=1", f"--out={out}/fig2/fig2",
                     f"--results_dir={out}/fig2/jobs"]),
        ("fig3.py", ["--protocol=screen", "--max_games=60", "--screen_runs=1", "--shortlist=10",
                     "--shortlist_runs=2", "--finalists=3", "--confirm_runs=3",
                     "--iterations=100", "--curve_iterations=300", "--curve_runs=2",
                     "--batch=30", f"--out={out}/fig3/fig3", f"--data_dir={out}/fig3/data",
                     f"--results_dir={out}/fig3/jobs", "--workers=1"]),
        ("olympiad.py", ["--num_games=4", "--ismcts_num_games=2",
                         "--mmcts=2K:exp3_no_exploration,3K:empirical",
                         "--ismcts_simulations=10", "--num_workers=1", "--chunk=2",
                         f"--results_dir={out}/olympiad", f"--trees_dir={out}/olympiad_trees"]),
        ("tournament.py", ["--games=goofspiel(num_cards=4,imp_info=False,points_order="
                           "descending);oshi_zumo(coins=5,size=2,horizon=8)",
                           "--bots=smmcts(iterations=60);mcts(engine=cpp,iterations=60);random",
                           "--num_games=4", "--chunk=2", "--bootstrap=20",
                           f"--results_dir={out}/tournament", "--num_workers=1"]),
        ("imperfect_protocol.py", ["--setting=gs6_descending",
                                   "--bots=oos(iterations=40);is_smmcts(iterations=40)",
                                   "--opponents=ismcts(simulations=20);random",
                                   "--num_games=2", "--chunk=2",
                                   f"--results_dir={out}/imperfect", "--num_workers=1"]),
    ]


#: What the runs leave that is not a result: resume files and caches.
SCRATCH = ("olympiad_trees", "olympiad/games", "tournament/games", "imperfect/games",
           "fig2/jobs", "fig3/jobs")


def find_program(root: Path, name: str) -> Path:
    """``name`` in scripts/, experiments/[*/] or benchmarks/ of ``root``."""
    places = [root / "scripts", root / "experiments", *sorted((root / "experiments").glob("*")),
              root / "benchmarks"]
    for folder in places:
        if (folder / name).is_file():
            return folder / name
    cli.usage_error(f"--root={root}: no program {name} in scripts/, experiments/ or "
                    "benchmarks/")


def record(out: Path, root: Path) -> None:
    commands = [[sys.executable, str(find_program(root, name)), *args]
                for name, args in runs(out)]
    try:
        import jax  # noqa: F401
    except ImportError:
        print("MC-NFSP skipped: it needs the nfsp extra (pip install 'smmcts-spiel[nfsp]')")
    else:
        commands.append([sys.executable, "-c", NFSP_RUN, str(out / "nfsp.csv")])
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for command in commands:
        print("==", " ".join(command[1:2] if command[1] != "-c" else ["MC-NFSP, kuhn_poker"]),
              flush=True)
        if subprocess.run(command, cwd=root).returncode != 0:
            sys.exit(f"the run failed: {' '.join(command)[:300]}")
    for scratch in SCRATCH:
        shutil.rmtree(out / scratch, ignore_errors=True)
    for path in sorted(out.rglob("*")):
        if path.is_file():
            print(path.relative_to(out))


def _flat(value, where: str = "") -> dict[str, object]:
    """Parsed JSON as {dotted path: leaf value} (list items by index)."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return {where: value}
    flat: dict[str, object] = {}
    for key, item in items:
        flat.update(_flat(item, f"{where}.{key}" if where else str(key)))
    return flat


def _differing_fields(before: dict, after: dict) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _csv_columns(text: str) -> dict[str, object]:
    """A CSV table as {column name.row number: value} (a header of names expected)."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return {}
    return {f"{name}.{r}": row[k] if k < len(row) else None
            for r, row in enumerate(rows[1:]) for k, name in enumerate(rows[0])} | {
        f"{name}.header": k for k, name in enumerate(rows[0])} | {"rows": len(rows)}


def compare_file(before: bytes, after: bytes, suffix: str,
                 renamed: list[tuple[str, str]]) -> tuple[bool, str]:
    """(same result, how): byte for byte, after the renames, or but for the run fields."""
    if before == after:
        return True, "identical"
    try:
        text_before, text_after = before.decode(), after.decode()
    except UnicodeDecodeError:
        return False, "binary files differ"
    notes = []
    for old, new in renamed:
        if old in text_before:
            text_before = text_before.replace(old, new)
            notes.append(f"{old} read as {new}")
    renames = f" ({'; '.join(notes)})" if notes else ""
    if text_before == text_after:
        return True, "identical" + renames
    if suffix == ".json":
        differing = _differing_fields(_flat(json.loads(text_before)),
                                      _flat(json.loads(text_after)))
    elif suffix == ".csv":
        differing = _differing_fields(_csv_columns(text_before), _csv_columns(text_after))
    else:
        return False, "text differs" + renames
    fields = sorted({name.rsplit(".", 1)[0] if suffix == ".csv" else name
                     for name in differing})
    if all(RUN_FIELDS.match(name.rsplit(".", 1)[-1] if suffix == ".json" else name)
           for name in fields):
        kind = "columns" if suffix == ".csv" else "fields"
        return True, f"the same but the run {kind} {', '.join(fields)}{renames}"
    return False, f"{suffix[1:].upper()} values differ in {', '.join(fields)[:300]}{renames}"


def compare(before: Path, after: Path, renamed: list[tuple[str, str]]) -> bool:
    files = {side: {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
             for side, root in (("before", before), ("after", after))}
    unchanged = True
    for name in sorted(files["before"] ^ files["after"]):
        print(f"ONLY    {name}: only {'before' if name in files['before'] else 'after'}")
        unchanged = False
    for name in sorted(files["before"] & files["after"]):
        same, how = compare_file((before / name).read_bytes(), (after / name).read_bytes(),
                                 Path(name).suffix, renamed)
        print(f"{'same' if same else 'DIFFERS':<7} {name}: {how}")
        unchanged &= same
    print("unchanged" if unchanged else "CHANGED")
    return unchanged


def main(argv):
    del argv
    renamed = []
    for item in _RENAMED.value:
        old, sep, new = item.partition("=")
        if not sep or not old or not new:
            cli.usage_error(f"--renamed={item!r}: write OLD=NEW")
        renamed.append((old, new))
    if _RECORD.value:
        if _BEFORE.value or _AFTER.value:
            cli.usage_error("--record runs; --before and --after compare: give one or the other")
        try:  # the runs' own checks would refuse it, after the first run
            experiments.check_output([_RECORD.value], publish=False)
        except ValueError as e:
            cli.usage_error(f"--record: {e}")
        record(Path(_RECORD.value).resolve(), Path(_ROOT.value).resolve())
        return
    if not (_BEFORE.value and _AFTER.value):
        cli.usage_error("give --record=DIR, or --before=DIR and --after=DIR")
    for folder in (_BEFORE.value, _AFTER.value):
        if not os.path.isdir(folder):
            cli.usage_error(f"{folder} is not a folder of recorded runs")
    sys.exit(0 if compare(Path(_BEFORE.value), Path(_AFTER.value), renamed) else 1)


if __name__ == "__main__":
    cli.run(main)
