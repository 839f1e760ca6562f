"""Regret by move against a random player (smmcts_spiel.experiments.regret_against_random)."""

import functools
import itertools

import numpy as np
import pyspiel
import pytest

from smmcts_spiel.experiments.regret_against_random import (
    RandomOpponentResponse,
    regret_against_random,
)
from smmcts_spiel.imperfect import information_sets


def counted_best_response(num_cards: int):
    """Q-values of the best response to a uniformly random bidder in II-Goofspiel with the
    points descending, counted independently of OpenSpiel: the opponent's card sequences
    consistent with our bids and the rounds' outcomes are equally likely."""
    prizes = list(range(num_cards, 0, -1))
    cards = frozenset(range(1, num_cards + 1))

    def outcome(a, c):
        return (a > c) - (a < c)  # +1 won, -1 lost, 0 tied

    def consistent(bids, outcomes):
        return [seq for seq in itertools.permutations(cards, len(bids))
                if all(outcome(a, c) == o for a, c, o in zip(bids, seq, outcomes))]

    @functools.cache
    def q_values(bids, outcomes):
        seqs = consistent(bids, outcomes)
        if len(bids) == num_cards - 1:  # the last card is played automatically
            (a,) = cards - set(bids)
            total = 0.0
            for seq in seqs:
                (c,) = cards - set(seq)
                won = [o for o in outcomes + (outcome(a, c),)]
                total += np.sign(sum(p * o for p, o in zip(prizes, won)))
            return {a: total / len(seqs)}
        q = {}
        for a in sorted(cards - set(bids)):
            value = 0.0
            for seq in seqs:
                rest = cards - set(seq)
                for c in rest:
                    value += max(q_values(bids + (a,), outcomes + (outcome(a, c),)).values()) \
                        / len(rest) / len(seqs)
            q[a] = value
        return q

    return q_values


@pytest.mark.parametrize("num_cards", [3, 4])
def test_the_best_response_to_random_matches_an_independent_count(num_cards):
    game = pyspiel.load_game(f"goofspiel(num_cards={num_cards},imp_info=True,"
                             "points_order=descending)")
    search_game = information_sets.check_sequential_search_game(game, "test")
    counted = counted_best_response(num_cards)
    root = counted((), ())
    state = game.new_initial_state()
    for player in (0, 1):
        response = RandomOpponentResponse(search_game, player)
        assert response.value == pytest.approx(max(root.values()))
        q = response.q_values(information_sets.decision_state(search_game, state, player))
        assert q == pytest.approx({a - 1: v for a, v in root.items()})
    # One round later: won the top prize with the top card, bid 1 against it, tied.
    after = {(num_cards, 1): (num_cards - 1, 0), (1, 2): (0, 1), (2, 2): (1, 1)}
    for (ours, theirs), (a0, a1) in after.items():
        state = game.new_initial_state()
        state.apply_actions([a0, a1])
        q = RandomOpponentResponse(search_game, 0).q_values(
            information_sets.decision_state(search_game, state, 0))
        expected = counted((ours,), ((ours > theirs) - (ours < theirs),))
        assert q == pytest.approx({a - 1: v for a, v in expected.items()})


def test_a_random_bots_regret_at_its_first_move_is_exact():
    game = pyspiel.load_game("goofspiel(num_cards=4,imp_info=True,points_order=descending)")
    search_game = information_sets.check_sequential_search_game(game, "test")
    responses = [RandomOpponentResponse(search_game, p) for p in (0, 1)]
    result = regret_against_random(game, "random", 6, seed=3, responses=responses)
    # The first decision is the same information set in every game (no chance here).
    first = [r.q_values(information_sets.decision_state(search_game, game.new_initial_state(),
                                                        p)) for p, r in enumerate(responses)]
    exact = np.mean([max(q.values()) - np.mean(list(q.values())) for q in first])
    assert result["regret"][0] == pytest.approx(exact)
    assert len(result["regret"]) == 3 and len(result["returns"]) == 6
    assert result["implied_return"] == pytest.approx(result["value"] - sum(result["regret"]))


def test_the_regrets_add_up_to_the_gap_between_the_best_response_and_the_bot():
    # Random against random: expected return 0 over both seats, so the regrets of a game
    # add up to the best response's value on average (performance difference lemma).
    game = pyspiel.load_game("kuhn_poker")
    result = regret_against_random(game, "random", 2000, seed=0)
    assert result["value"] == pytest.approx((1 / 2 + 5 / 12) / 2)  # known BR values
    assert abs(result["implied_return"]) < 0.05
    assert abs(np.mean(result["returns"])) < 0.15


def test_a_game_the_search_cannot_read_is_refused_with_its_reason():
    with pytest.raises(ValueError, match="needs a zero-sum game; 'matrix_pd' is general-sum"):
        regret_against_random(pyspiel.load_game("matrix_pd"), "random", 1)
