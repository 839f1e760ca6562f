"""MC-NFSP: memories, search, trainer (resume), network policy and its exploitability."""

import zlib

import numpy as np
import pyspiel
import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")

import jax  # noqa: E402
from open_spiel.python import policy as policy_lib  # noqa: E402
from open_spiel.python.algorithms import best_response  # noqa: E402
from open_spiel.python.algorithms import exploitability as exploitability_lib  # noqa: E402

import smmcts_spiel  # noqa: E402, F401  (registers the games)
from smmcts_spiel.exact import exploitability as exact_exploitability  # noqa: E402
from smmcts_spiel.exact import solver  # noqa: E402
from smmcts_spiel.nfsp import exploitability, mcts, networks  # noqa: E402
from smmcts_spiel.nfsp.buffers import ReplayBuffer, ReservoirBuffer  # noqa: E402
from smmcts_spiel.nfsp.mc_nfsp import MCNFSP, Config  # noqa: E402
from smmcts_spiel.nfsp.networks import (  # noqa: E402
    NumpyNet,
    PolicyNet,
    PolicyValueNet,
    legal_probabilities,
    masked_probabilities,
)

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


@pytest.mark.parametrize("net, heads", [
    (PolicyNet((16, 8), 5), 1), (PolicyValueNet((16,), 5), 2),
    (PolicyNet((16,), 5, board=(3, 4, 4), dropout=0.5), 1),  # the paper's, dropout off here
    (PolicyValueNet((16, 8), 5, board=(2, 6, 4), dropout=0.3), 2)])
def test_numpy_forward_pass_equals_flax(net, heads):
    width = 12 if net.board is None else int(np.prod(net.board))
    x = np.random.default_rng(0).normal(size=(7, width)).astype(np.float32)
    params = net.init(jax.random.PRNGKey(1), x)
    theirs = net.apply(params, x)
    mine = NumpyNet(params, heads, net.board)
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


@pytest.mark.parametrize("size", [4] + [pytest.param(size, marks=pytest.mark.slow)
                                         for size in (6, 8)])  # 6 x 6, 8 x 8 compile longer
def test_the_conv_network_has_the_papers_shape(size):
    """Two relu convolutions down to 2 x 2 x 30, the paper's 120-wide flatten, then the
    fully connected layers and the heads (Sec. 3.3.1)."""
    game = pyspiel.load_game(f"smmcts_othello(board_size={size})")
    net = networks.make(Config(game=str(game), network="conv", hidden=(64, 32), dropout=0.3),
                        game, value_head=True)
    x = np.zeros((5, game.observation_tensor_size()), np.float32)
    shapes = jax.tree_util.tree_map(np.shape, net.init(jax.random.PRNGKey(0), x))["params"]
    k = size // 2
    assert shapes == {"Conv_0": {"kernel": (k, k, 3, 32), "bias": (32,)},
                      "Conv_1": {"kernel": (k, k, 32, 30), "bias": (30,)},
                      "Dense_0": {"kernel": (120, 64), "bias": (64,)},
                      "Dense_1": {"kernel": (64, 32), "bias": (32,)},
                      "Dense_2": {"kernel": (32, size * size + 1), "bias": (size * size + 1,)},
                      "Dense_3": {"kernel": (32, 1), "bias": (1,)}}
    logits, value = net.apply(net.init(jax.random.PRNGKey(0), x), x)
    assert logits.shape == (5, size * size + 1) and value.shape == (5,)


def test_dropout_acts_in_training_only():
    """Evaluation (the default) is deterministic and equal to the numpy copy; training with
    a dropout key changes the outputs, differently for another key, the same for the same."""
    net = PolicyValueNet((64,), 17, board=(3, 4, 4), dropout=0.3)
    x = np.random.default_rng(2).random((6, 48)).astype(np.float32)
    params = net.init(jax.random.PRNGKey(0), x)
    evaluated = net.apply(params, x)[0]
    np.testing.assert_array_equal(evaluated, net.apply(params, x)[0])
    np.testing.assert_allclose(NumpyNet(params, 2, net.board).logits(x), evaluated,
                               rtol=1e-5, atol=1e-6)

    def trained(seed):
        return net.apply(params, x, train=True, rngs={"dropout": jax.random.PRNGKey(seed)})[0]

    assert not np.allclose(trained(1), evaluated)
    assert not np.allclose(trained(1), trained(2))
    np.testing.assert_array_equal(trained(1), trained(1))
    # The exploitability evaluation asks the average network through NetworkPolicy.
    run = MCNFSP(Config(network="conv", dropout=0.5, hidden=(16,)))
    policy = run.average_policy()
    state = run.game.new_initial_state()
    assert policy.action_probabilities(state) == run.average_policy().action_probabilities(state)


