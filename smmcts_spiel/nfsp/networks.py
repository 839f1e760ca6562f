"""The two networks of MC-NFSP (and NFSP): a policy-value net for the best response (a
Q-net in NFSP), a policy net for the average; each a multilayer perceptron (``mlp``) or
the paper's convolutional network (``conv``).

Both see the mover's observation tensor (own / opponent planes), so one network serves
both players, as in the paper ("players share networks").

``conv`` is Zhang et al. (2019) Sec. 3.1 and 3.3.1: "two convolutional layers and a flatten
layer. Then, the resultant 120 dimensional vector is passed through many fully connected
layers", relu in the convolutions, "dropout used in fully connection layers". Their Figure
2, which had the shapes, is lost from our copy of the text, so: both convolutions are
``valid`` with a ``rows/2 x cols/2`` kernel, which takes any even board to 2 x 2 (4 x 4:
kernel 2, 4 -> 3 -> 2; the paper's 6 x 6: kernel 3, 6 -> 4 -> 2), the first with 32
features (ours), the second with 30 so that the flatten is the paper's 120 wide; the fully
connected layers are ``hidden``. Dropout (rate ``dropout``, after every fully connected
hidden layer, either kind of network) is active only when ``train=True``, which the
gradient steps pass with a ``"dropout"`` PRNG key; acting and evaluation are deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pyspiel

from smmcts_spiel import checks

#: Logit given to illegal actions before the softmax.
ILLEGAL_LOGIT = -1e9
#: The kinds of network (``Config.network``, ``ANFSPConfig.network``).
NETWORKS = ("mlp", "conv")
#: Features of the two convolutions of ``conv`` (the second: 30 x 2 x 2 = the paper's 120).
CONV_FEATURES = (32, 30)


def check_network(network: str, dropout: float) -> None:
    """ValueError unless ``network`` is a known kind and ``dropout`` a rate in [0, 1)."""
    if network not in NETWORKS:
        raise ValueError(f"network must be one of {', '.join(NETWORKS)}, got {network!r}")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {checks.shown(dropout)!r}")


def board_shape(game: pyspiel.Game, network: str) -> tuple[int, int, int] | None:
    """``(planes, rows, cols)`` of the network input for ``conv`` (None for ``mlp``);
    ValueError if ``game``'s input is not a board of even sides."""
    if network == "mlp":
        return None
    game_type = game.get_type()
    shape = (game.information_state_tensor_shape()
             if game_type.provides_information_state_tensor
             else game.observation_tensor_shape())
    if len(shape) != 3 or shape[1] % 2 or shape[2] % 2 or min(shape[1:]) < 4:
        raise ValueError(f"network='conv' needs a board as network input (planes x rows x "
                         f"columns, even sides of at least 4); {game_type.short_name}'s input "
                         f"has shape {list(shape)}: use network='mlp'")
    return int(shape[0]), int(shape[1]), int(shape[2])


