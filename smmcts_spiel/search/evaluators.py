"""Leaf evaluators for the search, with OpenSpiel's evaluator interface.

An evaluator scores a new leaf: ``evaluate(state)`` returns every player's value and
``prior(state)`` a list of ``(action, probability)`` pairs, as in OpenSpiel's
``open_spiel.python.algorithms.mcts``. Any object with that interface can be given to the
search; the default is one seeded random rollout.

* :class:`RandomRolloutEvaluator`: ``n_rollouts`` random playouts per leaf, any game;
* :class:`OpenSpielRolloutEvaluator`: the same playouts run by OpenSpiel's C++
  ``evaluate_bots`` (3-4x faster on OpenSpiel's C++ games; the array engine's default);
* :class:`GoofspielEvaluator`: points won plus the expected share of the prizes left;
* :class:`OshiZumoEvaluator`: wrestler position and coin difference.

:func:`make_evaluator` builds one by name (``evaluator=...`` in bot specs). They run in the
generic and reference engines; games with a numba kernel also have compiled evaluators in
:mod:`smmcts_spiel.games.kernels` (the kernel engine). A user's own evaluator is any object with
``evaluate(state) -> [value of player 1, value of player 2]`` (in the game's utility units)
and ``prior(state)``; pass it as ``SMMCTSBot(..., evaluator=...)``.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pyspiel


class RandomRolloutEvaluator:
    """One uniformly random playout per evaluation, from a seeded generator.

    At simultaneous nodes each player's action is drawn uniformly and independently. Like
    OpenSpiel's evaluators it returns every player's return.
    """

    def __init__(self, n_rollouts: int = 1, seed: int | None = None):
        if n_rollouts < 1:
            raise ValueError(f"n_rollouts must be >= 1, got {n_rollouts}")
        self.n_rollouts = n_rollouts
        self._rng = random.Random(seed)

    def evaluate(self, state: pyspiel.State) -> list[float]:
        rng = self._rng
        total = [0.0] * state.num_players()
        for _ in range(self.n_rollouts):
            working = state.clone()
            while not working.is_terminal():
                if working.is_chance_node():
                    working.apply_action(sample_chance(working.chance_outcomes(), rng.random()))
                elif working.is_simultaneous_node():
                    # Per player: Python-defined games do not take flat joint actions.
                    working.apply_actions([rng.choice(working.legal_actions(p) or
                                                      [pyspiel.INVALID_ACTION])
                                           for p in range(working.num_players())])
                else:
                    working.apply_action(rng.choice(working.legal_actions()))
            returns = working.returns()
            total = [a + b for a, b in zip(total, returns)]
        return [v / self.n_rollouts for v in total]

    def prior(self, state: pyspiel.State):
        """Uniform prior, for interface compatibility with OpenSpiel's evaluators."""
        if state.is_chance_node():
            return state.chance_outcomes()
        actions = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(actions)) for a in actions]


class OpenSpielRolloutEvaluator:
    """Uniformly random playouts run in C++ by OpenSpiel's ``evaluate_bots``, seeded.

    pyspiel's ``RandomRolloutEvaluator`` does not expose ``evaluate`` to Python, so the
    playout is ``pyspiel.evaluate_bots`` between two of OpenSpiel's uniform random bots
    (seeded once from ``seed``), with a chance seed drawn from ``seed``'s generator per
    playout: the distribution of :class:`RandomRolloutEvaluator` (at simultaneous nodes
    each player picks uniformly and independently), in C++. On OpenSpiel's C++ games a
    playout costs a third to a quarter of the Python one (benchmarks/NOTES.md); on
    Python-defined games the game's own methods dominate and the two cost about the same.
    """

    def __init__(self, n_rollouts: int = 1, seed: int | None = None):
        if n_rollouts < 1:
            raise ValueError(f"n_rollouts must be >= 1, got {n_rollouts}")
        self.n_rollouts = n_rollouts
        #: Draws the bots' seeds, then one chance seed per playout.
        self.seeds = random.Random(seed)
        #: OpenSpiel's uniform random bots that play the playouts.
        self.bots = [pyspiel.make_uniform_random_bot(p, self.seeds.getrandbits(31))
                     for p in range(2)]

    def evaluate(self, state: pyspiel.State) -> list[float]:
        if self.n_rollouts == 1:
            return pyspiel.evaluate_bots(state.clone(), self.bots, self.seeds.getrandbits(31))
        total = [0.0] * state.num_players()
        for _ in range(self.n_rollouts):
            returns = pyspiel.evaluate_bots(state.clone(), self.bots,
                                            self.seeds.getrandbits(31))
            total = [a + b for a, b in zip(total, returns)]
        return [v / self.n_rollouts for v in total]

    def prior(self, state: pyspiel.State):
        return _uniform_prior(state)


