"""ANFSP's learning: the networks' losses, an actor-learner's gradients
(:class:`Gradients`), minibatches, the SGD step and the initial parameters."""

from __future__ import annotations

from typing import cast

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pyspiel

from smmcts_spiel.nfsp import networks
from smmcts_spiel.nfsp.anfsp.acting import DONE, Acting
from smmcts_spiel.nfsp.anfsp.config import ANFSPConfig
from smmcts_spiel.nfsp.buffers import ReservoirBuffer
from smmcts_spiel.nfsp.policy import tensor_size


def losses(q_net, avg_net) -> tuple:
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


class Gradients:
    """An actor-learner's gradients (design ``actor_learners``): the Q-network's on the
    transitions of its last episodes, the average network's on a minibatch of its own
    supervised memory (once it holds ``min_buffer_size_to_learn`` items)."""

    #: Transitions are padded (weight 0) to a multiple of this, so that few shapes compile.
    PAD = 64

    def __init__(self, config: ANFSPConfig, acting: Acting, reservoir: ReservoirBuffer,
                 stream: int):
        self.config, self.reservoir, self.stream = config, reservoir, stream
        self.computed = 0  # messages so far: with the stream, the dropout masks' step
        q_loss, avg_loss = losses(acting.q_net, acting.avg_net)

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
                                                1 if k == DONE else 0, f.dtype)])
                     for k, f in enumerate(transitions)]
            weight = (np.arange(size) < actions).astype(np.float32)
            q_grads = to_numpy(self._q_grad(q_params, step, target_params, *batch, weight))
        if supervised:
            self.reservoir.add_batch(supervised)
        if len(self.reservoir) >= cfg.min_buffer_size_to_learn:
            avg_grads = to_numpy(self._avg_grad(avg_params, step,
                                                 *self.reservoir.sample(cfg.batch_size)))
        return q_grads, avg_grads, actions


def minibatches(memory, batch_size: int, count: int) -> tuple:
    """``count`` minibatches of ``batch_size`` items drawn from ``memory`` in one sample,
    one array of shape ``(count, batch_size, ...)`` per field."""
    return tuple(f.reshape(count, batch_size, *f.shape[1:])
                 for f in memory.sample(count * batch_size))


def to_numpy(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


#: The learner's pytrees: parameters and optimiser states.
TREES = ("q_params", "target_params", "avg_params", "q_opt_state", "avg_opt_state")


def optimisers(config: ANFSPConfig) -> tuple:
    """Plain SGD (no state), the paper's (Sec. 4.2.1); :func:`sgd` is the same step."""
    return optax.sgd(config.rl_learning_rate), optax.sgd(config.sl_learning_rate)


def sgd(params, grads, learning_rate: float):
    """``optax.sgd(learning_rate)``'s step (it keeps no state) in numpy, new arrays (the
    old ones may still be on their way to an actor). The actor_learners' learner applies
    each message's gradients so: a jitted call's dispatch and the wait for its result cost
    it about 0.8 ms of CPU a message, most of its share of a core (cProfile)."""
    rate = np.float32(-learning_rate)
    return jax.tree_util.tree_map(lambda p, g: np.asarray(p) + rate * np.asarray(g),
                                  params, grads)


def initial_trees(config: ANFSPConfig, game: pyspiel.Game) -> dict:
    """The networks' initial parameters (target = Q) and their optimisers' states."""
    x = jnp.zeros((1, tensor_size(game)))
    kq, ka = jax.random.split(jax.random.PRNGKey(config.seed))
    q_params = networks.make(config, game, value_head=False).init(kq, x)
    avg_params = networks.make(config, game, value_head=False).init(ka, x)
    q_opt, avg_opt = optimisers(config)
    return dict(zip(TREES, (q_params, q_params, avg_params, q_opt.init(q_params),
                             avg_opt.init(avg_params))))
