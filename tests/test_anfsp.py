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
from smmcts_spiel.nfsp.anfsp.actors import Actors, Worker, serve  # noqa: E402
from smmcts_spiel.nfsp.anfsp.gradients import Gradients, losses, minibatches, sgd  # noqa: E402
from smmcts_spiel.nfsp.anfsp.shared_networks import SharedNetworks  # noqa: E402
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
    ({"learn_every": 0}, "learn_every"), ({"steps_per_call": 0}, "steps_per_call")])
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


def _actor_learners(**fields):
    """The paper's design, small enough to learn within a few hundred episodes."""
    return ANFSPConfig(**{**dict(design="actor_learners", num_actors=0, hidden=(16,),
                                 episodes_per_message=8, min_buffer_size_to_learn=16,
                                 batch_size=16, target_update_actions=100, seed=3), **fields})


def test_actor_learners_in_one_process_are_seeded_and_resume(tmp_path):
    """The paper's design without actors (one actor-learner in the learner's process):
    seeded, every message one asynchronous update, the target refitted every
    target_update_actions actions, and a checkpoint resumes it exactly."""
    a, b = ANFSP(_actor_learners()), ANFSP(_actor_learners())
    initial_target = _leaves(a.target_params)
    for run in (a, b):
        run.self_play(100)
    assert a.steps == 13 and a.episodes == 104  # whole messages of 8 episodes
    assert a.actions >= 100 and len(a.reservoir) >= 16 and len(a.replay) == 0  # no replay
    np.testing.assert_array_equal(_params(a), _params(b))
    assert not np.array_equal(_leaves(a.target_params), initial_target)  # refitted
    a.save(tmp_path / "run.npz")
    a.self_play(40)
    c = ANFSP.load(tmp_path / "run.npz")
    c.self_play(40)
    assert (c.episodes, c.steps, c.actions) == (a.episodes, a.steps, a.actions)
    np.testing.assert_array_equal(_params(a), _params(c))


