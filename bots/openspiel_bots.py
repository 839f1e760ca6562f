"""OpenSpiel's own search bots, wrapped so they play our games fairly and on a time budget.

* :class:`TurnBasedMCTSBot`: OpenSpiel's MCTSBot, Python (``engine="python"``) or C++
  (``engine="cpp"``). It only searches sequential games; on a simultaneous game it searches
  the ``convert_to_turn_based`` game from the start of the round, and as the second mover
  it adds up its visit counts over the first mover's possible actions, so neither seat sees
  the other's choice. A budget is ``iterations`` (simulations), ``time_limit`` (seconds per
  move: the C++ bot stops on its clock, the Python bot is calibrated, see below) or both.
  The Python bot also plays games that pay rewards along the way (``laser_tag``,
  ``repeated_game``), through :func:`terminal_rewards_view`; the C++ one refuses them.
* :class:`ISMCTSBot`: OpenSpiel's Python ISMCTSBot for any game with information state
  strings, on a budget of simulations or seconds per move, with worlds drawn from the
  bot's information set (or, on Phantom Tic-Tac-Toe, by the Belief Sampler's resampler).
"""

from __future__ import annotations

import random
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from smmcts_spiel import checks
from smmcts_spiel.bots.belief_sampler import WorldResampler
from smmcts_spiel.games import phantom_ttt_rules
from smmcts_spiel.imperfect import information_sets

ENGINES = ("python", "cpp")
#: How TurnBasedMCTSBot's seats read the turn-based search of a simultaneous game:
#: "openspiel" player 0 as the first mover, player 1 as the second (the wrapper's rule);
#: "first" / "second" both seats as the first / the second mover (symmetric games only).
SEAT_RULES = ("openspiel", "first", "second")
#: Games whose rules treat both players alike: exchanging the two actions of every joint
#: move gives the game seen from the other seat (returns exchanged; tests/test_match.py
#: checks it on random trajectories), so a seat can search as the other one.
SYMMETRIC_GAMES = ("goofspiel", "blotto", "oshi_zumo")
#: Simulations of the Python bot's first search on a time budget (then doubled).
FIRST_CALIBRATION_SIMULATIONS = 20
#: Simulations of ISMCTSBot's probe search, the first time it plays on a time budget.
FIRST_ISMCTS_PROBE = 20
#: Where ISMCTSBot's worlds come from; its final policies (OpenSpiel's types).
WORLDS = ("auto", "information_set", "belief")
FINAL_POLICIES = {"max_visit": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                  "normalized_visits": ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT}


def terminal_rewards_view(game: pyspiel.Game) -> pyspiel.Game:
    """``game`` as OpenSpiel's Python MCTSBot accepts it when it pays rewards along the way
    (``laser_tag``, ``repeated_game``); a game that pays at the end only, unchanged.

    The bot refuses such games ("Game must have terminal rewards"), yet it scores every
    leaf by ``state.returns()`` (at a terminal state, or at the end of a random rollout),
    and OpenSpiel's returns are the sums of every reward so far: nothing paid along the
    way is lost, only the same constant (the rewards before the searched state) is added to
    every leaf. The view reports the terminal reward model and passes every other call to
    the game; the states are the game's own."""
    if game.get_type().reward_model == pyspiel.GameType.RewardModel.TERMINAL:
        return game
    return _TerminalRewardsView(game)


class _TerminalRewardsView:
    """A game whose type says its rewards come at the end (see terminal_rewards_view)."""

    def __init__(self, game: pyspiel.Game):
        self._game = game
        t = game.get_type()
        self._type = pyspiel.GameType(
            short_name=t.short_name, long_name=t.long_name, dynamics=t.dynamics,
            chance_mode=t.chance_mode, information=t.information, utility=t.utility,
            reward_model=pyspiel.GameType.RewardModel.TERMINAL,
            max_num_players=t.max_num_players, min_num_players=t.min_num_players,
            provides_information_state_string=t.provides_information_state_string,
            provides_information_state_tensor=t.provides_information_state_tensor,
            provides_observation_string=t.provides_observation_string,
            provides_observation_tensor=t.provides_observation_tensor,
            parameter_specification=t.parameter_specification)

    def get_type(self) -> pyspiel.GameType:
        return self._type

    def __getattr__(self, name: str):
        return getattr(self._game, name)


