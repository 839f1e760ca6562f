"""Experiments: a resumable job runner and the jobs that reproduce the paper's figures.

* :mod:`.runner`: run named jobs on a process pool, on Ray or serially, one file per result;
* :mod:`.paper`: the jobs of Fig. 2 and Fig. 3 and their summaries.
"""

from smmcts_spiel.experiments.paper import (
    Result,
    curves_job,
    exploration_floors,
    floors_job,
    game_from_spec,
    mean_curve,
    random_game,
    screen_job,
)
from smmcts_spiel.experiments.runner import (
    BACKENDS,
    PARAMS_FILE,
    check_params,
    finished_jobs,
    run_jobs,
    write_params,
)

__all__ = ["BACKENDS", "PARAMS_FILE", "Result", "check_params", "curves_job",
           "exploration_floors", "finished_jobs", "floors_job", "game_from_spec", "mean_curve",
           "random_game", "run_jobs", "screen_job", "write_params"]
