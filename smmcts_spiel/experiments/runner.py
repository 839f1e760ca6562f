"""Independent jobs on a process pool or on Ray, resumable, one result file per job.

A job is a plain function call (module-level function, keyword arguments) whose result is a
dict of numpy arrays. :func:`run_jobs` runs a named set of them, saves each finished
result as ``<results_dir>/<key>.npz`` (atomically), skips the keys already saved, and
shows progress with tqdm, so an interrupted experiment resumes where it stopped. Every
random number of a job must come from its arguments, so the results are the same whatever
the backend and the number of workers.

A result file also records its job (key and arguments) and a SHA-256 of its arrays.
On resuming, a file that cannot be read, fails its checksum, holds NaN, or belongs to
another key is reported by name and computed again; a file of the same key computed with
other arguments is refused (mixing it in would relabel old results). Pool workers die with
the process that started them (Linux), and SIGTERM stops a run like Ctrl-C.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

import numpy as np
from absl import logging
from tqdm.auto import tqdm

from smmcts_spiel import checks, extras
from smmcts_spiel.experiments import outputs

BACKENDS = ("process", "ray", "serial")
PARAMS_FILE = "params.json"
_JOB_RECORD = "__job__"  # names of the arrays that hold a result file's record
_CHECKSUM = "__sha256__"

Result = dict[str, np.ndarray]


class MixedResultsError(ValueError):
    """A results folder holds results of other parameters: reusing them would mislabel them."""

# ----------------------------------------------------------------------------------------
# Runner


def run_jobs(
    fn: Callable[..., Result],
    jobs: Mapping[str, Mapping[str, Any]],
    *,
    results_dir: str | os.PathLike,
    workers: int | None = None,
    backend: str = "process",
    ray_address: str | None = None,
    desc: str = "jobs",
    progress: bool = True,
    pool: ProcessPoolExecutor | None = None,
) -> dict[str, Result]:
    """``{key: fn(**jobs[key])}`` for every key, reusing results saved by earlier calls.

    ``backend`` is ``"process"`` (a local pool of ``workers`` processes, default the number
    of cores), ``"ray"`` (``ray.init(ray_address)``; a local cluster when None) or
    ``"serial"`` (this process). Finished results are saved one file per key as they
    arrive, so interrupting loses at most the jobs in flight. ``pool``: the process pool
    of :func:`process_pool` to run on (``backend="process"`` only), kept open for the next
    call unless this one fails or is interrupted; None: a pool of this call's own.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if pool is not None and backend != "process":
        raise ValueError(f"a process pool was given, but backend={backend!r}; pass "
                         "backend='process' or no pool")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"workers must be a positive integer (or None for all cores), "
                         f"got {workers!r}")
    for key in jobs:
        if not key or os.sep in key or key.startswith("."):
            raise ValueError(f"job key {key!r} must be a non-empty file name without '{os.sep}'")
    outputs.make_dir(results_dir)
    results: dict[str, Result] = {}
    todo = []
    for key in jobs:
        record = _job_record(key, jobs[key])
        path = _result_path(results_dir, key)
        saved = _load_result(path, record) if os.path.exists(path) else None
        if saved is None:
            todo.append(key)
        else:
            results[key] = saved
    bar = tqdm(total=len(jobs), initial=len(jobs) - len(todo), desc=desc, disable=not progress,
               dynamic_ncols=True)

    def finish(key: str, result: Result) -> None:
        _save_result(results_dir, key, result, _job_record(key, jobs[key]))
        results[key] = result
        bar.update(1)

    try:
        if backend == "serial" or not todo:
            for key in todo:
                finish(key, fn(**jobs[key]))
        elif backend == "process":
            _run_on_pool(fn, jobs, todo, workers or os.cpu_count() or 1, finish, pool)
        else:
            _run_on_ray(fn, jobs, todo, ray_address, workers, finish)
    finally:
        bar.close()
    return {key: results[key] for key in jobs}


@contextlib.contextmanager
def process_pool(workers: int | None = None) -> Iterator[ProcessPoolExecutor]:
    """A local process pool for several :func:`run_jobs` calls (their ``pool``): its
    workers start once (each imports the package and loads numba's cache), not per call."""
    pool = _new_pool(workers or os.cpu_count() or 1)
    try:
        yield pool
    finally:
        pool.shutdown()


def _new_pool(workers: int) -> ProcessPoolExecutor:
    # spawn: numba's compiled code and threads do not survive fork reliably; the on-disk
    # numba cache makes the start-up cheap.
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=die_with_parent, initargs=(os.getpid(),))


def _run_on_pool(fn, jobs, todo, workers, finish, shared: ProcessPoolExecutor | None) -> None:
    pool = shared if shared is not None else _new_pool(workers)
    try:
        with exit_on_sigterm():
            pending: dict[Future, str] = {}
            queue = list(reversed(todo))
            while queue or pending:
                while queue and len(pending) < 2 * workers:
                    key = queue.pop()
                    pending[pool.submit(fn, **jobs[key])] = key
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    finish(pending.pop(future), future.result())
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM) or failed: stop the jobs in flight now instead of
        # waiting for them; every finished result is already saved.
        pool.shutdown(wait=False, cancel_futures=True)
        for process in multiprocessing.active_children():
            process.terminate()
        raise
    if shared is None:
        pool.shutdown()