def turn_based_state(game: pyspiel.Game, turn_based: pyspiel.Game, state: pyspiel.State,
                     mirrored: bool = False) -> pyspiel.State:
    """The state of ``turn_based`` (``convert_to_turn_based(game)``) at the start of
    ``state``'s round: its history replayed, with the two actions of every joint move
    exchanged if ``mirrored`` (on a game that treats both players alike, the same game seen
    from the other seat)."""
    search_state = turn_based.new_initial_state()
    if not mirrored:
        for action in state.history():
            search_state.apply_action(action)
        return search_state
    replay = game.new_initial_state()
    history = state.history()
    k = 0
    while k < len(history):
        if replay.is_simultaneous_node():
            joint = history[k:k + 2]
            replay.apply_actions(joint)
            search_state.apply_action(joint[1])
            search_state.apply_action(joint[0])
            k += 2
        else:
            replay.apply_action(history[k])
            search_state.apply_action(history[k])
            k += 1
    return search_state


class TurnBasedMCTSBot(pyspiel.Bot):
    """OpenSpiel's MCTSBot (random rollouts), made able to play simultaneous-move games fairly.

    Sequential games are searched directly. At a simultaneous node the bot searches the
    turn-based conversion from the start of the round; player 0 plays its most visited
    action, player 1 the action with most visits summed over player 0's moves. A player
    with a single legal action plays it without searching.

    The two seats' rules differ: the first mover's search assumes the second sees its move
    (a pessimistic, maximin choice), while the second mover's summed visits answer the
    first-mover moves the search expects. On Goofspiel-13 at 0.1 s per move player 1 wins
    161 of 200 games of this bot against itself (experiments/tournaments, "why `smmcts` does
    better in seat 1").
    ``seats`` chooses: "openspiel" (default, the rule above), or on a game of
    :data:`SYMMETRIC_GAMES` "first" or "second", where both seats play by that mover's
    rule: the seat the conversion does not put there searches the mirrored history (the two
    actions of every joint move exchanged), i.e. the same game seen from the other seat.

    With ``time_limit`` the C++ bot stops on its own clock (``max_wall_clock_time``). The
    Python bot has no clock: at its first search it doubles the simulations from
    :data:`FIRST_CALIBRATION_SIMULATIONS` until a search takes half the budget, then scales
    them after every move by ``time_limit / seconds spent`` (clipped to [0.5, 4]), so it
    spends about ``time_limit`` per move on average.
    """

    def __init__(self, game: pyspiel.Game, player_id: int, iterations: int | None = 1000,
                 time_limit: float | None = None, uct_c: float = 2.0, rollouts: int = 1,
                 engine: str = "python", seed: int | None = None, seats: str = "openspiel"):
        super().__init__()
        checks.check_player_id(player_id)
        iterations, time_limit = checks.check_budget(iterations, time_limit)
        rollouts = checks.check_count(rollouts, "rollouts", minimum=1)
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        self._simultaneous = game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
        if seats not in SEAT_RULES:
            raise ValueError(f"seats must be one of {', '.join(SEAT_RULES)}, got {seats!r}")
        name = game.get_type().short_name
        if seats != "openspiel" and not (self._simultaneous and name in SYMMETRIC_GAMES):
            raise ValueError(
                f"seats={seats!r} searches the game as seen from the other seat, which needs "
                f"a simultaneous game that treats both players alike "
                f"({', '.join(SYMMETRIC_GAMES)}); {name} is not one: use seats='openspiel'")
        self.seats = seats
        # The seat that searches the mirrored history, and whether it reads the search as
        # the first mover (its best root child) or as the second (summed visits).
        self._mirrored = {"openspiel": None, "first": 1, "second": 0}[seats] == player_id
        self._as_first = seats == "first" or (seats == "openspiel" and player_id == 0)
        self._search_game = pyspiel.convert_to_turn_based(game) if self._simultaneous else game
        self._game_object = game
        self._game = str(game)
        self.player_id = player_id
        self.iterations = iterations
        self.time_limit = time_limit
        # the Python bot's calibrated simulations per move
        self._simulations: int | None = None
        seed = 0 if seed is None else int(seed) % 2**31
        if engine == "cpp":
            evaluator = pyspiel.RandomRolloutEvaluator(rollouts, seed)
            self._mcts = pyspiel.MCTSBot(
                self._search_game, evaluator, uct_c, iterations or 10**9, 1000, False, seed,
                False, pyspiel.ChildSelectionPolicy.UCT,
                -1.0 if time_limit is None else time_limit)
        else:
            rng = np.random.RandomState(seed)
            evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=rng)
            self._mcts = mcts.MCTSBot(terminal_rewards_view(self._search_game), uct_c,
                                      iterations or 1, evaluator, solve=False, random_state=rng)
        self._engine = engine

    def restart_at(self, state) -> None:
        checks.check_state_game(state, self._game, "TurnBasedMCTSBot")

    def step(self, state: pyspiel.State) -> int:
        checks.check_state_game(state, self._game, "TurnBasedMCTSBot")
        legal = state.legal_actions(self.player_id)
        if not legal:
            raise ValueError(f"TurnBasedMCTSBot (player {self.player_id}) has no move here")
        if len(legal) == 1:
            return legal[0]
        if self._simultaneous:
            search_state = turn_based_state(self._game_object, self._search_game, state,
                                            self._mirrored)
        else:
            search_state = state
        root = self._search(search_state)
        if not self._simultaneous or self._as_first:
            return root.best_child().action
        visits: dict[int, int] = {}
        for first in root.children:
            for second in first.children:
                visits[second.action] = visits.get(second.action, 0) + second.explore_count
        if not visits:  # too few simulations to reach player 1's moves
            return legal[0]
        return max(visits, key=visits.__getitem__)

    def _search(self, state):
        if self._engine == "cpp" or self.time_limit is None:
            return self._mcts.mcts_search(state)
        if self._simulations is None:  # first move: double until a search takes half the time
            self._simulations = FIRST_CALIBRATION_SIMULATIONS
            while True:
                root, seconds = self._timed_search(state, self._simulations)
                if seconds >= self.time_limit / 2 or self._simulations == self.iterations:
                    break
                self._simulations *= 2
        else:
            root, seconds = self._timed_search(state, self._simulations)
        # Next move: scale by how far this one was from the budget (x0.5 to x4).
        ratio = min(4.0, max(0.5, self.time_limit / max(seconds, 1e-9)))
        self._simulations = max(1, round(self._simulations * ratio))
        return root

    def _timed_search(self, state, simulations):
        if self.iterations is not None:
            simulations = min(simulations, self.iterations)
        self._mcts.max_simulations = simulations
        start = time.perf_counter()
        root = self._mcts.mcts_search(state)
        return root, time.perf_counter() - start


