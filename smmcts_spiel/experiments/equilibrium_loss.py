"""Where a bot's shortfall against an exact equilibrium comes from, move by move.

In a two-player zero-sum game with perfect information between stages (what
:mod:`smmcts_spiel.exact.solver` solves), let ``v(s)`` be player 1's value of state ``s``,
``M(s)`` the stage matrix of the exact values of its children and ``tau*(s)`` the
equilibrium strategy of the opponent. A player who plays ``sigma`` at ``s`` against the
equilibrium loses, with exact continuation values,

    loss(s, sigma) = v(s) - sigma^T M(s) tau*(s)     (player 1; player 2 mirrored),

and these losses telescope: against an equilibrium player, a bot's expected return is
``v(root) - E[sum of loss(s_t, sigma_t)]`` over the states where it moves. So the shortfall
of a whole match splits into moves, each known exactly, and summing the per-move losses of
the bot's *strategy* (rather than the outcome of its sampled moves) estimates the same
expected shortfall as playing games, with far less noise. The loss is zero for any strategy
inside the equilibrium's support and positive for every move outside it.

``best_reply_loss(s, sigma) = v(s) - min_j (sigma^T M(s))_j`` is what a reply that knows
``sigma`` takes at that stage (with equilibrium play afterwards): the stage's
exploitability, which a pure strategy maximises.

:func:`play_against_equilibrium` plays one game of a bot (a spec string) against the
equilibrium and records these losses at every move of the bot; for an :class:`SMMCTSBot` it
also records the losses every final-move rule would have had at the same search tree, so
rules are compared on the same states without playing a game for each.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from smmcts_spiel.bot_specs import make_bot
from smmcts_spiel.bots import SMMCTSBot
from smmcts_spiel.bots.equilibrium_bot import EquilibriumBot, solution_of
from smmcts_spiel.exact import solver


def stage_matrix(solution: solver.Solution, state: pyspiel.State
                 ) -> tuple[list[int], list[int], np.ndarray]:
    """Both players' actions and player 1's exact values of the children of ``state``."""
    rows, cols = solver.legal_actions(state, 0), solver.legal_actions(state, 1)
    children = solver.joint_children(state, rows, cols)
    return rows, cols, np.array([[solution.state_value(c) for c in row] for row in children])


def move_losses(solution: solver.Solution, state: pyspiel.State, player: int,
                strategies: list[dict[int, float]]) -> np.ndarray:
    """``[[loss against the equilibrium, loss against a best reply], ...]`` of each of
    ``player``'s strategies (``{action: probability}``) at ``state``."""
    rows, cols, matrix = stage_matrix(solution, state)
    found = solution.state_solution(state)
    value = found.value
    out = np.zeros((len(strategies), 2))
    if player == 0:
        tau = np.array([found.strategies[1].get(b, 1.0 if len(cols) == 1 else 0.0)
                        for b in cols])
        for k, s in enumerate(strategies):
            sigma = np.array([s.get(a, 0.0) for a in rows])
            payoff = sigma @ matrix
            out[k] = value - payoff @ tau, value - payoff.min()
    else:
        tau = np.array([found.strategies[0].get(a, 1.0 if len(rows) == 1 else 0.0)
                        for a in rows])
        for k, s in enumerate(strategies):
            sigma = np.array([s.get(b, 0.0) for b in cols])
            payoff = matrix @ sigma
            out[k] = tau @ payoff - value, payoff.max() - value
    return out


def play_against_equilibrium(game: pyspiel.Game, spec: str, seat: int, seed: int,
                             rules: tuple[tuple[str, float], ...] = (),
                             solution: solver.Solution | None = None) -> dict[str, np.ndarray]:
    """One game of the bot ``spec`` in ``seat`` against the exact equilibrium.

    At every state where the bot has a choice: its strategy (the policy it reports, or its
    move as a pure strategy if it reports none) and, for an SMMCTSBot, the final strategy of
    each ``(final_strategy, threshold)`` rule at the same search tree. Returns per move
    ``move`` (number of the bot's decisions so far), ``loss`` and ``best_reply_loss`` of the
    strategy it played, ``rule_loss`` / ``rule_best_reply_loss`` (moves x rules), and the
    game's ``returns`` (the bot's return, once).
    """
    solution = solution or solution_of(game)
    bot = make_bot(spec, game, seat, seed)
    opponent = EquilibriumBot(game, 1 - seat, seed=seed + 1, solution=solution)
    rng = np.random.RandomState(seed)
    state = game.new_initial_state()
    for b in (bot, opponent):
        b.restart_at(state)
    moves, losses, rule_losses = [], [], []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        legal = state.legal_actions(seat)
        actions = [pyspiel.INVALID_ACTION, pyspiel.INVALID_ACTION]
        if legal:
            if bot.provides_policy():
                pairs, actions[seat] = bot.step_with_policy(state)
                played = dict(pairs)
            else:
                actions[seat] = bot.step(state)
                played = {actions[seat]: 1.0}
            if len(legal) > 1:
                strategies = [played] + _rule_strategies(bot, state, seat, rules)
                result = move_losses(solution, state, seat, strategies)
                moves.append(len(moves))
                losses.append(result[0])
                rule_losses.append(result[1:])
        if state.legal_actions(1 - seat):
            actions[1 - seat] = opponent.step(state)
        if state.is_simultaneous_node():
            state.apply_actions(actions)
        else:
            state.apply_action(actions[state.current_player()])
    losses = np.array(losses).reshape(-1, 2)
    rule_losses = np.array(rule_losses).reshape(len(moves), len(rules), 2)
    return {"move": np.array(moves, np.int64), "loss": losses[:, 0],
            "best_reply_loss": losses[:, 1], "rule_loss": rule_losses[:, :, 0],
            "rule_best_reply_loss": rule_losses[:, :, 1],
            "returns": np.array([state.returns()[seat] - game.utility_sum() / 2])}


def _rule_strategies(bot, state, seat, rules) -> list[dict[int, float]]:
    if not rules:
        return []
    if not isinstance(bot, SMMCTSBot):
        raise ValueError("final-move rules can only be compared for SMMCTSBot (smmcts specs)")
    search = bot.search
    node = search.find(state)
    actions = node.actions[seat]
    out = []
    for final_strategy, threshold in rules:
        if final_strategy.startswith("average") and not search.final_strategy.startswith(
                "average"):
            raise ValueError(f"rule {final_strategy!r} needs the search to track average "
                             "strategies: give the bot final_strategy=average...")
        out.append(dict(zip(actions, node.strategy(seat, final_strategy, search.exploration,
                                                    threshold))))
    return out


def play_games(game: str, spec: str, base_seed: int, start: int, stop: int,
               rules: tuple[tuple[str, float], ...] = ()) -> dict[str, np.ndarray]:
    """Games ``start..stop-1`` (seat ``g % 2`` in game ``g``, seed ``base_seed + 2 g``), as
    one job of :func:`smmcts_spiel.experiments.run_jobs`: the per-move arrays of
    :func:`play_against_equilibrium` concatenated, with ``game`` and ``seat`` per move and
    ``game_returns`` per game."""
    loaded = pyspiel.load_game(game)
    rules = tuple((str(r), float(t)) for r, t in rules)
    parts = []
    for g in range(start, stop):
        result = play_against_equilibrium(loaded, spec, g % 2, base_seed + 2 * g, rules)
        result["game"] = np.full(len(result["move"]), g, np.int64)
        parts.append(result)
    out = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]
           if key != "returns"}
    out["game_returns"] = np.concatenate([p["returns"] for p in parts])
    out["seat"] = out["game"] % 2
    return out
