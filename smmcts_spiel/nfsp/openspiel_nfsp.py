"""OpenSpiel's JAX NFSP (DQN best response) behind the same interface as :class:`MCNFSP`.

The baseline of the measurements: ``train(seconds)``, ``episodes``, ``train_seconds`` and
``average_policy()``, driving ``open_spiel.python.jax.nfsp.NFSP`` agents through
``rl_environment`` as OpenSpiel's ``examples/kuhn_nfsp.py`` does (same defaults).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python import rl_environment
from open_spiel.python.jax import nfsp

from smmcts_spiel.nfsp.networks import legal_mask, masked_probabilities
from smmcts_spiel.nfsp.policy import state_tensor


@dataclass(frozen=True)
class NFSPConfig:
    """OpenSpiel's kuhn_nfsp.py defaults (hidden layers as MC-NFSP's for a fair comparison)."""

    game: str = "smmcts_othello"
    hidden: tuple[int, ...] = (128, 128)
    replay_capacity: int = 200_000
    reservoir_capacity: int = 2_000_000
    min_buffer_size_to_learn: int = 1000
    anticipatory_param: float = 0.1
    batch_size: int = 128
    learn_every: int = 64
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.01
    optimizer: str = "sgd"
    epsilon_start: float = 0.06
    epsilon_end: float = 0.001
    seed: int = 0


class OpenSpielNFSP:
    """Two OpenSpiel NFSP agents learning by self-play."""

    def __init__(self, config: NFSPConfig):
        self.config = config
        self.game = pyspiel.load_game(config.game)
        self.env = rl_environment.Environment(self.game, seed=config.seed)
        size = self.env.observation_spec()["info_state"][0]
        self.agents = [
            nfsp.NFSP(p, size, self.env.action_spec()["num_actions"], list(config.hidden),
                      config.reservoir_capacity, float(config.anticipatory_param),
                      batch_size=config.batch_size, rl_learning_rate=config.rl_learning_rate,
                      sl_learning_rate=config.sl_learning_rate,
                      min_buffer_size_to_learn=config.min_buffer_size_to_learn,
                      learn_every=config.learn_every, optimizer_str=config.optimizer,
                      replay_buffer_capacity=config.replay_capacity,
                      epsilon_start=config.epsilon_start, epsilon_end=config.epsilon_end,
                      seed=config.seed + 1000 * p, allow_checkpointing=False)
            for p in range(2)]
        self.episodes = 0
        self.train_seconds = 0.0
        self.cpu_seconds = 0.0

    def play_episode(self) -> None:
        time_step = self.env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = self.env.step([self.agents[player].step(time_step).action])
        for agent in self.agents:
            agent.step(time_step)
        self.episodes += 1

    def train(self, seconds: float) -> None:
        stop = time.perf_counter() + seconds
        start = time.perf_counter()
        cpu = time.process_time()
        while time.perf_counter() < stop:
            self.play_episode()
        self.train_seconds += time.perf_counter() - start
        self.cpu_seconds += time.process_time() - cpu

    def average_policy(self) -> policy_lib.Policy:
        return _AveragePolicies(self.game, self.agents)


class _AveragePolicies(policy_lib.Policy):
    """Each agent's average-policy network, asked for many positions in one call.

    OpenSpiel's NFSP answers one ``TimeStep`` at a time (about 5 ms each here, 4 minutes for
    the 56,621 positions of 4 x 4 Othello), so this calls the agent's average network
    (``agent._avg_network``, a flax nnx MLP returning logits) on a batch directly; the
    softmax over legal actions is the agent's own ``_act``'s.
    """

    def __init__(self, game, agents):
        super().__init__(game, [0, 1])
        self.agents = agents
        self.num_actions = game.num_distinct_actions()

    def batch_probabilities(self, tensors: np.ndarray, masks: np.ndarray,
                            players: np.ndarray) -> np.ndarray:
        probs = np.zeros(masks.shape)
        for p, agent in enumerate(self.agents):
            rows = players == p
            if rows.any():
                logits = np.asarray(agent._avg_network(tensors[rows]))  # noqa: SLF001
                probs[rows] = np.asarray(masked_probabilities(logits, masks[rows]))
        return probs

    def action_probabilities(self, state, player_id=None) -> dict[int, float]:
        player = state.current_player() if player_id is None else player_id
        legal = state.legal_actions(player)
        probs = self.batch_probabilities(state_tensor(state, player)[None],
                                         legal_mask(legal, self.num_actions)[None],
                                         np.array([player]))[0]
        return {a: float(probs[a]) for a in legal}
