"""How much the selectors' exploration constants (Exp3's gamma, UCB's c) cost or gain, measured
against exact solutions: the jobs of ``experiments/tune_exploration/tune_exploration.py``.

Two measures, both at fixed iteration budgets (so they do not depend on the machine):

* **stage NashConv** on a game the solver solves: at sampled decision states (the first
  one and states reached by uniformly random play), a fresh search of the bot's engine
  (:class:`smmcts_spiel.bots.SMMCTSBot` with its default evaluator) and, for each
  player, the final strategy's loss against a best reply with exact continuation values
  (``v - min_j (sigma^T M)_j``, :func:`.equilibrium_loss.move_losses`); the two players'
  losses summed. This is the exploitability of the move the bot would play, under each
  final-move rule;
* **NashConv** of the empirical frequencies of the whole tree on the paper's random games
  (:mod:`smmcts_spiel.search.matrix_tree_engine`, the measure of Fig. 2).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyspiel

from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.bots.equilibrium_bot import solution_of
from smmcts_spiel.exact import solver
from smmcts_spiel.experiments import paper
from smmcts_spiel.experiments.equilibrium_loss import move_losses, stage_matrix
from smmcts_spiel.search import matrix_tree_engine
from smmcts_spiel.search.smmcts import check_threshold
from smmcts_spiel.trees import flatten


def sample_states(game: pyspiel.Game, count: int, seed: int) -> list[list[list[int]]]:
    """``count`` decision states, each as its moves from the start (``[outcome]`` per chance
    move, ``[a0, a1]`` per joint move; :func:`replay`): the first decision state, then the
    states after a uniformly random number of uniformly random moves, each a simultaneous
    node where both players choose (sampled again otherwise)."""
    rng = np.random.default_rng(seed)
    found: list[list[list[int]]] = []
    attempts = 0
    while len(found) < count:
        attempts += 1
        if attempts > 100 * count:
            raise ValueError(f"{game}: found only {len(found)} of {count} decision states "
                             "where both players choose")
        state = game.new_initial_state()
        moves: list[list[int]] = []
        steps = 0 if not found else int(rng.integers(1, game.max_game_length() + 1))
        while True:
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                moves.append([int(rng.choice(outcomes, p=probs))])
            elif state.is_terminal() or steps == 0:
                break
            else:
                moves.append([int(rng.choice(state.legal_actions(p))) for p in (0, 1)])
                steps -= 1
            state = replay(game, moves[-1:], state)
        if (not state.is_terminal() and state.is_simultaneous_node()
                and all(len(state.legal_actions(p)) > 1 for p in (0, 1))):
            found.append(moves)
    return found


def replay(game: pyspiel.Game, moves: Sequence[Sequence[int]],
           state: pyspiel.State | None = None) -> pyspiel.State:
    """``state`` (default: the initial state) after ``moves`` (see :func:`sample_states`)."""
    state = state or game.new_initial_state()
    for move in moves:
        if len(move) == 1:
            state.apply_action(move[0])
        else:
            state.apply_actions(list(move))
    return state


def stage_nash_conv_job(game: str, selector: str, gamma: float, c: float,
                        states: Sequence[Sequence[Sequence[int]]], seeds: Sequence[int],
                        checkpoints: Sequence[int], thresholds: Sequence[float],
                        solution_dir: str | None = None,
                        solver_limits: bool = True) -> dict[str, np.ndarray]:
    """``nash_conv[state, seed, checkpoint, rule]``: the stage NashConv (see the module
    docstring) of the empirical frequencies thresholded at ``thresholds[rule]`` (0: as
    they are), after a fresh search of ``checkpoints[k]`` iterations from each state;
    ``solver_limits=False`` solves (or reads) the game above the solver's size limits."""
    loaded = pyspiel.load_game(game)
    solution = solution_of(loaded, solution_dir, **solver.size_limits(solver_limits))
    rules = [check_threshold(t) for t in thresholds]
    out = np.zeros((len(states), len(seeds), len(checkpoints), len(rules)))
    for h, moves in enumerate(states):
        state = replay(loaded, moves)
        matrix = stage_matrix(solution, state)
        for s, seed in enumerate(seeds):
            search = SMMCTSBot(loaded, 0, selector=selector, gamma=gamma, c=c,
                               seed=int(seed)).search
            done = 0
            for k, budget in enumerate(checkpoints):
                root = search.run(state, int(budget) - done)
                done = int(budget)
                for player in (0, 1):
                    strategies = [dict(zip(root.actions[player],
                                           root.strategy(player, "empirical", 0.0, t)))
                                  for t in rules]
                    out[h, s, k] += move_losses(solution, state, player, strategies,
                                                matrix)[:, 1]
    return {"nash_conv": out}


def random_games_job(depth: int, branching: int, selector: str, gamma: float, c: float,
                     base_seed: int, game_index: int, runs: int,
                     checkpoints: Sequence[int]) -> dict[str, np.ndarray]:
    """``nash_conv[run, checkpoint]`` of the empirical frequencies on one of the paper's
    random games (leaf utilities U[0, 1]), as Fig. 2's runs are seeded."""
    root = paper.random_game(depth, branching, base_seed, game_index)
    curves = matrix_tree_engine.exploitability_curves(
        flatten(root), selector, gamma=gamma, c=c, checkpoints=checkpoints,
        seeds=matrix_tree_engine.run_seeds(base_seed, game_index, runs),
        game_value=solver.tree_value(root))
    return {"nash_conv": curves.nash_conv}
