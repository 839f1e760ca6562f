"""Hostile and careless use of the experiments: nothing lost, nothing silently mixed.

Issue 13, classes 1 (data loss), 3 (corrupted or foreign result files), 4 (orphaned
workers) and 8 (MMCTS tree files).
"""

import hashlib
import io
import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pyspiel
import pytest
from programs import program

from smmcts_spiel import checks, experiments
from smmcts_spiel.imperfect.mmcts_phantom_ttt import PhantomTTTMultipleTreeSearch

ROOT = pathlib.Path(__file__).resolve().parents[1]


def square(x: int) -> dict:
    return {"y": np.array([x * x, x + 0.5])}


JOBS = {f"job{i}": {"x": i} for i in range(4)}


def run(results_dir, jobs=JOBS):
    calls = []

    def counted(**kwargs):
        calls.append(kwargs["x"])
        return square(**kwargs)

    results = experiments.run_jobs(counted, jobs, results_dir=results_dir, backend="serial",
                                   progress=False)
    return results, calls


# -- 3. corrupted or foreign result files ------------------------------------------------


def _write_npz(path, **arrays):
    with open(path, "wb") as f:  # np.savez on a file object keeps the exact name.
        np.savez(f, **arrays)


CORRUPTIONS = {  # name: (how, the reason reported)
    "truncated": (lambda p, d: p.write_bytes(p.read_bytes()[:40]), "unreadable"),
    "empty": (lambda p, d: p.write_bytes(b""), "unreadable"),
    "garbage": (lambda p, d: p.write_bytes(os.urandom(300)), "unreadable"),
    "another job's": (lambda p, d: p.write_bytes((d / "job3.npz").read_bytes()),
                      "another job ('job3')"),
    "edited value": (lambda p, d: _write_npz(p, **{**dict(np.load(p)),
                                                  "y": np.array([7.0, 7.0])}), "checksum"),
    "NaN with a valid checksum": (lambda p, d: _nan_file(p), "NaN"),
    "no job record (older version)": (lambda p, d: _write_npz(p, y=np.array([0.0, 0.5])),
                                      "without its job record"),
    "a pickled object": (lambda p, d: _write_npz(p, y=np.array([{"a": 1}], dtype=object)),
                         "unreadable"),
}


def _nan_file(path):
    """A NaN result whose checksum is right (the runner's documented SHA-256 of the arrays)."""
    arrays = dict(np.load(path))
    y = np.array([np.nan, 0.5])
    digest = hashlib.sha256(f"y:{y.dtype.str}:{y.shape};".encode() + y.tobytes())
    _write_npz(path, **{**arrays, "y": y, "__sha256__": np.array(digest.hexdigest())})


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_bad_result_file_is_reported_by_name_and_redone(corruption, tmp_path, caplog):
    first, calls = run(tmp_path)
    assert calls == [0, 1, 2, 3]
    corrupt, reason = CORRUPTIONS[corruption]
    corrupt(tmp_path / "job0.npz", tmp_path)
    again, calls = run(tmp_path)
    assert calls == [0]
    report = caplog.text  # a warning of absl's logging
    assert "job0.npz" in report and reason in report
    for key in JOBS:
        np.testing.assert_array_equal(again[key]["y"], first[key]["y"])
    assert (tmp_path / "job0.npz.bad").exists()
    assert run(tmp_path)[1] == []  # The redone file is good.


def test_valid_files_give_identical_results_without_rerunning(tmp_path):
    first, _ = run(tmp_path)
    again, calls = run(tmp_path)
    assert calls == []
    for key in JOBS:
        assert again[key].keys() == {"y"}
        np.testing.assert_array_equal(again[key]["y"], first[key]["y"])


def test_a_result_of_other_arguments_is_refused_even_without_params_json(tmp_path):
    run(tmp_path)
    assert not (tmp_path / "params.json").exists()
    other = {key: {"x": kwargs["x"] + 10} for key, kwargs in JOBS.items()}
    with pytest.raises(ValueError, match="job0.npz holds a result of this job computed with "
                                         "other arguments"):
        run(tmp_path, other)


