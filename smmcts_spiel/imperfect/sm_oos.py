"""SM-OOS: Online Outcome Sampling for simultaneous-move games (Bošanský et al., AIJ 2016).

The study's Section 3.3.2 (Algorithm 3) and GTLibrary's ``SMOOSAlgorithm``: outcome
sampling MCCFR on the tree below the current state, with every state's counterfactual
values defined as if the game started there. That is sound in games with perfect
information between stages, whose optimal strategy at a state depends only on the game
below it, and it is what sets SM-OOS apart from the general OOS of :mod:`.oos` (information
sets, every iteration from the root of the game, information-set targeting with ``delta``,
updates weighted by the reach above): SM-OOS has no targeting and no reach weights,
because every iteration starts at the current state and so passes through it; the tree
below it is kept from move to move.

One iteration, update player ``i`` (alternating), from state ``s``:

* a state in the tree: ``i`` samples from its regret-matching strategy ``sigma_i`` mixed
  with ``epsilon`` uniform exploration (``sigma'_i``), the opponent from its plain
  regret-matching strategy ``sigma_-i``, which its average-strategy sum ``S_-i`` gains;
  chance is sampled from its distribution;
* a state not in the tree is added, both players sample uniformly (the opponent's sum gains
  the uniform strategy), and a uniform random playout (or the evaluation function, the
  paper's Section 5.2 alternative) gives ``u_i``; the playout's tail and sampling
  probabilities are equal and cancel;
* on the way back, with ``x`` and ``q`` the products of ``sigma_i`` and ``sigma'_i`` of
  ``i``'s sampled actions below ``s`` and ``W = u_i x / q``: ``R_i(s, a_i) += W (1 -
  sigma_i(a_i)) / sigma'_i(a_i)``, and ``R_i(s, a) -= W sigma_i(a_i) / sigma'_i(a_i)`` for
  ``i``'s other actions.

The final strategy at a state is ``S_i`` normalised, the average strategy (GTLibrary's
``MeanStratDist``). Sequential states are decision states of one player (the other has no
node there). States are keyed by their history, one entry per player's move.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.games.simultaneous import per_player_history
from smmcts_spiel.imperfect.oos import InfoSetNode, OOSStrategies
from smmcts_spiel.search.evaluators import RandomRolloutEvaluator, sample_chance
from smmcts_spiel.search.selectors import sample_index

#: Settings of SM-OOS, by preset. ``paper``: Bošanský, Lisý, Lanctot, Čermák, Winands,
#: "Algorithms for computing strategies in two-player simultaneous move games", AIJ 237
#: (2016), and GTLibrary (github.com/aicenter/gtlibrary-java) where the paper is silent:
#:
#: * ``epsilon=0.6``: Section 6 (evaluation), "For OOS, Exp3, and RM the best values for
#:   the parameters were almost always 0.6, 0.1, and 0.1", and GTLibrary's
#:   ``SMOOSAlgorithm`` default; the head-to-head tables tune it per game (0.1 to 0.3;
#:   give ``epsilon`` over the preset);
#: * no targeting probability ``delta``: Algorithm 3 starts every iteration at the
#:   current state (the general OOS's targeting has nothing to do here);
#: * plain regret matching at every state (Algorithm 3, lines 6 and 9; no ``gamma``
#:   mixed in) and the average strategy as the final strategy (Section 3.3.2,
#:   "Normalizing S_i gives the resulting strategy"; GTLibrary samples the move from it);
#: * a uniform random playout below a new state (line 18), or the evaluation function in
#:   its place (Section 5.2).
PRESETS = {"paper": dict(epsilon=0.6)}


def preset_settings(preset: str = "paper", **overrides) -> dict:
    """The settings of ``preset`` (a key of :data:`PRESETS`), ``overrides`` that are not
    None replacing them."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got "
                         f"{checks.shown(preset)!r}")
    settings = dict(PRESETS[preset])
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return settings


def _movers(state: pyspiel.State) -> tuple[list[int], list[int]]:
    """Each player's legal actions at a decision state (``[]``: no move)."""
    if state.is_simultaneous_node():
        return state.legal_actions(0), state.legal_actions(1)
    player = state.current_player()
    actions = state.legal_actions(player)
    return (actions, []) if player == 0 else ([], actions)


