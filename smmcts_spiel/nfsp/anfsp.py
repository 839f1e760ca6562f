"""ANFSP (Zhang et al. 2019, Sec. 4): NFSP whose self-play runs in parallel actors.

NFSP (Heinrich and Silver 2016): each player acts, for a whole episode, with its best
response (epsilon-greedy on a Q-network) with probability ``eta`` and with its average
policy otherwise. Every transition goes to the replay memory (Q-learning towards a target
network), every best-response action to the reservoir (supervised learning of the
average). ANFSP's actors play with their own exploration rates (``epsilons[k]``, decayed as
``1 / sqrt(1 + episodes / epsilon_decay)``, the paper's inverse square root) on copies of the
game and share the networks, which the learner holds. Two designs (``design``):

* ``"actor_learners"``, the paper's (Sec. 4.1, in the manner of A3C, Mnih et al. 2016):
  each actor-learner computes the Q-network's gradient on its own transitions, accumulated
  over ``episodes_per_message`` episodes (the mean over them, "similar to mini-batches"),
  and the average network's gradient on a minibatch of its own supervised memory, and
  applies them (SGD) to the shared networks itself, lock-free on networks in shared
  memory, as A3C's threads do (:class:`_SharedNetworks`): local processes and Ray actors on
  this machine alike. A Ray actor on another machine sends them to the learner, which
  applies them as they arrive and sends it the new parameters. The target network is
  refitted every ``target_update_actions`` actions of all actor-learners. No replay
  memory. The paper's threads share one supervised memory; our actor-learners are
  processes, so each keeps its own (``reservoir_capacity / num_actors`` items), lost when
  the run is checkpointed and resumed.
* ``"learner"``, ours (Ape-X style): actors send their experience to the learner, which
  trains on replayed minibatches, a step every ``learn_every`` transitions taken
  ``steps_per_call`` at a time in one jitted call (a ``lax.scan`` over their minibatches:
  the dispatch of a call costs more than a step's computation), and broadcasts the
  parameters every ``sync_every`` steps: the same shared networks, one optimiser, the
  memories in one place (and in the checkpoints).

Actors run as local processes (``backend="processes"``) or as Ray actors (``"ray"``: a
local Ray, or the cluster at ``ray_address``; needs the ``ray`` extra). ``num_actors=0``
plays in the learner's own process: synchronous, seeded and reproducible (NFSP with the
``learner`` design). With actors the order in which their messages arrive depends on
timing, so runs are not bit-for-bit reproducible.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import math
import mmap
import multiprocessing as mp
import multiprocessing.connection
import os
import socket
import tempfile
import threading
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
    # design learner: gradient steps taken together, in one jitted call, once that many are
    # owed; 10 = sync_every, so the actors' parameters are as fresh as with single steps
    steps_per_call: int = 10
    min_buffer_size_to_learn: int = 1000
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.01
    target_update_every: int = 300  # gradient steps
    sync_every: int = 10  # gradient steps between parameter broadcasts to the actors
    episodes_per_message: int = 16  # an actor's episodes per message to the learner
    design: str = "learner"  # or "actor_learners", the paper's (see the module docstring)
    target_update_actions: int = 50_000  # actor_learners: actions between target refits
    backend: str = "processes"  # where the actors run: "processes" or "ray"
    ray_address: str | None = None  # with backend="ray": a cluster's address (None: local)
    seed: int = 0

    def __post_init__(self):
        checks.check_count(self.num_actors, "num_actors", 0)
        networks.check_network(self.network, self.dropout)
        if not 0.0 < self.eta <= 1.0:
            raise ValueError(f"eta must be in (0, 1], got {checks.shown(self.eta)!r}")
        if not self.epsilons or not all(0.0 <= e <= 1.0 for e in self.epsilons):
            raise ValueError(f"epsilons must be probabilities, got {self.epsilons!r}")
        for name in ("epsilon_decay", "rl_learning_rate", "sl_learning_rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not 0.0 < value < math.inf:
                raise ValueError(f"{name} must be a positive, finite number, got "
                                 f"{checks.shown(value)!r}")
        for name in ("batch_size", "learn_every", "steps_per_call", "target_update_every",
                     "sync_every",
                     "episodes_per_message", "replay_capacity", "reservoir_capacity",
                     "target_update_actions"):
            checks.check_count(getattr(self, name), name, 1)
        for name, value, allowed in (("design", self.design, DESIGNS),
                                     ("backend", self.backend, BACKENDS)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


#: ANFSP's designs and where its actors can run (ANFSPConfig.design, .backend).
DESIGNS = ("learner", "actor_learners")
BACKENDS = ("processes", "ray")


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
_DONE = 5  # the field of a transition that says the episode ended there
_SAMPLE_TYPES = (np.float32, np.float32, np.int32)


def _stack(items: list, dtypes: tuple) -> tuple:
    """Items (tuples) as one array per field; ``()`` if there are none."""
    if not items:
        return ()
    return tuple(np.asarray(field, dtype) for field, dtype in zip(zip(*items), dtypes))


def _losses(q_net, avg_net) -> tuple:
    """The two networks' losses: the Q-network's one-step Q-learning error towards the target
    network (a weighted mean over transitions; padding has weight 0), the average network's
    cross-entropy with the best-response actions."""

    def q_values(params, x, key=None) -> jax.Array:
        """Q-values; with dropout given ``key``, without for the target network."""
        train: dict = {} if key is None else {"train": True, "rngs": {"dropout": key}}
        return cast(jax.Array, q_net.apply(params, x, **train))  # flax's type: a tuple

    def q_loss(params, key, target_params, x, action, reward, nx, nmask, done, weight):
        q = jnp.take_along_axis(q_values(params, x, key), action[:, None], axis=-1)[:, 0]
        next_q = jnp.where(nmask > 0, q_values(target_params, nx), -jnp.inf).max(-1)
        target = reward + jnp.where(done > 0, 0.0, next_q)
        return jnp.sum(weight * (q - jax.lax.stop_gradient(target)) ** 2) / jnp.sum(weight)

    def avg_loss(params, key, x, mask, action):
        logits = cast(jax.Array, avg_net.apply(params, x, train=True, rngs={"dropout": key}))
        logp = jax.nn.log_softmax(jnp.where(mask > 0, logits, -1e9))
        return -jnp.mean(jnp.take_along_axis(logp, action[:, None], axis=-1))

    return q_loss, avg_loss


class _Gradients:
    """An actor-learner's gradients (design ``actor_learners``): the Q-network's on the
    transitions of its last episodes, the average network's on a minibatch of its own
    supervised memory (once it holds ``min_buffer_size_to_learn`` items)."""

    #: Transitions are padded (weight 0) to a multiple of this, so that few shapes compile.
    PAD = 64

    def __init__(self, config: ANFSPConfig, acting: _Acting, reservoir: ReservoirBuffer,
                 stream: int):
        self.config, self.reservoir, self.stream = config, reservoir, stream
        self.computed = 0  # messages so far: with the stream, the dropout masks' step
        q_loss, avg_loss = _losses(acting.q_net, acting.avg_net)

        def with_key(grad, which: int):
            """The gradient with the dropout key of message ``step`` drawn in the same
            jitted call (drawn eagerly, its four JAX operations cost 11% of a Ray
            actor-learner's time, py-spy)."""
            def call(params, step, *args):
                return grad(params, networks.dropout_keys(config.seed, step, 2)[which], *args)
            return jax.jit(call)

        self._q_grad = with_key(jax.grad(q_loss), 0)
        self._avg_grad = with_key(jax.grad(avg_loss), 1)

    def __call__(self, params: tuple, transitions: tuple, supervised: tuple) -> tuple:
        """(Q gradients or None, average gradients or None, actions) of one message."""
        q_params, target_params, avg_params = params
        cfg = self.config
        step = np.uint32(self.stream + self.computed)
        self.computed += 1
        q_grads = avg_grads = None
        actions = len(transitions[0]) if transitions else 0
        if actions:
            size = -(-actions // self.PAD) * self.PAD
            # padding: terminal (done = 1: no next state's max over no legal action)
            batch = [np.concatenate([f, np.full((size - actions, *f.shape[1:]),
                                                1 if k == _DONE else 0, f.dtype)])
                     for k, f in enumerate(transitions)]
            weight = (np.arange(size) < actions).astype(np.float32)
            q_grads = _to_numpy(self._q_grad(q_params, step, target_params, *batch, weight))
        if supervised:
            self.reservoir.add_batch(supervised)
        if len(self.reservoir) >= cfg.min_buffer_size_to_learn:
            avg_grads = _to_numpy(self._avg_grad(avg_params, step,
                                                 *self.reservoir.sample(cfg.batch_size)))
        return q_grads, avg_grads, actions


def _minibatches(memory, batch_size: int, count: int) -> tuple:
    """``count`` minibatches of ``batch_size`` items drawn from ``memory`` in one sample,
    one array of shape ``(count, batch_size, ...)`` per field."""
    return tuple(f.reshape(count, batch_size, *f.shape[1:])
                 for f in memory.sample(count * batch_size))


def _to_numpy(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


class _SharedNetworks:
    """The paper's shared networks for actor-learners (design ``actor_learners`` with
    actors): the Q, target and average networks' parameters and Algorithm 2's global action
    counter in one block of shared memory, a file in ``/dev/shm`` (or the temporary
    directory) mapped by the learner and by every actor-learner on this machine, local
    process or Ray actor, which attach to it by its path. Each applies its own SGD steps
    there after each message, lock-free as A3C's threads do (Mnih et al. 2016), and refits
    the target when the count passes a multiple of ``target_update_actions``; no learner
    applies updates or sends parameters in between (with it, the learner's share of the two
    cores kept 2 actor-learners at 1.4-1.8 times one: ``docs/mc_nfsp.md``; Ray actors on
    this machine sent gradients that way until 2026-11-26 and ran at 0.80-0.85 of local
    processes' rate). An actor on another machine finds no such file (or, in a container
    that happens to have one, not this block's random tag), so it sends its gradients to
    the learner, which applies them here: whether an actor can share is tested on the
    memory itself, not inferred from host names or node ids.

    The counter is one integer per writer (the learner, at index 0, which also holds the
    count of a resumed run, and each actor-learner), each written only by its writer, so
    that no lock is needed: the total is their sum. A writer that sees the total's
    multiples of ``target_update_actions`` pass the refits done so far refits the target
    and records them; two writers may both do so for the same multiple (a second copy of
    the Q-network), none misses one."""

    _TAG = 16  # bytes of the random tag at the start of the block

    def __init__(self, trees: tuple, actions: int, writers: int, every: int):
        self._templates = tuple(_to_numpy(t) for t in trees)  # their shapes and structure
        self._sizes = [sum(leaf.size for leaf in jax.tree_util.tree_leaves(t))
                       for t in self._templates]
        self._writers = writers
        self._tag = os.urandom(self._TAG)
        self._owner = True
        directory = "/dev/shm" if os.path.isdir("/dev/shm") else None  # memory, not disk
        fd, self.path = tempfile.mkstemp(prefix="smmcts-anfsp-", dir=directory)
        try:
            os.ftruncate(fd, self._bytes())
            self._map: mmap.mmap | None = mmap.mmap(fd, self._bytes())
        finally:
            os.close(fd)
        self._map[:self._TAG] = self._tag
        self._views: tuple | None = None
        self.views()
        self._counts[0] = actions
        self._refits[0] = actions // every
        self.write(trees)

    def _bytes(self) -> int:
        return self._TAG + 8 * (2 + self._writers) + 4 * sum(self._sizes)

    def __getstate__(self) -> dict:  # to an actor: the path, attached there (attach)
        state = {**self.__dict__, "_map": None, "_views": None, "_owner": False}
        for views in ("_refits", "_counts"):  # of the learner's mapping
            state.pop(views, None)
        return state

    def attach(self) -> bool:
        """Map the block in this process; False if it is not on this machine (the actor
        then sends its gradients to the learner)."""
        if self._map is not None:
            return True
        try:
            with open(self.path, "r+b") as f:
                if os.fstat(f.fileno()).st_size != self._bytes():
                    return False
                memory = mmap.mmap(f.fileno(), self._bytes())
        except OSError:  # no such file here: another machine (or container)
            return False
        if memory[:self._TAG] != self._tag:  # someone else's file of that name
            memory.close()
            return False
        self._map = memory
        return True

    def unlink(self) -> None:
        """Remove the block's name (the learner, once its actors have attached): the
        mappings stay valid, and nothing is left behind if the learner dies."""
        if self._owner:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            self._owner = False

    def views(self) -> tuple:
        """(Q, target, average) as pytrees of numpy arrays in the shared memory."""
        if self._views is None:
            if not self.attach() or self._map is None:
                raise RuntimeError(f"the shared networks {self.path} are not on this machine")
            memory = self._map
            counters = np.frombuffer(memory, np.int64, 2 + self._writers, self._TAG)
            self._refits, self._counts = counters[:1], counters[1:]
            start = self._TAG + counters.nbytes
            views = []
            for size, template in zip(self._sizes, self._templates):
                leaves, treedef = jax.tree_util.tree_flatten(template)
                flat = np.frombuffer(memory, np.float32, size, start)
                start += flat.nbytes
                offsets = np.cumsum([0] + [leaf.size for leaf in leaves])
                views.append(jax.tree_util.tree_unflatten(treedef, [
                    flat[a:b].reshape(leaf.shape)
                    for a, b, leaf in zip(offsets[:-1], offsets[1:], leaves)]))
            self._views = tuple(views)
        return self._views

    @property
    def refits(self) -> int:
        """Target refits so far (the target changed since an actor got it if this did)."""
        self.views()
        return int(self._refits[0])

    def read(self, target: bool = True) -> tuple:
        """Copies of (Q, target or None, average) and the action count."""
        q, t, avg = (jax.tree_util.tree_map(np.array, v) if target or k != 1 else None
                     for k, v in enumerate(self.views()))
        return (q, t, avg), int(self._counts.sum())

    def write(self, trees: tuple) -> None:
        for view, tree in zip(self.views(), trees):
            for v, leaf in zip(jax.tree_util.tree_leaves(view), jax.tree_util.tree_leaves(tree)):
                v[...] = leaf

    def apply(self, config: ANFSPConfig, q_grads, avg_grads, actions: int,
              writer: int = 0) -> None:
        """SGD steps with an actor-learner's gradients (``_sgd``'s, in place), its actions
        counted as ``writer``'s and, past a multiple of ``target_update_actions`` actions
        of all, the target's refit."""
        q, target, avg = self.views()
        for view, grads, rate in ((q, q_grads, config.rl_learning_rate),
                                  (avg, avg_grads, config.sl_learning_rate)):
            if grads is not None:
                for v, g in zip(jax.tree_util.tree_leaves(view),
                                jax.tree_util.tree_leaves(grads)):
                    v += np.float32(-rate) * g
        self._counts[writer] += actions
        owed = int(self._counts.sum()) // config.target_update_actions
        if owed > self._refits[0]:
            self._refits[0] = owed
            for t, v in zip(jax.tree_util.tree_leaves(target), jax.tree_util.tree_leaves(q)):
                t[...] = v


class _Worker:
    """An actor's work wherever it runs (an actor process, a Ray actor, or the learner's own
    process): play ``episodes_per_message`` episodes with the newest parameters it has and
    return the message for the learner, ``(actor, payload, episodes, CPU seconds)``; the
    payload is the experience (design ``learner``: transitions and SL samples stacked field
    by field) or its gradients (``actor_learners``: :class:`_Gradients`)."""

    def __init__(self, config: ANFSPConfig, actor: int, episodes: int,
                 acting: _Acting | None = None, reservoir: ReservoirBuffer | None = None,
                 shared: _SharedNetworks | None = None):
        self.config, self.actor, self.episodes = config, actor, episodes
        # actor_learners: the shared networks, updated here, if they are on this machine
        self.shared = shared if shared is not None and shared.attach() else None
        # distinct generator streams; ``episodes`` keeps a resumed actor's streams new
        self.acting = acting or _Acting(config, seed=[config.seed, 1 + actor, episodes])
        self.params: tuple | None = None
        self.gradients = None
        if config.design == "actor_learners":
            if reservoir is None:
                reservoir = ReservoirBuffer(
                    max(1, config.reservoir_capacity // max(1, config.num_actors)),
                    self.acting.rng)
            self.gradients = _Gradients(config, self.acting, reservoir,
                                        stream=(1 + actor) << 24 | episodes & 0xFFFFFF)

    def set_params(self, params: tuple) -> None:
        """(Q, average) parameters; with the ``actor_learners`` design (Q, target, average),
        the target None if it is the one this worker has (it changes rarely)."""
        if len(params) == 3 and params[1] is None:
            params = (params[0], cast(tuple, self.params)[1], params[2])
        self.params = params
        self.acting.set_params(params[0], params[-1])

    def work(self, params: tuple | None = None) -> tuple:
        """One message (after taking ``params`` if given)."""
        if params is not None:
            self.set_params(params)
        n = self.config.episodes_per_message
        cpu = time.process_time()
        if self.shared is not None:  # the shared networks as they are now
            self.set_params(self.shared.read()[0])
        transitions, supervised = self.acting.play(n, self.actor, self.episodes)
        self.episodes += n
        payload = ((transitions, supervised) if self.gradients is None
                   else self.gradients(cast(tuple, self.params), transitions, supervised))
        if self.shared is not None:  # applied here; the learner only counts
            q_grads, avg_grads, actions = payload
            self.shared.apply(self.config, q_grads, avg_grads, actions, writer=1 + self.actor)
            payload = (None, None, actions)
        return self.actor, payload, n, time.process_time() - cpu

    def serve(self, address, authkey: bytes) -> None:
        """A Ray actor's one call: connect to the learner at ``address`` and serve it
        (:func:`_serve`) until it says stop or goes."""
        with multiprocessing.connection.Client(address, authkey=authkey) as link:
            _tune_socket(link.fileno())
            _serve(self, link)


def _tune_socket(fd: int) -> None:
    """TCP options for a Ray actor's link (both ends): no Nagle delay (a long message is
    written as a header, then its body) and a send buffer that holds several messages:
    TCP's starts at 16 KB, so a 50 KB parameter message left in pieces, each waiting for
    the learner's writing thread (py-spy: 23% of a Ray actor-learner's samples in ``recv``
    of a message whose first bytes had come)."""
    with socket.socket(fileno=os.dup(fd)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)


def _serve(worker: _Worker, link) -> None:
    """An actor's loop, as a local process or a Ray actor: while told to run, send the
    learner one message after another down ``link`` (a duplex connection), each played with
    the newest parameters received. The learner's orders come the other way on the same
    link: ``("params", parameters)``, ``("run", bool)``, ``("stop", None)``.

    Every actor has a link of its own, written from its playing thread: through one bounded
    ``multiprocessing.Queue`` for all actors, each message went through a feeder thread that
    waited for the actors' shared write lock (py-spy: ``docs/mc_nfsp.md``); through a Ray
    call per message (or per four), Ray's scheduling and serialisation cost the actor about
    0.9 ms of CPU a call. A full link (the learner behind) makes the actor wait rather than
    pile up stale experience."""
    newest, running = None, False
    try:
        # ready (imports done): which actor this is, and whether it updates the shared
        # networks itself
        link.send((worker.actor, worker.shared is not None))
        while True:
            while link.poll(0 if running else 0.2):  # every order waiting; paused: wait
                order, value = link.recv()
                if order == "params":
                    newest = value
                elif order == "run":
                    running = value
                else:
                    return
            if running:
                link.send(worker.work(newest))
                newest = None
    except (EOFError, OSError):  # the learner has gone
        return


def _actor_process(config: ANFSPConfig, actor: int, episodes: int, link,
                   shared: _SharedNetworks | None = None) -> None:
    """An actor process (``episodes``: how many it played before, so that its exploration
    rate's decay continues there after a checkpoint)."""
    _serve(_Worker(config, actor, episodes, shared=shared), link)


#: Seconds the actors may take to start (spawn, imports, Ray) before ANFSP gives up.
_START_TIMEOUT = 300


class _Link:
    """The learner's end of an actor's link: messages are read from it by the learner,
    orders written to it by a thread of its own, so that the learner never waits for an
    actor busy playing (or blocked on its own full link) to read them; parameters not yet
    sent are replaced by newer ones (an actor only wants the newest)."""

    def __init__(self, connection):
        self.connection = connection
        self._params: tuple | None = None
        self._orders: collections.deque = collections.deque()
        self._wake = threading.Condition()
        self._thread = threading.Thread(target=self._write, daemon=True)
        self._thread.start()

    def order(self, order: str, value: Any = None) -> None:
        with self._wake:
            if order == "params":
                self._params = value
            else:
                self._orders.append((order, value))
            self._wake.notify()

    def _write(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._params is not None or bool(self._orders))
                params, self._params = self._params, None
                orders, self._orders = list(self._orders), collections.deque()
            try:
                if params is not None:
                    self.connection.send(("params", params))
                for order in orders:
                    self.connection.send(order)
            except OSError:  # the actor has gone
                return
            if ("stop", None) in orders:
                return

    def close(self) -> None:
        self._thread.join(timeout=10)
        self.connection.close()


class _Actors:
    """The actors, as local processes (``backend="processes"``; ``spawn``: JAX is not
    fork-safe) or Ray actors (``"ray"``: a local Ray, or the cluster at
    ``config.ray_address``), each linked to the learner by a duplex connection: a pipe, or
    a socket the Ray actor opens to the learner (authenticated with a random key), which
    its one Ray call then serves (:func:`_serve`). Ray places the actors; their messages do
    not go through Ray."""

    def __init__(self, config: ANFSPConfig, episodes: int, params: tuple,
                 shared: _SharedNetworks | None = None):
        self._backend = config.backend  # to name an actor that failed (_who)
        self._processes: list = []
        self._ray_actors: list = []
        self._links: list[_Link] = []
        self._ready: collections.deque = collections.deque()  # links with a message waiting
        connections = (self._start_ray(config, episodes, shared) if config.backend == "ray"
                       else self._start_processes(config, episodes, shared))
        self._links = [_Link(c) for c in connections]
        by_actor: dict = {}
        #: the actors that update the shared networks themselves (on this machine)
        self.sharing: set[int] = set()
        deadline = time.perf_counter() + _START_TIMEOUT
        try:
            for each in self._links:
                each.order("params", params)
            while len(by_actor) < len(self._links):  # each actor says it is ready
                if time.perf_counter() > deadline:
                    break
                waiting = [k for k in self._links if k not in by_actor.values()]
                for link in self._ready_links(waiting, 0.5):
                    # EOFError if the actor died, an OSError (ConnectionResetError) if its
                    # connection reset: a Ray actor's socket, a pipe on some systems
                    actor, sharing = link.connection.recv()
                    by_actor[actor] = link
                    if sharing:
                        self.sharing.add(actor)
        except (EOFError, OSError) as error:
            index = self._links.index(link)
            self.close()  # every actor stopped, the dead one's process joined
            raise RuntimeError(
                f"ANFSP's {self._who(index)} ended while starting "
                f"({error!r}): its error, if it printed one, is above; it may have run out "
                f"of memory or been killed. Start again, or run with num_actors=0 to play "
                f"in this process") from None
        if len(by_actor) < len(self._links):
            missing = [k for k, each in enumerate(self._links) if each not in by_actor.values()]
            self.close()
            raise RuntimeError(
                f"ANFSP's {', '.join(self._who(k) for k in missing)} did not "
                f"say {'it was' if len(missing) == 1 else 'they were'} ready within "
                f"{_START_TIMEOUT} s: the machine (or the Ray cluster) is likely too busy; "
                f"use fewer actors (num_actors) or a less loaded machine")
        self._links = [by_actor[k] for k in sorted(by_actor)]

    def _who(self, index: int) -> str:
        """The actor on the ``index``-th link, named before it said which actor it is:
        processes are linked in actor order (and, once joined, have an exit code), Ray
        actors in the order they connected."""
        if self._backend == "ray":
            return f"Ray actor on link {index} (links in the order the actors connected)"
        if index >= len(self._processes):
            return f"actor {index}"
        process = self._processes[index]
        code = process.exitcode
        ended = ("" if code is None else f", exit code {code}" if code >= 0
                 else f", killed by signal {-code}")
        return f"actor {index} (process {process.pid}{ended})"

    def _start_processes(self, config: ANFSPConfig, episodes: int,
                         shared: _SharedNetworks | None) -> list:
        ctx = mp.get_context("spawn")  # jax is not fork-safe
        connections: list = []
        for k in range(config.num_actors):
            mine, theirs = ctx.Pipe(duplex=True)
            process = ctx.Process(target=_actor_process, daemon=True,
                                  args=(config, k, episodes, theirs, shared))
            process.start()
            theirs.close()  # the learner sees EOF if the actor dies
            self._processes.append(process)
            connections.append(mine)
        return connections

    def _start_ray(self, config: ANFSPConfig, episodes: int,
                   shared: _SharedNetworks | None) -> list:
        import ray  # the ray extra (ANFSP checks it is installed before it gets here)

        if not ray.is_initialized():
            if config.ray_address is None:
                # A local Ray runs its workers at niceness +15 (RAY_worker_niceness) so that
                # its own processes stay responsive; here the workers are the work, and at
                # +15 they lose the cores to any other process (bench_nfsp.py measured the
                # Ray actors at 0.2 to 0.4 times local processes' episodes). Unless the user
                # says otherwise, they run at the learner's priority, as local processes do.
                os.environ.setdefault("RAY_worker_niceness", "0")
            ray.init(address=config.ray_address, include_dashboard=False, log_to_driver=False)
        # On a cluster each actor asks for a CPU (Ray places them) and connects to this
        # node's address; on a local Ray the actors share this machine's cores as local
        # processes do, however many, and connect through the loopback.
        host = "127.0.0.1" if config.ray_address is None else ray.util.get_node_ip_address()
        remote: Any = ray.remote(num_cpus=1 if config.ray_address else 0)(_Worker)
        authkey = os.urandom(32)
        connections: list = []
        with socket.create_server((host, 0)) as server:
            server.settimeout(0.5)
            self._ray_actors = [remote.remote(config, k, episodes, shared=shared)
                                for k in range(config.num_actors)]
            calls = [a.serve.remote(server.getsockname(), authkey) for a in self._ray_actors]
            deadline = time.perf_counter() + _START_TIMEOUT
            while len(connections) < config.num_actors:
                if time.perf_counter() > deadline:
                    self.close()
                    raise RuntimeError(f"ANFSP's Ray actors did not connect within "
                                       f"{_START_TIMEOUT} s")
                try:
                    sock, _ = server.accept()
                except TimeoutError:
                    ended, _ = ray.wait(calls, timeout=0)
                    if ended:  # an actor failed before connecting: raise its error
                        self.close()
                        ray.get(ended)
                    continue
                sock.settimeout(None)
                _tune_socket(sock.fileno())
                connection = multiprocessing.connection.Connection(sock.detach())
                try:  # what multiprocessing's Listener does with a client
                    multiprocessing.connection.deliver_challenge(connection, authkey)
                    multiprocessing.connection.answer_challenge(connection, authkey)
                except (multiprocessing.AuthenticationError, EOFError, OSError):
                    connection.close()  # not one of ours
                    continue
                connections.append(connection)
        return connections

    def _ready_links(self, links: list, timeout: float) -> list:
        ready = multiprocessing.connection.wait([k.connection for k in links], timeout)
        return [k for k in links if k.connection in ready]

    def resume(self) -> None:
        for link in self._links:
            link.order("run", True)

    def pause(self) -> None:
        for link in self._links:
            link.order("run", False)

    def get(self, timeout: float):
        """The next message (the actors' links in turn), or None after ``timeout`` seconds."""
        if not self._ready:
            self._ready.extend(self._ready_links(self._links, timeout))
        while self._ready:
            link = self._ready.popleft()
            try:
                return link.connection.recv()
            except (EOFError, OSError):  # an actor died: stop reading its link
                self._links.remove(link)
        return None

    def send(self, actors, params: tuple) -> None:
        """Parameters for these actors (they take the newest before their next message)."""
        for k in actors:
            self._links[k].order("params", params)

    def close(self) -> None:
        """Stop the actors (their unsent messages are dropped)."""
        links = list(self._links)
        for link in links:
            link.order("stop")
        deadline = time.perf_counter() + 10
        open_ = list(links)
        while open_ and time.perf_counter() < deadline:  # read on until each actor ends
            for link in self._ready_links(open_, 0.1):
                try:
                    link.connection.recv()
                except (EOFError, OSError):
                    open_.remove(link)
        for process in self._processes:
            if process.is_alive():
                process.terminate()
            process.join()
        if self._ray_actors:
            import ray

            for actor in self._ray_actors:
                ray.kill(actor)
        for link in links:
            link.close()
        self._links, self._ready, self._ray_actors = [], collections.deque(), []


class ANFSP:
    """The learner: networks, memories, and (with ``num_actors > 0``) the actors.

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
        if config.backend == "ray" and config.num_actors:
            import ray  # noqa: F401  (the ray extra: an ImportError now, not in train())
        self.q_opt, self.avg_opt = _optimisers(config)
        for name, tree in _initial_trees(config, self.game).items():
            setattr(self, name, tree)
        self.rng = self.acting.rng
        self.replay = ReplayBuffer(config.replay_capacity, self.rng)
        self.reservoir = ReservoirBuffer(config.reservoir_capacity, self.rng)
        self.episodes = 0
        self.steps = 0
        self.actions = 0  # transitions learnt from (the actor_learners design's target clock)
        self.train_seconds = 0.0
        self.cpu_seconds = 0.0  # of the learner and its actors, while training
        # Where the time goes with actors (not checkpointed): the actors' share of
        # cpu_seconds, and the learner's wall time spent waiting for their messages.
        self.actor_cpu_seconds = 0.0
        self.wait_seconds = 0.0
        self._pending = 0  # transitions received since the last gradient step
        self._target_sent: dict = {}  # actor_learners: actor -> the target it was last sent
        self._actors: _Actors | None = None
        self._shared: _SharedNetworks | None = None  # actor_learners with actors
        self._worker: _Worker | None = None  # actor_learners without actors: in this process
        self._compile()
        self.acting.set_params(self.q_params, self.avg_params)

    def _compile(self) -> None:
        q_loss, avg_loss = _losses(self.acting.q_net, self.acting.avg_net)
        seed, target_every = self.config.seed, self.config.target_update_every

        def applied(optimiser):
            def apply(params, opt_state, grads):
                updates, opt_state = optimiser.update(grads, opt_state, params)
                return optax.apply_updates(params, updates), opt_state
            return apply

        apply_q, apply_avg = applied(self.q_opt), applied(self.avg_opt)

        def step(learn_q: bool, learn_avg: bool):
            """One gradient step of the networks that learn, then the target's refit."""
            def body(carry, batches):
                (q, q_opt, target, avg, avg_opt), count = carry
                # Dropout masks (if any) from the seed and the step count: a stream each.
                q_key, avg_key = networks.dropout_keys(seed, count, 2)
                if learn_q:
                    weight = jnp.ones(batches[0][0].shape[0])
                    q, q_opt = apply_q(q, q_opt, jax.grad(q_loss)(q, q_key, target,
                                                                  *batches[0], weight))
                if learn_avg:
                    avg, avg_opt = apply_avg(avg, avg_opt,
                                             jax.grad(avg_loss)(avg, avg_key, *batches[1]))
                count = count + 1
                refit = count % target_every == 0
                target = jax.tree_util.tree_map(lambda a, b: jnp.where(refit, a, b), q, target)
                return ((q, q_opt, target, avg, avg_opt), count), None
            return body

        @functools.partial(jax.jit, static_argnums=(0, 1, 2))
        def learn_steps(learn_q: bool, learn_avg: bool, steps: int, trees, count, batches):
            """``steps`` gradient steps in one call (a scan over their minibatches): one
            call's dispatch instead of ``2 * steps``."""
            (trees, _), _ = jax.lax.scan(step(learn_q, learn_avg), (trees, count), batches,
                                         length=steps)
            return trees

        self._learn_steps = learn_steps

    # -- actors -------------------------------------------------------------------------

    def _params(self, target: bool = True) -> tuple:
        """The parameters an actor plays (and, for actor_learners, differentiates) with;
        without ``target``, the actor_learners' target network as None (unchanged)."""
        if self.config.design == "learner":
            return _to_numpy((self.q_params, self.avg_params))
        return (_to_numpy(self.q_params), _to_numpy(self.target_params) if target else None,
                _to_numpy(self.avg_params))

    def _params_for(self, actor: int) -> tuple:
        """The actor_learners' parameters for ``actor``, with the target network only if it
        changed since the actor last got it (every ``target_update_actions`` actions): a
        third less to send after every message. With actors, the shared networks."""
        if self._shared is not None:
            refits = self._shared.refits
            fresh = self._target_sent.get(actor) == refits
            self._target_sent[actor] = refits
            return self._shared.read(target=not fresh)[0]
        fresh = self._target_sent.get(actor) is self.target_params
        self._target_sent[actor] = self.target_params
        return self._params(target=not fresh)

    def _start_actors(self) -> None:
        self._target_sent = {}
        cfg = self.config
        if cfg.design == "actor_learners":
            self._shared = _SharedNetworks(self._params(), self.actions, 1 + cfg.num_actors,
                                           cfg.target_update_actions)
            for actor in range(cfg.num_actors):  # the target they start with
                self._target_sent[actor] = self._shared.refits
        try:
            self._actors = _Actors(cfg, self.episodes // cfg.num_actors, self._params(),
                                   self._shared)
        finally:
            if self._shared is not None:  # attached (or not on this machine) by now
                self._shared.unlink()

    def close(self) -> None:
        """Stop the actors (their unsent episodes are dropped)."""
        if self._actors is not None:
            self._actors.close()
            self._actors = None
            self._shared = None

    def __enter__(self) -> ANFSP:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- learning -----------------------------------------------------------------------

    def _take(self, message: tuple) -> None:
        """A worker's message: its experience stored and learnt from, or its gradients
        applied (and the new parameters sent back to it)."""
        actor, payload, episodes, cpu = message
        self.actor_cpu_seconds += cpu
        if self.config.design == "learner":
            transitions, supervised = payload
            self._receive(transitions, supervised, episodes, cpu)
            return
        self.cpu_seconds += cpu
        self.episodes += episodes
        if self._actors is not None and actor in self._actors.sharing:
            self.steps += 1  # the actor-learner has applied them itself
            return
        if self._shared is not None:  # an actor on another machine: applied here for it
            self._shared.apply(self.config, *payload)
            self.steps += 1
        else:
            self.apply_gradients(*payload)
        if self._actors is not None:
            self._actors.send([actor], self._params_for(actor))
        else:
            cast(_Worker, self._worker).set_params(self._params_for(actor))

    def apply_gradients(self, q_grads, avg_grads, actions: int) -> None:
        """One asynchronous update of the shared networks (design ``actor_learners``): SGD
        steps with an actor-learner's gradients, the target refitted every
        ``target_update_actions`` actions (counted over all actor-learners)."""
        cfg = self.config
        if q_grads is not None:
            self.q_params = _sgd(self.q_params, q_grads, cfg.rl_learning_rate)
        if avg_grads is not None:
            self.avg_params = _sgd(self.avg_params, avg_grads, cfg.sl_learning_rate)
        every = self.config.target_update_actions
        if (self.actions + actions) // every > self.actions // every:
            self.target_params = self.q_params
        self.actions += actions
        self.steps += 1

    def _receive(self, transitions: tuple, supervised: tuple, episodes: int,
                 actor_cpu_seconds: float = 0.0) -> None:
        """Store experience (one array per field) and take the gradient steps it is owed."""
        self.cpu_seconds += actor_cpu_seconds
        if transitions:
            self.replay.add_batch(transitions)
            self._pending += len(transitions[0])
            self.actions += len(transitions[0])
        if supervised:
            self.reservoir.add_batch(supervised)
        self.episodes += episodes
        cfg = self.config
        stepped = False
        while self._pending >= cfg.learn_every * cfg.steps_per_call:
            self._pending -= cfg.learn_every * cfg.steps_per_call
            stepped |= self.learn(cfg.steps_per_call)
        if stepped and self._actors is None:
            self.acting.set_params(self.q_params, self.avg_params)

    def learn(self, steps: int = 1) -> bool:
        """``steps`` gradient steps of each network whose memory holds enough data (design
        ``learner``), in one call; True if a network changed. The target network is refitted
        after every ``target_update_every``-th step, the actors get the parameters at the
        end of a call that passed a multiple of ``sync_every`` steps."""
        cfg = self.config
        learn_q = len(self.replay) >= cfg.min_buffer_size_to_learn
        learn_avg = len(self.reservoir) >= cfg.min_buffer_size_to_learn
        before, self.steps = self.steps, self.steps + steps
        if not (learn_q or learn_avg):
            if self.steps // cfg.target_update_every > before // cfg.target_update_every:
                self.target_params = self.q_params
            return False
        batches = tuple(_minibatches(memory, cfg.batch_size, steps) if learns else None
                        for memory, learns in ((self.replay, learn_q),
                                               (self.reservoir, learn_avg)))
        trees = (self.q_params, self.q_opt_state, self.target_params, self.avg_params,
                 self.avg_opt_state)
        (self.q_params, self.q_opt_state, self.target_params, self.avg_params,
         self.avg_opt_state) = self._learn_steps(learn_q, learn_avg, steps, trees,
                                                 np.uint32(before), batches)
        if self._actors is not None and self.steps // cfg.sync_every > before // cfg.sync_every:
            self._actors.send(range(cfg.num_actors), self._params())
        return True

    def train(self, seconds: float) -> None:
        """Self-play and learn for ``seconds`` of wall time (added to ``train_seconds``)."""
        if self.config.num_actors and self._actors is None:
            self._start_actors()  # not training time: a fixed cost, not the algorithm's
        start, cpu = time.perf_counter(), time.process_time()
        stop = start + seconds
        if self._actors is not None:
            self._actors.resume()
            while (now := time.perf_counter()) < stop:
                message = self._actors.get(min(0.5, max(0.01, stop - now)))
                self.wait_seconds += time.perf_counter() - now
                if message is not None:
                    self._take(message)
            self._actors.pause()
            if self._shared is not None:  # the networks as the actor-learners left them
                (self.q_params, self.target_params, self.avg_params), self.actions = (
                    self._shared.read())
        else:
            while time.perf_counter() < stop:
                self.self_play(self.config.episodes_per_message)
        self.train_seconds += time.perf_counter() - start
        self.cpu_seconds += time.process_time() - cpu

    def self_play(self, episodes: int) -> None:
        """``episodes`` episodes in this process, learning as they come (seeded NFSP; with
        the ``actor_learners`` design, one actor-learner: whole messages, rounded up).

        With the ``learner`` design the experience is stored in batches, each just before
        the gradient step it completes, so the memories hold at every step what they would
        hold had each episode been stored as it ended (storing a batch costs about what
        storing one episode does).
        """
        if self.config.design == "actor_learners":
            if self._worker is None:
                self._worker = _Worker(self.config, 0, self.episodes, acting=self.acting,
                                       reservoir=self.reservoir)
                self._worker.set_params(self._params())
                self._target_sent[0] = self.target_params
            for _ in range(math.ceil(episodes / self.config.episodes_per_message)):
                self._take(self._worker.work())
            return
        transitions, supervised, played = [], [], 0
        chunk = self.config.learn_every * self.config.steps_per_call
        for _ in range(episodes):
            rl, sl = self.acting.play_episode(self.acting.epsilon(0, self.episodes + played))
            transitions += rl
            supervised += sl
            played += 1
            if self._pending + len(transitions) >= chunk:
                self._receive(_stack(transitions, _TRANSITION_TYPES),
                              _stack(supervised, _SAMPLE_TYPES), played)
                transitions, supervised, played = [], [], 0
        if played:
            self._receive(_stack(transitions, _TRANSITION_TYPES),
                          _stack(supervised, _SAMPLE_TYPES), played)

    def average_policy(self) -> NetworkPolicy:
        return NetworkPolicy(self.game, self.acting.avg_net.apply, self.avg_params)

    # -- checkpoints --------------------------------------------------------------------

    _COUNTERS = {"episodes": int, "steps": int, "actions": int, "train_seconds": float,
                 "cpu_seconds": float, "_pending": int}

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
    """Plain SGD (no state), the paper's (Sec. 4.2.1); :func:`_sgd` is the same step."""
    return optax.sgd(config.rl_learning_rate), optax.sgd(config.sl_learning_rate)


def _sgd(params, grads, learning_rate: float):
    """``optax.sgd(learning_rate)``'s step (it keeps no state) in numpy, new arrays (the
    old ones may still be on their way to an actor). The actor_learners' learner applies
    each message's gradients so: a jitted call's dispatch and the wait for its result cost
    it about 0.8 ms of CPU a message, most of its share of a core (cProfile)."""
    rate = np.float32(-learning_rate)
    return jax.tree_util.tree_map(lambda p, g: np.asarray(p) + rate * np.asarray(g),
                                  params, grads)


def _initial_trees(config: ANFSPConfig, game: pyspiel.Game) -> dict:
    """The networks' initial parameters (target = Q) and their optimisers' states."""
    x = jnp.zeros((1, tensor_size(game)))
    kq, ka = jax.random.split(jax.random.PRNGKey(config.seed))
    q_params = networks.make(config, game, value_head=False).init(kq, x)
    avg_params = networks.make(config, game, value_head=False).init(ka, x)
    q_opt, avg_opt = _optimisers(config)
    return dict(zip(_TREES, (q_params, q_params, avg_params, q_opt.init(q_params),
                             avg_opt.init(avg_params))))
