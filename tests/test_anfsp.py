"""ANFSP / NFSP on poker, and the adapter around OpenSpiel's JAX NFSP."""

import numpy as np
import pyspiel
import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

from open_spiel.python import rl_environment  # noqa: E402
from open_spiel.python.algorithms import exploitability  # noqa: E402
from open_spiel.python.jax import nfsp  # noqa: E402

from smmcts_spiel.nfsp.anfsp import ANFSP, ANFSPConfig  # noqa: E402
from smmcts_spiel.nfsp.openspiel_nfsp import NFSPConfig, OpenSpielNFSP  # noqa: E402

KUHN_UNIFORM_NASH_CONV = 0.9166666666666666  # OpenSpiel's nash_conv of the uniform policy


def _params(run):
    return np.concatenate([np.ravel(x) for x in
                           __import__("jax").tree_util.tree_leaves(run.avg_params)])


def test_synchronous_nfsp_is_seeded():
    runs = [ANFSP(ANFSPConfig(num_actors=0, hidden=(16,), min_buffer_size_to_learn=64,
                              seed=5)) for _ in range(2)]
    for run in runs:
        run.self_play(300)
        assert run.steps > 0 and len(run.reservoir) > 0
    np.testing.assert_array_equal(_params(runs[0]), _params(runs[1]))


@pytest.mark.parametrize("game, network, episodes", [
    ("kuhn_poker", {}, 200),
    ("smmcts_othello", {"network": "conv", "dropout": 0.3}, 40)])  # the paper's network
def test_nfsp_resumes_exactly(game, network, episodes, tmp_path):
    config = ANFSPConfig(game=game, num_actors=0, hidden=(16,), min_buffer_size_to_learn=64,
                         seed=7, **network)
    a = ANFSP(config)
    a.self_play(episodes)
    a.save(tmp_path / "run.npz")
    a.self_play(episodes)
    b = ANFSP.load(tmp_path / "run.npz")
    assert b.config.network == config.network
    b.self_play(episodes)
    assert (b.episodes, b.steps) == (a.episodes, a.steps) and a.steps > 0
    np.testing.assert_array_equal(_params(a), _params(b))


@pytest.mark.parametrize("kwargs, message", [
    ({"num_actors": -1}, "num_actors"), ({"eta": 1.5}, "eta"), ({"epsilons": ()}, "epsilons"),
    ({"learn_every": 0}, "learn_every")])
def test_bad_config_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ANFSPConfig(**kwargs)


def test_anfsp_refuses_a_general_sum_game():
    with pytest.raises(ValueError, match="zero-sum"):
        ANFSP(ANFSPConfig(game="matrix_pd", num_actors=0))


@pytest.mark.slow
def test_nfsp_learns_kuhn():
    """20,000 episodes take the average policy well below the uniform policy's NashConv."""
    run = ANFSP(ANFSPConfig(num_actors=0, seed=0))
    run.self_play(20_000)
    conv = exploitability.nash_conv(run.game, run.average_policy())
    assert conv < 0.6 * KUHN_UNIFORM_NASH_CONV


@pytest.mark.slow
def test_actor_processes_feed_the_learner_and_stop():
    with ANFSP(ANFSPConfig(num_actors=1, episodes_per_message=8)) as run:
        run.train(15.0)
        assert run.episodes > 0 and run.steps > 0
        processes = [p for p, _ in run._actors]  # noqa: SLF001  (white-box: they must end)
    assert not any(p.is_alive() for p in processes)


def test_openspiel_nfsp_batch_probabilities_equal_the_agents_own():
    """The batched read of OpenSpiel's average network gives what ``agent.step`` gives."""
    run = OpenSpielNFSP(NFSPConfig(game="kuhn_poker", hidden=(8,), seed=2))
    policy = run.average_policy()
    game = pyspiel.load_game("kuhn_poker")
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(2)
    for history in ([], [1]):
        s = state.clone()
        for a in history:
            s.apply_action(a)
        player = s.current_player()
        mine = policy.action_probabilities(s)
        time_step = rl_environment.TimeStep(
            observations={"info_state": [s.information_state_tensor(p) for p in (0, 1)],
                          "legal_actions": [s.legal_actions(p) for p in (0, 1)],
                          "current_player": player},
            rewards=None, discounts=None, step_type=rl_environment.StepType.MID)
        agent = run.agents[player]
        with agent.temp_mode_as(nfsp.MODE.AVERAGE_POLICY):
            theirs = np.asarray(agent.step(time_step, is_evaluation=True).probs)
        for a, p in mine.items():
            assert p == pytest.approx(float(theirs[a]), rel=1e-5)
        assert sum(mine.values()) == pytest.approx(1.0)
