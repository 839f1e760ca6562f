"""MMCTS for Phantom Tic-Tac-Toe on flat arrays, compiled with numba.

The same algorithm as :class:`smmcts_spiel.imperfect.mmcts.MultipleTreeSearch` (read its
docstring), specialised to classical Phantom Tic-Tac-Toe
(:mod:`smmcts_spiel.games.phantom_ttt_rules`) so that millions of iterations take minutes
instead of days. A player's information state is the sequence of its attempts and their
outcomes (placed or refused), so its tree is a dense child table
``children[player, node, 2 * cell + refused]``; each node holds the Exp3 reward sums
``rewards[player, node, cell]`` and visit counts ``counts[player, node, cell]`` over the
nine cells, of which the legal ones (not known taken) are used. The selector arithmetic is
:func:`smmcts_spiel.search.selectors.exp3_probabilities` and ``sample_index`` compiled as is.

It consumes one ``rng.random()`` per decision in the order of play, like the generic
engine, so both grow identical trees from the same seed (checked in the tests).
"""

from __future__ import annotations

import json

import numba
import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.games import phantom_ttt_rules
from smmcts_spiel.imperfect import mmcts
from smmcts_spiel.search import selectors

NUM_CELLS = phantom_ttt_rules.NUM_CELLS
_exp3_probabilities = numba.njit(cache=True)(selectors.exp3_probabilities)
_sample_index = numba.njit(cache=True)(selectors.sample_index)
_has_line = numba.njit(cache=True)(phantom_ttt_rules.has_line)


@numba.njit(cache=True)
def _run_iterations(num_iterations, gamma, rng, children, rewards, counts, num_nodes,
                    prefixes, prefix_lengths):
    """Runs MMCTS iterations in place; returns how many games x won, drew and lost.

    Iteration ``i`` first replays ``prefixes[i % len(prefixes)]`` (forced moves: both
    players descend their trees, adding the missing nodes, and learn nothing there), then
    searches as usual. Training from the root is one empty prefix.
    """
    capacity = children.shape[1]
    board = np.zeros(NUM_CELLS, np.int8)
    views = np.zeros(2, np.int64)
    cur = np.zeros(2, np.int64)
    parent = np.zeros(2, np.int64)
    slot = np.zeros(2, np.int64)
    in_tree = np.zeros(2, np.bool_)
    path_node = np.zeros((2, NUM_CELLS), np.int64)
    path_cell = np.zeros((2, NUM_CELLS), np.int64)
    path_prob = np.zeros((2, NUM_CELLS), np.float64)
    path_len = np.zeros(2, np.int64)
    cells = np.zeros(NUM_CELLS, np.int64)
    sums = np.zeros(NUM_CELLS, np.float64)
    probs = np.zeros(NUM_CELLS, np.float64)
    outcomes = np.zeros(3, np.int64)
    for iteration in range(num_iterations):
        row = iteration % prefixes.shape[0]
        prefix_length = prefix_lengths[row]
        t = 0
        board[:] = 0
        for p in range(2):
            views[p] = 0
            cur[p] = 0 if num_nodes[p] > 0 else -1
            parent[p] = -1
            in_tree[p] = True
            path_len[p] = 0
        player = 0
        marks = 0
        utility = 0.0  # of player 0
        while True:
            forced = t < prefix_length
            u = 0.0 if forced else rng.random()
            k = 0
            for c in range(NUM_CELLS):
                if not (views[player] >> c) & 1:
                    cells[k] = c
                    k += 1
            node = -1
            created = False
            if in_tree[player]:
                node = cur[player]
                if node < 0:
                    if num_nodes[player] < capacity:
                        node = num_nodes[player]
                        num_nodes[player] += 1
                        if parent[player] >= 0:
                            children[player, parent[player], slot[player]] = node
                        created = True
                    else:
                        in_tree[player] = False
            if forced:
                cell = prefixes[row, t]
            elif node >= 0:
                for i in range(k):
                    sums[i] = rewards[player, node, cells[i]]
                _exp3_probabilities(sums[:k], gamma, probs[:k])
                i = _sample_index(probs[:k], u)
                cell = cells[i]
                n = path_len[player]
                path_node[player, n] = node
                path_cell[player, n] = cell
                path_prob[player, n] = probs[i]
                path_len[player] = n + 1
            else:
                i = int(u * k)
                if i >= k:
                    i = k - 1
                cell = cells[i]
            t += 1
            refused = board[cell] != 0
            views[player] |= 1 << cell
            if node >= 0:
                if created and not forced:
                    in_tree[player] = False
                else:
                    parent[player] = node
                    slot[player] = 2 * cell + (1 if refused else 0)
                    cur[player] = children[player, node, slot[player]]
            if refused:
                continue
            board[cell] = player + 1
            marks += 1
            if _has_line(board, player + 1):
                utility = 1.0 if player == 0 else -1.0
                break
            if marks == NUM_CELLS:
                break
            player = 1 - player
        outcomes[0 if utility > 0 else (1 if utility == 0 else 2)] += 1
        for p in range(2):
            reward = ((utility if p == 0 else -utility) + 1.0) / 2.0
            for n in range(path_len[p]):
                node = path_node[p, n]
                cell = path_cell[p, n]
                rewards[p, node, cell] += reward / path_prob[p, n]
                counts[p, node, cell] += 1
    return outcomes


