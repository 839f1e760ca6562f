"""The histories of a player's current information set, found from the player's own view.

Online search in an imperfect-information game needs the set of histories the searching
player cannot tell apart from the real one: Outcome Sampling targets it (IST), and
information-set SM-MCTS and ISMCTS draw their determinised worlds from it. Games rarely
implement ``resample_from_infostate``, so :func:`information_set` enumerates the set
from the player's information alone: a depth-first walk from the root that, at each of the
player's decisions, keeps only the histories where the player saw the same information
state and took the same action as in the real game. Chance and opponent moves between the
player's decisions are enumerated, so this is for games whose information sets are small
(Kuhn and Leduc poker, small Goofspiel, Phantom Tic-Tac-Toe).

A simultaneous game is searched through ``pyspiel.convert_to_turn_based``, where the
second mover of a round does not see the first mover's action of that round.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import random

import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.imperfect import compiled_information_sets

#: Refuse to enumerate more histories than this (the walk would take too long).
MAX_HISTORIES = 200_000


@dataclasses.dataclass(frozen=True)
class InformationSet:
    """The histories of one information set of ``player`` and the paths that reach them.

    Attributes:
      player: whose information set it is.
      key: the player's information state string there.
      histories: the action sequences of the histories in the set.
      chance_probabilities: for each history, the product of its chance probabilities
        (proportional to the player's belief when the opponent plays uniformly).
      trie, trie_open: the prefixes of the histories as arrays, when the compiled walk
        found the set (see :mod:`.compiled_information_sets`), else None.
    """

    player: int
    key: str
    histories: tuple[tuple[int, ...], ...]
    chance_probabilities: tuple[float, ...]
    trie: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)
    trie_open: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)

    @functools.cached_property
    def consistent_actions(self) -> dict[tuple[int, ...], tuple[int, ...]]:
        """For every strict prefix of a history in the set, the actions that keep the play
        on the way to the set (the targeting of Outcome Sampling)."""
        consistent: dict[tuple[int, ...], set[int]] = {}
        for history in self.histories:
            for depth in range(len(history)):
                consistent.setdefault(history[:depth], set()).add(history[depth])
        return {h: tuple(sorted(a)) for h, a in consistent.items()}


def _decisions(game: pyspiel.Game, history, player: int):
    """The (information state, action) pairs of ``player`` along ``history``."""
    state = game.new_initial_state()
    seen = []
    for action in history:
        if not state.is_chance_node() and state.current_player() == player:
            seen.append((state.information_state_string(player), action))
        state.apply_action(action)
    return seen, state


def information_set(game: pyspiel.Game, state: pyspiel.State,
                    player: int | None = None, compiled: bool | None = None) -> InformationSet:
    """The information set of ``player`` (default: the player to move) at ``state``.

    ``game`` must be sequential (use ``pyspiel.convert_to_turn_based`` for a simultaneous
    game) and ``state`` one of its states where ``player`` is to move. ``compiled``: walk
    with compiled code over the game's information kernel (default: when it has one), or
    in Python over pyspiel states; both find the same histories in the same order.
    """
    if player is None:
        player = state.current_player()
    if state.is_terminal() or state.is_chance_node() or state.current_player() != player:
        raise ValueError(f"player {player} is not to move in this state, so it has no "
                         f"current information set to search from:\n{state}")
    key = state.information_state_string(player)
    kernel = compiled_information_sets.kernel_of(game) if compiled is not False else None
    if compiled and kernel is None:
        raise ValueError(f"{game} has no information kernel; use compiled=False")
    if kernel is not None:
        found, chance_probabilities, trie, trie_open = compiled_information_sets.enumerate_set(
            kernel, state.history(), player)
        return InformationSet(player, key, found, chance_probabilities, trie, trie_open)
    decisions, _ = _decisions(game, state.history(), player)
    histories: list[tuple[int, ...]] = []
    chance: list[float] = []

    def walk(node: pyspiel.State, history: tuple[int, ...], prob: float, depth: int) -> bool:
        """Collects the set's histories below ``node``; True if it found any."""
        if node.is_terminal():
            return False
        if node.is_chance_node():
            moves = node.chance_outcomes()
        elif node.current_player() == player:
            info = node.information_state_string(player)
            if depth == len(decisions):
                if info != key:
                    return False
                histories.append(history)
                chance.append(prob)
                if len(histories) > MAX_HISTORIES:
                    raise ValueError(f"the information set has more than {MAX_HISTORIES} "
                                     f"histories; {game} is too large for exact targeting")
                return True
            seen, action = decisions[depth]
            if info != seen:
                return False
            moves = [(action, 1.0)]
            depth += 1
        else:
            moves = [(a, 1.0) for a in node.legal_actions()]
        found = False
        for action, p in moves:
            if walk(node.child(action), history + (action,), prob * p, depth):
                found = True
        return found

    walk(game.new_initial_state(), (), 1.0, 0)
    return InformationSet(player, key, tuple(histories), tuple(chance))


def decision_state(search_game: pyspiel.Game, state: pyspiel.State,
                   player: int) -> pyspiel.State:
    """The state of ``search_game`` (``state``'s game or its turn-based conversion) where
    ``player`` decides at ``state``: player 2 of a simultaneous round gets a first move it
    cannot see (the first legal one; its information state is the same for all)."""
    if state.is_terminal() or not state.legal_actions(player):
        raise ValueError(f"player {player} has no move to make in this state:\n{state}")
    decision = search_game.new_initial_state()
    for action in state.history():
        decision.apply_action(action)
    while decision.current_player() != player:
        decision.apply_action(decision.legal_actions()[0])
    return decision


def check_sequential_search_game(game: pyspiel.Game, purpose: str) -> pyspiel.Game:
    """The game a search over information states runs on: the turn-based conversion of a
    simultaneous game, the game itself otherwise (after checking its scope)."""
    checks.check_game(game, purpose, perfect_information=False, information_states=True,
                      zero_sum_only=True)
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        return pyspiel.convert_to_turn_based(game)
    return game


def replay(game: pyspiel.Game, history) -> pyspiel.State:
    """The state of ``game`` after ``history``, whose simultaneous moves are flattened
    (player 1's action, then player 2's, as in ``state.history()``)."""
    state = game.new_initial_state()
    actions = iter(history)
    for action in actions:
        if state.is_simultaneous_node():
            state.apply_actions([action, next(actions)])
        else:
            state.apply_action(action)
    return state


def load_compiled_walk(game: pyspiel.Game) -> None:
    """Find the information set at the first decision of ``game`` with the compiled walk,
    so that loading (or compiling) the walk happens now rather than inside a bot's first
    timed search; nothing for games without an information kernel."""
    search_game = check_sequential_search_game(game, "the information-set walk")
    if compiled_information_sets.kernel_of(search_game) is None:
        return
    state = first_decision_state(search_game)
    information_set(search_game, state, state.current_player(), compiled=True)


def first_decision_state(game: pyspiel.Game) -> pyspiel.State:
    """The initial state, after the first chance outcome(s) if chance moves first."""
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


def decision_states(start: pyspiel.Game | pyspiel.State):
    """Every state below ``start`` (a state, or a game: from its root) where a player
    decides, depth first, each with the probability that chance plays to it from
    ``start``: the exhaustive walk behind brute-force checks on small games."""
    root = start.new_initial_state() if isinstance(start, pyspiel.Game) else start.clone()
    stack = [(root, 1.0)]
    while stack:
        state, reach = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend((state.child(a), reach * p) for a, p in state.chance_outcomes())
            continue
        yield state, reach
        stack.extend((state.child(a), reach) for a in state.legal_actions())


def random_decision_state(game: pyspiel.Game, rng: np.random.Generator,
                          min_depth: int) -> pyspiel.State:
    """On a uniformly random trajectory, the first decision at least ``min_depth`` actions
    deep (the last decision if the game ends before): a target for tests and benchmarks."""
    state, last = game.new_initial_state(), None
    while not state.is_terminal():
        if not state.is_chance_node():
            if len(state.history()) >= min_depth:
                return state
            last = state.clone()
        actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                   else state.legal_actions())
        state.apply_action(actions[rng.integers(len(actions))])
    return last


