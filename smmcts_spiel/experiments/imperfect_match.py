"""Head-to-head matches of imperfect-information bots at equal wall-clock time per move.

:func:`make_bot` builds every bot of the imperfect-information comparison from a name, a
game and a time per move (kept here, apart from the match runner's spec registry, until the
bot specs are merged there). OpenSpiel's ISMCTSBot plays through the ``ismcts`` bot's time budget
(:class:`~smmcts_spiel.bots.openspiel_bots.ISMCTSBot`); MMCTSBot takes a number of
simulations, not a time, so it is wrapped: it trains in small batches until the time is
up.
"""

from __future__ import annotations

import random
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots
from tqdm.auto import tqdm

from smmcts_spiel import checks, reports
from smmcts_spiel.bots import BeliefSamplerBot, ISSMMCTSBot, MMCTSBot, OOSBot
from smmcts_spiel.bots.openspiel_bots import ISMCTSBot
from smmcts_spiel.bots.smmcts_bot import DEFAULT_THRESHOLD

BOT_NAMES = ("oos", "oos_paper", "oos_threshold", "is_smmcts_rm", "is_smmcts_exp3", "ismcts",
             "mmcts", "belief_sampler", "random")
_MMCTS_BATCH = 200


class TimedMMCTSBot(pyspiel.Bot):
    """MMCTSBot (Exp3, empirical final strategy) training from its information state
    until the time per move is up; its trees persist between the moves of a game, and
    every game starts with fresh trees (one search per game, like the other bots)."""

    def __init__(self, game: pyspiel.Game, player_id: int, time_limit: float, seed: int):
        super().__init__()
        checks.check_budget(None, time_limit)
        self._time_limit = float(time_limit)
        self._game, self._player_id = game, player_id
        self._seeds = random.Random(seed)
        self.simulations = 0
        self._new_search()

    def _new_search(self) -> None:
        # One training simulation compiles the numba engine now, not during a timed move.
        self._bot = MMCTSBot(self._game, self._player_id, training_iterations=1, gamma=0.1,
                             seed=self._seeds.getrandbits(31), final_strategy="empirical")
        self.simulations += 1

    def restart_at(self, state) -> None:
        """A new game: fresh trees."""
        self._new_search()

    def step(self, state: pyspiel.State) -> int:
        deadline = time.perf_counter() + self._time_limit
        while time.perf_counter() < deadline:
            self._bot.search.train(_MMCTS_BATCH, from_state=state)
            self.simulations += _MMCTS_BATCH
        return self._bot.step(state)


def make_bot(name: str, game: pyspiel.Game, player_id: int, time_limit: float,
             seed: int) -> pyspiel.Bot:
    """A fresh, seeded bot ``name`` (one of :data:`BOT_NAMES`) with ``time_limit`` s/move."""
    if name in ("oos", "oos_paper", "oos_threshold"):
        # oos_threshold: the default final-move threshold of SMMCTSBot; the
        # others the threshold of their preset.
        threshold = DEFAULT_THRESHOLD if name == "oos_threshold" else None
        return OOSBot(game, player_id, iterations=None, time_limit=time_limit, seed=seed,
                      threshold=threshold, preset="paper" if name == "oos_paper" else "default")
    if name in ("is_smmcts_rm", "is_smmcts_exp3"):
        return ISSMMCTSBot(game, player_id, selector=name.rpartition("_")[2], gamma=0.1,
                           iterations=None, time_limit=time_limit, seed=seed)
    if name == "ismcts":
        return ISMCTSBot(game, player_id, simulations=None, time_limit=time_limit, seed=seed)
    if name == "mmcts":
        return TimedMMCTSBot(game, player_id, time_limit, seed)
    if name == "belief_sampler":
        return BeliefSamplerBot(game, player_id, seed=seed)
    if name == "random":
        return pyspiel.make_uniform_random_bot(player_id, seed)
    raise ValueError(f"unknown bot {name!r}; choose one of {', '.join(BOT_NAMES)}")


def search_iterations(bot: pyspiel.Bot) -> int | None:
    """Iterations (simulations) the bot has searched so far, if it searches."""
    if isinstance(bot, (OOSBot, ISSMMCTSBot)):
        return bot.total_iterations
    if isinstance(bot, ISMCTSBot):
        return bot.total_simulations
    return getattr(bot, "simulations", None)


def play_pair(game: pyspiel.Game, name_a: str, name_b: str, num_games: int,
              time_limit: float, seed: int, progress: bool = True) -> dict:
    """``num_games`` games of A against B, seats alternating; A's returns and search rates.

    Every game starts each bot afresh (``evaluate_bots`` calls ``restart_at``, which clears
    the searches' tables and trees); a bot keeps its search between the moves of a game.
    """
    rng = random.Random(seed)
    bots_a = [make_bot(name_a, game, p, time_limit, rng.getrandbits(31)) for p in (0, 1)]
    bots_b = [make_bot(name_b, game, p, time_limit, rng.getrandbits(31)) for p in (0, 1)]
    chance_rng = np.random.RandomState(rng.getrandbits(31))
    returns: list[float] = []
    moves: dict[str, int | None] = {name_a: 0, name_b: 0}
    for k in tqdm(range(num_games), desc=f"{name_a} vs {name_b}", leave=False,
                  disable=not progress):
        seat_a = k % 2
        bots = [bots_a[0], bots_b[1]] if seat_a == 0 else [bots_b[0], bots_a[1]]
        state = game.new_initial_state()
        result = evaluate_bots(state, bots, chance_rng)
        returns.append(result[seat_a])
    for name, bots in ((name_a, bots_a), (name_b, bots_b)):
        counts = [c for c in map(search_iterations, bots) if c is not None]
        moves[name] = sum(counts) if len(counts) == len(bots) else None
    return {"returns": returns, "iterations": moves}


def summary(returns) -> dict:
    """Wins, draws, losses, mean return and the half-width of its 95% t interval (inf when
    the games cannot give one: fewer than two, or all the same)."""
    r = np.asarray(returns, dtype=float)
    return {"games": len(r), "wins": int(np.sum(r > 0)), "draws": int(np.sum(r == 0)),
            "losses": int(np.sum(r < 0)), "mean": float(np.mean(r)),
            "ci95": reports.mean_interval(r).half_width}


def pair_job(game: str, bot_a: str, bot_b: str, num_games: int, time_limit: float,
             seed: int) -> dict[str, np.ndarray]:
    """One match of ``experiments/imperfect/imperfect_match.py`` as arrays (a resumable runner
    job)."""
    result = play_pair(pyspiel.load_game(game), bot_a, bot_b, num_games, time_limit, seed,
                       progress=False)
    iterations = [-1 if result["iterations"][n] is None else result["iterations"][n]
                  for n in (bot_a, bot_b)]
    return {"returns": np.array(result["returns"]), "iterations": np.array(iterations)}
