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

:func:`play_scored_game` plays one game of a bot (a spec string) against the equilibrium
or any other bot and records these losses at every state; for an :class:`SMMCTSBot` it
also records the losses every final-move rule would have had at the same search tree, so
rules are compared on the same states without playing a game for each. Against any
opponent whose strategy ``rho`` is known at each state (its reported policy, or its move),
the bot's stage gains ``sigma^T M rho - v`` telescope the same way into an unbiased
estimate of its expected return with much less noise than the games' outcomes (a control
variate built from the exact values).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from smmcts_spiel import reports
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
                strategies: list[dict[int, float]], matrix=None) -> np.ndarray:
    """``[[loss against the equilibrium, loss against a best reply], ...]`` of each of
    ``player``'s strategies (``{action: probability}``; empty for a player without a move)
    at ``state``; ``matrix``: :func:`stage_matrix` of ``state`` if already computed."""
    rows, cols, matrix = matrix or stage_matrix(solution, state)
    found = solution.state_solution(state)
    value = found.value
    out = np.zeros((len(strategies), 2))
    if player == 0:
        tau = np.array([found.strategies[1].get(b, 1.0 if len(cols) == 1 else 0.0)
                        for b in cols])
        for k, s in enumerate(strategies):
            sigma = _vector(s, rows)
            payoff = sigma @ matrix
            out[k] = value - payoff @ tau, value - payoff.min()
    else:
        tau = np.array([found.strategies[0].get(a, 1.0 if len(rows) == 1 else 0.0)
                        for a in rows])
        for k, s in enumerate(strategies):
            sigma = _vector(s, cols)
            payoff = matrix @ sigma
            out[k] = tau @ payoff - value, payoff.max() - value
    return out


def play_scored_game(game: pyspiel.Game, spec: str, seat: int, seed: int,
                     opponent: str = "equilibrium",
                     rules: tuple[tuple[str, float], ...] = (),
                     solution: solver.Solution | None = None) -> dict[str, np.ndarray]:
    """One game of the bot ``spec`` in ``seat`` against ``opponent`` (a spec), scored with
    the exact values of every state.

    At every decision state where either player has a choice, with ``sigma`` the bot's
    strategy (the policy it reports, or its move as a pure strategy if it reports none) and
    ``rho`` the opponent's (likewise): ``loss`` and ``best_reply_loss`` of ``sigma``,
    ``opponent_loss`` (of ``rho`` against the equilibrium) and ``gain``, the bot's expected
    value of the stage minus the state's value, ``sigma^T M rho - v`` (mirrored in seat 1).
    The gains telescope like the losses: ``v(root) + sum of gains`` is an unbiased estimate
    of the game's return, free of the noise of both players' sampling inside the strategies
    and of chance (against the equilibrium, ``gain = -loss``). For an SMMCTSBot, also the
    loss of each ``(final_strategy, threshold)`` rule at the same search tree
    (``rule_loss``, ``rule_best_reply_loss``: states x rules). ``returns``: the bot's return
    (relative to half the utility sum); ``value``: its seat's value of the game.
    """
    solution = solution or solution_of(game)
    bot = make_bot(spec, game, seat, seed)
    other = (EquilibriumBot(game, 1 - seat, seed=seed + 1, solution=solution)
             if opponent == "equilibrium" else make_bot(opponent, game, 1 - seat, seed + 1))
    rng = np.random.RandomState(seed)
    state = game.new_initial_state()
    for b in (bot, other):
        b.restart_at(state)
    half = game.utility_sum() / 2
    records: list[tuple[float, float, float, float]] = []
    rule_records: list[np.ndarray] = []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        actions = [pyspiel.INVALID_ACTION, pyspiel.INVALID_ACTION]
        strategies: list[dict[int, float]] = [{}, {}]
        for player, b in ((seat, bot), (1 - seat, other)):
            legal = state.legal_actions(player)
            if not legal:
                continue
            if b.provides_policy():
                pairs, actions[player] = b.step_with_policy(state)
                strategies[player] = dict(pairs)
            else:
                actions[player] = b.step(state)
                strategies[player] = {actions[player]: 1.0}
        rows, cols, matrix = stage_matrix(solution, state)
        if len(rows) * len(cols) > 1:
            own = [strategies[seat]] + _rule_strategies(bot, state, seat, rules)
            losses = move_losses(solution, state, seat, own, matrix=(rows, cols, matrix))
            opponent_loss = move_losses(solution, state, 1 - seat, [strategies[1 - seat]],
                                        matrix=(rows, cols, matrix))[0, 0]
            value = solution.state_value(state)
            sigma = _vector(strategies[0], rows)
            rho = _vector(strategies[1], cols)
            gain = sigma @ matrix @ rho - value
            records.append((losses[0, 0], losses[0, 1], opponent_loss,
                            gain if seat == 0 else -gain))
            rule_records.append(losses[1:])
        if state.is_simultaneous_node():
            state.apply_actions(actions)
        else:
            state.apply_action(actions[state.current_player()])
    table = np.array(records).reshape(-1, 4)
    rule_table = np.array(rule_records).reshape(len(table), len(rules), 2)
    value = solution.value - half
    return {"move": np.arange(len(table)), "loss": table[:, 0],
            "best_reply_loss": table[:, 1], "opponent_loss": table[:, 2],
            "gain": table[:, 3], "rule_loss": rule_table[:, :, 0],
            "rule_best_reply_loss": rule_table[:, :, 1],
            "returns": np.array([state.returns()[seat] - half]),
            "value": np.array([value if seat == 0 else -value])}


