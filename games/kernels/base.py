"""What every game kernel provides, and the node kinds its ``status`` returns.

A game kernel describes one pyspiel game to compiled search code: its state is a small
int64 array, its parameters an int64 array ``params`` and a float64 array ``data`` (e.g. an
explicit tree's leaf values), and it provides these numba functions (``out``,
``outcomes`` and ``probs`` are caller-owned arrays large enough for :func:`limits`):

* ``initial_state(params) -> state``
* ``status(state, params, data) -> TERMINAL | CHANCE | DECISION``
* ``legal_actions(state, params, data, player, out) -> k``: the player's pyspiel actions in
  ``out[:k]``, ascending; ``k = 0`` when the player does not move here.
* ``chance_outcomes(state, params, data, outcomes, probs) -> k``
* ``apply_actions(state, params, data, action0, action1)``: a joint move (``-1`` for a player
  who does not move); ``apply_chance(state, params, data, outcome)``.
* ``returns(state, params, data) -> u1``: player 0's return at a terminal state.
* ``rollout(state, params, data, rng) -> u1``: player 0's return after uniformly random play
  and chance from ``state`` (consumes ``state``); ``rng`` is a numpy Generator.
* Leaf evaluators (the evaluator slot): any further function with ``rollout``'s signature,
  e.g. a game-aware ``heuristic``, listed in the kernel's ``EVALUATORS``.

plus the Python functions ``parameters(game) -> (params, data) | None`` (None: parameters the kernel
does not cover, the search falls back to the generic engine) and ``limits(params)``.
"""

TERMINAL, CHANCE, DECISION = 0, 1, 2
