"""Online Outcome Sampling (OOS; Lisy, Lanctot, Bowling, AAMAS 2015).

OOS is Monte Carlo CFR with outcome sampling, run online: every iteration samples one
terminal history from the ROOT of the game, so the average strategy it builds converges to
a Nash equilibrium like offline MCCFR, however the search is steered. Its three additions:

* **Incremental tree.** Regrets and average strategies are kept only for the information
  sets in the tree; an iteration adds the first one it reaches that is missing and plays
  on by a uniform random playout (no updates there).
* **Information-set targeting (IST).** With probability ``delta`` an iteration samples
  only histories that pass through the searching player's current information set
  (:class:`~smmcts_spiel.imperfect.information_sets.InformationSet`): at chance, opponent
  and own nodes on the way there, the sampling distribution is restricted to the
  consistent actions and renormalised. Otherwise it samples as plain outcome sampling.
* **Importance-weight compensation.** A sampled terminal history ``z`` had probability
  ``q(z) = delta s1(z) + (1 - delta) s2(z)`` under this mixture, ``s1`` its targeted and
  ``s2`` its untargeted sampling probability, both tracked along every sample; regrets
  and average-strategy increments are divided by it, so the estimates stay unbiased.

The update of one iteration follows Alg. 1 of the paper: the update player ``i``
(alternating) samples with ``epsilon``-exploration, its opponent with its current regret
matching strategy; at ``i``'s information sets, with ``W = u_i(z) pi_-i(h) / q(z)``,
regret ``r[a] += W (pi(ha, z) - pi(h, z))`` for the sampled ``a`` and ``-W pi(h, z)`` for
the others; at the opponent's, the average strategy gains ``pi_-i(h) sigma(h) / q(h)``.
``delta = 0`` is plain (untargeted) outcome sampling MCCFR.

**Weighting (w_T).** When the search moves to a new target, the samples that reached the
new information set ``I`` before (rarely, with large importance weights) would outweigh
the many targeted ones that follow (small weights). With ``weighting=True`` every update
of the iterations run for a target is multiplied by ``w_T = (1 - delta) + delta P_t(I) /
P(I)`` (the initial call ``OOS(root, 1, 1, 1/w_T, 1/w_T, i)`` of Alg. 1), ``P(I)`` the
probability of reaching ``I`` under the current average strategies of both players and
chance, ``P_t(I)`` the same under targeted sampling (1 here: the targeting is exact). The
paper prints this expression as ``1/w_T``; its own example (``w_T = s_m / s_0``) and
GTLibrary's ``ISTargeting.update`` / ``OOSAlgorithm.runMiliseconds`` (initial sample
probabilities ``1 / getSampleProbMultiplayer()``) make it ``w_T``. A factor shared by all
updates of one search changes nothing within it; it weighs a later move's search against
the earlier ones.

Sequential games are searched directly; a simultaneous game through
``pyspiel.convert_to_turn_based`` (each round: player 1's turn, then player 2's, who does
not see player 1's action).
"""

from __future__ import annotations

import time

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from smmcts_spiel import checks
from smmcts_spiel.imperfect import information_sets
from smmcts_spiel.search.selectors import regret_matching_probabilities, sample_index

#: What a search recommends at an information set: the average strategy (the one that
#: converges to an equilibrium) or the current regret-matching strategy (``gamma`` mixed
#: in, as the search samples it).
FINAL_STRATEGIES = ("average", "current")

#: Largest w_T: the bound when the average strategies (almost) never reach the target.
MAX_WEIGHT = 1e6