@pytest.mark.parametrize("kwargs, message", [
    ({"network": "resnet"}, "network must be one of mlp, conv"),
    ({"dropout": 1.0}, r"dropout must be in \[0, 1\)"),
    ({"dropout": -0.1}, "dropout")])
def test_a_bad_network_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Config(**kwargs)


@pytest.mark.parametrize("game", ["leduc_poker", "tic_tac_toe"])
def test_the_conv_network_needs_a_board(game):
    with pytest.raises(ValueError, match=f"network='conv' needs a board.*{game}.*network='mlp'"):
        MCNFSP(Config(game=game, network="conv"))


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


class _SpyNetworks:
    """A uniform prior, the value +1 for whoever moves (what a best responder's network may
    say), a fixed non-uniform average policy; records who the value is asked for."""

    def __init__(self):
        self.asked: list[int] = []

    def best_response(self, state):
        self.asked.append(state.current_player())
        return _Uniform().best_response(state)[0], 1.0

    def average(self, state):
        legal = state.legal_actions()
        p = np.zeros(state.get_game().num_distinct_actions())
        seed = zlib.crc32(str(state).encode())
        p[legal] = np.random.default_rng(seed).random(len(legal)) ** 2 + 0.02
        return p / p.sum()


def _value_against(state, me, networks):
    """Exact value for ``me`` against the networks' average policy (expectimax)."""
    if state.is_terminal():
        return state.returns()[me]
    values = [_value_against(state.child(a), me, networks) for a in state.legal_actions()]
    if state.current_player() == me:
        return max(values)
    return float(networks.average(state)[state.legal_actions()] @ values)


def test_search_models_the_opponent_by_its_average_policy_only():
    """Perfect information: the best-response network is asked for the searcher only; at
    the opponent's nodes the moves follow the average policy; the most visited move is one
    of the two best responses to that average (tic-tac-toe, x to move after 4, 0, 8, 2)."""
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    for action in (4, 0, 8, 2):
        state.apply_action(action)
    me, networks = state.current_player(), _SpyNetworks()
    root, _ = mcts._expand(state.clone(), me, networks)
    rng = np.random.default_rng(0)
    for _ in range(4000):
        mcts._simulate(root, me, networks, 1.5, rng)
    assert set(networks.asked) == {me}
    action = int(np.argmax(root.visits))
    reply = root.children[action]
    frequencies = reply.visits[reply.legal] / reply.visits.sum()
    np.testing.assert_allclose(frequencies, networks.average(reply.state)[reply.legal],
                               atol=0.04)
    assert reply.visits.sum() > 1000
    values = {a: _value_against(state.child(a), me, networks) for a in state.legal_actions()}
    best = max(values.values())  # 3 and 1 (the block) lead, 0.879 and 0.865; the rest < 0.33
    assert sorted(values.values())[-3] < best - 0.5
    assert values[action] > best - 0.05


def test_search_refuses_a_terminal_state():
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    for action in (0, 3, 1, 4, 2):
        state.apply_action(action)
    with pytest.raises(ValueError, match="decision state"):
        mcts.search(state, _Uniform(), 10, 1.0, np.random.default_rng(0))


def _small_config(**kwargs):
    return Config(hidden=(16,), num_simulations=4, batch_size=8, eta=0.5, **kwargs)


@pytest.mark.parametrize("game, network", [
    (OTHELLO, {}), ("leduc_poker", {}),
    # The conv network's runs seed and resume as the MLP's do; it compiles for a minute on a
    # busy machine. Fast beside it: a conv MC-NFSP checkpoint round trip
    # (test_hostile_checkpoints) and the conv ANFSP resume (test_anfsp).
    pytest.param(OTHELLO, {"network": "conv", "dropout": 0.3}, marks=pytest.mark.slow)])