class PhantomTTTMultipleTreeSearch:
    """Both players' MMCTS trees for classical Phantom Tic-Tac-Toe, in numpy arrays."""

    # (player, node, ...) tables, set by _allocate
    children: np.ndarray
    rewards: np.ndarray
    counts: np.ndarray

    def __init__(self, game: pyspiel.Game | None = None, gamma: float = 0.1, seed: int = 0,
                 capacity: int = 1 << 16):
        if game is None:
            game = pyspiel.load_game("phantom_ttt")
        mmcts.check_game(game)
        if not phantom_ttt_rules.is_array_phantom_ttt(game):
            raise ValueError(f"{game} is not classical Phantom Tic-Tac-Toe; use "
                             "smmcts_spiel.imperfect.mmcts.MultipleTreeSearch for other games")
        self.game = game
        self.gamma = selectors.check_gamma(gamma)
        self.seed = seed
        self.iterations = 0
        self.outcomes = np.zeros(3, np.int64)  # training games won / drawn / lost by x
        self._rng = np.random.default_rng(seed)
        self.num_nodes = np.zeros(2, np.int64)
        self._allocate(max(1, int(capacity)))

    def _allocate(self, capacity: int) -> None:
        children = np.full((2, capacity, 2 * NUM_CELLS), -1, np.int32)
        rewards = np.zeros((2, capacity, NUM_CELLS), np.float64)
        counts = np.zeros((2, capacity, NUM_CELLS), np.int32)
        if hasattr(self, "children"):
            used = int(self.num_nodes.max())
            children[:, :used] = self.children[:, :used]
            rewards[:, :used] = self.rewards[:, :used]
            counts[:, :used] = self.counts[:, :used]
        self.children, self.rewards, self.counts = children, rewards, counts

    def train(self, iterations: int, progress: bool = False, chunk: int = 100_000,
              from_state: pyspiel.State | None = None, num_worlds: int = 64) -> None:
        """Runs ``iterations`` simulations, growing the arrays as needed.

        From the root by default; with ``from_state``, from ``num_worlds`` histories drawn
        uniformly among the boards the player to move there cannot rule out (each used in
        turn), so the search concentrates on that player's current information state.
        """
        iterations = checks.check_count(iterations, "iterations")
        prefixes = np.zeros((1, self.game.max_game_length()), np.int64)
        lengths = np.zeros(1, np.int64)
        if from_state is not None and not from_state.is_terminal():
            worlds = [phantom_ttt_rules.sample_world(
                from_state.history(), from_state.current_player(), self._rng)
                for _ in range(max(1, int(num_worlds)))]
            prefixes = np.zeros((len(worlds), self.game.max_game_length()), np.int64)
            lengths = np.array([len(w) for w in worlds], np.int64)
            for row, world in enumerate(worlds):
                prefixes[row, :len(world)] = world
        from tqdm import tqdm  # imported when used: importing the bots must not import it

        with tqdm(total=iterations, disable=not progress, desc="MMCTS", unit="it",
                  unit_scale=True) as bar:
            done = 0
            while done < iterations:
                step = min(chunk, iterations - done)
                # At most one new node per tree per iteration, plus the prefixes' nodes.
                needed = int(self.num_nodes.max()) + step + int(lengths.sum())
                if needed > self.children.shape[1]:
                    self._allocate(max(needed, 2 * self.children.shape[1]))
                self.outcomes += _run_iterations(step, self.gamma, self._rng, self.children,
                                                 self.rewards, self.counts, self.num_nodes,
                                                 prefixes, lengths)
                done += step
                self.iterations += step
                bar.update(step)

    def node_index(self, state: pyspiel.State, player: int | None = None) -> int:
        """The tree node of ``player``'s information state at ``state``, or -1 if absent."""
        player = state.current_player() if player is None else player
        rep = phantom_ttt_rules.replay(state.history())
        node = 0 if self.num_nodes[player] > 0 else -1
        for cell, refused in rep.attempts[player]:
            if node < 0:
                break
            node = int(self.children[player, node, 2 * cell + int(refused)])
        return node

    def policy(self, state: pyspiel.State, final_strategy: str = "empirical"
               ) -> tuple[list[tuple[int, float]], bool]:
        """The mover's strategy at ``state`` and whether it came from the tree."""
        mmcts.check_final_strategy(final_strategy)
        player = state.current_player()
        legal = state.legal_actions()
        node = self.node_index(state, player)
        if node < 0:
            return [(a, 1.0 / len(legal)) for a in legal], False
        probs = mmcts.final_probabilities(self.rewards[player, node, legal],
                                          self.counts[player, node, legal], self.gamma,
                                          final_strategy)
        return list(zip(legal, probs.tolist(), strict=True)), True

    def save(self, path: str) -> None:
        """Writes the used part of the trees and the training state to a ``.npz`` file."""
        used = int(self.num_nodes.max())
        np.savez_compressed(
            path, children=self.children[:, :used], rewards=self.rewards[:, :used],
            counts=self.counts[:, :used], num_nodes=self.num_nodes, gamma=self.gamma,
            seed=self.seed, iterations=self.iterations, outcomes=self.outcomes,
            game=str(self.game),
            rng_state=json.dumps(self._rng.bit_generator.state))

    @classmethod
    def load(cls, path: str, **expected) -> PhantomTTTMultipleTreeSearch:
        """Reads trees written by :meth:`save`; training can go on from where it stopped.

        The file is read without pickle and checked before use (shapes, child indices in
        range, counts and node numbers consistent), so a corrupted or crafted file gives a
        ValueError naming it instead of a crash or silently dropped trees. ``expected``
        (``game``, ``gamma``, ``seed``, ``iterations``) must match what the file records,
        so a cache is never reused for other training parameters.
        """
        try:
            arrays = checks.load_npz(path)
        except ValueError as e:
            raise ValueError(f"MMCTS tree file {path}: cannot read it ({e}); delete it to "
                             "train again") from None
        record = _check_tree_file(path, arrays)
        for name, value in expected.items():
            if name not in record:
                raise TypeError(f"unknown expected field {name!r}; known: {sorted(record)}")
            wanted = str(checks.load_game(value)) if name == "game" else value
            if record[name] != wanted:
                raise ValueError(f"MMCTS tree file {path} was trained with {name}="
                                 f"{record[name]}, not {wanted}; delete it or use another "
                                 "trees directory")
        search = cls(pyspiel.load_game(record["game"]), record["gamma"], record["seed"],
                     capacity=1)
        search.children = arrays["children"].copy()
        search.rewards = arrays["rewards"].copy()
        search.counts = arrays["counts"].copy()
        search.num_nodes = arrays["num_nodes"].astype(np.int64)
        search.iterations = record["iterations"]
        search.outcomes = arrays["outcomes"].astype(np.int64)
        try:
            search._rng.bit_generator.state = record["rng_state"]
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"MMCTS tree file {path}: rng_state is unusable ({e}); delete "
                             "it to train again") from None
        return search