class ISMCTSBot(pyspiel.Bot):
    """OpenSpiel's Python ISMCTSBot (UCT, one random rollout per simulation) for any
    two-player zero-sum game with information state strings, on a budget per move.

    A simultaneous game is searched through its turn-based conversion (the second mover
    of a round cannot see the first's move). Every search starts afresh (OpenSpiel's bot
    keeps no tree between moves) from worlds drawn from the bot's information set:
    ``worlds="information_set"`` draws its histories by chance probability
    (:class:`~smmcts_spiel.imperfect.information_sets.WorldSampler`; any game whose
    information sets are small enough to enumerate), ``"belief"`` draws a Phantom
    Tic-Tac-Toe board uniformly among the consistent ones
    (:class:`~smmcts_spiel.bots.belief_sampler.WorldResampler`), ``"auto"`` the latter on
    Phantom Tic-Tac-Toe, the former elsewhere.

    Budget: ``simulations`` per move, or ``time_limit`` seconds per move (OpenSpiel's bot
    has no clock: each move gets the simulations its rate measured on the earlier moves
    allows in the time left after drawing the worlds; with both, the smaller). Final
    policy: ``max_visit`` (OpenSpiel's default: the most visited action, ties at random)
    or ``normalized_visits`` (sample the visit frequencies).
    """

    def __init__(self, game: pyspiel.Game, player_id: int, simulations: int | None = 100,
                 time_limit: float | None = None, uct_c: float = 2.0, worlds: str = "auto",
                 final_policy: str = "max_visit", seed: int | None = 0):
        super().__init__()
        self._search_game = information_sets.check_sequential_search_game(game, "ISMCTS")
        self.player_id = checks.check_player_id(player_id)
        self.simulations, self.time_limit = checks.check_budget(simulations, time_limit)
        if worlds not in WORLDS:
            raise ValueError(f"worlds must be one of {', '.join(WORLDS)}, got {worlds!r}")
        if final_policy not in FINAL_POLICIES:
            raise ValueError(f"final_policy must be one of {', '.join(FINAL_POLICIES)}, got "
                             f"{final_policy!r}")
        if worlds == "auto":
            worlds = ("belief" if phantom_ttt_rules.is_array_phantom_ttt(game)
                      else "information_set")
        self._game_string = str(game)
        self._uct_c = uct_c
        self._final_policy = FINAL_POLICIES[final_policy]
        seed = 0 if seed is None else int(seed) % 2**31
        self._rng = random.Random(seed + 3)
        self._belief = WorldResampler(game, seed + 2) if worlds == "belief" else None
        if worlds == "information_set":
            information_sets.load_compiled_walk(game)  # not in the first timed move
        # simulations per second, measured on earlier timed moves
        self._rate: float | None = None
        self.total_simulations = 0
        # A budget of simulations alone keeps one seeded OpenSpiel bot for all its moves.
        self._bot = None if self.time_limit is not None else self._openspiel_bot(
            self.simulations, np.random.RandomState(seed), np.random.RandomState(seed + 1))

    def _openspiel_bot(self, simulations, rollout_rng, rng) -> ismcts.ISMCTSBot:
        bot = ismcts.ISMCTSBot(self._search_game, mcts.RandomRolloutEvaluator(1, rollout_rng),
                               self._uct_c, simulations, random_state=rng,
                               final_policy_type=self._final_policy)
        if self._belief is not None:
            bot.set_resampler(self._belief)
        return bot

    def restart_at(self, state: pyspiel.State) -> None:
        checks.check_state_game(state, self._game_string, "ISMCTSBot")

    def step_with_policy(self, state: pyspiel.State):
        """Search, then return (the final policy as (action, p) pairs, sampled action)."""
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        checks.check_state_game(state, self._game_string, "ISMCTSBot")
        decision = information_sets.decision_state(self._search_game, state, self.player_id)
        legal = decision.legal_actions()
        if len(legal) == 1:
            # OpenSpiel's search returns a forced move at once, without simulating: timing
            # it would set the rate absurdly high and the next move's simulations with it.
            return [(legal[0], 1.0)], int(legal[0])
        sampler = (None if self._belief is not None else information_sets.WorldSampler(
            self._search_game, decision, self.player_id, self._rng))
        if deadline is None:
            # without a time limit the bot is built once, with its simulations per move
            assert self._bot is not None and self.simulations is not None
            if sampler is not None:
                self._bot.set_resampler(sampler)
            policy, action = self._bot.step_with_policy(decision)
            self.total_simulations += self.simulations
            return list(policy), int(action)
        if self._rate is None:  # a probe, to measure the rate
            self._timed_search(decision, sampler, FIRST_ISMCTS_PROBE)
        assert self._rate is not None  # measured by the probe
        simulations = max(5, int(self._rate * (deadline - time.perf_counter())))
        if self.simulations is not None:
            simulations = min(simulations, self.simulations)
        policy = self._timed_search(decision, sampler, simulations)
        actions, probs = zip(*policy)
        return list(policy), int(actions[self._rng.choices(range(len(actions)),
                                                           weights=probs)[0]])

    def _timed_search(self, decision, sampler, simulations):
        bot = self._openspiel_bot(simulations, np.random.RandomState(self._rng.getrandbits(31)),
                                  np.random.RandomState(self._rng.getrandbits(31)))
        if sampler is not None:
            bot.set_resampler(sampler)
        start = time.perf_counter()
        policy = bot.get_policy(decision)
        self._rate = simulations / max(time.perf_counter() - start, 1e-9)
        self.total_simulations += simulations
        return policy

    def step(self, state: pyspiel.State) -> int:
        return self.step_with_policy(state)[1]

    def provides_policy(self) -> bool:
        return True
