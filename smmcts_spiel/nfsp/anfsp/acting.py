"""What an ANFSP actor needs to play (:class:`Acting`), and the fields of the experience it
sends: transitions (Q-learning) and supervised samples (the average policy)."""

from __future__ import annotations

import numpy as np
import pyspiel

from smmcts_spiel.nfsp import networks
from smmcts_spiel.nfsp.anfsp.config import ANFSPConfig
from smmcts_spiel.nfsp.networks import NumpyNet, legal_mask, legal_probabilities
from smmcts_spiel.nfsp.policy import tensor_reader
from smmcts_spiel.search.selectors import sample_index


class Acting:
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
        return stack(transitions, TRANSITION_TYPES), stack(supervised, SAMPLE_TYPES)

    def epsilon(self, actor: int, episodes: int) -> float:
        eps = self.config.epsilons[actor % len(self.config.epsilons)]
        return eps / np.sqrt(1.0 + episodes / self.config.epsilon_decay)


#: dtypes of the fields of a transition (x, action, reward, next x, next legal mask, done)
#: and of an SL sample (x, legal mask, action).
TRANSITION_TYPES = (np.float32, np.int32, np.float32, np.float32, np.float32, np.float32)
DONE = 5  # the field of a transition that says the episode ended there
SAMPLE_TYPES = (np.float32, np.float32, np.int32)


def stack(items: list, dtypes: tuple) -> tuple:
    """Items (tuples) as one array per field; ``()`` if there are none."""
    if not items:
        return ()
    return tuple(np.asarray(field, dtype) for field, dtype in zip(zip(*items), dtypes))