def _torso(x, hidden: Sequence[int], board, dropout: float, train: bool):
    """The layers before the heads (modules created here belong to the calling module, so
    an MLP's parameters stay ``Dense_0``, ``Dense_1``, ...)."""
    if board is not None:
        planes, rows, cols = board
        x = jnp.moveaxis(x.reshape(*x.shape[:-1], planes, rows, cols), -3, -1)
        for features in CONV_FEATURES:
            x = nn.relu(nn.Conv(features, (rows // 2, cols // 2), padding="VALID")(x))
        x = x.reshape(*x.shape[:-3], -1)
    for width in hidden:
        x = nn.relu(nn.Dense(width)(x))
        if dropout:
            x = nn.Dropout(dropout, deterministic=not train)(x)
    return x


class PolicyValueNet(nn.Module):
    """Best-response network: action logits and a value in [-1, 1] for the player to move."""

    hidden: Sequence[int]
    num_actions: int
    board: tuple[int, int, int] | None = None  # conv's input (planes, rows, cols); None: mlp
    dropout: float = 0.0

    @nn.compact
    def __call__(self, x, train: bool = False):
        x = _torso(x, self.hidden, self.board, self.dropout, train)
        return nn.Dense(self.num_actions)(x), jnp.tanh(nn.Dense(1)(x))[..., 0]


class PolicyNet(nn.Module):
    """Average-policy network (and NFSP's Q-network): one output per action."""

    hidden: Sequence[int]
    num_actions: int
    board: tuple[int, int, int] | None = None
    dropout: float = 0.0

    @nn.compact
    def __call__(self, x, train: bool = False):
        x = _torso(x, self.hidden, self.board, self.dropout, train)
        return nn.Dense(self.num_actions)(x)  # after the torso: named Dense_<last>


def make(config, game: pyspiel.Game, value_head: bool) -> PolicyValueNet | PolicyNet:
    """The network ``config`` (``network``, ``hidden``, ``dropout``) asks for in ``game``."""
    kind = PolicyValueNet if value_head else PolicyNet
    return kind(tuple(config.hidden), game.num_distinct_actions(),
                board_shape(game, config.network), config.dropout)


def describe(config) -> str:
    """``config``'s network in words, for messages."""
    return f"{config.network} (hidden {tuple(config.hidden)}, dropout {config.dropout})"


def masked_probabilities(logits, legal_mask):
    """Softmax over the legal actions only (``legal_mask`` is 0/1)."""
    return jax.nn.softmax(jnp.where(legal_mask > 0, logits, ILLEGAL_LOGIT), axis=-1)


def legal_mask(legal_actions: Sequence[int], num_actions: int) -> np.ndarray:
    mask = np.zeros(num_actions, np.float32)
    mask[list(legal_actions)] = 1.0
    return mask


class NumpyNet:
    """A forward pass of :class:`PolicyNet` / :class:`PolicyValueNet` in numpy, either kind
    (dropout off, as in evaluation).

    Acting asks the networks about one state at a time; for these small networks a jitted
    JAX call costs about 10 times the arithmetic (dispatch, device arrays), so actors and
    searches use this copy of the parameters and JAX does the learning. ``heads`` is the
    number of output layers after the hidden ones: 1 (logits) or 2 (logits, value);
    ``board`` the conv network's input shape (None: an MLP).
    """

    def __init__(self, params, heads: int = 1, board: tuple[int, int, int] | None = None):
        layers = params["params"]

        def weights(name):
            return [(np.asarray(layers[f"{name}_{i}"]["kernel"], np.float32),
                     np.asarray(layers[f"{name}_{i}"]["bias"], np.float32))
                    for i in range(sum(key.startswith(name + "_") for key in layers))]

        convs = weights("Conv")
        dense = weights("Dense")
        if bool(convs) != (board is not None):
            raise ValueError(f"board {board} given for a network with {len(convs)} "
                             f"convolutions")
        # A valid convolution as one matrix product: the input entries under each output
        # cell's window (indices computed once), times the kernel as a matrix.
        self.convs = []
        if board is not None:
            _, rows, cols = board
            for k, (kernel, bias) in enumerate(convs):
                kernel_rows, kernel_cols, features, out = kernel.shape
                windows = _window_indices(rows, cols, features, kernel_rows, kernel_cols,
                                          channels_first=k == 0)
                self.convs.append((windows, kernel.reshape(-1, out), bias))
                rows, cols = rows - kernel_rows + 1, cols - kernel_cols + 1
        self.hidden, self.heads = dense[:-heads], dense[-heads:]

    def _features(self, x: np.ndarray) -> np.ndarray:
        for windows, kernel, bias in self.convs:
            x = np.maximum(x[..., windows] @ kernel + bias, 0.0)
            x = x.reshape(*x.shape[:-2], -1)  # (rows, cols, features), as flax flattens
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


def _window_indices(rows: int, cols: int, features: int, kernel_rows: int, kernel_cols: int,
                    channels_first: bool) -> np.ndarray:
    """Index of the input entry under each (output cell, kernel row, kernel column,
    feature) of a valid convolution over a flat ``rows x cols x features`` input (or
    ``features x rows x cols`` if ``channels_first``: the observation tensor's planes)."""
    r, c, i, j, f = np.ix_(*(np.arange(n) for n in (
        rows - kernel_rows + 1, cols - kernel_cols + 1, kernel_rows, kernel_cols, features)))
    h, w = r + i, c + j
    flat = f * rows * cols + h * cols + w if channels_first else (h * cols + w) * features + f
    return flat.reshape((rows - kernel_rows + 1) * (cols - kernel_cols + 1), -1)


def legal_probabilities(logits: np.ndarray, legal) -> np.ndarray:
    """:func:`masked_probabilities` of one state in numpy: the softmax of ``logits`` over
    the ``legal`` actions, in their order (float64)."""
    z = logits[legal].astype(np.float64)
    z = np.exp(z - z.max())
    return z / z.sum()


def dropout_keys(seed: int, step, count: int) -> jax.Array:
    """``count`` PRNG keys for the dropout of gradient step ``step`` of a run seeded with
    ``seed``: a stream of its own (not the initialisation's), a function of (seed, step)
    so that a resumed run draws the same masks."""
    return jax.random.split(jax.random.fold_in(jax.random.fold_in(
        jax.random.PRNGKey(seed), _DROPOUT_STREAM), step), count)


#: Folded into the seed's key for the dropout stream ("drop" in ASCII).
_DROPOUT_STREAM = 0x64726F70
