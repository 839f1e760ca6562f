"""ANFSP (Zhang et al. 2019, Sec. 4): NFSP whose self-play runs in parallel actor processes.

NFSP (Heinrich and Silver 2016): each player acts, for a whole episode, with its best
response (epsilon-greedy on a Q-network) with probability ``eta`` and with its average
policy otherwise. Every transition goes to the replay memory (Q-learning towards a target
network), every best-response action to the reservoir (supervised learning of the
average). ANFSP's actors play with their own exploration rates (``epsilons[k]``, decayed as
``1 / sqrt(1 + episodes / epsilon_decay)``, the paper's inverse square root) on copies of the
game and share the networks: the learner process trains on what every actor sends and
broadcasts the parameters every ``sync_every`` steps. The paper's actors send gradients
(A3C); sending experience to one learner (Ape-X style) shares the same networks with less
traffic and keeps the optimiser in one place.

``num_actors=0`` plays in the learner's own process: plain, synchronous NFSP, seeded and
reproducible. With actors the order in which their episodes arrive depends on timing, so
runs are not bit-for-bit reproducible.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import time
from dataclasses import dataclass
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.nfsp import checkpoints, networks
from smmcts_spiel.nfsp.buffers import ReplayBuffer, ReservoirBuffer
from smmcts_spiel.nfsp.networks import NumpyNet, legal_mask, legal_probabilities
from smmcts_spiel.nfsp.policy import NetworkPolicy, tensor_reader, tensor_size
from smmcts_spiel.search.selectors import sample_index


@dataclass(frozen=True)
class ANFSPConfig:
    """ANFSP's parameters; the learning ones are OpenSpiel's kuhn_nfsp.py defaults."""

    game: str = "kuhn_poker"
    hidden: tuple[int, ...] = (128,)  # widths of the fully connected hidden layers
    network: str = "mlp"  # or "conv", the paper's (smmcts_spiel.nfsp.networks)
    dropout: float = 0.0  # after every fully connected hidden layer, in training only
    num_actors: int = 2
    eta: float = 0.1
    epsilons: tuple[float, ...] = (0.06, 0.12, 0.24, 0.48)
    epsilon_decay: float = 10_000.0  # episodes
    replay_capacity: int = 200_000
    reservoir_capacity: int = 2_000_000
    batch_size: int = 128
    learn_every: int = 64  # transitions per gradient step of each network
    min_buffer_size_to_learn: int = 1000
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.01
    target_update_every: int = 300  # gradient steps
    sync_every: int = 10  # gradient steps between parameter broadcasts to the actors
    episodes_per_message: int = 16
    seed: int = 0

    def __post_init__(self):
        checks.check_count(self.num_actors, "num_actors", 0)
        networks.check_network(self.network, self.dropout)
        if not 0.0 < self.eta <= 1.0:
            raise ValueError(f"eta must be in (0, 1], got {checks.shown(self.eta)!r}")
        if not self.epsilons or not all(0.0 <= e <= 1.0 for e in self.epsilons):
            raise ValueError(f"epsilons must be probabilities, got {self.epsilons!r}")
        for name in ("batch_size", "learn_every", "target_update_every", "sync_every",
                     "episodes_per_message", "replay_capacity", "reservoir_capacity"):
            checks.check_count(getattr(self, name), name, 1)


class _Acting:
    """What an actor needs to play: the game, numpy copies of the networks, its generator."""

    def __init__(self, config: ANFSPConfig, seed):
        self.config = config
        self.game = pyspiel.load_game(config.game)
        self.num_actions = self.game.num_distinct_actions()
        self.tensor = tensor_reader(self.game)
        self.board = networks.board_shape(self.game, config.network)
        self.q_net = networks.make(config, self.game, value_head=False)
        self.avg_net = networks.make(config, self.game, value_head=False)
        self.rng = np.random.default_rng(seed)
        # numpy copies of the parameters, set by ``set_params``
        self.q: NumpyNet | None = None
        self.avg: NumpyNet | None = None

    def set_params(self, q_params, avg_params) -> None:
        """Play with these parameters from now on."""
        self.q, self.avg = (NumpyNet(q_params, board=self.board),
                            NumpyNet(avg_params, board=self.board))

    def play_episode(self, epsilon: float) -> tuple[list, list]:
        """One self-play episode: its RL transitions and SL samples (lists of tuples)."""
        if self.q is None or self.avg is None:
            raise RuntimeError("call set_params() before play_episode()")
        rng = self.rng
        best_response = rng.random(2) < self.config.eta
        state = self.game.new_initial_state()
        steps: tuple[list, list] = ([], [])
        supervised = []
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(actions[sample_index(probs, rng.random())])
                continue
            player = state.current_player()
            legal = state.legal_actions()
            x = self.tensor(state, player)
            mask = legal_mask(legal, self.num_actions)
            if best_response[player]:
                if rng.random() < epsilon:
                    action = legal[rng.integers(len(legal))]
                else:
                    q = self.q.logits(x)
                    action = legal[int(np.argmax(q[legal]))]
                supervised.append((x, mask, action))
            else:
                p = legal_probabilities(self.avg.logits(x), legal)
                action = legal[sample_index(p, rng.random())]
            steps[player].append((x, mask, action))
            state.apply_action(action)
        returns = state.returns()
        transitions = []
        no_mask = np.zeros(self.num_actions, np.float32)
        for player, seq in enumerate(steps):
            for t, (x, _, action) in enumerate(seq):
                if t + 1 < len(seq):
                    nx, nmask, _ = seq[t + 1]
                    transitions.append((x, action, 0.0, nx, nmask, 0.0))
                else:
                    transitions.append((x, action, returns[player], np.zeros_like(x), no_mask,
                                        1.0))
        return transitions, supervised

    def play(self, episodes: int, actor: int, played: int) -> tuple[tuple, tuple]:
        """``episodes`` episodes (the actor has ``played`` before): their transitions and
        SL samples stacked field by field, as the memories store them."""
        transitions, supervised = [], []
        for k in range(episodes):
            rl, sl = self.play_episode(self.epsilon(actor, played + k))
            transitions += rl
            supervised += sl
        return _stack(transitions, _TRANSITION_TYPES), _stack(supervised, _SAMPLE_TYPES)

    def epsilon(self, actor: int, episodes: int) -> float:
        eps = self.config.epsilons[actor % len(self.config.epsilons)]
        return eps / np.sqrt(1.0 + episodes / self.config.epsilon_decay)


#: dtypes of the fields of a transition (x, action, reward, next x, next legal mask, done)
#: and of an SL sample (x, legal mask, action).
_TRANSITION_TYPES = (np.float32, np.int32, np.float32, np.float32, np.float32, np.float32)
_SAMPLE_TYPES = (np.float32, np.float32, np.int32)


def _stack(items: list, dtypes: tuple) -> tuple:
    """Items (tuples) as one array per field; ``()`` if there are none."""
    if not items:
        return ()
    return tuple(np.asarray(field, dtype) for field, dtype in zip(zip(*items), dtypes))


def _actor_main(config: ANFSPConfig, actor: int, episodes: int, params_queue, out_queue,
                running, stop):
    """An actor process: play with the newest parameters, send experience in batches
    (with the CPU seconds spent on them). ``episodes``: how many it played before (its
    exploration rate's decay continues from there after a checkpoint)."""
    acting = _Acting(config, seed=[config.seed, 1 + actor, episodes])  # distinct streams
    acting.set_params(*params_queue.get())
    while not stop.is_set():
        if not running.wait(timeout=0.2):
            continue
        newest = None
        try:
            while True:
                newest = params_queue.get_nowait()
        except queue.Empty:
            pass
        if newest is not None:
            acting.set_params(*newest)
        n = config.episodes_per_message
        cpu = time.process_time()
        transitions, supervised = acting.play(n, actor, episodes)
        episodes += n
        message = (transitions, supervised, n, time.process_time() - cpu)
        while not stop.is_set():  # a bounded queue: wait while the learner catches up
            try:
                out_queue.put(message, timeout=0.2)
                break
            except queue.Full:
                pass
    out_queue.cancel_join_thread()  # exit even if the learner no longer reads


class ANFSP:
    """The learner: networks, memories, and (with ``num_actors > 0``) the actor processes.

    Use as a context manager (or call :meth:`close`) so the actors are stopped.
    """

    # The networks' parameters and optimiser states (pytrees; _TREES), set by __init__/load.
    q_params: Any
    target_params: Any
    avg_params: Any
    q_opt_state: Any
    avg_opt_state: Any

    def __init__(self, config: ANFSPConfig):
        self.config = config
        self.acting = _Acting(config, seed=config.seed)
        self.game = self.acting.game
        checks.check_game(self.game, "ANFSP", perfect_information=False, sequential_only=True)
        if not self.game.get_type().provides_information_state_tensor and not (
                self.game.get_type().provides_observation_tensor):
            raise ValueError(f"ANFSP needs information-state or observation tensors; "
                             f"{self.game.get_type().short_name!r} has neither")
        self.q_opt, self.avg_opt = _optimisers(config)
        for name, tree in _initial_trees(config, self.game).items():
            setattr(self, name, tree)
        self.rng = self.acting.rng
        self.replay = ReplayBuffer(config.replay_capacity, self.rng)
        self.reservoir = ReservoirBuffer(config.reservoir_capacity, self.rng)
        self.episodes = 0
        self.steps = 0
        self.train_seconds = 0.0
        self.cpu_seconds = 0.0  # of the learner and its actors, while training
        self._pending = 0  # transitions received since the last gradient step
        self._actors: list = []
        self._compile()
        self.acting.set_params(self.q_params, self.avg_params)

    def _compile(self) -> None:
        q_net, avg_net, seed = self.acting.q_net, self.acting.avg_net, self.config.seed

        def q_values(params, x, key=None) -> jax.Array:
            """Q-values; with dropout given ``key``, without for the target network."""
            train: dict = {} if key is None else {"train": True, "rngs": {"dropout": key}}
            return cast(jax.Array, q_net.apply(params, x, **train))  # flax's type: a tuple

        def q_loss(params, key, target_params, x, action, reward, nx, nmask, done):
            q = jnp.take_along_axis(q_values(params, x, key), action[:, None], axis=-1)[:, 0]
            next_q = jnp.where(nmask > 0, q_values(target_params, nx), -jnp.inf).max(-1)
            target = reward + jnp.where(done > 0, 0.0, next_q)
            return jnp.mean((q - jax.lax.stop_gradient(target)) ** 2)

        def avg_loss(params, key, x, mask, action):
            logits = cast(jax.Array, avg_net.apply(params, x, train=True,
                                                   rngs={"dropout": key}))
            logp = jax.nn.log_softmax(jnp.where(mask > 0, logits, -1e9))
            return -jnp.mean(jnp.take_along_axis(logp, action[:, None], axis=-1))

        # Dropout masks (if any) from the seed and the step count: a stream per network.
        @jax.jit
        def q_update(params, opt_state, step, target_params, *batch):
            key = networks.dropout_keys(seed, step, 2)[0]
            grads = jax.grad(q_loss)(params, key, target_params, *batch)
            updates, opt_state = self.q_opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state

        @jax.jit
        def avg_update(params, opt_state, step, *batch):
            key = networks.dropout_keys(seed, step, 2)[1]
            grads = jax.grad(avg_loss)(params, key, *batch)
            updates, opt_state = self.avg_opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state

        self._q_update, self._avg_update = q_update, avg_update

    # -- actors -------------------------------------------------------------------------

    def _start_actors(self) -> None:
        ctx = mp.get_context("spawn")  # jax is not fork-safe
        # Bounded: an actor waits rather than pile up stale experience the learner cannot
        # keep up with.
        self._out = ctx.Queue(maxsize=4 * self.config.num_actors)
        self._running, self._stop = ctx.Event(), ctx.Event()
        for k in range(self.config.num_actors):
            params_queue = ctx.Queue()
            process = ctx.Process(target=_actor_main, daemon=True, args=(
                self.config, k, self.episodes // self.config.num_actors, params_queue,
                self._out, self._running, self._stop))
            process.start()
            self._actors.append((process, params_queue))
        self._broadcast()

    def _broadcast(self) -> None:
        params = jax.tree_util.tree_map(np.asarray, (self.q_params, self.avg_params))
        for _, params_queue in self._actors:
            params_queue.put(params)

    def close(self) -> None:
        """Stop the actor processes (their unsent episodes are dropped)."""
        if self._actors:
            self._stop.set()
            deadline = time.perf_counter() + 10
            while (any(p.is_alive() for p, _ in self._actors)
                   and time.perf_counter() < deadline):
                try:  # keep the pipe flowing so the actors can exit
                    self._out.get(timeout=0.1)
                except queue.Empty:
                    pass
            for process, _ in self._actors:
                if process.is_alive():
                    process.terminate()
                process.join()
            self._actors = []

    def __enter__(self) -> ANFSP:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- learning -----------------------------------------------------------------------

    def _receive(self, transitions: tuple, supervised: tuple, episodes: int,
                 actor_cpu_seconds: float = 0.0) -> None:
        """Store experience (one array per field) and take the gradient steps it is owed."""
        self.cpu_seconds += actor_cpu_seconds
        if transitions:
            self.replay.add_batch(transitions)
            self._pending += len(transitions[0])
        if supervised:
            self.reservoir.add_batch(supervised)
        self.episodes += episodes
        cfg = self.config
        stepped = False
        while self._pending >= cfg.learn_every:
            self._pending -= cfg.learn_every
            stepped |= self.learn()
        if stepped and not self._actors:
            self.acting.set_params(self.q_params, self.avg_params)

    def learn(self) -> bool:
        """One gradient step of each network once its memory holds enough data; True if
        a network changed."""
        cfg = self.config
        changed, step = False, np.uint32(self.steps)
        if len(self.replay) >= cfg.min_buffer_size_to_learn:
            self.q_params, self.q_opt_state = self._q_update(
                self.q_params, self.q_opt_state, step, self.target_params,
                *self.replay.sample(cfg.batch_size))
            changed = True
        if len(self.reservoir) >= cfg.min_buffer_size_to_learn:
            self.avg_params, self.avg_opt_state = self._avg_update(
                self.avg_params, self.avg_opt_state, step,
                *self.reservoir.sample(cfg.batch_size))
            changed = True
        self.steps += 1
        if self.steps % cfg.target_update_every == 0:
            self.target_params = self.q_params
        if self._actors and self.steps % cfg.sync_every == 0:
            self._broadcast()
        return changed

    def train(self, seconds: float) -> None:
        """Self-play and learn for ``seconds`` of wall time (added to ``train_seconds``)."""
        start, cpu = time.perf_counter(), time.process_time()
        stop = start + seconds
        if self.config.num_actors and not self._actors:
            self._start_actors()
        if self._actors:
            self._running.set()
            while time.perf_counter() < stop:
                try:
                    message = self._out.get(timeout=min(0.5, max(0.01, stop - time.perf_counter())))
                except queue.Empty:
                    continue
                self._receive(*message)
            self._running.clear()
        else:
            while time.perf_counter() < stop:
                self.self_play(self.config.episodes_per_message)
        self.train_seconds += time.perf_counter() - start
        self.cpu_seconds += time.process_time() - cpu

    def self_play(self, episodes: int) -> None:
        """``episodes`` episodes in this process, learning as they come (seeded NFSP).

        The experience is stored in batches, each just before the gradient step it
        completes, so the memories hold at every step what they would hold had each
        episode been stored as it ended (storing a batch costs about what storing one
        episode does).
        """
        transitions, supervised, played = [], [], 0
        for _ in range(episodes):
            rl, sl = self.acting.play_episode(self.acting.epsilon(0, self.episodes + played))
            transitions += rl
            supervised += sl
            played += 1
            if self._pending + len(transitions) >= self.config.learn_every:
                self._receive(_stack(transitions, _TRANSITION_TYPES),
                              _stack(supervised, _SAMPLE_TYPES), played)
                transitions, supervised, played = [], [], 0
        if played:
            self._receive(_stack(transitions, _TRANSITION_TYPES),
                          _stack(supervised, _SAMPLE_TYPES), played)

    def average_policy(self) -> NetworkPolicy:
        return NetworkPolicy(self.game, self.acting.avg_net.apply, self.avg_params)

    # -- checkpoints --------------------------------------------------------------------

    _COUNTERS = {"episodes": int, "steps": int, "train_seconds": float, "cpu_seconds": float,
                 "_pending": int}

    def _memory_items(self) -> dict:
        """(shape, dtype) of each field of the memories' items."""
        x, n = (tensor_size(self.game),), (self.acting.num_actions,)
        return {"replay": tuple(zip((x, (), (), x, n, ()), _TRANSITION_TYPES)),
                "reservoir": tuple(zip((x, n, ()), _SAMPLE_TYPES))}

    def save(self, path) -> None:
        """The learner's state (the actors restart from it on the next :meth:`train`), in
        a checkpoint that runs no code when loaded (:mod:`~smmcts_spiel.nfsp.checkpoints`)."""
        arrays, memories = {}, {}
        for name in _TREES:
            arrays.update(checkpoints.flatten(getattr(self, name), name))
        for name in self._memory_items():
            memories[name], fields = checkpoints.buffer_arrays(getattr(self, name), name)
            arrays.update(fields)
        checkpoints.save(path, "anfsp", {
            "config": checkpoints.config_to_json(self.config),
            "counters": {k: getattr(self, k) for k in self._COUNTERS},
            "memories": memories, "rng": checkpoints.rng_state(self.rng)}, arrays)

    @classmethod
    def load(cls, path, game: str | pyspiel.Game | None = None,
             network: ANFSPConfig | None = None) -> ANFSP:
        """The learner saved at ``path``; with ``game``, refuses a run trained on another
        game, with ``network`` (a configuration) one whose network is not ``network``'s.
        Raises :class:`~smmcts_spiel.nfsp.checkpoints.CheckpointError` for a file that is
        not a checkpoint of an ANFSP run or does not fit its own configuration."""
        source = os.fspath(path)
        meta, arrays = checkpoints.load(path, "anfsp")
        config = checkpoints.config_from_json(ANFSPConfig, meta.get("config"), source)
        trained = checkpoints.check_game(config.game, game, source)
        checkpoints.check_network(config, network, source)
        trees = checkpoints.restore_trees(lambda: _initial_trees(config, trained), _TREES,
                                          arrays, source, networks.describe(config))
        counts = checkpoints.counters(meta, cls._COUNTERS, source)
        run = cls(config)
        memories = meta.get("memories")
        for name, items in run._memory_items().items():
            counters = memories.get(name) if isinstance(memories, dict) else None
            checkpoints.restore_buffer(getattr(run, name), counters, arrays, name, items,
                                       source)
        checkpoints.set_rng_state(run.rng, meta.get("rng"), source)
        for name, value in {**trees, **counts}.items():
            setattr(run, name, value)
        run.acting.set_params(run.q_params, run.avg_params)
        return run


#: The learner's pytrees: parameters and optimiser states.
_TREES = ("q_params", "target_params", "avg_params", "q_opt_state", "avg_opt_state")


def _optimisers(config: ANFSPConfig) -> tuple:
    return optax.sgd(config.rl_learning_rate), optax.sgd(config.sl_learning_rate)


def _initial_trees(config: ANFSPConfig, game: pyspiel.Game) -> dict:
    """The networks' initial parameters (target = Q) and their optimisers' states."""
    x = jnp.zeros((1, tensor_size(game)))
    kq, ka = jax.random.split(jax.random.PRNGKey(config.seed))
    q_params = networks.make(config, game, value_head=False).init(kq, x)
    avg_params = networks.make(config, game, value_head=False).init(ka, x)
    q_opt, avg_opt = _optimisers(config)
    return dict(zip(_TREES, (q_params, q_params, avg_params, q_opt.init(q_params),
                             avg_opt.init(avg_params))))
