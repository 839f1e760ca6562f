"""The two networks of MC-NFSP: a policy-value net for the search, a policy net for the average.

Both see the mover's observation tensor (own / opponent planes), so one network serves
both players, as in the paper ("players share networks"). Multilayer perceptrons: on the
small boards a convolution buys nothing measurable.
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

#: Logit given to illegal actions before the softmax.
ILLEGAL_LOGIT = -1e9


class PolicyValueNet(nn.Module):
    """Best-response network: action logits and a value in [-1, 1] for the player to move."""

    hidden: Sequence[int]
    num_actions: int

    @nn.compact
    def __call__(self, x):
        for width in self.hidden:
            x = nn.relu(nn.Dense(width)(x))
        return nn.Dense(self.num_actions)(x), jnp.tanh(nn.Dense(1)(x))[..., 0]


class PolicyNet(nn.Module):
    """Average-policy network: action logits."""

    hidden: Sequence[int]
    num_actions: int

    @nn.compact
    def __call__(self, x):
        for width in self.hidden:
            x = nn.relu(nn.Dense(width)(x))
        return nn.Dense(self.num_actions)(x)


def masked_probabilities(logits, legal_mask):
    """Softmax over the legal actions only (``legal_mask`` is 0/1)."""
    return jax.nn.softmax(jnp.where(legal_mask > 0, logits, ILLEGAL_LOGIT), axis=-1)


def legal_mask(legal_actions: Sequence[int], num_actions: int) -> np.ndarray:
    mask = np.zeros(num_actions, np.float32)
    mask[list(legal_actions)] = 1.0
    return mask


class NumpyMLP:
    """A forward pass of :class:`PolicyNet` / :class:`PolicyValueNet` in numpy.

    Acting asks the networks about one state at a time; for these small MLPs a jitted JAX
    call costs about 10 times the arithmetic (dispatch, device arrays), so actors and
    searches use this copy of the parameters and JAX does the learning. ``heads`` is the
    number of output layers after the hidden ones: 1 (logits) or 2 (logits, value).
    """

    def __init__(self, params, heads: int = 1):
        layers = params["params"]
        dense = [layers[f"Dense_{i}"] for i in range(len(layers))]
        weights = [(np.asarray(d["kernel"], np.float32), np.asarray(d["bias"], np.float32))
                   for d in dense]
        self.hidden, self.heads = weights[:-heads], weights[-heads:]

    def _features(self, x: np.ndarray) -> np.ndarray:
        for kernel, bias in self.hidden:
            x = np.maximum(x @ kernel + bias, 0.0)
        return x

    def logits(self, x: np.ndarray) -> np.ndarray:
        kernel, bias = self.heads[0]
        return self._features(x) @ kernel + bias

    def logits_and_value(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = self._features(x)
        (pk, pb), (vk, vb) = self.heads
        return h @ pk + pb, np.tanh(h @ vk + vb)[..., 0]


def legal_probabilities(logits: np.ndarray, legal) -> np.ndarray:
    """:func:`masked_probabilities` of one state in numpy: the softmax of ``logits`` over
    the ``legal`` actions, in their order (float64)."""
    z = logits[legal].astype(np.float64)
    z = np.exp(z - z.max())
    return z / z.sum()
