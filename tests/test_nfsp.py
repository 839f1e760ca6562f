"""MC-NFSP: memories, search, trainer (resume), network policy and its exploitability."""

import numpy as np
import pyspiel
import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

import jax  # noqa: E402

import smmcts_spiel  # noqa: E402, F401  (registers the games)
from smmcts_spiel.exact import exploitability as exact_exploitability  # noqa: E402
from smmcts_spiel.exact import solver  # noqa: E402
from smmcts_spiel.nfsp import exploitability, mcts  # noqa: E402
from smmcts_spiel.nfsp.buffers import ReplayBuffer, ReservoirBuffer  # noqa: E402
from smmcts_spiel.nfsp.mc_nfsp import MCNFSP, Config  # noqa: E402
from smmcts_spiel.nfsp.networks import (  # noqa: E402
    NumpyMLP,
    PolicyNet,
    PolicyValueNet,
    legal_probabilities,
    masked_probabilities,
)
from smmcts_spiel.nfsp.policy import PolicyBot  # noqa: E402

OTHELLO = "smmcts_othello"
OTHELLO_DISCS = "smmcts_othello(returns_type=disc_difference)"


def test_replay_keeps_the_last_items():
    buffer = ReplayBuffer(3, np.random.default_rng(0))
    for i in range(5):
        buffer.add((np.array(i),))
    assert sorted(buffer.contents()[0].tolist()) == [2, 3, 4]
    (batch,) = buffer.sample(10)
    assert batch.shape == (10,) and set(batch.tolist()) <= {2, 3, 4}


def test_replay_stores_a_batch_as_its_items_one_by_one():
    rng = np.random.default_rng(0)
    one, batched = ReplayBuffer(5, rng), ReplayBuffer(5, rng)
    for i in range(13):
        one.add((np.array([i, -i]), i % 2))
    for start, stop in ((0, 4), (4, 5), (5, 12), (12, 13)):
        items = np.arange(start, stop)
        batched.add_batch((np.stack([items, -items], axis=1), items % 2))
    for a, b in zip(one.contents(), batched.contents()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="lengths"):
        batched.add_batch((np.zeros((2, 2)), np.zeros(3)))


@pytest.mark.parametrize("batch", [1, 7])
def test_reservoir_keeps_a_uniform_sample(batch):
    """Every one of 200 items stays with probability capacity / 200 (algorithm R), whether
    the items come one by one or in batches."""
    kept = np.zeros(200)
    rng = np.random.default_rng(1)
    for _ in range(400):
        buffer = ReservoirBuffer(20, rng)
        for start in range(0, 200, batch):
            buffer.add_batch((np.arange(start, min(200, start + batch)),))
        assert len(buffer) == 20
        kept[buffer.contents()[0]] += 1
    frequency = kept / 400
    # Binomial(400, 0.1): sd 0.015 per item; the first and last halves average 0.1 too.
    assert abs(frequency[:100].mean() - 0.1) < 0.01
    assert abs(frequency[100:].mean() - 0.1) < 0.01


@pytest.mark.parametrize("net, heads", [(PolicyNet((16, 8), 5), 1),
                                        (PolicyValueNet((16,), 5), 2)])
def test_numpy_forward_pass_equals_flax(net, heads):
    x = np.random.default_rng(0).normal(size=(7, 12)).astype(np.float32)
    params = net.init(jax.random.PRNGKey(1), x)
    theirs = net.apply(params, x)
    mine = NumpyMLP(params, heads)
    if heads == 2:
        logits, value = mine.logits_and_value(x)
        np.testing.assert_allclose(value, theirs[1], rtol=1e-5, atol=1e-6)
        theirs = theirs[0]
    else:
        logits = mine.logits(x)
    np.testing.assert_allclose(logits, theirs, rtol=1e-5, atol=1e-6)
    legal = [0, 3, 4]
    mask = np.zeros((1, 5), np.float32)
    mask[0, legal] = 1
    np.testing.assert_allclose(legal_probabilities(logits[0], legal),
                               masked_probabilities(theirs[:1], mask)[0, legal], rtol=1e-5)


class _Uniform:
    """Uninformed networks: uniform prior and average, value 0."""

    def best_response(self, state):
        p = np.zeros(state.get_game().num_distinct_actions())
        p[state.legal_actions()] = 1 / len(state.legal_actions())
        return p, 0.0

    def average(self, state):
        return self.best_response(state)[0]


def _value_against_uniform(state, me):
    """Exact value for ``me`` when the opponent plays uniformly at random (expectimax)."""
    if state.is_terminal():
        return state.returns()[me]
    values = [_value_against_uniform(state.child(a), me) for a in state.legal_actions()]
    return max(values) if state.current_player() == me else float(np.mean(values))


def test_search_finds_the_best_response_to_the_average():
    """Tic-tac-toe against a uniform opponent: the most visited move is expectimax's best."""
    game = pyspiel.load_game("tic_tac_toe")
    state = game.new_initial_state()
    for action in (4, 0, 8, 2):  # x centre, o corner, x corner, o corner: x must block at 1
        state.apply_action(action)
    me = state.current_player()
    values = {a: _value_against_uniform(state.child(a), me) for a in state.legal_actions()}
    visits = mcts.search(state, _Uniform(), 3000, 1.5, np.random.default_rng(0))
    assert visits.sum() == pytest.approx(1.0)
    assert int(np.argmax(visits)) == max(values, key=values.get) == 1


