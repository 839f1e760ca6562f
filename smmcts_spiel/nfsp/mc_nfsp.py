"""MC-NFSP self-play: an MCTS best response, a supervised average policy, mixed by ``eta``.

Algorithm 1 of Zhang et al. (2019). At the start of every episode each player picks its
mode: with probability ``eta`` it plays best responses (every move a PUCT search against
the opponent's average policy: :func:`smmcts_spiel.nfsp.mcts.search` over states in a
game with perfect information, :func:`~smmcts_spiel.nfsp.mcts.search_information_set` over
the player's information sets and worlds drawn from its belief otherwise), else its
average policy. The networks see the mover's information-state tensor (observation tensor
in a game with perfect information); returns are scaled to the value head's [-1, 1].
Best-response moves store ``(s, pi)`` (``pi`` the search's visit frequencies) in the
replay memory, completed with the episode's outcome ``z`` for the mover, and ``(s, a)``
in the reservoir. Every ``learn_every`` episodes the best-response
network is fitted to ``(pi, z)`` (cross-entropy + squared error) and the average network
to the reservoir's actions (cross-entropy). Both players share both networks. Acting and
searching use numpy copies of the networks (:class:`~smmcts_spiel.nfsp.networks.NumpyNet`,
refreshed after every training step; in a game with information states the answers are
kept per information state until then), JAX does the learning.

:class:`MCNFSP` is resumable: :meth:`MCNFSP.save` writes the networks, optimiser states,
memories, generator and counters (arrays and JSON, :mod:`~smmcts_spiel.nfsp.checkpoints`:
nothing in it runs code when loaded); :meth:`MCNFSP.load` checks it and continues exactly
there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.nfsp import checkpoints, mcts, networks
from smmcts_spiel.nfsp.buffers import ReplayBuffer, ReservoirBuffer, check_memory
from smmcts_spiel.nfsp.networks import NumpyNet, legal_mask, legal_probabilities
from smmcts_spiel.nfsp.policy import NetworkPolicy, tensor_reader, tensor_size
from smmcts_spiel.search.selectors import sample_index


@dataclass(frozen=True)
class Config:
    """MC-NFSP's parameters (defaults sized for 4 x 4 Othello on a laptop core)."""

    game: str = "smmcts_othello"
    hidden: tuple[int, ...] = (128, 128)  # widths of the fully connected hidden layers
    network: str = "mlp"  # or "conv", the paper's (smmcts_spiel.nfsp.networks)
    dropout: float = 0.0  # after every fully connected hidden layer, in training only
    eta: float = 0.1  # probability of playing the best response in an episode
    num_simulations: int = 32
    c_puct: float = 1.5
    replay_capacity: int = 20_000
    reservoir_capacity: int = 200_000
    batch_size: int = 128
    learn_every: int = 1  # episodes between training steps
    br_learning_rate: float = 1e-3
    avg_learning_rate: float = 1e-3
    seed: int = 0

    def __post_init__(self):
        if not 0.0 < self.eta <= 1.0:
            raise ValueError(f"eta must be in (0, 1], got {checks.shown(self.eta)!r}")
        networks.check_network(self.network, self.dropout)
        checks.check_count(self.num_simulations, "num_simulations", 1)
        checks.check_count(self.batch_size, "batch_size", 1)
        checks.check_count(self.learn_every, "learn_every", 1)
        checks.check_count(self.replay_capacity, "replay_capacity", 1)
        checks.check_count(self.reservoir_capacity, "reservoir_capacity", 1)
        if not self.c_puct > 0:
            raise ValueError(f"c_puct must be positive, got {checks.shown(self.c_puct)!r}")


