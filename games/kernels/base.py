"""The game kernel protocol: what a kernel module provides, and the node kinds it returns.

A game kernel describes one pyspiel game to compiled search code (the kernel engine runs
whole SM-MCTS iterations on it, :mod:`smmcts_spiel.search.kernel_engine`). Its state is a
small int64 array; its parameters are an int64 array ``params`` and a float64 array
``data`` (e.g. a payoff table). A kernel module provides these numba functions
(``@numba.njit(cache=True)``; ``out``, ``outcomes`` and ``probs`` are caller-owned arrays
large enough for :func:`limits`):

* ``initial_state(params) -> state``: the state of ``game.new_initial_state()``.
* ``status(state, params, data) -> TERMINAL | CHANCE | DECISION``
* ``legal_actions(state, params, data, player, out) -> k``: the player's pyspiel actions in
  ``out[:k]``, ascending, as ``state.legal_actions(player)``; ``k = 0`` where the player
  does not move: a turn of the other player, a chance node (where pyspiel lists the chance
  outcomes) and a terminal.
* ``chance_outcomes(state, params, data, outcomes, probs) -> k``: the outcomes and their
  probabilities, in the order of ``state.chance_outcomes()``.
* ``apply_actions(state, params, data, action0, action1)``: a joint move (``-1`` for a
  player who does not move); ``apply_chance(state, params, data, outcome)``.
* ``rewards(state, params, data) -> r0``: player 0's ``state.rewards()[0]``: the reward of
  the transition into ``state`` (games with terminal rewards: the return at a terminal,
  else 0; ``laser_tag`` and ``repeated_game`` pay rewards along the way).
* ``returns(state, params, data) -> u1``: player 0's ``state.returns()[0]`` (the sum of
  its rewards so far) at any state. The engines read it at terminals: it is the value of
  the game for player 0, the rewards earned on the way included.
* ``rollout(state, params, data, rng) -> u1``: player 0's return at the end of uniformly
  random play and chance from ``state`` (consumes ``state``); ``rng`` is a numpy
  Generator. It runs for most of a search's time in long games: no allocation per step.
* Other leaf evaluators (the evaluator slot): a function with ``rollout``'s signature
  named ``heuristic`` (player 0's value estimate, exact at terminals).

and in Python:

* ``SHORT_NAMES``: the pyspiel short names the kernel describes (``kernel_for`` picks the
  kernel by them).
* ``DEFAULT_EVALUATOR``: ``"random_rollout"`` or ``"heuristic"``, SMMCTSBot's default
  leaf evaluator on this kernel (the measured better one).
* ``parameters(game) -> (params, data)``: the arrays of a loaded game; raises
  :class:`Uncovered` (naming the parameter and why) for parameter sets the kernel does not
  describe, which then play on the generic engine.
* ``limits(params) -> (max_actions, max_chance_outcomes, max_depth)``: most actions of one
  player at one node, most chance outcomes at one node, most nodes on a path from the
  initial state to a terminal (the terminal included). The engine sizes its arrays by
  them: a kernel that exceeds them writes out of bounds.
* Optionally ``utility_range(params, data) -> (min, max)``: player 0's smallest and
  largest return, when it differs from pyspiel's ``game.min_utility()`` /
  ``max_utility()`` (e.g. goofspiel's point difference, where OpenSpiel rounds the
  minimum towards 0).

The second player's value is ``utility_sum - u1`` (:class:`GameKernel.utility_sum`, 0 for
a zero-sum game); the engines map values into [0, 1] with ``GameKernel.min_utility`` and
``max_utility``. :func:`smmcts_spiel.games.kernels.check_kernel` compares every function
with the pyspiel game on random trajectories; docs/writing_a_kernel.md walks through one.
"""

import numba

TERMINAL, CHANCE, DECISION = 0, 1, 2
#: Most joint actions at one node: the kernel engine gives every opened node a children
#: table of that many entries (a kernel whose ``max_actions`` squared exceeds it is refused).
MAX_JOINT_ACTIONS = 1 << 24
#: Most nodes on a root-to-terminal path (``max_depth``): the kernel engine sizes the room
#: one iteration may need by it.
MAX_DEPTH = 100_000


class Uncovered(ValueError):
    """A kernel does not describe these parameters (the message names them and why)."""


# Pieces several kernels share.


@numba.njit(cache=True)
def no_chance_outcomes(state, params, data, outcomes, probs):
    """``chance_outcomes`` of a game without chance nodes."""
    return 0


@numba.njit(cache=True)
def no_chance(state, params, data, outcome):
    """``apply_chance`` of a game without chance nodes."""


@numba.njit(cache=True)
def every_action(num_actions, out):
    """Actions ``0 .. num_actions - 1`` into ``out``; returns their number."""
    for a in range(num_actions):
        out[a] = a
    return num_actions


@numba.njit(cache=True)
def initiative_outcomes(outcomes, probs):
    """Whose move is resolved first, at even odds: outcome 0 (player 0's) or 1."""
    outcomes[0] = 0
    outcomes[1] = 1
    probs[0] = 0.5
    probs[1] = 0.5
    return 2
