"""A trained policy network as an OpenSpiel policy (for exploitability) and as a ``pyspiel.Bot``."""

from __future__ import annotations

from collections.abc import Callable

import jax
import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks
from smmcts_spiel.nfsp.networks import legal_mask, masked_probabilities


def state_tensor(state: pyspiel.State, player: int) -> np.ndarray:
    """The network input of ``player`` at ``state``: information-state tensor if the game has
    one (poker), else the observation tensor (perfect-information boards)."""
    return tensor_reader(state.get_game())(state, player)


def tensor_reader(game: pyspiel.Game) -> Callable[[pyspiel.State, int], np.ndarray]:
    """:func:`state_tensor` for the states of ``game``, with the game's type looked up once
    (self-play asks for millions of tensors)."""
    if game.get_type().provides_information_state_tensor:
        return lambda state, player: np.asarray(state.information_state_tensor(player),
                                                np.float32)
    return lambda state, player: np.asarray(state.observation_tensor(player), np.float32)


def tensor_size(game: pyspiel.Game) -> int:
    """Length of :func:`state_tensor`'s vectors in ``game``."""
    if game.get_type().provides_information_state_tensor:
        return game.information_state_tensor_size()
    return game.observation_tensor_size()


class NetworkPolicy(policy_lib.Policy):
    """``softmax(logits)`` of a policy network over the legal actions, for every player.

    ``apply(params, tensors) -> logits``; :meth:`batch_probabilities` answers many states in
    one call, which is what exact exploitability on a whole game wants.
    """

    def __init__(self, game: pyspiel.Game, apply: Callable, params):
        super().__init__(game, list(range(game.num_players())))
        self.num_actions = game.num_distinct_actions()
        self.params = params
        # Same information state, same input: answer each once (OpenSpiel's best response
        # asks for every history of an information set).
        self._keyed = game.get_type().provides_information_state_string
        self._answers: dict = {}
        self._probs = jax.jit(lambda p, x, m: masked_probabilities(apply(p, x), m))

    def batch_probabilities(self, tensors: np.ndarray, masks: np.ndarray,
                            players: np.ndarray | None = None) -> np.ndarray:
        """Probabilities over all actions for a batch of network inputs and legal masks
        (one network for every player, so ``players`` is not needed)."""
        return np.asarray(self._probs(self.params, tensors, masks), np.float64)

    def action_probabilities(self, state, player_id=None) -> dict[int, float]:
        player = state.current_player() if player_id is None else player_id
        key = (player, state.information_state_string(player)) if self._keyed else None
        if key is not None and key in self._answers:
            return dict(self._answers[key])
        legal = state.legal_actions(player)
        mask = legal_mask(legal, self.num_actions)
        probs = self.batch_probabilities(state_tensor(state, player)[None], mask[None])[0]
        probs = probs[legal] / probs[legal].sum()
        answer = {a: float(p) for a, p in zip(legal, probs)}
        if key is not None:
            self._answers[key] = answer
        return dict(answer)


class PolicyBot(pyspiel.Bot):
    """Samples its moves from a policy (e.g. MC-NFSP's average policy) with a seeded generator."""

    def __init__(self, policy: policy_lib.Policy, player_id: int, seed: int = 0):
        pyspiel.Bot.__init__(self)
        self.policy = policy
        self.player_id = checks.check_player_id(player_id)
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def restart_at(self, state) -> None:
        """Nothing to reset: the policy depends on the state alone (and the generator runs
        on, so that the games of a match differ)."""

    def step(self, state) -> int:
        probs = self.policy.action_probabilities(state, self.player_id)
        actions = list(probs)
        return int(actions[self.rng.choice(len(actions), p=np.array(list(probs.values())))])
