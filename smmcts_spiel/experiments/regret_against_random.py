"""Where a bot loses against a random player: its regret, decision by decision.

Against a fixed opponent the best any player can do is a best response, and OpenSpiel's
``best_response.BestResponsePolicy`` computes its value ``V`` and the values ``Q(I, a)``
of every action at every information set ``I`` (the opponent's strategy and chance fix
the beliefs at ``I``; the player's own strategy does not enter them, by perfect recall).
Playing a bot against a uniformly random opponent and adding up, at each of its
decisions, the regret of the strategy ``p`` it plays there, ``max_a Q(I, a) - sum_a p(a)
Q(I, a)``, splits the gap between ``V`` and the bot's expected return by move: in
expectation the regrets of a game sum to exactly ``V - E[return]`` (the performance
difference lemma). Each regret averages over the bot's mixed move and the opponent's
hidden cards, so the decomposition is much less noisy than the games' returns.

A simultaneous game is searched on its turn-based conversion, as the information-set
searches do; the best response is exact, so the game must be small enough for
``BestResponsePolicy`` (II-Goofspiel(6): about a minute per seat).
"""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import best_response

from smmcts_spiel.bot_specs import make_bot
from smmcts_spiel.imperfect import information_sets


class RandomOpponentResponse:
    """Best-response values of ``player`` against a uniformly random opponent in
    ``search_game`` (a sequential game: the searched game or a turn-based conversion)."""

    def __init__(self, search_game: pyspiel.Game, player: int):
        self._response = best_response.BestResponsePolicy(
            search_game, player, policy_lib.UniformRandomPolicy(search_game))
        self.value = float(self._response.value(search_game.new_initial_state()))
        self._player = player
        self._q: dict[str, dict[int, float]] = {}

    def q_values(self, decision: pyspiel.State) -> dict[int, float]:
        """{action: Q(I, a)} at the player's information set at ``decision``: the
        expected return of ``a`` followed by the best response, over the histories of
        the set weighted by the opponent's and chance's probability of reaching them."""
        key = decision.information_state_string(self._player)
        if key not in self._q:
            histories = self._response.infosets[key]
            total = sum(p for _, p in histories)
            self._q[key] = {a: sum(p * self._response.q_value(s, a) for s, p in histories)
                            / total for a in decision.legal_actions()}
        return self._q[key]


def regret_against_random(game: pyspiel.Game, bot_spec: str, num_games: int, seed: int = 0,
                          responses: list[RandomOpponentResponse] | None = None) -> dict:
    """Plays ``bot_spec`` against uniform random ``num_games`` times (seats alternating,
    a fresh bot each game, game ``g`` seeded ``seed + g``); returns the best-response
    value ``value`` (mean over the seats), the bot's mean ``regret`` per decision number
    (its own moves, counted from 0; forced moves included, at regret 0), their sum
    ``total_regret``, the implied expected return ``value - total_regret`` and the
    realised ``returns`` of the games."""
    search_game = information_sets.check_sequential_search_game(game, "regret_against_random")
    if responses is None:
        responses = [RandomOpponentResponse(search_game, p) for p in (0, 1)]
    regrets: list[float] = []
    returns = []
    for g in range(num_games):
        seat = g % 2
        rng = np.random.default_rng(seed + g)
        bot = make_bot(bot_spec, game, seat, seed + g)
        state = game.new_initial_state()
        move = 0
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(actions, p=probs)))
                continue
            simultaneous = state.is_simultaneous_node()
            if not simultaneous and state.current_player() != seat:
                state.apply_action(int(rng.choice(state.legal_actions())))
                continue
            policy, action = bot.step_with_policy(state)
            q = responses[seat].q_values(
                information_sets.decision_state(search_game, state, seat))
            regret = max(q.values()) - sum(p * q[a] for a, p in policy)
            if move == len(regrets):
                regrets.append(0.0)
            regrets[move] += regret
            move += 1
            if simultaneous:
                joint = [0, 0]
                joint[seat] = action
                joint[1 - seat] = int(rng.choice(state.legal_actions(1 - seat)))
                state.apply_actions(joint)
            else:
                state.apply_action(action)
        returns.append(state.returns()[seat])
    value = float(np.mean([responses[g % 2].value for g in range(num_games)]))
    regret = [r / num_games for r in regrets]
    return {"value": value, "regret": regret, "total_regret": sum(regret),
            "implied_return": value - sum(regret), "returns": returns}