#: Settings of OOS, by preset. ``paper``: Lisy, Lanctot, Bowling, "Online Monte Carlo
#: Counterfactual Regret Minimization for Search in Imperfect Information Games", AAMAS
#: 2015, and GTLibrary's OOS (github.com/aicenter/gtlibrary-java, commit 3b5a5bc8 "State of
#: the AAMAS 2015 IIOOS experiments") where the paper is silent:
#:
#: * ``delta=0.9``, ``epsilon=0.4``: Sec. 5.4 (head-to-head) and Fig. 4's caption, "OOS
#:   run with IST ... targeting delta=0.9 and exploration epsilon=0.4" (0.6 in its
#:   convergence runs, Sec. 5.4.1; 0.6 is also GTLibrary's default);
#: * ``gamma=0.01``: Sec. 4.3, "a more explorative regret matching ... with gamma=0.01"
#:   (GTLibrary: ``OOSAlgorithmData.useEpsilonRM = true``, ``0.99 r+/R + 0.01/K``, used
#:   to sample, for the average-strategy increments and for play);
#: * ``weighting=True``: the factor w_T of Sec. 4.3 (see the module docstring);
#: * ``final_strategy="current"``: how a move is chosen is not in the paper; GTLibrary's
#:   ``OOSAlgorithm.runMiliseconds`` samples it from the current regret-matching strategy
#:   (``useCurrentStrategy = true``), as it is (``threshold=0``);
#: * information-set targeting (IST), the paper's choice for II-Goofspiel (its PST is not
#:   implemented here); one fresh search per game (GTLibrary's
#:   ``IIGMatchesExperiment.runMatch`` builds new players for every match), tables kept
#:   between the moves of a game.
#:
#: ``default``: the paper's search with less targeting, ``delta=0.5``, chosen by
#: measurement (experiments/imperfect/NOTES.md): against OpenSpiel's ISMCTS on
#: II-Goofspiel(6) at 0.1 s per move it is at least as strong as 0.9 (0.99 is behind), and
#: whole-game NashConv after 30,000 targeted iterations on Kuhn falls from 0.10-0.13 at
#: ``delta=0.9`` to 0.05-0.06 (90% of the samples through one information set leave the
#: rest of the game 10% of them, weighted 10x). It plays its average strategy without the
#: actions below 0.3 (``final_strategy="average"``, ``threshold=0.3``; thresholding,
#: Ganzfried & Sandholm 2012), the setting that met every pre-registered target of its
#: registered runs (P9, P10): against random on II-Goofspiel(6) +0.615 (the current
#: strategy, the previous default: +0.470), not behind ISMCTS at 0.1 s per move on any of
#: the four games and ahead at 1 s. The current strategy bids a low card on the largest
#: prize four times in ten; the thresholded average does not.
PRESETS = {
    "paper": dict(delta=0.9, epsilon=0.4, gamma=0.01, weighting=True, final_strategy="current",
                  threshold=0.0),
    "default": dict(delta=0.5, epsilon=0.4, gamma=0.01, weighting=True,
                    final_strategy="average", threshold=0.3),
}