class SMOOS(OOSStrategies):
    """The search (module docstring): :meth:`run` iterations from :meth:`set_root`'s state.

    Each state in the tree holds an :class:`~.oos.InfoSetNode` (regrets, average-strategy
    sums) per player who moves there; the strategies and ``policy()`` are the OOS ones
    (:class:`~.oos.OOSStrategies`), on the game's own states.

    Args:
      game: a two-player zero-sum or constant-sum game with perfect information between
        stages and explicit chance (simultaneous or sequential).
      epsilon: the update player's exploration, in (0, 1] (the paper's 0.6).
      evaluator: player 1's value of a state, in place of the random playout below a new
        state (the paper's variant with an evaluation function); None: a uniform random
        playout.
      seed: seeds every sample; the same seed gives the same tree.
    """

    gamma = 0.0  # plain regret matching: the "current" strategy OOSStrategies reports

    def __init__(self, game: pyspiel.Game, epsilon: float = PRESETS["paper"]["epsilon"],
                 evaluator: Callable[[pyspiel.State], float] | None = None,
                 seed: int | None = None):
        checks.check_game(game, "SM-OOS", explicit_chance=True,
                          hint="use oos (information sets) for such games")
        self.epsilon = checks.check_probability(epsilon, "epsilon")
        if self.epsilon == 0:
            raise ValueError("epsilon must be above 0: SM-OOS's update player has to reach "
                             "every action for its regret estimates to stay unbiased")
        if evaluator is not None and not callable(evaluator):
            raise ValueError(f"evaluator must be a function of a state giving player 1's "
                             f"value, or None (random playouts); got {checks.shown(evaluator)!r}")
        self.game = self.search_game = game
        self.utility_sum = float(game.utility_sum() or 0.0)
        self._rng = random.Random(seed)
        if evaluator is None:
            rollouts = RandomRolloutEvaluator(seed=self._rng.getrandbits(63))
            evaluator = lambda state: rollouts.evaluate(state)[0]  # noqa: E731
        self._evaluator = evaluator
        self.tree: dict[tuple[int, ...], tuple[InfoSetNode | None, InfoSetNode | None]] = {}
        self.root: pyspiel.State = game.new_initial_state()
        self.iterations = 0

    def reset(self) -> None:
        """Forget the tree (a new game)."""
        self.tree = {}
        self.root = self.game.new_initial_state()

    def set_root(self, state: pyspiel.State) -> None:
        """Search from ``state`` next; the tree below it is kept, the rest dropped."""
        self.root = per_player_history(state)
        prefix = tuple(self.root.history())
        n = len(prefix)
        self.tree = {key: nodes for key, nodes in self.tree.items() if key[:n] == prefix}

    def run(self, iterations: int | None = None, seconds: float | None = None) -> int:
        """Iterations from the root until ``iterations`` or ``seconds`` run out (whichever
        first; at least one given); returns how many ran."""
        checks.check_budget(iterations, seconds)
        deadline = None if seconds is None else time.perf_counter() + seconds
        done = 0
        while iterations is None or done < iterations:
            if deadline is not None and done % 16 == 0 and time.perf_counter() >= deadline:
                break
            self._iterate(self.root.clone(), self.iterations % 2)
            self.iterations += 1
            done += 1
        return done

    def _table_strategy(self, state, player, num_actions, final_strategy):
        nodes = self.tree.get(tuple(per_player_history(state).history()))
        node = None if nodes is None else nodes[player]
        if node is None:
            return None
        if final_strategy == "current":
            return list(node.current_strategy(self.gamma))
        return node.average_strategy()

    # -- one iteration --------------------------------------------------------------------

    def _iterate(self, state: pyspiel.State, i: int) -> tuple[float, float, float]:
        """(x, q, u_i) of the terminal history sampled below ``state`` (consumed)."""
        rng = self._rng
        while state.is_chance_node():
            state.apply_action(sample_chance(state.chance_outcomes(), rng.random()))
        if state.is_terminal():
            return 1.0, 1.0, state.returns()[i]
        key = tuple(state.history())
        nodes = self.tree.get(key)
        movers = _movers(state)
        o = 1 - i
        picks = [-1, -1]
        sigma = sampled = 1.0  # sigma_i(a_i), sigma'_i(a_i); 1 where i does not move
        if nodes is None:  # a new state: uniform moves, then a playout
            nodes = self.tree[key] = (InfoSetNode(len(movers[0])) if movers[0] else None,
                                      InfoSetNode(len(movers[1])) if movers[1] else None)
            for p in (0, 1):
                if movers[p]:
                    picks[p] = rng.randrange(len(movers[p]))
            if movers[i]:
                sigma = sampled = 1.0 / len(movers[i])
            if movers[o]:
                sums = _mover(nodes, o).strategy_sums
                for k in range(len(sums)):
                    sums[k] += 1.0 / len(sums)
            self._apply(state, movers, picks)
            x, q, u = 1.0, 1.0, self._playout(state, i)
        else:
            if movers[i]:
                strategy = list(_mover(nodes, i).current_strategy())
                n = len(strategy)
                sampling = [(1.0 - self.epsilon) * p + self.epsilon / n for p in strategy]
                picks[i] = sample_index(sampling, rng.random())
                sigma, sampled = strategy[picks[i]], sampling[picks[i]]
            if movers[o]:
                opponent = _mover(nodes, o).current_strategy()
                sums = _mover(nodes, o).strategy_sums
                for k, prob in enumerate(opponent):
                    sums[k] += prob
                picks[o] = sample_index(opponent, rng.random())
            self._apply(state, movers, picks)
            x, q, u = self._iterate(state, i)
        if movers[i]:
            w = u * x / q
            a = picks[i]
            regrets = _mover(nodes, i).regrets
            for k in range(len(regrets)):
                regrets[k] += w * ((1.0 - sigma) if k == a else -sigma) / sampled
        return x * sigma, q * sampled, u

    @staticmethod
    def _apply(state: pyspiel.State, movers, picks: list[int]) -> None:
        if state.is_simultaneous_node():
            state.apply_actions([movers[p][picks[p]] for p in (0, 1)])
        else:
            player = state.current_player()
            state.apply_action(movers[player][picks[player]])

    def _playout(self, state: pyspiel.State, i: int) -> float:
        """``i``'s utility at ``state``: its return if terminal, else the evaluator's (a
        random playout by default) for player 1, turned into ``i``'s."""
        if state.is_terminal():
            return state.returns()[i]
        value = float(self._evaluator(state))
        return value if i == 0 else self.utility_sum - value


def _mover(nodes: tuple[InfoSetNode | None, InfoSetNode | None], player: int) -> InfoSetNode:
    """The node of ``player``, who moves at the state of ``nodes``."""
    node = nodes[player]
    assert node is not None, "a player without moves has no node"
    return node