class MCNFSP:
    """One MC-NFSP run: networks, memories, and the self-play loop."""

    # The networks' parameters and optimiser states (pytrees; TREES), set by __init__/load.
    br_params: Any
    avg_params: Any
    br_opt_state: Any
    avg_opt_state: Any

    def __init__(self, config: Config):
        self.config = config
        self.game = pyspiel.load_game(config.game)
        game_type = self.game.get_type()
        self.perfect_information = (
            game_type.information == pyspiel.GameType.Information.PERFECT_INFORMATION)
        checks.check_game(self.game, "MC-NFSP", sequential_only=True,
                          perfect_information=False,
                          information_states=not self.perfect_information)
        if self.perfect_information and (
                game_type.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC):
            raise ValueError(f"MC-NFSP searches states of a game with perfect information "
                             f"only without chance; {game_type.short_name!r} has chance nodes")
        if not self.perfect_information and not game_type.provides_information_state_tensor:
            raise ValueError(f"MC-NFSP needs information-state tensors in a game with "
                             f"imperfect information; {game_type.short_name!r} has none")
        self.scale = mcts.utility_scale(self.game)
        self._tensor = tensor_reader(self.game)
        self.num_actions = self.game.num_distinct_actions()
        self.rng = np.random.default_rng(config.seed)
        self.board = networks.board_shape(self.game, config.network)
        check_memory(self.memory_items(), {"replay": config.replay_capacity,
                                            "reservoir": config.reservoir_capacity},
                     config.batch_size, "MC-NFSP")
        self.br_net, self.avg_net, self.br_opt, self.avg_opt = _model(config, self.game)
        for name, tree in self.initial_trees(config, self.game).items():
            setattr(self, name, tree)
        self.replay = ReplayBuffer(config.replay_capacity, self.rng)
        self.reservoir = ReservoirBuffer(config.reservoir_capacity, self.rng)
        self.episodes = 0
        self.train_seconds = 0.0
        self.cpu_seconds = 0.0
        self._compile()
        self._refresh()

    # -- networks -----------------------------------------------------------------------

    def _compile(self) -> None:
        br_net, avg_net, seed = self.br_net, self.avg_net, self.config.seed

        def br_loss(params, key, x, mask, pi, z):
            logits, value = cast(tuple[jax.Array, jax.Array], br_net.apply(
                params, x, train=True, rngs={"dropout": key}))
            logp = jax.nn.log_softmax(jnp.where(mask > 0, logits, -1e9))
            return jnp.mean((value - z) ** 2) - jnp.mean(jnp.sum(pi * logp, axis=-1))

        def avg_loss(params, key, x, mask, action):
            logits = cast(jax.Array, avg_net.apply(params, x, train=True,
                                                   rngs={"dropout": key}))
            logp = jax.nn.log_softmax(jnp.where(mask > 0, logits, -1e9))
            return -jnp.mean(jnp.take_along_axis(logp, action[:, None], axis=-1))

        def step(opt, loss, stream):
            @jax.jit
            def update(params, opt_state, step, *batch):
                key = networks.dropout_keys(seed, step, 2)[stream]
                value, grads = jax.value_and_grad(loss)(params, key, *batch)
                updates, opt_state = opt.update(grads, opt_state, params)
                return optax.apply_updates(params, updates), opt_state, value
            return update

        self._br_update = step(self.br_opt, br_loss, 0)
        self._avg_update = step(self.avg_opt, avg_loss, 1)

    def _refresh(self) -> None:
        """Numpy copies of the current parameters for acting; forget the old answers."""
        self._br = NumpyNet(self.br_params, heads=2, board=self.board)
        self._avg = NumpyNet(self.avg_params, board=self.board)
        self._answers: dict = {}

    def _key(self, state: pyspiel.State, net: str):
        """Where the answer of ``net`` at ``state`` is kept (None: not kept)."""
        if self.perfect_information:
            return None
        player = state.current_player()
        return net, player, state.information_state_string(player)

    def _inputs(self, state: pyspiel.State):
        player = state.current_player()
        return (self._tensor(state, player)[None],
                legal_mask(state.legal_actions(), self.num_actions)[None])

    def _over_all_actions(self, logits: np.ndarray, state: pyspiel.State) -> np.ndarray:
        legal = state.legal_actions()
        probs = np.zeros(self.num_actions)
        probs[legal] = legal_probabilities(logits, legal)
        return probs

    def best_response(self, state: pyspiel.State) -> tuple[np.ndarray, float]:
        key = self._key(state, "br")
        answer = self._answers.get(key) if key else None
        if answer is None:
            logits, value = self._br.logits_and_value(self._tensor(state, state.current_player()))
            answer = self._over_all_actions(logits, state), float(value)
            if key:
                self._answers[key] = answer
        return answer

    def average(self, state: pyspiel.State) -> np.ndarray:
        key = self._key(state, "avg")
        answer = self._answers.get(key) if key else None
        if answer is None:
            answer = self._over_all_actions(
                self._avg.logits(self._tensor(state, state.current_player())), state)
            if key:
                self._answers[key] = answer
        return answer

    def average_policy(self) -> NetworkPolicy:
        """The average strategy (the output of fictitious play) as an OpenSpiel policy."""
        return NetworkPolicy(self.game, self.avg_net.apply, self.avg_params)

    def search(self, state: pyspiel.State) -> np.ndarray:
        """The best-response search's visit frequencies at ``state`` (for its mover)."""
        cfg = self.config
        if self.perfect_information:
            return mcts.search(state, self, cfg.num_simulations, cfg.c_puct, self.rng)
        worlds = mcts.information_set_worlds(self.game, state, self, self.rng)
        return mcts.search_information_set(state, self, cfg.num_simulations, cfg.c_puct,
                                           self.rng, worlds)

    # -- self-play ----------------------------------------------------------------------

    def play_episode(self) -> None:
        """One self-play episode; fills the memories."""
        cfg = self.config
        best_response = self.rng.random(2) < cfg.eta
        state = self.game.new_initial_state()
        pending = []  # (player, x, mask, pi) waiting for the outcome
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(actions[sample_index(probs, self.rng.random())])
                continue
            player = state.current_player()
            x, mask = self._inputs(state)
            if best_response[player]:
                pi = self.search(state)
                action = int(self.rng.choice(self.num_actions, p=pi))
                pending.append((player, x[0], mask[0], pi.astype(np.float32)))
                self.reservoir.add((x[0], mask[0], np.int32(action)))
            else:
                p = self.average(state)
                action = int(self.rng.choice(self.num_actions, p=p / p.sum()))
            state.apply_action(action)
        returns = state.returns()
        for player, x, mask, pi in pending:
            self.replay.add((x, mask, pi, np.float32(returns[player] / self.scale)))
        self.episodes += 1

    def learn(self) -> None:
        """One gradient step on each network whose memory has data (dropout masks drawn
        from the seed and the number of episodes played: one step per episode at most)."""
        b, step = self.config.batch_size, np.uint32(self.episodes)
        if len(self.replay):
            self.br_params, self.br_opt_state, _ = self._br_update(
                self.br_params, self.br_opt_state, step, *self.replay.sample(b))
        if len(self.reservoir):
            self.avg_params, self.avg_opt_state, _ = self._avg_update(
                self.avg_params, self.avg_opt_state, step, *self.reservoir.sample(b))
        if len(self.replay) or len(self.reservoir):
            self._refresh()

    def train(self, seconds: float) -> None:
        """Self-play and learn for ``seconds`` of wall time (added to ``train_seconds``)."""
        stop = time.perf_counter() + seconds
        start = time.perf_counter()
        cpu = time.process_time()
        while time.perf_counter() < stop:
            self.play_episode()
            if self.episodes % self.config.learn_every == 0:
                self.learn()
        self.train_seconds += time.perf_counter() - start
        self.cpu_seconds += time.process_time() - cpu

    # -- checkpoints --------------------------------------------------------------------

    KIND: ClassVar[str] = "mc_nfsp"
    CONFIG: ClassVar[type] = Config
    TREES: ClassVar[tuple[str, ...]] = ("br_params", "avg_params", "br_opt_state",
                                        "avg_opt_state")
    COUNTERS: ClassVar[dict[str, type]] = {"episodes": int, "train_seconds": float,
                                           "cpu_seconds": float}

    def memory_items(self) -> dict:
        """(shape, dtype) of each field of the memories' items."""
        x, n = (tensor_size(self.game),), (self.num_actions,)
        return {"replay": ((x, np.float32), (n, np.float32), (n, np.float32), ((), np.float32)),
                "reservoir": ((x, np.float32), (n, np.float32), ((), np.int32))}

    @staticmethod
    def initial_trees(config: Config, game: pyspiel.Game) -> dict:
        """The networks' initial parameters and their optimisers' states (``TREES``)."""
        br_net, avg_net, br_opt, avg_opt = _model(config, game)
        x = jnp.zeros((1, tensor_size(game)))
        k1, k2 = jax.random.split(jax.random.PRNGKey(config.seed))
        br_params, avg_params = br_net.init(k1, x), avg_net.init(k2, x)
        return dict(zip(MCNFSP.TREES, (br_params, avg_params, br_opt.init(br_params),
                                       avg_opt.init(avg_params))))

    def restored(self) -> None:
        self._refresh()

    def save(self, path) -> None:
        """Everything needed to continue bit for bit (parameters, optimisers, memories,
        generator, counters) in a checkpoint that runs no code when loaded
        (:func:`smmcts_spiel.nfsp.checkpoints.save_run`)."""
        checkpoints.save_run(self, path)

    @classmethod
    def load(cls, path, game: str | pyspiel.Game | None = None,
             network: Config | None = None) -> MCNFSP:
        """The run saved at ``path``, ready to continue; with ``game``, refuses a run
        trained on another game (or board size), with ``network`` (a configuration) one
        whose network is not ``network``'s. Raises
        :class:`~smmcts_spiel.nfsp.checkpoints.CheckpointError` for a file that is not a
        checkpoint of an MC-NFSP run or does not fit its own configuration."""
        return checkpoints.load_as(cls, path, game, network)


def _model(config: Config, game: pyspiel.Game) -> tuple:
    """The best-response and average networks and their optimisers."""
    return (networks.make(config, game, value_head=True),
            networks.make(config, game, value_head=False),
            optax.adam(config.br_learning_rate), optax.adam(config.avg_learning_rate))