def _vector(strategy: dict[int, float], actions: list[int]) -> np.ndarray:
    """A strategy over ``actions``; a player without a move plays the solver's action 0."""
    if not strategy:
        return np.ones(1)
    return np.array([strategy.get(a, 0.0) for a in actions])


def _rule_strategies(bot, state, seat, rules) -> list[dict[int, float]]:
    if not rules:
        return []
    legal = state.legal_actions(seat)
    if len(legal) <= 1:  # no move, or a forced one (the bot does not search it)
        return [{a: 1.0 for a in legal} for _ in rules]
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


def seat_stratified_interval(values: np.ndarray, seats: np.ndarray) -> tuple[float, float]:
    """Mean of the per-seat means of ``values`` (one per game) and the half-width of its 95%
    t interval (``len(values) - 2`` degrees of freedom; inf when the values do not vary).

    The variance is (sum over seats of the seat's sample variance / its number of games) / 4.
    A seat's game value (+v or -v) is constant within the seat, so it drops out of the
    variance; with balanced seats the mean equals the plain mean. Needs two games per seat.
    """
    values, seats = np.asarray(values, float), np.asarray(seats)
    groups = [values[seats == s] for s in (0, 1)]
    if min(len(x) for x in groups) < 2:
        raise ValueError("the seat-stratified interval needs at least two games in each seat")
    variance = sum(x.var(ddof=1) / len(x) for x in groups) / 4
    interval = reports.interval_from_standard_error(
        float(np.mean([x.mean() for x in groups])), float(np.sqrt(variance)), n=len(values),
        degrees_of_freedom=len(values) - 2)
    return interval.estimate, interval.half_width


def play_games(game: str, spec: str, base_seed: int, start: int, stop: int,
               opponent: str = "equilibrium", rules: tuple[tuple[str, float], ...] = (),
               solutions_dir: str | None = None,
               solver_limits: bool = True) -> dict[str, np.ndarray]:
    """Games ``start..stop-1`` (seat ``g % 2`` in game ``g``, seed ``base_seed + 2 g``), as
    one job of :func:`smmcts_spiel.experiments.run_jobs`: the per-state arrays of
    :func:`play_scored_game` concatenated, with ``game`` and ``seat`` per state, and
    ``game_returns`` and ``game_values`` per game. ``solutions_dir``: where the game's exact
    solution is cached (:func:`smmcts_spiel.bots.equilibrium_bot.solution_of`);
    ``solver_limits=False`` reads (or solves) it above the solver's size limits."""
    loaded = pyspiel.load_game(game)
    solution = solution_of(loaded, solutions_dir, **solver.size_limits(solver_limits))
    rules = tuple((str(r), float(t)) for r, t in rules)
    parts = []
    for g in range(start, stop):
        result = play_scored_game(loaded, spec, g % 2, base_seed + 2 * g, opponent, rules,
                                  solution)
        result["game"] = np.full(len(result["move"]), g, np.int64)
        parts.append(result)
    out = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]
           if key not in ("returns", "value")}
    out["game_returns"] = np.concatenate([p["returns"] for p in parts])
    out["game_values"] = np.concatenate([p["value"] for p in parts])
    out["seat"] = out["game"] % 2
    return out
