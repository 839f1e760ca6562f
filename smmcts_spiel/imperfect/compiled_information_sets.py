"""Information sets enumerated by compiled code over a game's information kernel.

The walk of :func:`smmcts_spiel.imperfect.information_sets.information_set`, compiled: from
the root, keep the histories where the player saw the same information keys and took the
same actions as in the real game, enumerating chance and opponent moves in between; the
histories that reach the player's current information key form the set. It also builds
the trie of their prefixes, which Online Outcome Sampling follows to target the set.
Games without a kernel take the Python walk.
"""

from __future__ import annotations

import numba
import numpy as np
import pyspiel

from smmcts_spiel.games.kernels import information as kernels

#: Refuse to enumerate an information set with more histories than this.
MAX_HISTORIES = 5_000_000


def kernel_of(search_game: pyspiel.Game) -> kernels.InformationKernel | None:
    """The information kernel of a searched game (a game, or the turn-based conversion of
    a simultaneous one), or None."""
    if search_game.get_type().short_name == "turn_based_simultaneous_game":
        inner = search_game.get_parameters()["game"]
        search_game = pyspiel.load_game(inner["name"], {k: v for k, v in inner.items()
                                                        if k != "name"})
    return kernels.information_kernel_for(search_game)


def target_trie(kernel: kernels.InformationKernel, history, player: int):
    """(trie, trie_open) of ``player``'s information set after ``history`` (see
    :func:`enumerate_set`), without converting the histories to Python tuples."""
    return walk(kernel, history, player)[:2]


def walk(kernel: kernels.InformationKernel, history, player: int):
    """(trie, trie_open, histories, lengths, chance weights, count) of ``player``'s
    information set after ``history``: the arrays of :func:`enumerate_set`, the first
    ``count`` rows of ``histories`` (``lengths[h]`` actions each) being the set."""
    k = kernel
    history = np.asarray(history, np.int64)
    root = k.initial_state()
    seen_keys, seen_actions = own_decisions(k.code, root, k.params, k.data, history, player,
                                            k.max_actions)
    key = key_at(k.code, root, k.params, k.data, history, player, k.max_actions)
    trie, trie_open, histories, lengths, weights, count = enumerate_histories(
        k.code, root, k.params, k.data, player, seen_keys, seen_actions, key, k.max_depth,
        k.max_actions, k.num_action_ids, MAX_HISTORIES)
    if count < 0:
        raise ValueError(f"the information set has more than {MAX_HISTORIES} histories; the "
                         "game is too large for exact targeting")
    return trie, trie_open, histories, lengths, weights, count


def enumerate_set(kernel: kernels.InformationKernel, history, player: int):
    """(histories, chance probabilities, trie, trie_open) of ``player``'s information set
    after ``history`` (of the turn-based game), where ``player`` is to move.

    ``trie[t, action]`` is the child of prefix ``t`` (-1: none; the root prefix is 0);
    ``trie_open[t]`` says whether prefix ``t`` is a strict prefix of a history in the set.
    """
    trie, trie_open, histories, lengths, weights, count = walk(kernel, history, player)
    found = tuple(tuple(int(a) for a in histories[h, :lengths[h]]) for h in range(count))
    return found, tuple(float(w) for w in weights), trie, trie_open


@numba.njit(cache=True)
def own_decisions(code, root, params, data, history, player, width):
    """``player``'s (information key, action) at each of its decisions along ``history``."""
    keys = np.zeros(len(history), np.int64)
    taken = np.zeros(len(history), np.int64)
    scratch = np.zeros(width, np.int64)
    state = root.copy()
    pending = -1
    k = 0
    for action in history:
        mover = kernels.to_move(code, state, params, data, pending, scratch)
        if mover == player:
            keys[k] = kernels.information_key(code, state, params, data, player)
            taken[k] = action
            k += 1
        pending = kernels.step(code, state, params, data, pending, mover, action, scratch)
    return keys[:k], taken[:k]


