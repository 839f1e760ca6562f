"""The kernel engine's numba cache is never served stale: a search compiled over a kernel is
cached under a hash of the kernel's source and of the engine's, so an edit of the kernel
recompiles it, and an unchanged kernel is loaded, not compiled."""

import os
import subprocess
import sys
import textwrap

import pytest

KERNEL = textwrap.dedent("""
    import numba
    import numpy as np

    from smmcts_spiel.games.kernels import DECISION, TERMINAL

    SHORT_NAMES = ("repeated_game",)
    DEFAULT_EVALUATOR = "random_rollout"

    def parameters(game):
        return np.array([game.get_parameters()["num_repetitions"]]), np.zeros(0)

    def limits(params):
        return 2, 0, int(params[0]) + 1

    @numba.njit(cache=True)
    def initial_state(params):
        return np.zeros(3, np.int64)

    @numba.njit(cache=True)
    def status(state, params, data):
        return TERMINAL if state[0] >= params[0] else DECISION

    @numba.njit(cache=True)
    def legal_actions(state, params, data, player, out):
        if state[0] >= params[0]:
            return 0
        out[0] = 0
        out[1] = 1
        return 2

    @numba.njit(cache=True)
    def chance_outcomes(state, params, data, outcomes, probs):
        return 0

    @numba.njit(cache=True)
    def apply_actions(state, params, data, action0, action1):
        state[0] += 1
        state[2] = PAYOFF
        state[1] += state[2]

    @numba.njit(cache=True)
    def apply_chance(state, params, data, outcome):
        pass

    @numba.njit(cache=True)
    def rewards(state, params, data):
        return float(state[2])

    @numba.njit(cache=True)
    def returns(state, params, data):
        return float(state[1])

    @numba.njit(cache=True)
    def rollout(state, params, data, rng):
        while state[0] < params[0]:
            apply_actions(state, params, data, int(rng.random() < 0.5), int(rng.random() < 0.5))
        return float(state[1])
    """)

PENNIES = "1 if action0 == action1 else -1"
ZERO_WINS = "1 if action0 == 0 else -1"

PROGRAM = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import pyspiel
    import user_kernel
    from smmcts_spiel.bots import SMMCTSBot
    from smmcts_spiel.games import kernels
    kernels.register_kernel(user_kernel)
    game = pyspiel.load_game("repeated_game(stage_game=matrix_mp(),num_repetitions=1)")
    bot = SMMCTSBot(game, 0, iterations=5000, seed=0)
    assert bot._search.kernel.module is user_kernel
    print(dict(bot.step_with_policy(game.new_initial_state())[0])[0])
    """)


def first_action_probability(folder):
    """Player 0's root probability of action 0 in a new process, and whether it compiled."""
    result = subprocess.run([sys.executable, "-c", PROGRAM, str(folder)], capture_output=True,
                            text=True, timeout=600,
                            env={**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache")})
    assert result.returncode == 0, result.stderr[-3000:]
    compiled = "numba is compiling smmcts_spiel.search.kernel_engine" in result.stderr
    return float(result.stdout.split()[-1]), compiled


@pytest.mark.slow
def test_an_edited_kernel_is_recompiled_and_an_unchanged_one_loaded(tmp_path):
    (tmp_path / "user_kernel.py").write_text(KERNEL.replace("PAYOFF", PENNIES))
    pennies, compiled = first_action_probability(tmp_path)
    assert compiled and pennies == pytest.approx(0.5, abs=0.15)
    again, compiled = first_action_probability(tmp_path)
    assert not compiled and again == pennies  # loaded from the cache: the same search
    (tmp_path / "user_kernel.py").write_text(KERNEL.replace("PAYOFF", ZERO_WINS))
    edited, compiled = first_action_probability(tmp_path)
    assert compiled and edited > 0.9  # player 0 now wins whenever it plays action 0