def sample_chance(outcomes, u: float) -> int:
    """The chance outcome that the uniform number ``u`` in [0, 1) picks."""
    acc = 0.0
    for action, prob in outcomes:
        acc += prob
        if u < acc:
            return action
    return outcomes[-1][0]


class GoofspielEvaluator:
    """Points won so far plus the expected share of the prizes left (OpenSpiel's goofspiel).

    Each prize still to play (the current one included) is taken to go to player 1 with
    probability ``s = 1/2 + hand_weight (h1 - h2) / (2 (h1 + h2))``, independently, where
    ``h1``, ``h2`` are the sums of the players' hands (``hand_weight`` 2 fitted to the exact
    values of 5-card Goofspiel, see experiments/tournaments; ``s`` is clipped to [0, 1]). The
    point difference then has mean ``D + sum_k k (2s - 1)`` (``D`` the difference so far)
    and variance ``sum_k k^2 4 s (1 - s)``; ``point_difference`` games get half the mean
    (OpenSpiel's returns are each player's points minus the mean of both),
    ``win_loss`` games ``P(win) - P(loss)`` under a normal approximation,
    ``erf(mean / sqrt(2 variance))``. No rollout: a leaf costs one observation tensor.
    """

    def __init__(self, game: pyspiel.Game, hand_weight: float = 2.0):
        params = game.get_parameters()
        self.hand_weight = hand_weight
        if game.get_type().short_name != "goofspiel" or params.get("imp_info", False):
            raise ValueError(f"GoofspielEvaluator reads OpenSpiel's goofspiel with "
                             f"imp_info=False, not {game}")
        self._returns_type = params.get("returns_type", "win_loss")
        if self._returns_type not in ("win_loss", "point_difference"):
            raise ValueError(f"GoofspielEvaluator needs returns_type win_loss or "
                             f"point_difference (zero-sum), got {self._returns_type!r}")
        if params.get("num_turns", -1) not in (-1, params["num_cards"]):
            raise ValueError("GoofspielEvaluator assumes every card is played (num_turns=-1)")
        n = params["num_cards"]
        self._n = n
        self._values = [k + 1 for k in range(n)]
        self._totals = (game.observation_tensor_size() - 4 * n) // 2  # one-hot point totals

    def evaluate(self, state: pyspiel.State) -> list[float]:
        if state.is_terminal():
            return list(state.returns())
        t = state.observation_tensor(0)
        n, m = self._n, self._totals
        values = self._values
        prizes = [values[k] for k in range(n) if t[k] > 0 or t[n + k] > 0]
        points0 = t.index(1.0, 2 * n, 2 * n + m) - 2 * n
        points1 = t.index(1.0, 2 * n + m, 2 * n + 2 * m) - 2 * n - m
        hands = 2 * n + 2 * m
        sum0 = sum(values[k] for k in range(n) if t[hands + k] > 0)
        sum1 = sum(values[k] for k in range(n) if t[hands + n + k] > 0)
        share = 0.5
        if sum0 + sum1 > 0:
            share += self.hand_weight * (sum0 - sum1) / (2 * (sum0 + sum1))
            share = min(1.0, max(0.0, share))
        mean = points0 - points1 + (2 * share - 1) * sum(prizes)
        if self._returns_type == "point_difference":  # OpenSpiel returns points - mean points
            return [mean / 2, -mean / 2]
        variance = 4 * share * (1 - share) * sum(k * k for k in prizes)
        if variance <= 0:
            value = float(np.sign(mean))
        else:
            value = math.erf(mean / math.sqrt(2 * variance))
        return [value, -value]

    def prior(self, state: pyspiel.State):
        return _uniform_prior(state)


