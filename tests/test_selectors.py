"""Selector arithmetic against hand-computed updates (paper eq. 3, 4 and Sec. 3.1)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from smmcts_spiel.search import selectors as sel


def test_regret_matching_starts_uniform_and_follows_positive_regret():
    rm = sel.RegretMatchingSelector(2, gamma=0.1)
    assert rm.probabilities() == pytest.approx([0.5, 0.5])
    # Played action 0 for reward 0.3; action 1 would have earned 0.8 (child mean).
    rm.update(0, 0.3, [0.3, 0.8])
    assert rm.regrets == pytest.approx([0.0, 0.5])
    # sigma = (0, 1); with gamma = 0.1: 0.05 / 0.95.
    assert rm.probabilities() == pytest.approx([0.05, 0.95])
    rm.update(1, 0.2, [0.9, 0.2])
    assert rm.regrets == pytest.approx([0.7, 0.5])
    assert rm.probabilities() == pytest.approx([0.05 + 0.9 * 0.7 / 1.2, 0.05 + 0.9 * 0.5 / 1.2])


def test_exp3_hand_update():
    exp3 = sel.Exp3Selector(2, gamma=0.2)
    assert exp3.probabilities() == pytest.approx([0.5, 0.5])
    exp3.update(0, 0.6)  # x0 += 0.6 / 0.5
    assert exp3.reward_sums == pytest.approx([1.2, 0.0])
    # eta = 0.1, w = (0, -1.2): p0 = 0.8 / (1 + e^-0.12) + 0.1 = 0.523971...
    assert exp3.probabilities()[0] == pytest.approx(0.8 / (1 + math.exp(-0.12)) + 0.1)
    assert exp3.probabilities()[0] == pytest.approx(0.523971, abs=1e-6)


def test_exp3_is_stable_for_huge_reward_sums():
    probs = sel.exp3_probabilities([1e6, 0.0, -1e6], 0.3, [0.0] * 3)
    assert all(math.isfinite(p) for p in probs)
    assert probs == pytest.approx([0.7 + 0.1, 0.1, 0.1])


def test_ucb_tries_every_action_then_maximises_the_bound():
    ucb = sel.UCBSelector(3, c=1.0)
    for expected in range(3):
        assert ucb.select(0.0) == expected  # u = 0 picks the first untried action
        ucb.update(expected, [0.2, 0.9, 0.5][expected])
    assert ucb.select(0.5) == 1
    assert ucb.probabilities() == [0.0, 1.0, 0.0]


def test_sample_index_inverts_the_cdf():
    probs = [0.2, 0.5, 0.3]
    assert [sel.sample_index(probs, u) for u in (0.0, 0.19, 0.2, 0.69, 0.7, 0.999)] == [
        0, 0, 1, 1, 2, 2]


def _near_a_boundary(regrets, gamma, u, tolerance=1e-9):
    """Whether ``u`` lies within ``tolerance`` of a boundary of the cumulative regret-matching
    distribution (computed in exact rational arithmetic)."""
    from fractions import Fraction
    positive = [Fraction(max(r, 0.0)) for r in regrets]
    total = sum(positive)
    n = len(regrets)
    cumulative = Fraction(0)
    for r in positive:
        p = (Fraction(gamma) / n + (1 - Fraction(gamma)) * (r / total if total > 0
                                                             else Fraction(1, n)))
        cumulative += p
        if abs(cumulative - Fraction(u)) <= tolerance:
            return True
    return False


@given(st.lists(st.one_of(st.floats(-10, 10), st.just(0.0)), min_size=1, max_size=200),
       st.floats(0.001, 1.0), st.floats(0.0, 1.0, exclude_max=True))
def test_regret_matching_sample_is_the_distribution_s_draw(regrets, gamma, u):
    """The compiled engines' selection without the distribution draws what sampling the
    distribution draws, from the same uniform number (unless ``u`` sits on a boundary,
    where rounding decides either way)."""
    expected = sel.sample_index(sel.regret_matching_probabilities(regrets, gamma,
                                                                  [0.0] * len(regrets)), u)
    drawn = sel.regret_matching_sample(regrets, gamma, u)
    assert drawn == expected or _near_a_boundary(regrets, gamma, u)


def test_regret_matching_sample_by_hand():
    # r+ = (0, 3, 1), gamma = 0.3: p = (0.1, 0.1 + 0.7 * 0.75, 0.1 + 0.7 * 0.25) =
    # (0.1, 0.625, 0.275): boundaries at 0.1 and 0.725.
    draws = [sel.regret_matching_sample([-2.0, 3.0, 1.0], 0.3, u)
             for u in (0.0, 0.09, 0.11, 0.72, 0.73, 0.999)]
    assert draws == [0, 0, 1, 1, 2, 2]
    # No positive regret: uniform.
    assert [sel.regret_matching_sample([0.0, -1.0], 0.3, u) for u in (0.49, 0.51)] == [0, 1]


@pytest.mark.parametrize("name, expected", [("rm", ("rm", False)), ("RMM", ("rm", True)),
                                            ("exp3m", ("exp3", True)), ("ucb", ("ucb", False))])
def test_parse_selector(name, expected):
    assert sel.parse_selector(name) == expected


@pytest.mark.parametrize("bad", ["cfr", "", "rmmm"])
def test_unknown_selector_is_named(bad):
    with pytest.raises(ValueError, match="unknown selector"):
        sel.parse_selector(bad)


@pytest.mark.parametrize("gamma", [0, -0.1, 1.5, "0.1", True])
def test_gamma_outside_unit_interval(gamma):
    with pytest.raises(ValueError, match=r"gamma must be in \(0, 1\]"):
        sel.selector_factory("rm", gamma=gamma)


# ----------------------------------------------------------------------------------------
# Bandit regret matching (GTLibrary's RMSelector) and the decreasing exploration schedule


def test_bandit_regret_update_by_hand():
    # Reward 0.6; the action had probability 0.25: r0 += 0.6 / 0.25, all -= 0.6.
    regrets = [0.0, 1.0, -1.0]
    sel.bandit_regret_update(regrets, 0, 0.6, 0.25)
    assert regrets == pytest.approx([2.4 - 0.6, 1.0 - 0.6, -1.0 - 0.6])


@given(st.lists(st.floats(0, 1), min_size=2, max_size=5),
       st.lists(st.floats(0.05, 1), min_size=5, max_size=5))
def test_bandit_regret_update_is_the_full_information_update_in_expectation(rewards, weights):
    """E_a~p[bandit update] = u_i - E_p u: bandit RM follows the same regrets in
    expectation."""
    n = len(rewards)
    p = [w / sum(weights[:n]) for w in weights[:n]]
    expected = [0.0] * n
    for a in range(n):
        regrets = [0.0] * n
        sel.bandit_regret_update(regrets, a, rewards[a], p[a])
        for i in range(n):
            expected[i] += p[a] * regrets[i]
    mean = sum(pa * u for pa, u in zip(p, rewards))
    assert expected == pytest.approx([u - mean for u in rewards], abs=1e-9)


def test_bandit_selector_uses_the_sampling_probability_of_the_played_action():
    rmb = sel.selector_factory("rmbm", gamma=0.1)(2)
    assert isinstance(rmb, sel.BanditRegretMatchingSelector) and not rmb.uses_action_values
    rmb.update(1, 1.0)  # p = 0.5: r1 += 1 / 0.5, both -= 1
    assert rmb.regrets == pytest.approx([-1.0, 1.0])
    assert rmb.probabilities() == pytest.approx([0.05, 0.95])
    rmb.update(1, 0.0)  # v = 0: no change
    assert rmb.regrets == pytest.approx([-1.0, 1.0])


@pytest.mark.parametrize("name, expected", [("rmb", ("rmb", False)), ("RMBM", ("rmb", True))])
def test_parse_bandit_selector(name, expected):
    assert sel.parse_selector(name) == expected


def test_decreasing_gamma():
    assert sel.decreasing_gamma(1.0, 1.0) == 1.0
    assert sel.decreasing_gamma(0.5, 100.0) == pytest.approx(0.05)
    assert sel.decreasing_gamma(1.0, 0.25) == 1.0  # capped at 1


def test_ucb_breaks_ties_with_its_random_number():
    counts, sums = [2, 2, 2, 4], [1.0, 1.0, 0.0, 2.0]  # actions 0 and 1 tie for the best bound
    picks = [sel.ucb_index_random_ties(sums, counts, 1.0, 0.0, u) for u in (0.0, 0.49, 0.5, 0.99)]
    assert picks == [0, 0, 1, 1]
    assert sel.ucb_index(sums, counts, 1.0) == 0
    untried = [sel.ucb_index_random_ties([0.0] * 4, [1, 0, 3, 0], 1.0, 0.0, u)
               for u in (0.2, 0.7)]
    assert untried == [1, 3]


def test_ucb_ties_bounds_within_its_tolerance():
    """The AIJ 2016 study's UCT: bounds less than the tolerance apart are tied."""
    counts = [10, 10, 10]
    sums = [5.0, 4.99, 4.0]  # means 0.5, 0.499, 0.4: the same exploration term
    exact = {sel.ucb_index_random_ties(sums, counts, 0.5, 0.0, u) for u in (0.0, 0.5, 0.99)}
    assert exact == {0}
    tied = [sel.ucb_index_random_ties(sums, counts, 0.5, 0.005, u) for u in (0.0, 0.49, 0.5, 0.99)]
    assert tied == [0, 0, 1, 1]
    every = {sel.ucb_index_random_ties(sums, counts, 0.5, 0.2, u) for u in (0.0, 0.5, 0.99)}
    assert every == {0, 1, 2}
    ucb = sel.UCBSelector(3, 0.5, tie_tolerance=0.005)
    ucb.reward_sums, ucb.counts = sums, counts
    assert [ucb.select(u) for u in (0.0, 0.99)] == [0, 1]
    with pytest.raises(ValueError, match="tie_tolerance must be a finite number >= 0"):
        sel.selector_factory("ucb", tie_tolerance=-0.1)