@pytest.mark.parametrize("content", ["", "{not json", "[1, 2]"])
def test_an_unreadable_params_file_is_named(tmp_path, content):
    (tmp_path / "params.json").write_text(content)
    with pytest.raises(ValueError, match="params.json is unreadable"):
        experiments.check_params(tmp_path, {"runs": 1})


# -- 1. data loss -------------------------------------------------------------------------


def run_script(name, *args):
    return subprocess.run([sys.executable, str(program(name)), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


# Tiny budgets, so that a refusal that fails costs seconds, not hours.
SMALL = {"fig2.py": ["--games=1", "--runs=1", "--iterations=10", "--backend=serial"],
         "fig3.py": ["--max_games=10", "--curve_iterations=10", "--curve_runs=1",
                     "--backend=serial"],
         "olympiad.py": ["--num_games=1", "--mmcts=1K", "--baselines=Random"]}


def committed_mtimes() -> dict:
    """When each committed result of the figures (and each docs page) was last written."""
    return {p: p.stat().st_mtime_ns for p in [*(ROOT / "experiments").glob("fig*/results/*"),
                                              *(ROOT / "experiments" / "olympiad").rglob("*"),
                                              *(ROOT / "docs").glob("*")]}


@pytest.mark.parametrize("name, args", [
    ("fig2.py", ["--out=docs/fig2"]),
    ("fig2.py", ["--results_dir=experiments/fig2/results/jobs", "--out=/tmp/never"]),
    ("fig3.py", ["--data_dir=experiments/fig3/results"]),
    ("fig3.py", ["--out=docs/fig3", "--data_dir=/tmp/never"]),
    ("fig3.py", ["--out=benchmarks/fig3", "--data_dir=/tmp/never"]),
    ("olympiad.py", ["--results_dir=experiments/olympiad/results"]),
])
def test_writing_into_the_committed_results_needs_publish(name, args, tmp_path):
    args = [a.replace("/tmp/never", str(tmp_path / "never")) for a in args] + SMALL[name]
    before = committed_mtimes()
    result = run_script(name, *args, f"--results_dir={tmp_path / 'jobs'}"
                        if not any(a.startswith("--results_dir") for a in args) else "-v=0")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "--publish" in result.stderr and any(
        folder in result.stderr for folder in ("experiments", "benchmarks", "docs"))
    assert committed_mtimes() == before
    assert not (tmp_path / "never").exists()


def test_a_smaller_run_does_not_replace_a_finished_larger_one(tmp_path):
    out = tmp_path / "fig2"
    (tmp_path / "fig2.json").write_text(json.dumps({"games": 100, "runs": 100,
                                                    "iterations": 10000}))
    small = ["--games=1", "--runs=2", "--iterations=100", "--branchings=2", "--gammas=0.1",
             "--depths=2", "--backend=serial", f"--results_dir={tmp_path / 'jobs'}",
             f"--out={out}"]
    refused = run_script("fig2.py", *small)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "games=1 < 100" in refused.stderr and "--force" in refused.stderr
    assert json.loads((tmp_path / "fig2.json").read_text())["games"] == 100
    # --force lets it through: check_not_smaller(..., force=True), tested below.


def test_scale_comparison():
    params = {"games": 5, "max_games": None, "runs": 100}
    experiments.check_not_smaller("/no/such/file.json", params, ["games"], force=False)


@pytest.mark.parametrize("old, new, smaller", [
    ({"max_games": None}, {"max_games": 2000}, True),
    ({"max_games": 2000}, {"max_games": None}, False),
    ({"games": 5, "runs": 10}, {"games": 5, "runs": 10}, False),
    ({"games": 5, "runs": 10}, {"games": 100, "runs": 9}, True),
])
def test_smaller_means_any_scale_parameter_smaller(tmp_path, old, new, smaller):
    path = tmp_path / "out.json"
    path.write_text(json.dumps(old))
    if smaller:
        with pytest.raises(ValueError, match="larger finished run"):
            experiments.check_not_smaller(path, new, list(new), force=False)
        experiments.check_not_smaller(path, new, list(new), force=True)
    else:
        experiments.check_not_smaller(path, new, list(new), force=False)


# -- 4. orphaned workers ------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import multiprocessing, os, sys, time
    import numpy as np
    from smmcts_spiel import checks, experiments

    def slow(x):
        # Tell the test this worker has run its initializer and picked up a job.
        open(os.path.join(os.environ["STARTED_DIR"], str(os.getpid())), "w").close()
        time.sleep(120)
        return {"y": np.zeros(1)}

    if __name__ == "__main__":
        if sys.argv[1] == "runner":
            experiments.run_jobs(slow, {f"j{i}": {"x": i} for i in range(4)},
                                 results_dir=sys.argv[2], workers=2, progress=False)
        else:  # The olympiad's fork pool.
            with multiprocessing.get_context("fork").Pool(
                    2, experiments.die_with_parent, (os.getpid(),)) as pool, \\
                    experiments.exit_on_sigterm():
                pool.map(slow, range(4))
""")


def _children(pid: int) -> set[int]:
    found = set()
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux-only")
@pytest.mark.parametrize("pool, sig", [("runner", signal.SIGKILL), ("runner", signal.SIGTERM),
                                       ("fork", signal.SIGKILL)])
def test_workers_die_with_their_parent(tmp_path, pool, sig):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    started = tmp_path / "started"
    started.mkdir()
    parent = subprocess.Popen([sys.executable, str(script), pool, str(tmp_path / "r")],
                              cwd=ROOT, env={**os.environ, "STARTED_DIR": str(started)})
    workers: set[int] = set()
    try:
        # Wait (however loaded the machine) until two workers are inside a job.
        deadline = time.time() + 120
        while time.time() < deadline and len(workers) < 2:
            time.sleep(0.2)
            workers = {int(f.name) for f in started.iterdir()}
        assert len(workers) >= 2, "the pool did not start"
        os.kill(parent.pid, sig)
        parent.wait(timeout=30)
        deadline = time.time() + 15
        while time.time() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        assert not any(_alive(w) for w in workers), "orphaned workers survived"
    finally:
        if parent.poll() is None:
            parent.kill()
        for w in workers | _children(parent.pid):
            if _alive(w):
                os.kill(w, signal.SIGKILL)


# -- 8. MMCTS tree files ------------------------------------------------------------------


@pytest.fixture(scope="module")
def tree_file(tmp_path_factory):
    search = PhantomTTTMultipleTreeSearch(pyspiel.load_game("phantom_ttt"), gamma=0.1, seed=3)
    search.train(500)
    path = tmp_path_factory.mktemp("trees") / "trees.npz"
    search.save(str(path))
    return path


def _edited(tree_file, tmp_path, **changes):
    arrays = dict(np.load(tree_file))
    for name, change in changes.items():
        arrays[name] = change(arrays[name].copy())
    path = tmp_path / "edited.npz"
    _write_npz(path, **arrays)
    return str(path)


def _set(index, value):
    def change(a):
        a[index] = value
        return a
    return change


@pytest.mark.parametrize("changes, message", [
    ({"children": _set((0, 0, 0), 100_000_000)}, "child indices leave"),
    ({"children": _set((1, 0, 3), -7)}, "child indices leave"),
    ({"num_nodes": _set(0, -1)}, "num_nodes is"),
    ({"num_nodes": lambda a: a[:1]}, "num_nodes is"),
    ({"children": lambda a: a[:, :, :5]}, "children has shape"),
    ({"counts": lambda a: a.astype(np.float32)}, "counts has shape"),
    ({"rewards": _set((0, 0, 0), np.nan)}, "not finite"),
    ({"counts": _set((0, 0, 0), -1)}, "counts are negative"),
    ({"gamma": lambda a: np.array(7.0)}, "out of range"),
    ({"iterations": lambda a: np.array(10**9)}, "training games recorded"),
    ({"game": lambda a: np.array("tic_tac_toe")}, "not Phantom Tic-Tac-Toe"),
    ({"rng_state": lambda a: np.array("{}")}, "not a PCG64 state"),
    ({"rng_state": lambda a: np.array("nonsense")}, "unreadable"),
])
def test_corrupted_tree_files_are_refused_by_name(tree_file, tmp_path, changes, message):
    path = _edited(tree_file, tmp_path, **changes)
    with pytest.raises(ValueError, match=f"{path}.*{message}"):
        PhantomTTTMultipleTreeSearch.load(path)


@pytest.mark.parametrize("content", [b"", b"garbage", None])
def test_unreadable_tree_files_are_refused_by_name(tree_file, tmp_path, content):
    path = tmp_path / "bad.npz"
    if content is None:  # A pickled object array: refused, never unpickled.
        _write_npz(path, **{**dict(np.load(tree_file)),
                            "children": np.array([{"a": 1}], dtype=object)})
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=f"{path}"):
        PhantomTTTMultipleTreeSearch.load(str(path))


@pytest.mark.parametrize("expected", [dict(gamma=0.2), dict(seed=4), dict(iterations=501),
                                      dict(game="smmcts_phantom_ttt")])
def test_a_tree_trained_with_other_parameters_is_refused(tree_file, expected):
    with pytest.raises(ValueError, match="was trained with"):
        PhantomTTTMultipleTreeSearch.load(str(tree_file), **expected)
    search = PhantomTTTMultipleTreeSearch.load(
        str(tree_file), game="phantom_ttt", gamma=0.1, seed=3, iterations=500)
    assert search.iterations == 500


# -- 9. files that declare more than they hold (decompression bombs) ----------------------


def _bomb(path, base=None, name="children", nbytes=4 << 20):
    """``base``'s arrays (a valid file) with ``name`` replaced by ``nbytes`` of zeros,
    deflated to a few kilobytes, as a crafted file declaring gigabytes would be."""
    arrays = dict(np.load(base)) if base is not None else {}
    arrays[name] = np.zeros(nbytes // 8)
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)
    return str(path)


def _lying_header(path, base=None, name="children", shape=(10**12,)):
    """``base``'s arrays with a member whose header declares ``shape`` but holds 8 bytes."""
    import zipfile
    arrays = dict(np.load(base)) if base is not None else {}
    arrays.pop(name, None)
    _write_npz(path, **arrays)
    member = io.BytesIO()
    np.lib.format.write_array_header_1_0(member, {"descr": "<f8", "fortran_order": False,
                                                  "shape": shape})
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(f"{name}.npy", member.getvalue() + bytes(8))
    return str(path)


@pytest.fixture
def small_limit(monkeypatch):
    """A 1 MB limit on what a file may declare, and np.load forbidden once a file passed
    none of the checks: a refusal must come from the declared sizes alone."""
    monkeypatch.setattr(checks, "MAX_NPZ_BYTES", 1 << 20)


def test_a_tree_file_declaring_more_than_the_limit_is_refused_before_reading(
        tree_file, tmp_path, small_limit, monkeypatch):
    path = _bomb(tmp_path / "bomb.npz", tree_file)
    assert os.path.getsize(path) < 100_000
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("the bomb was read"))
    with pytest.raises(ValueError, match=f"{path}.*more than 1.05e\\+06 bytes once read"):
        PhantomTTTMultipleTreeSearch.load(path)


def test_a_tree_file_under_the_limit_still_loads(tree_file, small_limit):
    assert PhantomTTTMultipleTreeSearch.load(str(tree_file)).iterations == 500


@pytest.mark.parametrize("shape", [(10**12,), (2, 10**6, 18)])
def test_a_header_declaring_a_huge_shape_is_refused_without_allocating(tree_file, tmp_path,
                                                                        shape):
    path = _lying_header(tmp_path / "liar.npz", tree_file, shape=shape)
    with pytest.raises(ValueError, match=f"{path}.*children.npy declares shape"):
        PhantomTTTMultipleTreeSearch.load(path)


def test_a_job_file_declaring_more_than_the_limit_is_redone_unread(tmp_path, small_limit,
                                                                   caplog):
    first, _ = run(tmp_path)
    _bomb(tmp_path / "job2.npz", tmp_path / "job2.npz", name="y")
    again, calls = run(tmp_path)
    assert calls == [2]
    assert "job2.npz" in caplog.text and "once read" in caplog.text
    assert all(np.array_equal(first[k]["y"], again[k]["y"]) for k in first)


# -- 7. size limits in the scripts --------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    (["--game=smmcts_random_stacked_matrix(depth=20)"], "choose a smaller depth"),
    (["--game=smmcts_goofspiel(num_cards=1000000000)"], "num_cards must be an integer"),
    (["--game=smmcts_goofspiel(num_cards=4)", "--bot_a=smmcts(time_limit=1e999)"],
     "time_limit"),
])
def test_match_refuses_huge_games_and_endless_budgets(args, message):
    result = run_script("match.py", *args, "--num_games=1")
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_rerun_with_other_iterations_is_refused_by_the_script(tmp_path):
    args = ["--games=1", "--runs=2", "--branchings=2", "--gammas=0.1", "--depths=2",
            "--backend=serial", f"--results_dir={tmp_path / 'jobs'}", f"--out={tmp_path / 'f'}"]
    assert run_script("fig2.py", "--iterations=100", *args).returncode == 0
    (tmp_path / "jobs" / "params.json").unlink()  # Even without the run's parameters file.
    other = run_script("fig2.py", "--iterations=200", *args)
    assert other.returncode == 2 and "Traceback" not in other.stderr
    assert "computed with other arguments" in other.stderr