class OshiZumoEvaluator:
    """Wrestler position and coin difference (OpenSpiel's oshi_zumo).

    ``tanh(position_weight * x + coin_weight * y)`` for player 1, where ``x`` is the
    wrestler's offset from the centre towards player 2's edge in units of ``size + 1``
    (the distance to an edge) and ``y = (c1 - c2) / (c1 + c2)`` the coin difference relative
    to the coins left. A player whose opponent has no coins left and who can pay one coin
    per step to the edge wins outright (value +-1). The weights were fitted to the exact
    values of oshi_zumo(coins=8,size=2,horizon=15) (see experiments/tournaments/NOTES.md).
    """

    def __init__(self, game: pyspiel.Game, position_weight: float = 4.0,
                 coin_weight: float = 8.0):
        params = game.get_parameters()
        if game.get_type().short_name != "oshi_zumo":
            raise ValueError(f"OshiZumoEvaluator reads OpenSpiel's oshi_zumo, not {game}")
        if params.get("alesia", False):
            raise ValueError("OshiZumoEvaluator assumes alesia=False (the side of the "
                             "wrestler decides a game that ends on the field)")
        self._size = params["size"]
        self._min_bid = params["min_bid"]
        self.position_weight = position_weight
        self.coin_weight = coin_weight

    def features(self, state: pyspiel.State) -> tuple[int, int, int]:
        """(player 1's coins, player 2's coins, wrestler offset towards player 2's edge)."""
        coins, field = state.observation_string(0).split(", Field: ")
        c0, c1 = coins[len("Coins: "):].split()
        return int(c0), int(c1), field.index("W") - (self._size + 1)

    def evaluate(self, state: pyspiel.State) -> list[float]:
        if state.is_terminal():
            return list(state.returns())
        c0, c1, offset = self.features(state)
        reach = self._size + 1
        steps = max(1, self._min_bid + 1)  # cheapest bid that beats a broke opponent
        if c1 == 0 and c0 >= steps * (reach - offset):
            return [1.0, -1.0]
        if c0 == 0 and c1 >= steps * (reach + offset):
            return [-1.0, 1.0]
        y = (c0 - c1) / (c0 + c1) if c0 + c1 > 0 else 0.0
        value = math.tanh(self.position_weight * offset / reach + self.coin_weight * y)
        return [value, -value]

    def prior(self, state: pyspiel.State):
        return _uniform_prior(state)


def _uniform_prior(state: pyspiel.State):
    if state.is_chance_node():
        return state.chance_outcomes()
    actions = state.legal_actions(state.current_player())
    return [(a, 1.0 / len(actions)) for a in actions]


#: Evaluator names of :func:`make_evaluator`.
EVALUATORS = ("rollout", "goofspiel", "oshi_zumo")


def make_evaluator(name: str, game: pyspiel.Game, seed: int | None = None,
                   rollouts: int = 1):
    """An evaluator by name: ``rollout`` (``rollouts`` playouts, seeded), ``goofspiel``,
    ``oshi_zumo``."""
    if name not in EVALUATORS:
        raise ValueError(f"evaluator must be one of {', '.join(EVALUATORS)}, got {name!r}")
    if name == "goofspiel":
        return GoofspielEvaluator(game)
    if name == "oshi_zumo":
        return OshiZumoEvaluator(game)
    return RandomRolloutEvaluator(rollouts, seed)


def game_aware_evaluator(game: pyspiel.Game) -> str | None:
    """The name of the game-aware evaluator for ``game``, or None if there is none."""
    name = game.get_type().short_name
    return name if name in ("goofspiel", "oshi_zumo") else None