class WorldSampler:
    """Draws histories of ``player``'s information set at ``state``, by chance probability.

    ``sampler()`` returns a fresh state of ``game`` (simultaneous or sequential) that the
    player cannot tell from ``state``; histories are weighted by their chance
    probabilities, i.e. the belief of a player who assumes the opponent plays uniformly
    (the determinisation of ISMCTS). ``sampler(state, player)`` ignores its arguments, so
    it also serves as the resampler of OpenSpiel's ``ISMCTSBot``. ``sampler.draw(u)`` is
    the world of a given uniform number ``u`` in [0, 1) (a search drawing from its own
    generator).
    """

    def __init__(self, game: pyspiel.Game, state: pyspiel.State, player: int,
                 rng: random.Random | None = None):
        search_game = check_sequential_search_game(game, "the world sampler")
        simultaneous = search_game is not game
        decision = decision_state(search_game, state, player)
        hidden = len(decision.history()) - len(state.history())  # a round's hidden first move
        self.information_set = information_set(search_game, decision, player)
        self._histories = [h[:len(h) - hidden] for h in self.information_set.histories]
        self._cumulative = list(itertools.accumulate(self.information_set.chance_probabilities))
        self._game = game
        self._simultaneous = simultaneous
        self._rng = rng

    def __call__(self, state=None, player=None) -> pyspiel.State:
        if self._rng is None:
            raise ValueError("this WorldSampler has no generator: give it rng= to call it, "
                             "or draw worlds with draw(u)")
        return self.draw(self._rng.random())

    def draw(self, u: float) -> pyspiel.State:
        """The world of the uniform number ``u``: the history where the cumulative chance
        probability (scaled to 1) passes ``u``."""
        u = u * self._cumulative[-1]
        history = self._histories[min(bisect.bisect_right(self._cumulative, u),
                                      len(self._histories) - 1)]
        if self._simultaneous:
            return replay(self._game, history)
        world = self._game.new_initial_state()
        for action in history:
            world.apply_action(action)
        return world
