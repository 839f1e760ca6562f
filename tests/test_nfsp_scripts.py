"""experiments/nfsp/nfsp_othello.py, nfsp_poker.py and benchmarks/bench_nfsp.py: usage errors,
where they write, and one line (no traceback) when the nfsp extra is missing."""

import csv
import hashlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from programs import program

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ("nfsp_othello.py", "nfsp_poker.py", "bench_nfsp.py")
NFSP_RESULTS = ROOT / "experiments" / "nfsp" / "results"
needs_nfsp = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                                reason="needs the nfsp extra: pip install 'smmcts-spiel[nfsp]'")


def _run(script, *flags, env=None, cwd=None):
    return subprocess.run([sys.executable, str(program(script)), *flags],
                          capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


@needs_nfsp
@pytest.mark.parametrize("script, flags, message", [
    ("nfsp_othello.py", ["--algorithms=dqn"], "use mc_nfsp, own_nfsp, nfsp"),
    ("nfsp_othello.py", ["--game=kuhn_poker"], "perfect information"),
    ("nfsp_othello.py", ["--seeds=0,x"], "--seeds: distinct non-negative integers"),
    ("nfsp_othello.py", ["--seeds=1,1"], "--seeds: distinct non-negative integers"),
    ("nfsp_othello.py", ["--game=smmcts_othello(returns_type=win_loss)",
                         "--returns_type=disc_difference"], "give one of them"),
    ("nfsp_othello.py", ["--resume", "--algorithms=mc_nfsp,nfsp"], "not checkpointed"),
    ("nfsp_poker.py", ["--algorithms=cfr"], "use anfsp, own_nfsp, mc_nfsp, openspiel_nfsp"),
    ("nfsp_poker.py", ["--game=matrix_pd"], "zero-sum"),
    ("nfsp_poker.py", ["--resume"], "not checkpointed"),
    ("nfsp_poker.py", ["--algorithms=anfsp", "--overrides=batch_size=1000000000"],
     "--overrides: ANFSP's memories"),
    ("nfsp_poker.py", ["--preset=fast"], "--preset"),
    ("nfsp_poker.py", ["--seeds=0,0"], "--seeds: distinct non-negative integers"),
    ("nfsp_poker.py", ["--algorithms=anfsp", "--overrides=epsilon_decay=-1"],
     "--overrides: epsilon_decay must be a positive, finite number"),
    ("nfsp_poker.py", ["--algorithms=anfsp,mc_nfsp", "--overrides=eta=0.2"],
     "run mc_nfsp without it"),
    ("bench_nfsp.py", ["--designs=a3c"], "--designs: use learner, actor_learners"),
    ("nfsp_othello.py", ["--preset=paper", "--num_simulations=0"], "num_simulations"),
])
def test_bad_flags_are_usage_errors(script, flags, message, tmp_path):
    proc = _run(script, *flags, f"--out={tmp_path / 'out'}")
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def _published():
    """Digest of every committed NFSP and benchmark result (what a stray run could replace)."""
    digest = hashlib.sha256()
    for path in sorted([*(ROOT / "experiments" / "nfsp" / "results").rglob("*"),
                        *(ROOT / "benchmarks" / "results").rglob("*")]):
        if path.is_file():
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


@needs_nfsp
@pytest.mark.parametrize("script, flags", [
    ("nfsp_othello.py", [f"--out={NFSP_RESULTS / 'mc_nfsp_othello_win_loss'}"]),
    pytest.param("nfsp_othello.py", [f"--checkpoint_dir={NFSP_RESULTS}"],
                 marks=pytest.mark.slow),
    pytest.param("nfsp_poker.py", [f"--out={NFSP_RESULTS / 'anfsp_kuhn_poker'}"],
                 marks=pytest.mark.slow),
    pytest.param("nfsp_poker.py", [f"--checkpoint_dir={NFSP_RESULTS}"],
                 marks=pytest.mark.slow),
    pytest.param("bench_nfsp.py", [f"--out={ROOT / 'benchmarks/results/bench.json'}"],
                 marks=pytest.mark.slow),
])
def test_committed_results_are_written_only_with_publish(script, flags):
    before = _published()
    proc = _run(script, *flags, "--budget=1" if script != "bench_nfsp.py" else "--seconds=1")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "--publish" in proc.stderr and "Traceback" not in proc.stderr
    assert _published() == before


@needs_nfsp
@pytest.mark.slow
def test_a_quick_run_writes_under_results_and_resumes_per_seed(tmp_path):
    """Without --out, a run writes results/nfsp/... of the current folder, not docs/; the
    same command with --resume and more seeds continues each (algorithm, seed) from its
    checkpoint, drops a row measured after the last checkpoint and adds the new seeds."""
    before = _published()
    flags = ["--eval_every=1", "--algorithms=mc_nfsp", "--preset=paper"]
    proc = _run("nfsp_othello.py", "--budget=1", *flags, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = tmp_path / "results" / "nfsp"
    name = "mc_nfsp_othello_win_loss"  # win/loss returns: the script's (and game's) default
    params = json.loads((results / f"{name}.json").read_text())["invocations"][0]
    config = params["configs"]["mc_nfsp, seed 0"]
    assert params["preset"] == "paper" and "learn_every=100" in config
    assert "network='conv'" in config and "returns_type=win_loss" in params["game_played"]
    assert _published() == before
    assert {f"{name}.csv", f"{name}.png", f"{name}.json", f"{name}_mc_nfsp_seed0.npz"} <= {
        p.name for p in results.iterdir()}
    first = _csv_rows(results / f"{name}.csv")
    assert [(r["algorithm"], r["seed"]) for r in first] == [("mc_nfsp", "0")]
    with open(results / f"{name}.csv", "a") as f:  # as if killed before the checkpoint
        f.write("mc_nfsp,0,99.0,1.0,7,0.0,1.5,1.5\n")
    # The first evaluation may land well past 1 s (compiling counts as training time): the
    # resumed budget is set past it, so seed 0 has training left whatever the machine's speed.
    budget = int(float(first[0]["train_seconds"])) + 2
    proc = _run("nfsp_othello.py", f"--budget={budget}", "--seeds=0,1", "--resume", *flags,
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = _csv_rows(results / f"{name}.csv")
    assert rows[0] == first[0] and "99.0" not in {r["train_seconds"] for r in rows}
    seed0 = [r for r in rows if r["seed"] == "0"]
    assert len(seed0) >= 2 and float(seed0[-1]["train_seconds"]) >= budget
    assert int(seed0[1]["episodes"]) > int(first[0]["episodes"])  # resumed, not restarted
    seed1 = rows[len(seed0):]
    assert {r["seed"] for r in seed1} == {"1"} and float(seed1[-1]["train_seconds"]) >= budget
    assert "mean, 95% t interval" in proc.stdout and "mc_nfsp" in proc.stdout


@needs_nfsp
@pytest.mark.slow
def test_overrides_change_the_configuration_and_the_label(tmp_path):
    """--overrides replaces the preset's setting in the run's configuration and names the
    run after it (a CSV label and checkpoint of its own beside the preset's)."""
    out = tmp_path / "ablation"
    proc = _run("nfsp_poker.py", "--algorithms=own_nfsp", "--preset=paper", "--budget=1",
                "--eval_every=1", "--overrides=epsilon_decay=100,sl_learning_rate=0.01",
                f"--out={out}", f"--checkpoint_dir={tmp_path}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    label = "own_nfsp_paper_epsilon_decay=100_sl_learning_rate=0.01"
    assert {r["algorithm"] for r in _csv_rows(f"{out}.csv")} == {label}
    params = json.loads(Path(f"{out}.json").read_text())["invocations"][0]
    config = params["configs"][f"{label}, seed 0"]
    assert "epsilon_decay=100.0" in config and "sl_learning_rate=0.01" in config
    assert "learn_every=128" in config  # the paper preset's, kept
    assert (tmp_path / f"ablation_{label}_seed0.npz").exists()


def _csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _environment_without(module, folder):
    """An environment in which ``import module`` fails as it does when it is not installed."""
    fake = folder / "site" / module
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        f"raise ModuleNotFoundError(\"No module named '{module}'\", name='{module}')\n")
    return dict(__import__("os").environ, PYTHONPATH=str(folder / "site"))


@pytest.fixture
def without_jax(tmp_path):
    return _environment_without("jax", tmp_path)


@pytest.mark.parametrize("script", [SCRIPTS[0]] + [
    pytest.param(s, marks=pytest.mark.slow) for s in SCRIPTS[1:]])
def test_a_missing_extra_is_one_line_naming_it(script, without_jax, tmp_path):
    proc = _run(script, env=without_jax, cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    # One line naming the first module of the extra the import missed: jax where only jax
    # is hidden (the extra installed), flax or optax where the extra is not installed.
    (line,) = proc.stderr.strip().splitlines()
    assert re.fullmatch(r"\S+\.py needs the optional extra 'nfsp' \(missing module "
                        r"'(jax|flax|optax|chex)'\): pip install 'smmcts-spiel\[nfsp\]'",
                        line), line
    assert not (tmp_path / "results").exists()
    help_ = _run(script, "--helpshort", env=without_jax)  # flags still parse
    assert "--game" in help_.stdout and "Traceback" not in help_.stderr


@needs_nfsp
@pytest.mark.slow
@pytest.mark.parametrize("script", ["nfsp_poker.py", "bench_nfsp.py"])
def test_a_missing_ray_is_one_line_naming_its_extra(script, tmp_path):
    """--backend(s)=ray without Ray installed: one line naming the ray extra, nothing written."""
    env = _environment_without("ray", tmp_path)
    flag = "--backend=ray" if script == "nfsp_poker.py" else "--backends=ray"
    proc = _run(script, flag, env=env, cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line == (f"{flag} needs the optional extra 'ray' (missing module 'ray'): "
                    "pip install 'smmcts-spiel[ray]'"), line
    assert not (tmp_path / "results").exists()


def test_a_missing_extra_in_a_bot_spec_is_one_line(without_jax, tmp_path):
    proc = _run("match.py", "--game=smmcts_othello", f"--bot_a=nfsp(file={__file__})",
                env=without_jax)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "pip install 'smmcts-spiel[nfsp]'" in proc.stderr


@needs_nfsp
@pytest.mark.slow
def test_ctrl_c_stops_a_run_in_one_line_and_resume_continues_it(tmp_path):
    """SIGINT in the middle of an ANFSP run (actors running): one line and status 130, not a
    traceback; the rows and checkpoint written so far are whole, and --resume continues
    from the checkpoint (the row being measured is measured again)."""
    import signal
    import time

    out, checkpoints = tmp_path / "out" / "run", tmp_path / "checkpoints"
    flags = [str(program("nfsp_poker.py")), "--game=kuhn_poker",
             "--algorithms=anfsp", "--eval_every=2", f"--out={out}",
             f"--checkpoint_dir={checkpoints}"]
    run = subprocess.Popen([sys.executable, *flags, "--budget=60"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    csv_path = out.with_suffix(".csv")
    deadline = time.time() + 240
    while time.time() < deadline and run.poll() is None and not (
            csv_path.exists() and len(csv_path.read_text().splitlines()) >= 3):
        time.sleep(0.2)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr
    assert "\nnfsp_poker.py: interrupted; the work finished so far is kept" in stderr
    before = _csv_rows(csv_path)
    assert len(before) >= 2 and (checkpoints / "run_anfsp_seed0.npz").exists()
    budget = float(f'{float(before[-1]["train_seconds"]) + 3:g}')  # the budget as passed
    resumed = subprocess.run([sys.executable, *flags, f"--budget={budget:g}", "--resume"],
                             capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = _csv_rows(csv_path)
    # The rows the checkpoint covers are kept as they were; the signal may land between a
    # row and its checkpoint, and then that last row is measured again.
    kept = next((i for i, (a, b) in enumerate(zip(after, before)) if a != b), len(before))
    assert kept >= len(before) - 1, (before, after)
    if kept < len(before):  # measured again, at the same point of training
        assert after[kept]["train_seconds"] == before[kept]["train_seconds"], (before, after)
    seconds = [float(r["train_seconds"]) for r in after]
    episodes = [int(r["episodes"]) for r in after]
    assert seconds == sorted(seconds) and episodes == sorted(episodes)  # continued
    assert seconds[-1] >= budget
