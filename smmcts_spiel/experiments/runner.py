"""Independent jobs on a process pool or on Ray, resumable, one result file per job.

A job is a plain function call (module-level function, keyword arguments) whose result is a
dict of numpy arrays. :func:`run_jobs` runs a named set of them, saves each finished
result as ``<results_dir>/<key>.npz`` (atomically), skips the keys already saved, and
shows progress with tqdm, so an interrupted experiment resumes where it stopped. Every
random number of a job must come from its arguments, so the results are the same whatever
the backend and the number of workers.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from typing import Any

import numpy as np
from tqdm.auto import tqdm

BACKENDS = ("process", "ray", "serial")
PARAMS_FILE = "params.json"

Result = dict[str, np.ndarray]

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
) -> dict[str, Result]:
    """``{key: fn(**jobs[key])}`` for every key, reusing results saved by earlier calls.

    ``backend`` is ``"process"`` (a local pool of ``workers`` processes, default the number
    of cores), ``"ray"`` (``ray.init(ray_address)``; a local cluster when None) or
    ``"serial"`` (this process). Finished results are saved one file per key as they
    arrive, so interrupting loses at most the jobs in flight.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"workers must be a positive integer (or None for all cores), "
                         f"got {workers!r}")
    for key in jobs:
        if not key or os.sep in key or key.startswith("."):
            raise ValueError(f"job key {key!r} must be a non-empty file name without '{os.sep}'")
    os.makedirs(results_dir, exist_ok=True)
    results: dict[str, Result] = {}
    todo = []
    for key in jobs:
        path = _result_path(results_dir, key)
        if os.path.exists(path):
            with np.load(path) as saved:
                results[key] = {name: saved[name] for name in saved.files}
        else:
            todo.append(key)
    bar = tqdm(total=len(jobs), initial=len(jobs) - len(todo), desc=desc, disable=not progress,
               dynamic_ncols=True)

    def finish(key: str, result: Result) -> None:
        _save_result(results_dir, key, result)
        results[key] = result
        bar.update(1)

    try:
        if backend == "serial" or not todo:
            for key in todo:
                finish(key, fn(**jobs[key]))
        elif backend == "process":
            _run_on_pool(fn, jobs, todo, workers or os.cpu_count() or 1, finish)
        else:
            _run_on_ray(fn, jobs, todo, ray_address, workers, finish)
    finally:
        bar.close()
    return {key: results[key] for key in jobs}


def _run_on_pool(fn, jobs, todo, workers, finish) -> None:
    # spawn: numba's compiled code and threads do not survive fork reliably; the on-disk
    # numba cache makes the start-up cheap.
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        pending = {}
        queue = list(reversed(todo))
        while queue or pending:
            while queue and len(pending) < 2 * workers:
                key = queue.pop()
                pending[pool.submit(fn, **jobs[key])] = key
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                finish(pending.pop(future), future.result())


def _run_on_ray(fn, jobs, todo, ray_address, workers, finish) -> None:
    try:
        import ray
    except ImportError:
        raise ValueError("backend='ray' needs Ray: pip install 'smmcts-spiel[ray]'") from None
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


def _save_result(results_dir, key: str, result: Result) -> None:
    path = _result_path(results_dir, key)
    tmp = f"{path}.tmp.npz"
    np.savez(tmp, **result)
    os.replace(tmp, path)


def check_params(results_dir: str | os.PathLike, params: Mapping[str, Any]) -> None:
    """Record ``params`` in ``results_dir``; refuse to mix results of other parameters."""
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(os.fspath(results_dir), PARAMS_FILE)
    wanted = json.loads(json.dumps(dict(params)))
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        if saved != wanted:
            changed = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
            raise ValueError(
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
    with open(path, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
