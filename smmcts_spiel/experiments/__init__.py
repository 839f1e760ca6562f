"""Experiments: a resumable job runner and the jobs that reproduce the paper's figures.

* :mod:`.runner`: run named jobs on a process pool, on Ray or serially, one file per result;
* :mod:`.paper`: the jobs of Fig. 2 and Fig. 3 and their summaries;
* :mod:`.outputs`: where results go (``results/``; ``docs/``, ``data/`` only on request).
"""

from smmcts_spiel.experiments.outputs import check_not_smaller, check_output
from smmcts_spiel.experiments.paper import (
    Result,
    curves_job,
    equilibrium_floor_range,
    equilibrium_intervals,
    exploration_floors,
    floor_ranges_job,
    floors_job,
    game_from_spec,
    mean_curve,
    random_game,
    screen_job,
)
from smmcts_spiel.experiments.runner import (
    BACKENDS,
    PARAMS_FILE,
    MixedResultsError,
    check_params,
    die_with_parent,
    exit_on_sigterm,
    finished_jobs,
    run_jobs,
    write_params,
)

__all__ = ["BACKENDS", "PARAMS_FILE", "MixedResultsError", "Result", "check_not_smaller",
           "check_output",
           "check_params", "curves_job", "die_with_parent", "equilibrium_floor_range",
           "equilibrium_intervals", "exit_on_sigterm", "exploration_floors", "finished_jobs",
           "floor_ranges_job", "floors_job", "game_from_spec", "mean_curve",
           "random_game", "run_jobs", "screen_job", "write_params"]
