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