def test_training_is_seeded_and_resumes_exactly(game, network, tmp_path):
    def episodes(run, n):
        for _ in range(n):
            run.play_episode()
            run.learn()

    a = MCNFSP(_small_config(game=game, seed=3, **network))
    episodes(a, 4)
    a.save(tmp_path / "run.npz")
    episodes(a, 4)
    b = MCNFSP.load(tmp_path / "run.npz")
    assert b.episodes == 4
    episodes(b, 4)
    c = MCNFSP(_small_config(game=game, seed=3, **network))
    episodes(c, 8)
    assert b.episodes == 8 and len(b.reservoir) == len(a.reservoir) > 0 and len(a.replay) > 0
    for run in (b, c):
        np.testing.assert_array_equal(run.avg_params["params"]["Dense_0"]["kernel"],
                                      a.avg_params["params"]["Dense_0"]["kernel"])
        np.testing.assert_array_equal(run.br_params["params"]["Dense_1"]["bias"],
                                      a.br_params["params"]["Dense_1"]["bias"])


@pytest.mark.parametrize("kwargs, message", [
    ({"eta": 0.0}, "eta"), ({"num_simulations": 0}, "num_simulations"),
    ({"c_puct": -1.0}, "c_puct"), ({"batch_size": 0}, "batch_size")])
def test_bad_config_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Config(**kwargs)


def test_mc_nfsp_refuses_chance_in_a_game_with_perfect_information():
    with pytest.raises(ValueError, match="chance"):
        MCNFSP(Config(game="pig"))


class _Hashed:
    """A Markov policy far from uniform: seeded by the board, so it is the same in every
    history reaching a position (what the position walk assumes of a network)."""

    def action_probabilities(self, state, player_id=None):
        legal = state.legal_actions()
        p = np.random.default_rng(hash(state.board) % 2**32).random(len(legal)) ** 3 + 0.01
        return dict(zip(legal, p / p.sum()))


def _check_position_walk(game_string):
    """The position walk against exact.exploitability's history walk on a non-uniform
    policy; the solver's equilibrium has NashConv 0; the network's batched answers over
    the positions equal its one-state answers."""
    game = pyspiel.load_game(game_string)
    mine = exploitability.evaluate(game_string, _Hashed())
    reference = exact_exploitability.evaluate(game, _Hashed())
    assert mine.game_value == pytest.approx(reference.game_value, abs=1e-12)
    assert mine.e1 == pytest.approx(reference.e1, abs=1e-9)
    assert mine.e2 == pytest.approx(reference.e2, abs=1e-9)
    assert mine.e1 > 0.01 and mine.e2 > 0.01
    equilibrium = exploitability.evaluate(game_string, solver.solve(game))
    assert equilibrium.nash_conv == pytest.approx(0.0, abs=1e-9)
    policy = MCNFSP(_small_config(game=game_string)).average_policy()
    pos = exploitability.positions(game_string)
    batch = policy.batch_probabilities(pos.tensors, pos.masks)
    for action, p in policy.action_probabilities(game.new_initial_state()).items():
        assert batch[-1, action] == pytest.approx(p, rel=1e-5)  # the root is the last position
    network = exploitability.evaluate(game_string, policy)
    assert network.nash_conv == pytest.approx(
        exact_exploitability.evaluate(game, policy).nash_conv, abs=1e-5)


def test_position_walk_equals_the_history_walk_after_an_opening():
    """4 x 4 Othello after four moves (2,760 histories)."""
    _check_position_walk("smmcts_othello(returns_type=disc_difference,opening=b1-a1-a2-c1)")


@pytest.mark.slow
def test_position_walk_equals_the_history_walk_after_two_moves():
    """4 x 4 Othello after two moves (12,789 histories; the whole game has 224,821 and its
    history walk takes minutes)."""
    _check_position_walk("smmcts_othello(returns_type=disc_difference,opening=b1-a1)")


