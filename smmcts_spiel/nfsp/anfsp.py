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

import dataclasses
import multiprocessing as mp
import pickle
import queue
import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.nfsp.buffers import ReplayBuffer, ReservoirBuffer
from smmcts_spiel.nfsp.networks import PolicyNet, legal_mask, masked_probabilities
from smmcts_spiel.nfsp.policy import NetworkPolicy, state_tensor, tensor_size


@dataclass(frozen=True)
class ANFSPConfig:
    """ANFSP's parameters; the learning ones are OpenSpiel's kuhn_nfsp.py defaults."""

    game: str = "kuhn_poker"
    hidden: tuple[int, ...] = (128,)
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
        if not 0.0 < self.eta <= 1.0:
            raise ValueError(f"eta must be in (0, 1], got {self.eta!r}")
        if not self.epsilons or not all(0.0 <= e <= 1.0 for e in self.epsilons):
            raise ValueError(f"epsilons must be probabilities, got {self.epsilons!r}")
        for name in ("batch_size", "learn_every", "target_update_every", "sync_every",
                     "episodes_per_message", "replay_capacity", "reservoir_capacity"):
            checks.check_count(getattr(self, name), name, 1)


class _Acting:
    """What an actor needs to play: the game, the networks' forward passes, its generator."""

    def __init__(self, config: ANFSPConfig, seed: int):
        self.config = config
        self.game = pyspiel.load_game(config.game)
        self.num_actions = self.game.num_distinct_actions()
        self.q_net = PolicyNet(config.hidden, self.num_actions)
        self.avg_net = PolicyNet(config.hidden, self.num_actions)
        self.rng = np.random.default_rng(seed)
        q_net, avg_net = self.q_net, self.avg_net
        self.q_values = jax.jit(lambda p, x: q_net.apply(p, x))
        self.avg_probs = jax.jit(lambda p, x, m: masked_probabilities(avg_net.apply(p, x), m))

    def play_episode(self, q_params, avg_params, epsilon: float):
        """One self-play episode: (RL transitions, SL samples) of both players."""
        best_response = self.rng.random(2) < self.config.eta
        state = self.game.new_initial_state()
        steps = ([], [])
        supervised = []
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(int(actions[self.rng.choice(len(actions), p=probs)]))
                continue
            player = state.current_player()
            legal = state.legal_actions()
            x = state_tensor(state, player)
            mask = legal_mask(legal, self.num_actions)
            if best_response[player]:
                if self.rng.random() < epsilon:
                    action = legal[self.rng.integers(len(legal))]
                else:
                    q = np.asarray(self.q_values(q_params, x[None])[0])
                    action = legal[int(np.argmax(q[legal]))]
                supervised.append((x, mask, np.int32(action)))
            else:
                p = np.asarray(self.avg_probs(avg_params, x[None], mask[None])[0], np.float64)
                action = int(self.rng.choice(self.num_actions, p=p / p.sum()))
            steps[player].append((x, mask, action))
            state.apply_action(action)
        returns = state.returns()
        transitions = []
        for player, seq in enumerate(steps):
            for t, (x, _, action) in enumerate(seq):
                if t + 1 < len(seq):
                    nx, nmask, _ = seq[t + 1]
                    transitions.append((x, np.int32(action), np.float32(0), nx, nmask,
                                        np.float32(0)))
                else:
                    transitions.append((x, np.int32(action), np.float32(returns[player]),
                                        np.zeros_like(x), np.zeros(self.num_actions, np.float32),
                                        np.float32(1)))
        return transitions, supervised

    def epsilon(self, actor: int, episodes: int) -> float:
        eps = self.config.epsilons[actor % len(self.config.epsilons)]
        return eps / np.sqrt(1.0 + episodes / self.config.epsilon_decay)


def _actor_main(config: ANFSPConfig, actor: int, params_queue, out_queue, running, stop):
    """An actor process: play with the newest parameters, send experience in batches."""
    acting = _Acting(config, seed=config.seed + 1 + actor)
    q_params, avg_params = params_queue.get()
    episodes = 0
    while not stop.is_set():
        if not running.wait(timeout=0.2):
            continue
        try:
            while True:
                q_params, avg_params = params_queue.get_nowait()
        except queue.Empty:
            pass
        transitions, supervised = [], []
        for _ in range(config.episodes_per_message):
            rl, sl = acting.play_episode(q_params, avg_params, acting.epsilon(actor, episodes))
            transitions += rl
            supervised += sl
            episodes += 1
        out_queue.put((transitions, supervised, config.episodes_per_message))
    out_queue.cancel_join_thread()  # exit even if the learner no longer reads