def preset_settings(preset: str = "default", **overrides) -> dict:
    """The settings of ``preset`` (a key of :data:`PRESETS`), with ``overrides`` that are
    not None replacing them."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    settings = dict(PRESETS[preset])
    unknown = set(overrides) - set(settings)
    if unknown:
        raise ValueError(f"unknown OOS settings {sorted(unknown)}; known: {sorted(settings)}")
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return settings


def check_parameters(game: pyspiel.Game, delta: float, epsilon: float, gamma: float = 0.0):
    """(searched game, delta, epsilon, gamma) after checking them, or a ValueError naming
    the fix."""
    search_game = information_sets.check_sequential_search_game(game, "OOS")
    delta = checks.check_probability(delta, "delta", below_one=True)
    epsilon = checks.check_probability(epsilon, "epsilon")
    if epsilon == 0.0:
        raise ValueError("epsilon must be > 0: the update player has to explore every "
                         "action for the regrets to converge")
    gamma = checks.check_probability(gamma, "gamma", below_one=True)
    return search_game, delta, epsilon, gamma


def check_weighting(weighting) -> bool:
    if not isinstance(weighting, (bool, np.bool_)):
        raise ValueError(f"weighting must be True or False, got {weighting!r}")
    return bool(weighting)


def target_weight(delta: float, reach: float) -> float:
    """w_T for a target reached with probability ``reach`` under the average strategies
    (targeted sampling reaches it surely), at most :data:`MAX_WEIGHT`."""
    if reach * MAX_WEIGHT <= delta:
        return MAX_WEIGHT
    return min((1.0 - delta) + delta / reach, MAX_WEIGHT)


def check_final_strategy(final_strategy: str) -> str:
    if final_strategy not in FINAL_STRATEGIES:
        raise ValueError(f"final_strategy must be one of {', '.join(FINAL_STRATEGIES)}, got "
                         f"{final_strategy!r}")
    return final_strategy


class InfoSetNode:
    """Regrets and average-strategy sums of one information set in the tree."""

    __slots__ = ("regrets", "strategy_sums", "_current")

    def __init__(self, num_actions: int):
        self.regrets = [0.0] * num_actions
        self.strategy_sums = [0.0] * num_actions
        self._current = [0.0] * num_actions

    def current_strategy(self, gamma: float = 0.0) -> list[float]:
        """Regret matching mixed with ``gamma`` exploration: gamma/|A| + (1 - gamma) r+ /
        sum r+ (uniform where no regret is positive)."""
        return regret_matching_probabilities(self.regrets, gamma, self._current)

    def average_strategy(self) -> list[float]:
        total = sum(self.strategy_sums)
        n = len(self.strategy_sums)
        if total <= 0.0:
            return [1.0 / n] * n
        return [s / total for s in self.strategy_sums]


class OOSStrategies:
    """The strategies both OOS engines (Python and compiled) read from their tables; each
    engine answers :meth:`_table_strategy` for one information set."""

    gamma: float
    search_game: pyspiel.Game

    def average_strategy(self, state: pyspiel.State, player: int | None = None):
        """(actions, average strategy) at ``state`` of ``search_game``; uniform off-tree."""
        return self.strategy(state, player, "average")

    def strategy(self, state: pyspiel.State, player: int | None = None,
                 final_strategy: str = "average"):
        """(actions, average or current strategy) at ``state`` of ``search_game``; uniform
        off-tree. The current strategy is regret matching with the ``gamma`` exploration
        the search samples with."""
        final_strategy = check_final_strategy(final_strategy)
        if player is None:
            player = state.current_player()
        actions = state.legal_actions(player)
        probs = self._table_strategy(state, player, len(actions), final_strategy)
        return actions, [1.0 / len(actions)] * len(actions) if probs is None else probs

    def _table_strategy(self, state: pyspiel.State, player: int, num_actions: int,
                        final_strategy: str) -> list[float] | None:
        """The strategy of ``player``'s information set at ``state`` (None: not in the
        tables, or no average yet)."""
        raise NotImplementedError

    def policy(self, final_strategy: str = "average") -> OOSPolicy:
        """Both players' average (or ``final_strategy``) strategies as a policy of
        ``search_game``."""
        return OOSPolicy(self, check_final_strategy(final_strategy))


class OutcomeSampling(OOSStrategies):
    """The OOS tables (both players' information sets) and its iterations.

    Args:
      game: two-player zero-sum game with information state strings; simultaneous games
        are searched through their turn-based conversion (``search_game``).
      delta: probability that an iteration targets the current information set.
      epsilon: exploration of the update player's sampling, in (0, 1].
      gamma: exploration mixed into regret matching, ``gamma/|A| + (1 - gamma) sigma``
        (the paper uses 0.01 so that information sets below an opponent's unlikely move
        keep improving); 0 is plain regret matching.
      seed: seeds the sampling; same seed, same tables.
      weighting: multiply the updates of each target's iterations by w_T (module
        docstring).
    """

    def __init__(self, game: pyspiel.Game, delta: float = 0.9, epsilon: float = 0.6,
                 seed: int | None = None, gamma: float = 0.0, weighting: bool = False):
        self.game = game
        self.search_game, self.delta, self.epsilon, self.gamma = check_parameters(
            game, delta, epsilon, gamma)
        self.weighting = check_weighting(weighting)
        self._rng = np.random.default_rng(seed)
        self.nodes: dict[tuple[int, str], InfoSetNode] = {}
        self.iterations = 0
        self._target: information_sets.InformationSet | None = None
        self.weight = 1.0  # w_T of the current target
        self._root = self.search_game.new_initial_state()

    def reseed(self, seed: int | None) -> None:
        """Draw the following iterations from a fresh generator seeded with ``seed``."""
        self._rng = np.random.default_rng(seed)

    # ---------------------------------------------------------------- targeting
    def set_target(self, target: information_sets.InformationSet | None) -> None:
        """Target ``target`` with probability ``delta`` from now on (None: no targeting);
        with ``weighting``, w_T is computed from the average strategies now."""
        self._target = target
        self.weight = 1.0
        if target is not None and self.weighting:
            self.weight = target_weight(self.delta, self._histories_reach(target.histories))

    def target(self, state: pyspiel.State | None, player: int | None = None) -> None:
        """Target ``player``'s (default: the mover's) information set at ``state`` of
        ``search_game`` (None: no targeting)."""
        self.set_target(None if state is None
                        else information_sets.information_set(self.search_game, state, player))

    def mean_reach(self, state: pyspiel.State, player: int | None = None) -> float:
        """The probability that chance and both players' average strategies (uniform off
        the tree) reach ``player``'s information set at ``state`` of ``search_game``."""
        target = information_sets.information_set(self.search_game, state, player)
        return self._histories_reach(target.histories)

    def _histories_reach(self, histories) -> float:
        total = 0.0
        for history in histories:
            state = self._root.clone()
            reach = 1.0
            for action in history:
                if state.is_chance_node():
                    reach = reach * dict(state.chance_outcomes())[action]
                else:
                    actions, probs = self.average_strategy(state)
                    reach = reach * probs[actions.index(action)]
                state.apply_action(action)
            total += reach
        return total

    @property
    def target_set(self) -> information_sets.InformationSet | None:
        return self._target

    # ---------------------------------------------------------------- iterations
    def run(self, iterations: int | None = None, time_limit: float | None = None) -> int:
        """Runs until ``iterations`` or ``time_limit`` seconds (whichever first); returns
        the number of iterations run."""
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        done = 0
        while iterations is None or done < iterations:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            self.iterate()
            done += 1
        return done

    def iterate(self) -> None:
        """One iteration for the update player ``iterations % 2``."""
        update_player = self.iterations % 2
        targeted = self._target is not None and self._rng.random() < self.delta
        consistent = self._target.consistent_actions if self._target is not None else None
        scale = 1.0 / self.weight
        self._walk(self._root.clone(), (), update_player, 1.0, 1.0, scale, scale, targeted,
                   consistent, True)
        self.iterations += 1

    def _sample(self, actions, probs, on_path, targeted):
        """Samples an action; returns (index, targeted probability, untargeted probability).

        ``on_path`` is the tuple of consistent actions if the history is still on the way
        to the target (targeted sampling restricts to them), else None.
        """
        u = self._rng.random()
        if on_path is None:
            i = sample_index(probs, u)
            return i, probs[i], probs[i]
        allowed = [k for k, a in enumerate(actions) if a in on_path]
        mass = sum(probs[k] for k in allowed)
        restricted = ([probs[k] / mass for k in allowed] if mass > 0.0
                      else [1.0 / len(allowed)] * len(allowed))
        if targeted:
            j = sample_index(restricted, u)
            i = allowed[j]
            return i, restricted[j], probs[i]
        i = sample_index(probs, u)
        rho1 = restricted[allowed.index(i)] if i in allowed else 0.0
        return i, rho1, probs[i]

    def _walk(self, state, history, update_player, reach_i, reach_o, s1, s2, targeted,
              consistent, in_tree):
        """Returns (tail probability pi(h, z), sample probability q(z), u_i(z))."""
        if state.is_terminal():
            q = self.delta * s1 + (1.0 - self.delta) * s2
            return 1.0, q, state.returns()[update_player]
        on_path = None
        if consistent is not None:
            on_path = consistent.get(history)
            next_consistent = consistent if on_path is not None else None
        else:
            next_consistent = None
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            i, rho1, rho2 = self._sample(actions, probs, on_path, targeted)
            a = actions[i]
            state.apply_action(a)
            x, q, u = self._walk(state, history + (a,), update_player, reach_i,
                                 reach_o * probs[i], s1 * rho1, s2 * rho2, targeted,
                                 next_consistent, in_tree)
            return x * probs[i], q, u
        player = state.current_player()
        actions = state.legal_actions()
        n = len(actions)
        node = None
        if in_tree:
            key = (player, state.information_state_string(player))
            node = self.nodes.get(key)
            if node is None:
                node = self.nodes[key] = InfoSetNode(n)
                in_tree = False  # the playout starts below the node just added
        sigma = node.current_strategy(self.gamma) if node is not None else [1.0 / n] * n
        if player == update_player:
            sampling = [self.epsilon / n + (1.0 - self.epsilon) * p for p in sigma]
        else:
            sampling = sigma
        i, rho1, rho2 = self._sample(actions, sampling, on_path, targeted)
        a = actions[i]
        state.apply_action(a)
        if player == update_player:
            child = self._walk(state, history + (a,), update_player, reach_i * sigma[i],
                               reach_o, s1 * rho1, s2 * rho2, targeted, next_consistent,
                               in_tree)
        else:
            child = self._walk(state, history + (a,), update_player, reach_i,
                               reach_o * sigma[i], s1 * rho1, s2 * rho2, targeted,
                               next_consistent, in_tree)
        tail_child, q, u = child
        tail = tail_child * sigma[i]
        if node is not None:
            if player == update_player:
                w = u * reach_o / q
                regrets = node.regrets
                for k in range(n):
                    regrets[k] += (tail_child - tail) * w if k == i else -tail * w
            else:
                weight = reach_o / (self.delta * s1 + (1.0 - self.delta) * s2)
                sums = node.strategy_sums
                for k in range(n):
                    sums[k] += weight * sigma[k]
        return tail, q, u

    # ---------------------------------------------------------------- strategies
    def _table_strategy(self, state, player, num_actions, final_strategy):
        node = self.nodes.get((player, state.information_state_string(player)))
        if node is None:
            return None
        if final_strategy == "current":
            return list(node.current_strategy(self.gamma))
        return node.average_strategy()

    def reset(self) -> None:
        """Forget the tables and the target: a fresh search (a new game)."""
        self.nodes.clear()
        self.iterations = 0
        self._target = None
        self.weight = 1.0


class OOSPolicy(policy_lib.Policy):
    """The OOS average strategy (or the ``final_strategy`` given), answering for states of
    the searched (sequential) game.

    Information sets the search never reached play uniformly. For a simultaneous game the
    states are those of its turn-based conversion: give ``search.search_game`` to
    ``open_spiel.python.algorithms.exploitability.nash_conv``.
    """

    def __init__(self, search: OOSStrategies, final_strategy: str = "average"):
        super().__init__(search.search_game, [0, 1])
        self._search = search
        self._final_strategy = final_strategy

    def action_probabilities(self, state, player_id=None):
        actions, probs = self._search.strategy(state, player_id, self._final_strategy)
        return dict(zip(actions, probs))
