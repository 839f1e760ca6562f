"""Multiple-tree Monte Carlo tree search with Exp3 (MMCTS, Auger 2011) over pyspiel games.

Each player owns a tree indexed by its own information: a node is one of its information
states (``state.information_state_string(player)``) and holds an Exp3 bandit over the
legal actions there. One iteration plays the game from the root: each player, at its turn,
selects with Exp3 in its own tree (eq. 4 of Lisy et al. 2013, stable weights) while it is
in the tree, adds the first information state it reaches that its tree lacks, selects there
too and then plays uniformly at random to the end (the rollout). Chance nodes are sampled.
Both trees are then updated with the outcome: ``x[a] += r / p(a)`` at every node where the
player chose ``a`` with probability ``p(a)``.

Rewards. Exp3 is analysed for gains in [0, 1] (Auer et al. 2002), so player ``i`` learns
from ``r_i = (u_i / U + 1) / 2`` where ``U`` is the game's largest absolute utility: a win
is 1, a draw 0.5 and a loss 0 in Phantom Tic-Tac-Toe.

Every random number is one ``rng.random()`` per decision (Exp3 sample, rollout move
``floor(u k)`` or chance outcome), in the order of play, so the array engine of
:mod:`smmcts_spiel.imperfect.mmcts_phantom_ttt` grows exactly the same trees from the same seed.

The final strategy at a node is one of ``FINAL_STRATEGIES``: ``empirical`` (visit
frequencies ``n_a / n``, the choice of Lisy et al. and the meaning of ``empirical``
everywhere in this package), ``exp3`` (the current Exp3
distribution) or ``exp3_no_exploration`` (the current Exp3 distribution without its
``gamma / K`` exploration, ``softmax(eta x)``, which Exp3 would play if it had nothing
left to learn).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks
from smmcts_spiel.search import selectors

FINAL_STRATEGIES = ("empirical", "exp3", "exp3_no_exploration")


def check_game(game: pyspiel.Game) -> None:
    """Raises ValueError unless MMCTS applies: 2 players, zero-sum, sequential, infostates."""
    checks.check_game(game, "MMCTS", perfect_information=False, sequential_only=True,
                      information_states=True, zero_sum_only=True)


def check_final_strategy(final_strategy: str) -> str:
    if final_strategy not in FINAL_STRATEGIES:
        raise ValueError(f"final_strategy must be one of {FINAL_STRATEGIES}, "
                         f"got {final_strategy!r}")
    return final_strategy


def final_probabilities(reward_sums, counts, gamma: float, final_strategy: str) -> np.ndarray:
    """The final strategy of one node from its Exp3 reward sums and visit counts."""
    reward_sums = np.asarray(reward_sums, dtype=np.float64)
    k = len(reward_sums)
    if final_strategy == "empirical":
        counts = np.asarray(counts, dtype=np.float64)
        total = counts.sum()
        return counts / total if total > 0 else np.full(k, 1.0 / k)
    probs = selectors.exp3_probabilities(reward_sums, gamma, np.zeros(k))
    if final_strategy == "exp3":
        return probs
    if final_strategy == "exp3_no_exploration":
        # (1 - gamma) softmax + gamma / K = probs, solved for the softmax.
        weights = np.exp(gamma / k * (reward_sums - reward_sums.max()))
        return weights / weights.sum()
    raise ValueError(f"final_strategy must be one of {FINAL_STRATEGIES}, got {final_strategy!r}")


def utility_scale(game: pyspiel.Game) -> float:
    """The largest absolute utility, which maps utilities into [-1, 1]."""
    scale = max(abs(game.max_utility()), abs(game.min_utility()))
    if not scale > 0:
        raise ValueError(f"{game} has no non-zero utility: nothing to learn")
    return scale


@dataclasses.dataclass
class InfoStateNode:
    """One information state of one player's tree: legal actions, Exp3 bandit, counts."""

    legal_actions: list[int]
    bandit: selectors.Exp3Selector
    counts: list[int]

    def policy(self, final_strategy: str = "empirical") -> list[float]:
        return final_probabilities(self.bandit.reward_sums, self.counts, self.bandit.gamma,
                                   final_strategy).tolist()


