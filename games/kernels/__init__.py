"""Numba game kernels: pyspiel games described as arrays so whole searches run compiled.

:func:`kernel_for` returns a :class:`GameKernel` for a loaded game that a kernel covers,
chosen automatically: every two-player zero-sum simultaneous-move game of OpenSpiel
(``goofspiel``, ``oshi_zumo``, ``blotto``, ``markov_soccer``, ``capture_the_flag``,
``laser_tag`` with ``zero_sum=true``, the one-shot ``matrix_*`` / ``nfg_game`` /
``normal_form_extensive_game`` games and ``repeated_game`` over them), our ``smmcts_goofspiel``,
``smmcts_oshi_zumo``, ``smmcts_pursuit_evasion``, ``smmcts_tron`` and explicit-tree games
(``smmcts_biased_rps`` among them), and the kernels a user registers with
:func:`register_kernel`. A kernel that names a game comes before one that describes a
family of games (the one-shot kernel).
For a game it knows but a parameter set it does not cover, it says why in one log line and
returns None: the generic engine plays.

Compiled code calls a built-in kernel through the functions of :mod:`.dispatch`
(``status(code, state, params, data)``, ...), which branch on the kernel's ``code``: one
compiled search serves every game and numba caches it on disk. A registered user kernel has
``code`` :data:`USER_CODE`; :func:`dispatch_for` gives its dispatch functions, which the
kernel engine compiles into an engine of its own (uncached). The protocol a kernel module
follows is in :mod:`.base`; :func:`check_kernel` compares a kernel with its pyspiel game.
"""

from smmcts_spiel import compiling
from smmcts_spiel.games.kernels.base import (
    CHANCE,
    DECISION,
    MAX_DEPTH,
    MAX_JOINT_ACTIONS,
    TERMINAL,
    Uncovered,
)
from smmcts_spiel.games.kernels.check import Mismatch, check_kernel
from smmcts_spiel.games.kernels.dispatch import (
    apply_actions,
    apply_chance,
    chance_outcomes,
    evaluate,
    legal_actions,
    returns,
    rewards,
    status,
)
from smmcts_spiel.games.kernels.registry import (
    EVALUATORS,
    USER_CODE,
    GameKernel,
    dispatch_for,
    kernel_for,
    kernel_from_module,
    register_kernel,
    source_tag,
    unregister_kernel,
)

compiling.install()

__all__ = ["CHANCE", "DECISION", "EVALUATORS", "MAX_DEPTH", "MAX_JOINT_ACTIONS", "TERMINAL",
           "USER_CODE", "GameKernel", "Mismatch", "Uncovered", "apply_actions", "apply_chance",
           "chance_outcomes", "check_kernel", "dispatch_for", "evaluate", "kernel_for",
           "kernel_from_module", "legal_actions", "register_kernel", "returns", "rewards",
           "source_tag", "status", "unregister_kernel"]