class ANFSP:
    """The learner: networks, memories, and (with ``num_actors > 0``) the actor processes.

    Use as a context manager (or call :meth:`close`) so the actors are stopped.
    """

    def __init__(self, config: ANFSPConfig):
        self.config = config
        self.acting = _Acting(config, seed=config.seed)
        self.game = self.acting.game
        checks.check_game(self.game, "ANFSP", perfect_information=False, sequential_only=True)
        if not self.game.get_type().provides_information_state_tensor and not (
                self.game.get_type().provides_observation_tensor):
            raise ValueError(f"ANFSP needs information-state or observation tensors; "
                             f"{self.game.get_type().short_name!r} has neither")
        x = jnp.zeros((1, tensor_size(self.game)))
        kq, ka = jax.random.split(jax.random.PRNGKey(config.seed))
        self.q_params = self.acting.q_net.init(kq, x)
        self.target_params = self.q_params
        self.avg_params = self.acting.avg_net.init(ka, x)
        self.q_opt = optax.sgd(config.rl_learning_rate)
        self.avg_opt = optax.sgd(config.sl_learning_rate)
        self.q_opt_state = self.q_opt.init(self.q_params)
        self.avg_opt_state = self.avg_opt.init(self.avg_params)
        self.rng = self.acting.rng
        self.replay = ReplayBuffer(config.replay_capacity, self.rng)
        self.reservoir = ReservoirBuffer(config.reservoir_capacity, self.rng)
        self.episodes = 0
        self.steps = 0
        self.train_seconds = 0.0
        self._pending = 0  # transitions received since the last gradient step
        self._actors = []
        self._compile()

    def _compile(self) -> None:
        q_net, avg_net = self.acting.q_net, self.acting.avg_net

        def q_loss(params, target_params, x, action, reward, nx, nmask, done):
            q = jnp.take_along_axis(q_net.apply(params, x), action[:, None], axis=-1)[:, 0]
            next_q = jnp.where(nmask > 0, q_net.apply(target_params, nx), -jnp.inf).max(-1)
            target = reward + jnp.where(done > 0, 0.0, next_q)
            return jnp.mean((q - jax.lax.stop_gradient(target)) ** 2)

        def avg_loss(params, x, mask, action):
            logp = jax.nn.log_softmax(jnp.where(mask > 0, avg_net.apply(params, x), -1e9))
            return -jnp.mean(jnp.take_along_axis(logp, action[:, None], axis=-1))

        @jax.jit
        def q_update(params, opt_state, target_params, *batch):
            grads = jax.grad(q_loss)(params, target_params, *batch)
            updates, opt_state = self.q_opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state

        @jax.jit
        def avg_update(params, opt_state, *batch):
            grads = jax.grad(avg_loss)(params, *batch)
            updates, opt_state = self.avg_opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state

        self._q_update, self._avg_update = q_update, avg_update

    # -- actors -------------------------------------------------------------------------

    def _start_actors(self) -> None:
        ctx = mp.get_context("spawn")  # jax is not fork-safe
        self._out = ctx.Queue()
        self._running, self._stop = ctx.Event(), ctx.Event()
        for k in range(self.config.num_actors):
            params_queue = ctx.Queue()
            process = ctx.Process(target=_actor_main, daemon=True, args=(
                self.config, k, params_queue, self._out, self._running, self._stop))
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

    def _receive(self, transitions, supervised, episodes: int) -> None:
        for t in transitions:
            self.replay.add(t)
        for s in supervised:
            self.reservoir.add(s)
        self.episodes += episodes
        self._pending += len(transitions)
        cfg = self.config
        while self._pending >= cfg.learn_every:
            self._pending -= cfg.learn_every
            self.learn()

    def learn(self) -> None:
        """One gradient step of each network once its memory holds enough data."""
        cfg = self.config
        if len(self.replay) >= cfg.min_buffer_size_to_learn:
            self.q_params, self.q_opt_state = self._q_update(
                self.q_params, self.q_opt_state, self.target_params,
                *self.replay.sample(cfg.batch_size))
        if len(self.reservoir) >= cfg.min_buffer_size_to_learn:
            self.avg_params, self.avg_opt_state = self._avg_update(
                self.avg_params, self.avg_opt_state, *self.reservoir.sample(cfg.batch_size))
        self.steps += 1
        if self.steps % cfg.target_update_every == 0:
            self.target_params = self.q_params
        if self._actors and self.steps % cfg.sync_every == 0:
            self._broadcast()

    def train(self, seconds: float) -> None:
        """Self-play and learn for ``seconds`` of wall time (added to ``train_seconds``)."""
        start = time.perf_counter()
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
                self.self_play(1)
        self.train_seconds += time.perf_counter() - start

    def self_play(self, episodes: int) -> None:
        """``episodes`` episodes in this process, learning as they come (seeded NFSP)."""
        for _ in range(episodes):
            epsilon = self.acting.epsilon(0, self.episodes)
            self._receive(*self.acting.play_episode(self.q_params, self.avg_params, epsilon), 1)

    def average_policy(self) -> NetworkPolicy:
        return NetworkPolicy(self.game, self.acting.avg_net.apply, self.avg_params)

    # -- checkpoints --------------------------------------------------------------------

    _SAVED = ("q_params", "target_params", "avg_params", "q_opt_state", "avg_opt_state")
    _KEPT = ("replay", "reservoir", "rng", "episodes", "steps", "train_seconds", "_pending")

    def save(self, path) -> None:
        """The learner's state (the actors restart from it on the next :meth:`train`)."""
        state = {k: jax.tree_util.tree_map(np.asarray, getattr(self, k)) for k in self._SAVED}
        state.update({k: getattr(self, k) for k in self._KEPT})
        with open(path, "wb") as f:
            pickle.dump({"config": dataclasses.asdict(self.config), "state": state}, f)

    @classmethod
    def load(cls, path) -> ANFSP:
        with open(path, "rb") as f:
            saved = pickle.load(f)
        config = saved["config"]
        run = cls(ANFSPConfig(**{**config, "hidden": tuple(config["hidden"]),
                                 "epsilons": tuple(config["epsilons"])}))
        for k, v in saved["state"].items():
            setattr(run, k, v)
        run.acting.rng = run.replay.rng = run.reservoir.rng = run.rng
        return run