_TREE_FILE_FIELDS = ("children", "rewards", "counts", "num_nodes", "gamma", "seed",
                     "iterations", "outcomes", "game", "rng_state")


def _check_tree_file(path: str, a: dict[str, np.ndarray]) -> dict:
    """The scalar fields of a tree file, after checking every array; ValueError if bad."""
    def bad(problem: str):
        raise ValueError(f"MMCTS tree file {path} is corrupted or not a tree file: {problem}; "
                         "delete it to train again")

    missing = [f for f in _TREE_FILE_FIELDS if f not in a]
    if missing:
        bad(f"missing {', '.join(missing)}")
    children, rewards, counts = a["children"], a["rewards"], a["counts"]
    used = children.shape[1] if children.ndim == 3 else -1
    for name, arr, dtype, width in (("children", children, np.int32, 2 * NUM_CELLS),
                                    ("rewards", rewards, np.float64, NUM_CELLS),
                                    ("counts", counts, np.int32, NUM_CELLS)):
        if arr.dtype != dtype or arr.shape != (2, used, width):
            bad(f"{name} has shape {arr.shape} and dtype {arr.dtype}, expected "
                f"(2, {used}, {width}) of {np.dtype(dtype)}")
    num_nodes, outcomes = a["num_nodes"], a["outcomes"]
    if num_nodes.dtype.kind != "i" or num_nodes.shape != (2,) or num_nodes.min() < 0 \
            or num_nodes.max() != used:
        bad(f"num_nodes is {num_nodes!r}, expected two node counts in 0..{used}, the "
            f"larger {used}")
    if outcomes.dtype.kind != "i" or outcomes.shape != (3,) or outcomes.min() < 0:
        bad(f"outcomes is {outcomes!r}, expected three game counts >= 0")
    for p in range(2):
        n = int(num_nodes[p])
        table = children[p, :n]
        if table.min(initial=-1) < -1 or table.max(initial=-1) >= n:
            bad(f"player {p}'s child indices leave 0..{n - 1}")
        if used > n and (children[p, n:] != -1).any():
            bad(f"player {p} has children beyond its {n} nodes")
    if not np.isfinite(rewards).all() or counts.min(initial=0) < 0:
        bad("rewards are not finite or counts are negative")
    try:
        record = {"gamma": float(a["gamma"]), "seed": int(a["seed"]),
                  "iterations": int(a["iterations"]), "game": str(a["game"]),
                  "rng_state": json.loads(str(a["rng_state"]))}
    except (TypeError, ValueError) as e:
        bad(f"a scalar field is unreadable ({e})")
    if not 0 < record["gamma"] <= 1 or record["seed"] < 0 or record["iterations"] < 0:
        bad(f"gamma {record['gamma']}, seed {record['seed']} or iterations "
            f"{record['iterations']} out of range")
    if int(outcomes.sum()) != record["iterations"]:
        bad(f"{int(outcomes.sum())} training games recorded for {record['iterations']} "
            "iterations")
    game = record["game"]
    if game.split("(")[0] not in phantom_ttt_rules.SUPPORTED_GAMES:
        bad(f"game {game!r} is not Phantom Tic-Tac-Toe")
    state = record["rng_state"]
    if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
        bad("rng_state is not a PCG64 state")
    return record