def test_search_refuses_a_terminal_state():
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    for action in (0, 3, 1, 4, 2):
        state.apply_action(action)
    with pytest.raises(ValueError, match="decision state"):
        mcts.search(state, _Uniform(), 10, 1.0, np.random.default_rng(0))


def _small_config(**kwargs):
    return Config(hidden=(16,), num_simulations=4, batch_size=8, eta=0.5, **kwargs)


def test_training_is_seeded_and_resumes_exactly(tmp_path):
    def episodes(run, n):
        for _ in range(n):
            run.play_episode()
            run.learn()

    a = MCNFSP(_small_config(seed=3))
    episodes(a, 4)
    a.save(tmp_path / "run.pkl")
    episodes(a, 4)
    b = MCNFSP.load(tmp_path / "run.pkl")
    assert b.episodes == 4
    episodes(b, 4)
    assert b.episodes == 8 and len(b.reservoir) == len(a.reservoir)
    np.testing.assert_array_equal(b.avg_params["params"]["Dense_0"]["kernel"],
                                  a.avg_params["params"]["Dense_0"]["kernel"])
    np.testing.assert_array_equal(b.br_params["params"]["Dense_1"]["bias"],
                                  a.br_params["params"]["Dense_1"]["bias"])


@pytest.mark.parametrize("kwargs, message", [
    ({"eta": 0.0}, "eta"), ({"num_simulations": 0}, "num_simulations"),
    ({"c_puct": -1.0}, "c_puct"), ({"batch_size": 0}, "batch_size")])
def test_bad_config_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Config(**kwargs)


def test_mc_nfsp_refuses_imperfect_information():
    with pytest.raises(ValueError, match="perfect information"):
        MCNFSP(Config(game="kuhn_poker"))


def test_average_policy_is_a_distribution_over_legal_actions_and_a_bot():
    run = MCNFSP(_small_config())
    policy = run.average_policy()
    state = pyspiel.load_game(OTHELLO).new_initial_state()
    probs = policy.action_probabilities(state)
    assert sorted(probs) == state.legal_actions()
    assert sum(probs.values()) == pytest.approx(1.0)
    bots = [PolicyBot(policy, p, seed=p) for p in (0, 1)]
    returns = pyspiel.evaluate_bots(state, bots, 0)
    assert returns[0] == -returns[1]
    with pytest.raises(ValueError, match="player_id"):
        PolicyBot(policy, 2)


@pytest.mark.slow
def test_batched_exploitability_matches_the_history_walk():
    """Markov policy (hash of the board): the position DAG gives exact.exploitability's Report."""

    class Hashed:
        def action_probabilities(self, state, player_id=None):
            legal = state.legal_actions()
            p = np.random.default_rng(hash(state.board) % 2**32).random(len(legal)) + 0.05
            return dict(zip(legal, p / p.sum()))

    mine = exploitability.evaluate(OTHELLO_DISCS, Hashed())
    reference = exact_exploitability.evaluate(pyspiel.load_game(OTHELLO_DISCS), Hashed())
    assert mine.e1 == pytest.approx(reference.e1, abs=1e-9)
    assert mine.e2 == pytest.approx(reference.e2, abs=1e-9)
    assert mine.e1 > 0.01 and mine.e2 > 0.01


@pytest.mark.slow
def test_equilibrium_is_unexploitable_and_network_batches_agree():
    game = pyspiel.load_game(OTHELLO_DISCS)
    report = exploitability.evaluate(OTHELLO_DISCS, solver.solve(game))
    assert report.nash_conv == pytest.approx(0.0, abs=1e-9)
    assert report.game_value == pytest.approx(-0.5)
    # The network's batched answers equal its one-state answers.
    policy = MCNFSP(_small_config(game=OTHELLO_DISCS)).average_policy()
    pos = exploitability.positions(OTHELLO_DISCS)
    batch = policy.batch_probabilities(pos.tensors, pos.masks)
    state = game.new_initial_state()
    single = policy.action_probabilities(state)
    for action, p in single.items():
        assert batch[-1, action] == pytest.approx(p, rel=1e-5)  # the root is the last position


def test_bot_spec_plays_a_saved_average_policy(tmp_path):
    from smmcts_spiel.bot_specs import make_bot

    run = MCNFSP(_small_config())
    run.play_episode()
    run.learn()
    run.save(tmp_path / "run.pkl")
    game = pyspiel.load_game(OTHELLO)
    def play(seed):
        bots = [make_bot(f"nfsp(file={tmp_path / 'run.pkl'})", game, p, seed=seed + p)
                for p in (0, 1)]
        state = game.new_initial_state()
        pyspiel.evaluate_bots(state, bots, 0)
        return state.history()

    assert play(0) == play(0)  # seeded
    assert len({tuple(play(s)) for s in range(5)}) > 1  # the seed matters
    with pytest.raises(ValueError, match="no such file"):
        make_bot(f"nfsp(file={tmp_path / 'missing.pkl'})", game, 0, seed=0)
    with pytest.raises(ValueError, match="trained on"):
        make_bot(f"nfsp(file={tmp_path / 'run.pkl'})", pyspiel.load_game(OTHELLO_DISCS), 0, 0)