def _run_on_ray(fn, jobs, todo, ray_address, workers, finish) -> None:
    try:
        with extras.required("ray", "backend='ray'"):
            import ray
    except extras.MissingExtraError as error:
        raise ValueError(str(error)) from None
    if not ray.is_initialized():
        ray.init(address=ray_address, num_cpus=workers if ray_address is None else None,
                 include_dashboard=False, log_to_driver=False)
    remote = ray.remote(fn)
    pending = {remote.remote(**jobs[key]): key for key in todo}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            finish(pending.pop(ref), ray.get(ref))


def finished_jobs(results_dir: str | os.PathLike, keys) -> int:
    """How many of ``keys`` already have a saved result (a resumed run computes the rest)."""
    return sum(os.path.exists(_result_path(results_dir, key)) for key in keys)


def _result_path(results_dir, key: str) -> str:
    return os.path.join(os.fspath(results_dir), f"{key}.npz")


def _job_record(key: str, kwargs: Mapping[str, Any]) -> str:
    """The job as canonical JSON: the identity a result file must match to be reused.

    The function is not part of it (a test or a profiler may wrap it); its arguments are.
    """
    return json.dumps({"key": key, "arguments": kwargs}, sort_keys=True, default=_jsonable)


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if callable(value) and hasattr(value, "__qualname__"):  # a function: its name, not its id
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def _checksum(result: Mapping[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(result):
        array = np.ascontiguousarray(result[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape};".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def _save_result(results_dir, key: str, result: Result, record: str) -> None:
    if _JOB_RECORD in result or _CHECKSUM in result:
        raise ValueError(f"a job's result may not use the names {_JOB_RECORD}, {_CHECKSUM}")
    path = _result_path(results_dir, key)
    tmp = f"{path}.tmp.npz"
    arrays: dict[str, Any] = {**result, _JOB_RECORD: np.array(record),
                              _CHECKSUM: np.array(_checksum(result))}
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def _load_result(path: str, record: str) -> Result | None:
    """The saved result of the job ``record``; None (reported) if the file must be redone.

    Raises ValueError if the file holds this key's result for other arguments.
    """
    try:
        arrays = checks.load_npz(path)
        saved_record = str(arrays.pop(_JOB_RECORD))
        checksum = str(arrays.pop(_CHECKSUM))
    except Exception as e:  # noqa: BLE001  (truncated, empty, garbage: any reader error)
        _redo(path, f"unreadable or without its job record ({type(e).__name__}: {e})")
        return None
    if _checksum(arrays) != checksum:
        _redo(path, "its checksum does not match its contents")
        return None
    if any(a.dtype.kind in "fc" and not np.isfinite(a).all() for a in arrays.values()):
        _redo(path, "it holds NaN or infinite values")
        return None
    if saved_record != record:
        try:
            saved_key = json.loads(saved_record).get("key")
        except (ValueError, AttributeError):
            _redo(path, "its job record is unreadable")
            return None
        if saved_key != json.loads(record)["key"]:
            _redo(path, f"it holds the result of another job ({saved_key!r})")
            return None
        raise MixedResultsError(
            f"{path} holds a result of this job computed with other arguments; mixing it in "
            f"would relabel it. Use another --results_dir, or delete the file.\n"
            f"  saved:  {saved_record[:300]}\n  wanted: {record[:300]}")
    return arrays


def _redo(path: str, reason: str) -> None:
    logging.warning("%s: %s; computing it again", path, reason)
    os.replace(path, f"{path}.bad")  # Kept for inspection; never read again.


def die_with_parent(parent_pid: int) -> None:
    """Pool initializer: have the kernel kill this worker when its parent dies (Linux).

    Without it, SIGKILL or SIGTERM of an experiment leaves its workers computing (and
    holding their memory) as orphans. Elsewhere this does nothing.
    """
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # The parent died before the line above.
        os._exit(1)


def _call_into(queue, function: Callable, args: tuple) -> None:
    queue.put(function(*args))


def call_within(function: Callable, args: tuple, seconds: float):
    """``function(*args)`` computed in a forked process, or None if it takes longer than
    ``seconds`` (the process is killed then) or dies; for benchmarks with a budget per
    run. The result comes back through a queue: it must pickle."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=_call_into, args=(queue, function, args))
    process.start()
    process.join(seconds)
    if process.is_alive():
        process.kill()
        process.join()
        return None
    return queue.get() if not queue.empty() else None


@contextlib.contextmanager
def exit_on_sigterm() -> Iterator[None]:
    """Within the block, SIGTERM raises SystemExit in the main thread, so pools shut down
    and finished results stay saved, as after Ctrl-C. (Elsewhere this does nothing.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def check_params(results_dir: str | os.PathLike, params: Mapping[str, Any]) -> None:
    """Record ``params`` in ``results_dir``; refuse to mix results of other parameters."""
    outputs.make_dir(results_dir)
    path = os.path.join(os.fspath(results_dir), PARAMS_FILE)
    wanted = json.loads(json.dumps(dict(params)))
    if os.path.exists(path):
        try:
            saved = outputs.read_json_object(path)
        except ValueError as e:
            raise ValueError(f"{path} is unreadable ({e}); it records the parameters of the "
                             f"results in {results_dir}: restore it, or delete the directory "
                             "to start afresh") from None
        if saved != wanted:
            changed = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
            raise MixedResultsError(
                f"{results_dir} holds results of a run with other parameters ({', '.join(changed)} "
                "differ); pass a new --results_dir or delete that directory")
    else:
        with open(path, "w") as f:
            json.dump(wanted, f, indent=1, sort_keys=True)


def write_params(path: str | os.PathLike, params: Mapping[str, Any], **timings: float) -> None:
    """Write the parameters (and run times) of an experiment next to its CSV."""
    record = dict(params)
    record.update(timings)
    record["written_at_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with outputs.replaced_file(path) as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
