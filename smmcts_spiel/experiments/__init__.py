"""Experiments: a resumable job runner and the jobs that reproduce the paper's figures.

* :mod:`.runner`: run named jobs on a process pool, on Ray or serially, one file per result;
* :mod:`.paper`: the jobs of Fig. 2 and Fig. 3 and their summaries;
* :mod:`.outputs`: where results go (``results/``; committed results only on request);
* :mod:`.online`: :func:`online_exploitability`, the exact exploitability of the strategy a
  bot plays (its answers at every decision point).
"""

from smmcts_spiel.experiments.online import online_exploitability
from smmcts_spiel.experiments.outputs import (
    check_not_smaller,
    check_output,
    check_writable,
    replaced_file,
)
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
    call_within,
    check_params,
    die_with_parent,
    exit_on_sigterm,
    finished_jobs,
    process_pool,
    run_jobs,
    write_params,
)

__all__ = ["BACKENDS", "PARAMS_FILE", "MixedResultsError", "Result", "call_within",
           "check_not_smaller", "check_output", "check_params", "check_writable", "curves_job",
           "die_with_parent", "equilibrium_floor_range", "equilibrium_intervals",
           "exit_on_sigterm", "exploration_floors", "finished_jobs", "floor_ranges_job",
           "floors_job", "game_from_spec", "mean_curve", "online_exploitability",
           "process_pool", "random_game", "replaced_file", "run_jobs", "screen_job",
           "write_params"]