# -- 10. interrupted writes ---------------------------------------------------------------


def test_an_interrupted_replacement_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("old\n")
    with pytest.raises(KeyboardInterrupt):
        with experiments.replaced_file(path) as f:
            f.write("half of a new ")
            raise KeyboardInterrupt  # Ctrl-C in the middle of the write
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]
    with experiments.replaced_file(path) as f:
        f.write("new\n")
    assert path.read_text() == "new\n"
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask  # as open() would have made it


class _Interrupting:
    """A pair result whose interval is asked for when Ctrl-C arrives."""

    bot_a, bot_b, games, mean, wins, draws, losses, score = "a", "b", 2, 0.0, 1, 0, 1, 0.5

    @property
    def interval(self):
        raise KeyboardInterrupt


def test_a_tournament_table_interrupted_while_written_keeps_its_old_version(tmp_path):
    from smmcts_spiel import tournament

    path = tmp_path / "pairs.csv"
    path.write_text("the previous table\n")
    with pytest.raises(KeyboardInterrupt):
        tournament.write_pairs_csv(path, {"matrix_rps": [_Interrupting()]})
    assert path.read_text() == "the previous table\n"
    assert [p.name for p in tmp_path.iterdir()] == ["pairs.csv"]


def test_a_resumed_nfsp_race_drops_a_row_cut_short_and_keeps_the_others(tmp_path):
    """A run interrupted while writing a row left half a line; --resume raised on it."""
    from types import SimpleNamespace

    from smmcts_spiel.nfsp import race

    path = tmp_path / "race.csv"
    whole = "anfsp,0,10.0,12.0,100,0.5,0.4,0.9\n"
    path.write_text(",".join(race.FIELDS) + "\n" + whole + "openspiel_nfsp,0,9.0,9.5,90,0.6,"
                    "0.5,1.1\n" + "anfsp,0,20.0,2")
    race.prepare_csv(str(path), {("anfsp", 0): SimpleNamespace(train_seconds=30.0)},
                     resume=True)
    lines = path.read_text().splitlines()
    assert lines[1:] == [whole.strip(), "openspiel_nfsp,0,9.0,9.5,90,0.6,0.5,1.1"]