class MultipleTreeSearch:
    """Both players' MMCTS trees for a pyspiel game, trained by simulated self-play."""

    def __init__(self, game: pyspiel.Game, gamma: float = 0.1, seed: int = 0):
        check_game(game)
        self.game = game
        self.gamma = selectors.check_gamma(gamma)
        self.seed = seed
        self.iterations = 0
        self.trees: tuple[dict[str, InfoStateNode], dict[str, InfoStateNode]] = ({}, {})
        self._scale = utility_scale(game)
        self._rng = np.random.default_rng(seed)

    def num_nodes(self, player: int) -> int:
        return len(self.trees[player])

    def train(self, iterations: int, progress: bool = False,
              from_state: pyspiel.State | None = None) -> None:
        """Runs ``iterations`` simulations, updating both trees.

        From the root by default; with ``from_state``, each simulation starts from a state
        drawn by ``from_state.resample_from_infostate`` for the player to move, which the
        game must implement (OpenSpiel's C++ phantom_ttt does not: use the array engine).
        """
        iterations = checks.check_count(iterations, "iterations")
        if from_state is not None and not from_state.is_terminal():
            player = from_state.current_player()
            try:
                from_state.resample_from_infostate(player, self._rng.random)
            except pyspiel.SpielError as error:
                raise ValueError(f"{self.game} cannot resample states from an information "
                                 f"state ({error}); train from the root instead") from None

            def start():
                return from_state.resample_from_infostate(player, self._rng.random)
        else:
            start = self.game.new_initial_state
        from tqdm import tqdm  # imported when used: importing the bots must not import it

        for _ in tqdm(range(iterations), disable=not progress, desc="MMCTS", unit="it"):
            self._iteration(start())
        self.iterations += iterations

    def _iteration(self, state: pyspiel.State) -> None:
        rng = self._rng
        in_tree = [True, True]
        paths: list[list[tuple[InfoStateNode, int]]] = [[], []]
        while not state.is_terminal():
            u = rng.random()
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(outcomes[selectors.sample_index(probs, u)])
                continue
            player = state.current_player()
            if not in_tree[player]:
                legal = state.legal_actions()
                state.apply_action(legal[min(int(u * len(legal)), len(legal) - 1)])
                continue
            tree = self.trees[player]
            key = state.information_state_string(player)
            node = tree.get(key)
            if node is None:
                legal = state.legal_actions()
                node = InfoStateNode(legal, selectors.Exp3Selector(len(legal), self.gamma),
                                     [0] * len(legal))
                tree[key] = node
                in_tree[player] = False
            index = node.bandit.select(u)
            paths[player].append((node, index))
            state.apply_action(node.legal_actions[index])
        returns = state.returns()
        for player in (0, 1):
            reward = (returns[player] / self._scale + 1.0) / 2.0
            for node, index in paths[player]:
                node.bandit.update(index, reward)
                node.counts[index] += 1

    def node(self, state: pyspiel.State, player: int | None = None) -> InfoStateNode | None:
        """The node of ``player``'s (default: the mover's) information state, if in its tree."""
        player = state.current_player() if player is None else player
        return self.trees[player].get(state.information_state_string(player))

    def policy(self, state: pyspiel.State, final_strategy: str = "empirical"
               ) -> tuple[list[tuple[int, float]], bool]:
        """The mover's strategy at ``state`` and whether it came from the tree.

        Off the tree (an information state training never reached) it is uniform random.
        """
        node = self.node(state)
        legal = state.legal_actions()
        if node is None:
            return [(a, 1.0 / len(legal)) for a in legal], False
        probs = node.policy(check_final_strategy(final_strategy))
        return list(zip(node.legal_actions, probs, strict=True)), True



class MMCTSPolicy(policy_lib.Policy):
    """Both players' final strategies of an MMCTS search (either engine) as an OpenSpiel
    policy of its game: the tree's strategy at the mover's information state, uniform off
    the tree. States of another game are refused."""

    def __init__(self, search, final_strategy: str = "empirical"):
        super().__init__(search.game, [0, 1])
        self._search = search
        self._final_strategy = check_final_strategy(final_strategy)

    def action_probabilities(self, state, player_id=None):
        checks.check_state_game(state, str(self._search.game), "an MMCTS policy")
        if state.is_terminal() or state.is_chance_node():
            raise ValueError(f"no player decides in this state:\n{state}")
        if player_id is not None and player_id != state.current_player():
            raise ValueError(f"player {player_id} is not to move in this state (player "
                             f"{state.current_player()} is):\n{state}")
        return dict(self._search.policy(state, self._final_strategy)[0])