def test_an_actor_learners_padded_gradient_is_the_mean_over_its_transitions():
    """Transitions are padded to a multiple of 64 with weight 0 (few shapes to compile):
    the gradient is that of the mean squared TD error over the real transitions."""
    import jax
    import jax.numpy as jnp

    run = ANFSP(_actor_learners(min_buffer_size_to_learn=10**6))
    rl, sl = run.acting.play(5, 0, 0)
    grads = Gradients(run.config, run.acting, run.reservoir, stream=0)
    q_grads, avg_grads, actions = grads((run.q_params, run.target_params, run.avg_params),
                                        rl, sl)
    assert actions == len(rl[0]) and 0 < actions < 64 and avg_grads is None
    q_loss, _ = losses(run.acting.q_net, run.acting.avg_net)
    key = jax.random.PRNGKey(0)  # no dropout: the key does not matter
    expected = jax.grad(q_loss)(run.q_params, key, run.target_params, *rl,
                                jnp.ones(actions))
    for got, want in zip(_leaves(q_grads, flat=False), _leaves(expected, flat=False)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_the_actor_learners_numpy_sgd_step_is_optax_sgd():
    """The learner applies an actor-learner's gradients in numpy (no jitted call): the same
    step as the optimiser the other design uses, optax.sgd (which keeps no state)."""
    import jax
    import optax

    run = ANFSP(_actor_learners(rl_learning_rate=0.01, sl_learning_rate=0.005))
    rng = np.random.default_rng(0)
    for name, rate in (("q_params", 0.01), ("avg_params", 0.005)):
        params = getattr(run, name)
        grads = jax.tree_util.tree_map(
            lambda p: rng.normal(size=p.shape).astype(np.float32), params)
        optimiser = optax.sgd(rate)
        updates, _ = optimiser.update(grads, optimiser.init(params), params)
        want = optax.apply_updates(params, updates)
        got = sgd(params, grads, rate)
        for g, w, p in zip(_leaves(got, flat=False), _leaves(want, flat=False),
                           _leaves(params, flat=False)):
            assert g.dtype == np.float32 and not np.array_equal(g, p)
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def _random_like(tree, seed=0):
    rng = np.random.default_rng(seed)
    return __import__("jax").tree_util.tree_map(
        lambda p: rng.normal(size=p.shape).astype(np.float32), tree)


def test_actor_learners_update_the_shared_networks_themselves():
    """With actors the networks are in shared memory and each actor-learner applies its own
    SGD steps there (A3C's way, no learner in between): the same step as the learner's,
    its actions counted as its own, and the target refitted when the global action count
    (the writers' counts summed) passes a multiple of target_update_actions."""
    run = ANFSP(_actor_learners(target_update_actions=100))
    shared = SharedNetworks(run._params(), 90, 3, 100)  # noqa: SLF001
    try:
        (q, target, avg), actions = shared.read()
        np.testing.assert_array_equal(_leaves(q), _leaves(run.q_params))
        assert actions == 90 and shared.refits == 0
        q_grads, avg_grads = _random_like(run.q_params), _random_like(run.avg_params, 1)
        shared.apply(run.config, q_grads, avg_grads, 5, writer=1)  # 95 actions: no refit
        (q, target, avg), actions = shared.read()
        want_q = sgd(run.q_params, q_grads, run.config.rl_learning_rate)
        want_avg = sgd(run.avg_params, avg_grads,
                              run.config.sl_learning_rate)
        np.testing.assert_allclose(_leaves(q), _leaves(want_q), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(_leaves(avg), _leaves(want_avg), rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(_leaves(target), _leaves(run.target_params))
        shared.apply(run.config, None, None, 5, writer=2)  # 100 actions: the target is refitted
        (q2, target, avg2), actions = shared.read()
        assert actions == 100 and shared.refits == 1
        np.testing.assert_array_equal(_leaves(target), _leaves(q))
        np.testing.assert_array_equal(_leaves(q2), _leaves(q))
        assert shared.read(target=False)[0][1] is None
    finally:
        shared.unlink()


def _apply_in_another_process(shared, config, q_grads, done):
    """An actor-learner's step in a process that got the shared networks by pickling, as a
    Ray actor gets them (a spawned process's arguments are pickled too)."""
    assert shared.attach()
    shared.apply(config, q_grads, None, 7, writer=1)
    done.set()


def test_a_process_that_gets_the_shared_networks_by_pickling_updates_them_in_place():
    """What a Ray actor on this machine does: attach to the block by its path and update it
    in place; the learner sees the step and the actions without a message."""
    import multiprocessing

    run = ANFSP(_actor_learners())
    shared = SharedNetworks(run._params(), 0, 2, 100)  # noqa: SLF001
    try:
        q_grads = _random_like(run.q_params)
        context = multiprocessing.get_context("spawn")
        done = context.Event()
        process = context.Process(target=_apply_in_another_process,
                                  args=(shared, run.config, q_grads, done))
        process.start()
        process.join(timeout=120)
        assert done.is_set() and process.exitcode == 0
        (q, _, _), actions = shared.read()
        want = sgd(run.q_params, q_grads, run.config.rl_learning_rate)
        np.testing.assert_allclose(_leaves(q), _leaves(want), rtol=1e-6, atol=1e-7)
        assert actions == 7
    finally:
        shared.unlink()


def test_an_actor_learner_elsewhere_sends_gradients_the_learner_applies_to_the_shared_ones():
    """An actor on another machine cannot attach (no such file there, or another block
    under that name): it sends its gradients, and the learner applies them to the shared
    networks and sends it the new parameters, the target only when it was refitted."""
    import pickle

    run = ANFSP(_actor_learners(target_update_actions=10**6))
    shared = SharedNetworks(run._params(), 0, 2, 10**6)  # noqa: SLF001
    try:
        elsewhere = pickle.loads(pickle.dumps(shared))
        impostor = pickle.loads(pickle.dumps(shared))
        impostor._tag = bytes(len(impostor._tag))  # noqa: SLF001  (another block's tag)
        assert not impostor.attach()
        shared.unlink()  # the name gone, as on another machine
        assert not elsewhere.attach()
        worker = Worker(run.config, 0, 0, shared=elsewhere)
        assert worker.shared is None
        run._shared, run._worker = shared, worker  # noqa: SLF001
        worker.set_params(run._params_for(0))  # noqa: SLF001
        before = _leaves(shared.read()[0][0])
        message = worker.work()
        q_grads, _, actions = message[1]
        assert q_grads is not None and actions > 0
        run._take(message)  # noqa: SLF001
        (q, target, _), count = shared.read()
        want = sgd(run.q_params, q_grads, run.config.rl_learning_rate)
        np.testing.assert_allclose(_leaves(q), _leaves(want), rtol=1e-6, atol=1e-7)
        assert not np.array_equal(_leaves(q), before) and count == actions
        np.testing.assert_array_equal(_leaves(worker.params[0]), _leaves(q))  # sent back
        np.testing.assert_array_equal(_leaves(worker.params[1]), _leaves(target))
        assert run._params_for(0)[1] is None  # noqa: SLF001  (the target unchanged)
    finally:
        shared.unlink()


def _leaves(tree, flat=True):
    leaves = [np.asarray(x) for x in __import__("jax").tree_util.tree_leaves(tree)]
    return np.concatenate([x.ravel() for x in leaves]) if flat else leaves


@pytest.mark.slow
@pytest.mark.parametrize("design", ["learner", "actor_learners"])
# One local Ray at a time under pytest-xdist: two starting at once on two busy cores risk
# Ray's start-up timeouts.
@pytest.mark.parametrize("backend", ["processes",
                                     pytest.param("ray", marks=pytest.mark.xdist_group("ray"))])
def test_actors_feed_the_learner_and_stop(design, backend):
    """Both designs with their actors as local processes or Ray actors (a local Ray)."""
    if backend == "ray":
        pytest.importorskip("ray")
    config = ANFSPConfig(num_actors=2, episodes_per_message=8, design=design,
                         backend=backend, min_buffer_size_to_learn=64)
    with ANFSP(config) as run:
        before = _params(run)
        # Not timed: rounds of training (paused between rounds, then resumed) until the
        # learner has learnt from the actors, however slowly they start on a busy machine
        # (each actor-learner compiles its gradients before its first message).
        for round_ in range(40):
            run.train(5.0)
            if round_ >= 1 and run.steps > 0 and not np.array_equal(before, _params(run)):
                break
        assert run.episodes > 0 and run.steps > 0
        assert not np.array_equal(before, _params(run))
        actors = run._actors  # noqa: SLF001  (white-box: they must end)
        # the paper's actor-learners on this machine update the shared networks themselves
        assert actors.sharing == ({0, 1} if design == "actor_learners" else set())
    assert run._actors is None  # noqa: SLF001
    if backend == "processes":
        assert not any(p.is_alive() for p in actors._processes)  # noqa: SLF001


@pytest.mark.slow  # starting a local Ray takes a minute on two busy cores
@pytest.mark.xdist_group("ray")  # one local Ray at a time (see above)
def test_ray_actor_learners_that_cannot_attach_send_gradients(monkeypatch):
    """Ray actor-learners on another machine, played on a local Ray: the path they are
    given to the shared networks names no file, so they send their gradients and the
    learner applies them."""
    pytest.importorskip("ray")
    state = SharedNetworks.__getstate__
    monkeypatch.setattr(SharedNetworks, "__getstate__",
                        lambda self: {**state(self), "path": self.path + "-elsewhere"})
    config = ANFSPConfig(num_actors=1, episodes_per_message=8, design="actor_learners",
                         backend="ray", min_buffer_size_to_learn=64, hidden=(16,))
    with ANFSP(config) as run:
        before = _leaves(run.q_params)
        for _ in range(40):  # not timed: until the learner has applied its gradients
            run.train(5.0)
            if run.steps > 0:
                break
        assert run._actors.sharing == set()  # noqa: SLF001
        assert run.steps > 0 and run.actions > 0
        assert not np.array_equal(before, _leaves(run.q_params))


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


def test_steps_in_one_call_equal_steps_one_by_one():
    """The learner's scan over minibatches takes the same steps as one call per step,
    refitting the target after every target_update_every-th step, mid-call too."""
    import jax

    run = ANFSP(ANFSPConfig(num_actors=0, hidden=(16,), min_buffer_size_to_learn=64,
                            target_update_every=3, seed=4))
    run.self_play(200)
    trees = (run.q_params, run.q_opt_state, run.target_params, run.avg_params,
             run.avg_opt_state)
    batches = tuple(minibatches(m, 32, 4)
                    for m in (run.replay, run.reservoir))
    together = run._learn_steps(True, True, 4, trees, np.uint32(1), batches)  # noqa: SLF001
    one_by_one = trees
    for k in range(4):
        one = jax.tree_util.tree_map(lambda x, k=k: x[k:k + 1], batches)
        one_by_one = run._learn_steps(True, True, 1, one_by_one,  # noqa: SLF001
                                      np.uint32(1 + k), one)
        if k == 1:  # the third step (count 3) refits the target
            q_after_count_3 = _leaves(one_by_one[0])
    for got, want in zip(_leaves(together, flat=False), _leaves(one_by_one, flat=False)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_leaves(together[2]), q_after_count_3, rtol=1e-5, atol=1e-6)
    assert not np.allclose(_leaves(together[0]), q_after_count_3)  # a step after the refit


def test_the_learner_steps_in_calls_of_steps_per_call():
    run = ANFSP(ANFSPConfig(num_actors=0, hidden=(16,), min_buffer_size_to_learn=64,
                            learn_every=8, steps_per_call=5, seed=4))
    run.self_play(100)
    assert run.steps > 0 and run.steps % 5 == 0
    assert run._pending < 8 * 5  # noqa: SLF001


def test_an_actor_serves_the_learners_orders_on_its_link():
    """What an actor (process or Ray) does on its link: says which it is, plays message
    after message with the newest parameters while told to run, stops when told."""
    import multiprocessing
    import threading

    run = ANFSP(ANFSPConfig(num_actors=0, hidden=(16,), episodes_per_message=3, seed=4))
    worker = Worker(run.config, 1, 0)
    learner, actor = multiprocessing.Pipe(duplex=True)
    thread = threading.Thread(target=serve, args=(worker, actor))
    thread.start()
    assert learner.recv() == (1, False)  # ready, no shared networks to update
    learner.send(("params", run._params()))  # noqa: SLF001
    learner.send(("run", True))
    messages = [learner.recv() for _ in range(4)]
    learner.send(("run", False))
    learner.send(("stop", None))
    while thread.is_alive():  # read on: the actor may be sending when told to stop
        if learner.poll(0.1):
            learner.recv()
    assert [m[0] for m in messages] == [1] * 4 and [m[2] for m in messages] == [3] * 4
    assert all(len(m[1][0][0]) > 0 for m in messages) and worker.episodes >= 12


def test_an_actor_whose_connection_resets_while_starting_is_a_clear_error(monkeypatch):
    """A connection reset (an OSError, not an EOF) while the actors start: a clear error
    naming the actor, and the actor that did start is stopped. Actor 0 is a real actor's
    loop in a thread; actor 1's connection resets before it is ready (a fake: a real reset
    is read as an EOF once the learner's writing thread has met it first)."""
    import multiprocessing
    import socket
    import threading
    from multiprocessing.connection import Connection

    class Reset(Connection):
        def recv(self):
            raise ConnectionResetError(104, "Connection reset by peer")

    config = ANFSPConfig(num_actors=2, hidden=(8,), episodes_per_message=2, seed=1)
    threads = []

    def serve_and_close(worker, link):  # as an actor process does: its end closes when it ends
        with link:
            serve(worker, link)

    def start(self, config, episodes, shared):
        learner, actor = multiprocessing.Pipe(duplex=True)
        threads.append(threading.Thread(
            target=serve_and_close, args=(Worker(config, 0, episodes), actor),
            daemon=True))
        threads[0].start()
        mine, theirs = socket.socketpair()
        theirs.close()  # readable, so the learner reads it
        return [learner, Reset(mine.detach())]

    monkeypatch.setattr(Actors, "_start_processes", start)
    with pytest.raises(RuntimeError, match=r"actor 1 ended while starting "
                                           r"\(ConnectionResetError.*num_actors=0"):
        ANFSP(config).train(1.0)
    threads[0].join(timeout=10)
    assert not threads[0].is_alive()  # told to stop


def test_actor_learners_get_the_target_network_only_when_it_changed():
    """After each message an actor-learner gets the networks back, the target only if it
    was refitted since (it keeps its own copy): the same parameters, less to send."""
    run = ANFSP(ANFSPConfig(num_actors=0, hidden=(8,), design="actor_learners",
                            episodes_per_message=2, target_update_actions=20, seed=3))
    run.self_play(2)
    worker = run._worker  # noqa: SLF001
    sent = run._params_for(0)  # noqa: SLF001
    assert sent[1] is None  # the worker has the current target
    worker.set_params(sent)
    np.testing.assert_array_equal(_leaves(worker.params[1]), _leaves(run.target_params))
    run.apply_gradients(None, None, 20)  # no gradients, 20 actions: a refit
    np.testing.assert_array_equal(_leaves(run._params_for(0)[1]),  # noqa: SLF001
                                  _leaves(run.q_params))
    assert run._params_for(0)[1] is None  # noqa: SLF001  (sent once)


def test_an_actor_that_failed_is_named_by_its_backend():
    """``Actors._who`` names the actor on a link from the backend the actors were started
    with, also once close() has forgotten them (the errors name it after closing)."""
    for backend, name in (("ray", "Ray actor on link 1 (links in the order the actors "
                                  "connected)"), ("processes", "actor 1")):
        actors = object.__new__(Actors)  # (no actors started)
        actors._backend, actors._processes = backend, []  # noqa: SLF001
        assert actors._who(1) == name  # noqa: SLF001