class _Fixed:
    """Networks whose average policy is a fixed OpenSpiel policy; uniform prior, value 0."""

    def __init__(self, policy):
        self.policy = policy

    def best_response(self, state):
        return _Uniform().best_response(state)

    def average(self, state):
        p = np.zeros(state.get_game().num_distinct_actions())
        for action, prob in self.policy.action_probabilities(state).items():
            p[action] = prob
        return p


def _random_policy(game, seed):
    """A tabular policy with random (seeded) probabilities at every information state."""
    policy = policy_lib.TabularPolicy(game)
    rng = np.random.default_rng(seed)
    probs = rng.random(policy.action_probability_array.shape) * policy.legal_actions_mask
    policy.action_probability_array = probs / probs.sum(axis=1, keepdims=True)
    return policy


def test_worlds_are_drawn_from_the_belief_given_the_average_policy():
    """Kuhn, player 1 holds the K after a bet: player 0 holds J or Q in proportion to
    (chance 1/6) x (player 0's probability of betting with that card)."""
    game = pyspiel.load_game("kuhn_poker")
    policy = _random_policy(game, 0)
    state = game.new_initial_state()
    for action in (0, 2, 1):  # J to player 0, K to player 1, player 0 bets
        state.apply_action(action)
    bet = {card: policy.action_probabilities(_deal(game, card, 2))[1] for card in (0, 1)}
    draw = mcts.information_set_worlds(game, state, _Fixed(policy), np.random.default_rng(1))
    worlds = [draw() for _ in range(4000)]
    assert all(w.history()[1:] == [2, 1] for w in worlds)
    freq = np.mean([w.history()[0] == 0 for w in worlds])
    expected = bet[0] / (bet[0] + bet[1])
    assert abs(freq - expected) < 4 * np.sqrt(expected * (1 - expected) / 4000)


def _deal(game, card0, card1):
    state = game.new_initial_state()
    state.apply_action(card0)
    state.apply_action(card1)
    return state


def _check_search_against_best_response(game_name, simulations, max_depth):
    """Against a fixed random average policy, the most visited action is OpenSpiel's best
    response at every information set (of either player, at most ``max_depth`` moves deep)
    where that action's margin over the next best is at least 5% of the largest utility.
    Returns how many were checked."""
    game = pyspiel.load_game(game_name)
    policy = _random_policy(game, 2)
    rng = np.random.default_rng(3)
    checked = 0
    for me in (0, 1):
        best = best_response.BestResponsePolicy(game, me, policy)
        for key, nodes in best.infosets.items():
            state = nodes[0][0]
            if len(state.history()) > max_depth:
                continue
            weight = sum(p for _, p in nodes)
            q = {a: sum(p * best.q_value(s, a) for s, p in nodes) / weight
                 for a in state.legal_actions()}
            values = sorted(q.values(), reverse=True)
            if values[0] - values[1] < 0.05 * mcts.utility_scale(game):
                continue
            networks = _Fixed(policy)
            worlds = mcts.information_set_worlds(game, state, networks, rng)
            visits = mcts.search_information_set(state, networks, simulations, 1.0, rng, worlds)
            assert int(np.argmax(visits)) == best.best_response_action(key), (key, q, visits)
            checked += 1
    return checked


def test_information_set_search_finds_the_best_response_in_kuhn():
    assert _check_search_against_best_response("kuhn_poker", 2000, 4) >= 6


@pytest.mark.slow
def test_information_set_search_finds_the_best_response_in_leduc():
    """Leduc's first decisions (uninformed leaves: value 0, uniform prior, so it takes many
    simulations)."""
    assert _check_search_against_best_response("leduc_poker", 30_000, 4) >= 4


@pytest.mark.slow
def test_mc_nfsp_learns_kuhn():
    """1,500 episodes take the average policy's NashConv well below the uniform policy's."""
    run = MCNFSP(Config(game="kuhn_poker", hidden=(32,), seed=0))
    uniform = exploitability_lib.nash_conv(run.game, policy_lib.UniformRandomPolicy(run.game))
    for _ in range(1500):
        run.play_episode()
        run.learn()
    assert exploitability_lib.nash_conv(run.game, run.average_policy()) < 0.6 * uniform