@numba.njit(cache=True)
def enumerate_histories(code, root, params, data, player, seen_keys, seen_actions, target_key,
               max_depth, width, num_ids, max_histories):
    """The histories of ``player``'s information set and the trie of their prefixes.

    A depth-first walk from the root keeps the histories where ``player`` saw the keys
    ``seen_keys`` and took ``seen_actions`` at its decisions and then reaches
    ``target_key``; chance and opponent moves are enumerated (chance probabilities
    multiplied into the history's weight). Returns (trie, trie_open, histories, lengths,
    chance probabilities, number of histories); -1 histories if there are more than
    ``max_histories``.
    """
    decisions = len(seen_keys)
    states = np.zeros((max_depth + 1, root.shape[0]), np.int64)
    pendings = np.zeros(max_depth + 1, np.int64)
    movers = np.zeros(max_depth + 1, np.int64)
    moves = np.zeros((max_depth + 1, max(width, num_ids)), np.int64)
    move_probs = np.zeros((max_depth + 1, max(width, num_ids)), np.float64)
    num_moves = np.zeros(max_depth + 1, np.int64)
    next_move = np.zeros(max_depth + 1, np.int64)
    own = np.zeros(max_depth + 1, np.int64)
    prob = np.zeros(max_depth + 1, np.float64)
    path = np.zeros(max_depth + 1, np.int64)
    scratch = np.zeros(max(width, num_ids), np.int64)
    chance_probs = np.zeros(max(width, num_ids), np.float64)
    trie = np.full((64, num_ids), -1, np.int64)
    trie_count = 1
    histories = np.zeros((16, max_depth), np.int64)
    lengths = np.zeros(16, np.int64)
    weights = np.zeros(16, np.float64)
    count = 0
    states[0] = root
    pendings[0] = -1
    prob[0] = 1.0
    level = 0
    descend = True  # whether ``level`` was just entered and needs its moves
    while level >= 0:
        if descend:
            descend = False
            num_moves[level] = 0
            next_move[level] = 0
            m = kernels.to_move(code, states[level], params, data, pendings[level], scratch)
            movers[level] = m
            if m == -1:
                n = kernels.chance_outcomes(code, states[level], params, data, scratch,
                                            chance_probs)
                for k in range(n):
                    moves[level, k] = scratch[k]
                    move_probs[level, k] = chance_probs[k]
                num_moves[level] = n
            elif m == player:
                key = kernels.information_key(code, states[level], params, data, player)
                if own[level] == decisions:
                    if key == target_key:  # a history of the set: record it, grow the trie
                        if count == max_histories:
                            return trie, np.zeros(1, np.bool_), histories, lengths, weights, -1
                        if count == histories.shape[0]:
                            bigger = np.zeros((2 * count, max_depth), np.int64)
                            bigger[:count] = histories
                            histories = bigger
                            lengths = np.concatenate((lengths, np.zeros(count, np.int64)))
                            weights = np.concatenate((weights, np.zeros(count)))
                        histories[count, :level] = path[:level]
                        lengths[count] = level
                        weights[count] = prob[level]
                        count += 1
                        t = 0
                        for d in range(level):
                            child = trie[t, path[d]]
                            if child < 0:
                                if trie_count == trie.shape[0]:
                                    bigger = np.full((2 * trie_count, num_ids), -1, np.int64)
                                    bigger[:trie_count] = trie
                                    trie = bigger
                                child = trie_count
                                trie_count += 1
                                trie[t, path[d]] = child
                            t = child
                elif key == seen_keys[own[level]]:
                    moves[level, 0] = seen_actions[own[level]]
                    move_probs[level, 0] = 1.0
                    num_moves[level] = 1
            elif m >= 0:
                n = kernels.legal_actions(code, states[level], params, data, m, scratch)
                for k in range(n):
                    moves[level, k] = scratch[k]
                    move_probs[level, k] = 1.0
                num_moves[level] = n
        if next_move[level] >= num_moves[level]:
            level -= 1
            continue
        j = next_move[level]
        next_move[level] = j + 1
        a = moves[level, j]
        child = level + 1
        states[child] = states[level]
        pendings[child] = kernels.step(code, states[child], params, data, pendings[level],
                                       movers[level], a, scratch)
        prob[child] = prob[level] * move_probs[level, j]
        own[child] = own[level] + (1 if movers[level] == player else 0)
        path[level] = a
        level = child
        descend = True
    trie = trie[:trie_count]
    trie_open = np.zeros(trie_count, np.bool_)
    for t in range(trie_count):
        for a in range(num_ids):
            if trie[t, a] >= 0:
                trie_open[t] = True
    return trie, trie_open, histories[:count], lengths[:count], weights[:count], count


@numba.njit(cache=True)
def key_at(code, root, params, data, history, player, width):
    scratch = np.zeros(width, np.int64)
    state, _ = kernels.replay(code, root, params, data, history, scratch)
    return kernels.information_key(code, state, params, data, player)
