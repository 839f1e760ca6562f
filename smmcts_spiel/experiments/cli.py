"""The absl flags every experiment script shares, and how they reach the job runner.

``fig2.py``, ``fig3.py`` and the other experiment scripts take the same runner flags
(``--seed``, ``--workers``, ``--backend``, ``--ray_address``, ``--results_dir``) with the
same meaning; this module defines them once.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from absl import app, flags

from smmcts_spiel.experiments.runner import BACKENDS


@dataclass(frozen=True)
class RunnerFlags:
    """The shared flags' holders; ``.value`` of each is the parsed flag."""

    seed: flags.FlagHolder
    workers: flags.FlagHolder
    backend: flags.FlagHolder
    ray_address: flags.FlagHolder
    results_dir: flags.FlagHolder

    def run_jobs_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`smmcts_spiel.experiments.run_jobs` they set."""
        return {"workers": self.workers.value, "backend": self.backend.value,
                "ray_address": self.ray_address.value}

    def execution(self) -> dict[str, Any]:
        """How the run was executed, for the parameters file next to the results."""
        return {"workers": self.workers.value or os.cpu_count(), "backend": self.backend.value}


def define_runner_flags(experiment: str) -> RunnerFlags:
    """Define the shared flags; finished jobs go to ``results/<experiment>`` by default."""
    return RunnerFlags(
        seed=flags.DEFINE_integer("seed", 0, "Base seed of every game and run."),
        workers=flags.DEFINE_integer("workers", None, "Worker processes (default: all cores).",
                                     lower_bound=1),
        backend=flags.DEFINE_enum("backend", "process", list(BACKENDS),
                                  "Where jobs run: local process pool, Ray, or this process."),
        ray_address=flags.DEFINE_string("ray_address", None,
                                        "Ray cluster address (default: a local Ray)."),
        results_dir=flags.DEFINE_string(
            "results_dir", f"results/{experiment}",
            "Finished jobs, one file each (an interrupted run resumes from them); delete the "
            "folder to start afresh."),
    )


def run(main) -> None:
    """``absl.app.run(main)`` with the project's convention: a usage error exits with status 2.

    absl exits with 1 on a bad flag and on ``app.UsageError`` unless told otherwise; our
    scripts give 2 for every usage error (bad flag value, unexpected argument, refused
    input), like argparse, so callers can tell them from failures of the work itself.
    Scripts take flags only: a positional argument is a usage error.
    """

    def parse_flags(argv):
        try:
            return flags.FLAGS(argv)
        except flags.Error as error:
            sys.stderr.write(f"FATAL Flags parsing error: {error}\n"
                             "Pass --helpshort or --helpfull to see help on flags.\n")
            sys.exit(2)

    def main_with_usage_status(argv):
        try:
            if len(argv) > 1:
                raise app.UsageError(f"unexpected arguments: {argv[1:]}")
            return main(argv)
        except app.UsageError as error:
            error.exitcode = 2
            raise

    app.run(main_with_usage_status, flags_parser=parse_flags)
