"""The absl flags every experiment script shares, and how they reach the job runner.

``fig2.py``, ``fig3.py`` and the other experiment scripts take the same runner flags
(``--seed``, ``--workers``, ``--backend``, ``--ray_address``, ``--results_dir``) with the
same meaning; this module defines them once.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import pyspiel
from absl import app, flags

from smmcts_spiel import checks
from smmcts_spiel.bots.equilibrium_bot import solution_of
from smmcts_spiel.exact import solver
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


def _in_help(holder: flags.FlagHolder) -> flags.FlagHolder:
    """``holder``'s flag listed by the program's ``--help``, which shows the flags its main
    module defines (the shared flags are defined here, on its behalf)."""
    flags.FLAGS.register_key_flag_for_module(sys.argv[0], flags.FLAGS[holder.name])
    return holder


def define_seed(help_text: str = "Base seed of every game and run.") -> flags.FlagHolder:
    """The ``--seed`` flag: a non-negative integer (numpy's seed sequences refuse others)."""
    return _in_help(flags.DEFINE_integer("seed", 0, help_text, lower_bound=0))


def define_publish(committed: str = "the committed results") -> flags.FlagHolder:
    """The ``--publish`` flag: without it nothing is written where committed results live
    (:func:`smmcts_spiel.experiments.outputs.check_output`)."""
    return _in_help(flags.DEFINE_bool(
        "publish", False, f"Write {committed}; needed for any output under docs/, "
        "experiments/ or benchmarks/, or onto a file git tracks, where the committed results "
        "live."))


def define_solver_limits() -> flags.FlagHolder:
    """The ``--solver_limits`` flag: ``--nosolver_limits`` lifts the exact solver's size
    limits (:func:`smmcts_spiel.exact.solver.check_size`) for a game known to be solvable."""
    return _in_help(flags.DEFINE_bool(
        "solver_limits", True, "Refuse, before solving, a game the exact solver estimates "
        "above its limits (states, minutes, stage size); --nosolver_limits solves it anyway."))


def solver_limits_kwargs(holder: flags.FlagHolder) -> dict:
    """Job keyword arguments for ``--solver_limits``: empty by default, so the jobs (and
    their resume keys) of a run with the limits in force stay as they were before the flag."""
    return {} if holder.value else {"solver_limits": False}


def solve_game(game: pyspiel.Game, cache_dir: str | None,
               enforce_limits: bool) -> solver.Solution:
    """The game's exact solution, solved (or read from ``cache_dir``) in this process before
    any job starts; a game above the limits stops the script with a usage error that names
    ``--nosolver_limits``."""
    try:
        return solution_of(game, cache_dir, **solver.size_limits(enforce_limits))
    except solver.GameTooLarge as e:
        usage_error(f"{e} (on the command line: --nosolver_limits)")


def define_runner_flags(experiment: str) -> RunnerFlags:
    """Define the shared flags; finished jobs go to ``results/<experiment>`` by default."""
    return RunnerFlags(
        seed=define_seed(),
        workers=_in_help(flags.DEFINE_integer(
            "workers", None, "Worker processes (default: all cores).", lower_bound=1)),
        backend=_in_help(flags.DEFINE_enum(
            "backend", "process", list(BACKENDS),
            "Where jobs run: local process pool, Ray, or this process.")),
        ray_address=_in_help(flags.DEFINE_string(
            "ray_address", None, "Ray cluster address (default: a local Ray).")),
        results_dir=_in_help(flags.DEFINE_string(
            "results_dir", f"results/{experiment}",
            "Finished jobs, one file each (an interrupted run resumes from them); delete the "
            "folder to start afresh.")),
    )


def split(text: str | None) -> list[str]:
    """The items of a ``;``-separated flag value (game strings, bot specs), stripped."""
    return [item.strip() for item in (text or "").split(";") if item.strip()]


def check_choices(values: list[str], choices, flag: str) -> list[str]:
    """``values`` if there are some and each is one of ``choices``; ValueError naming the
    flag, the unknown values and the choices."""
    unknown = [v for v in values if v not in choices]
    if unknown or not values:
        raise ValueError(f"{flag}: unknown {unknown or 'nothing given'}; choose from "
                         f"{', '.join(choices)}")
    return values


def split_games(text: str | None) -> list[str]:
    """The game strings of a flag value separated by ``;`` or by ``,`` outside parentheses
    (``kuhn_poker,goofspiel(num_cards=4,imp_info=True)``), stripped."""
    items, depth, start = [], 0, 0
    text = text or ""
    for i, char in enumerate(text + ";"):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" or (char == "," and depth == 0):
            items.append(text[start:i].strip())
            start = i + 1
    return [item for item in items if item]


def load_game(text: str, flag: str = "--game") -> pyspiel.Game:
    """The game a flag names; ValueError naming the flag, and the closest game or parameter
    name when one is misspelt (pyspiel's own message lists all 130 games)."""
    try:
        params = pyspiel.game_parameters_from_string(text.strip())
    except pyspiel.SpielError as e:
        raise ValueError(f"{flag}: malformed game string {text!r}: {e}") from None
    name = str(params.pop("name", ""))
    types = {t.short_name: t for t in pyspiel.registered_games()}
    if name not in types:
        raise ValueError(f"{flag}: unknown game {name!r}{checks.did_you_mean(name, types)}; "
                         "pyspiel.registered_names() lists the games")
    allowed = types[name].parameter_specification
    for key in params:
        if key not in allowed:
            raise ValueError(f"{flag}: {name} has no parameter {key!r}"
                             f"{checks.did_you_mean(key, allowed)}; it takes "
                             f"{', '.join(allowed) or 'none'}")
    try:
        return pyspiel.load_game(text)
    except (pyspiel.SpielError, ValueError) as e:  # Python-defined games raise ValueError
        raise ValueError(f"{flag}: cannot load game {text!r}: {e}") from None


def load_games(text: str | None, flag: str = "--games",
               check: Callable[[pyspiel.Game], Any] | None = None) -> dict[str, pyspiel.Game]:
    """{game string: game} of a flag value of game strings (:func:`split_games`), each
    passed to ``check`` (which raises ValueError to refuse one); ValueError naming the flag."""
    games = {name: load_game(name, flag) for name in split_games(text)}
    if not games:
        raise ValueError(f"{flag}: no game given")
    for name, game in games.items():
        if check is not None:
            try:
                check(game)
            except ValueError as e:
                raise ValueError(f"{flag}: {name!r}: {e}") from None
    return games


def positive_finite(value: float | None) -> bool:
    """Validator of a flag of seconds (or None): a positive, finite number."""
    return value is None or 0 < value < math.inf


def usage_error(message: str) -> NoReturn:
    """Stop the script with a short usage error (status 2): ``<script>: error: message``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "script"
    sys.stderr.write(f"{name}: error: {message}\n(run {name} --help to see its flags)\n")
    sys.exit(2)


_HELP_FLAGS = ("help", "helpshort", "helpfull", "helpxml", "h", "?")


def parse_flags(argv: list[str]) -> list[str]:
    """``flags.FLAGS(argv)``, a bad value stopping the script with a short usage error; a
    help flag prints the help and exits with status 0 (absl's with 1)."""
    asked = any(arg.lstrip("-").partition("=")[0] in _HELP_FLAGS
                for arg in argv[1:] if arg.startswith("-"))
    try:
        argv = flags.FLAGS(argv)
    except flags.Error as error:
        usage_error(str(error))
    except SystemExit as done:
        if asked and done.code == 1:  # the help was printed
            sys.exit(0)
        raise
    for name in flags.FLAGS:  # absl's bounds let NaN through: no comparison fails on it
        value = flags.FLAGS[name].value
        if isinstance(value, float) and math.isnan(value):
            usage_error(f"--{name}={value} is not a number")
    return argv


def main_of(work: Callable[[], Any]) -> Callable[[list[str]], Any]:
    """An absl ``main`` that does ``work()``, its ValueError (a bad flag value found while
    checking) shown as a usage error (:func:`run`)."""

    def main(argv: list[str]) -> Any:
        try:
            return work()
        except ValueError as e:
            raise app.UsageError(str(e)) from None

    return main


def run(main: Callable[[list[str]], Any]) -> None:
    """``absl.app.run(main)`` with the project's convention for usage errors.

    A usage error (bad flag value, unexpected argument, ``app.UsageError`` raised by
    ``main``) prints one short message and where the help is, not the whole ``--help``
    (absl's default), and exits with status 2, like argparse, so callers can tell it from
    a failure of the work itself. Scripts take flags only: a positional argument is a
    usage error. Ctrl-C stops the script with one line (status 130, as a shell reports
    SIGINT), not a traceback: what it finished (result files, checkpoints) is kept.
    """

    def main_with_usage_status(argv):
        try:
            if len(argv) > 1:
                raise app.UsageError(f"unexpected arguments: {argv[1:]} (flags are written "
                                     "--name=value)")
            return main(argv)
        except app.UsageError as error:
            usage_error(str(error))
        except KeyboardInterrupt:
            name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "script"
            sys.stderr.write(f"\n{name}: interrupted; the work finished so far is kept (a "
                             "resumable run continues from it)\n")
            sys.exit(130)

    app.run(main_with_usage_status, flags_parser=parse_flags)
