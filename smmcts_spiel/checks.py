"""The argument and game checks every layer shares, with messages that name the fix.

Engines, solvers, bots and runners refuse what they cannot handle before doing any work:
a game outside their scope, a player id, a budget, a probability vector. Each check raises
``ValueError`` with a message that names the problem and what to do instead.
"""

from __future__ import annotations

import difflib
import functools
import math
import os
import zipfile
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pyspiel

#: Tolerance on a strategy's probabilities summing to one.
PROBABILITY_TOLERANCE = 1e-6



def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows): assume 16 GiB
        return 16 << 30


#: The machine's memory (bytes), against which what a file or a parameter would allocate
#: is checked before it is allocated.
PHYSICAL_MEMORY = _physical_memory()
#: The most a ``.npz`` file may hold once read (:func:`load_npz`): 4 GiB, or a quarter of
#: the machine's memory if that is less (the files we write are far smaller).
MAX_NPZ_BYTES = min(4 << 30, PHYSICAL_MEMORY // 4)
_NPY_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0}

_Dynamics = pyspiel.GameType.Dynamics
_Information = pyspiel.GameType.Information
_Utility = pyspiel.GameType.Utility


def load_game(game: pyspiel.Game | str) -> pyspiel.Game:
    """``game`` itself, or the game its string names."""
    if isinstance(game, str):
        return pyspiel.load_game(game)
    if not isinstance(game, pyspiel.Game):
        raise ValueError(f"expected a pyspiel.Game or a game string, got {type(game).__name__}; "
                         "for an explicit matrix tree use solve_tree / tree_value")
    return game


def check_game(game: pyspiel.Game, purpose: str, *, perfect_information: bool = True,
               sequential_only: bool = False, information_states: bool = False,
               explicit_chance: bool = False, zero_sum_only: bool = False,
               hint: str = "") -> None:
    """Raise ValueError unless ``game`` is a two-player zero-sum game ``purpose`` handles.

    Args:
      purpose: who is asking, e.g. "SM-MCTS" or "the solver"; it starts the message.
      perfect_information: require perfect information between stages (a simultaneous
        game may be ONE_SHOT); otherwise any information structure is accepted.
      sequential_only: refuse simultaneous-move games (point to the turn-based conversion).
      information_states: require information state strings.
      explicit_chance: refuse sampled chance.
      zero_sum_only: refuse constant-sum games.
      hint: appended to the imperfect-information message (e.g. which tool to use instead).
    """
    game_type = game.get_type()
    name = game_type.short_name
    parameters = game_type.parameter_specification
    if game.num_players() != 2:
        fix = ("load it with players=2" if "players" in parameters else
               "it has no two-player version")
        raise ValueError(f"{purpose} needs a two-player game; {name!r} has "
                         f"{game.num_players()} players ({fix})")
    allowed_utilities = (_Utility.ZERO_SUM,) if zero_sum_only else (_Utility.ZERO_SUM,
                                                                     _Utility.CONSTANT_SUM)
    if game_type.utility not in allowed_utilities:
        kind = "zero-sum" if zero_sum_only else "zero-sum or constant-sum"
        if "goofspiel" in name:
            fix = "for goofspiel use returns_type=win_loss or point_difference"
        elif "zero_sum" in parameters:
            fix = f"load it with zero_sum=true, e.g. {name}(zero_sum=true)"
        else:
            fix = (f"{purpose} learns one value that one player gains and the other loses; "
                   "for a game where both can gain, use a bot that maximises each player's "
                   "own return, e.g. OpenSpiel's MCTSBot")
        raise ValueError(f"{purpose} needs a {kind} game; {name!r} is "
                         f"{game_type.utility.name.lower().replace('_', '-')} ({fix})")
    if game_type.dynamics not in (_Dynamics.SIMULTANEOUS, _Dynamics.SEQUENTIAL):
        raise ValueError(f"{purpose} supports simultaneous and sequential games, not "
                         f"{game_type.dynamics.name.lower()} ({name!r})")
    if sequential_only and game_type.dynamics != _Dynamics.SEQUENTIAL:
        raise ValueError(f"{purpose} needs a sequential game; {name!r} is simultaneous "
                         "(use pyspiel.convert_to_turn_based)")
    if perfect_information:
        allowed: tuple = (_Information.PERFECT_INFORMATION,)
        if game_type.dynamics == _Dynamics.SIMULTANEOUS:
            allowed += (_Information.ONE_SHOT,)
        if game_type.information not in allowed:
            fix = " (for goofspiel load it with imp_info=False)" if "goofspiel" in name else ""
            fix += f"; {hint}" if hint else ""
            raise ValueError(f"{purpose} needs perfect information between stages; {name!r} is "
                             f"a game of imperfect information{fix}")
    if information_states and not game_type.provides_information_state_string:
        raise ValueError(f"{purpose} indexes its trees by information state strings, which "
                         f"{name!r} does not provide")
    if explicit_chance and game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        raise ValueError(f"{purpose} needs explicit chance outcomes; {name!r} has sampled chance")


def check_playable(game: pyspiel.Game, seed: int = 0, max_steps: int = 10_000) -> None:
    """Play one seeded random game of ``game`` (at most ``max_steps`` steps); ValueError if
    a node offers no move, e.g. parameters that load but leave no outcome to a chance node
    (``markov_soccer(grid=A.B)``: no ball cell)."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    for step in range(max_steps):
        if state.is_terminal():
            return
        where = "the first node" if step == 0 else f"a node after {step} moves"
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            if not outcomes:
                raise ValueError(f"{game} cannot be played: {where} is a chance node with no "
                                 "outcome; check the game's parameters")
            actions, probs = zip(*outcomes)
            state.apply_action(actions[rng.choice(len(actions), p=np.array(probs) /
                                                  sum(probs))])
            continue
        movers = (range(game.num_players()) if state.is_simultaneous_node()
                  else [state.current_player()])
        legal = [state.legal_actions(p) for p in movers]
        if not all(legal):
            raise ValueError(f"{game} cannot be played: at {where} a player has no legal "
                             "move; check the game's parameters")
        chosen = [int(rng.choice(actions)) for actions in legal]
        if state.is_simultaneous_node():
            state.apply_actions(chosen)
        else:
            state.apply_action(chosen[0])


def shown(value):
    """``value`` for ``{...!r}`` in a message: a numpy scalar as the plain number it holds
    (``1.0``, not ``np.float64(1.0)``), anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to a misspelt ``word``, or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_player_id(player_id) -> int:
    if isinstance(player_id, bool) or player_id not in (0, 1):
        raise ValueError(f"player_id must be 0 or 1, got {shown(player_id)!r}")
    return int(player_id)


def check_count(value, name: str, minimum: int = 0) -> int:
    """An integer ``>= minimum`` (numpy integers accepted, bools and floats refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {shown(value)!r}")
    return int(value)


#: The largest iteration budget: the compiled searches count iterations in int64, and no
#: search gets near it (2**62 iterations at 10**8 a second take 1,400 years).
MAX_ITERATIONS = 1 << 62


def check_budget(iterations, time_limit) -> tuple[int | None, float | None]:
    """A per-move search budget: positive iterations (at most :data:`MAX_ITERATIONS`),
    positive finite seconds, or both."""
    if iterations is None and time_limit is None:
        raise ValueError("give a budget: iterations, time_limit, or both")
    if iterations is not None and (isinstance(iterations, bool) or
                                   not isinstance(iterations, (int, np.integer)) or
                                   iterations < 1):
        raise ValueError(f"iterations must be a positive integer, got {shown(iterations)!r}")
    if iterations is not None and iterations > MAX_ITERATIONS:
        raise ValueError(f"iterations must be at most 2**62 (the searches count in 64-bit "
                         f"integers; for a search by time alone give iterations=None), got "
                         f"{shown(iterations)!r}")
    if time_limit is not None and (isinstance(time_limit, bool) or
                                   not isinstance(time_limit, (int, float, np.floating)) or
                                   not 0 < time_limit < math.inf):
        raise ValueError(f"time_limit must be a positive, finite number of seconds, "
                         f"got {shown(time_limit)!r}")
    return (None if iterations is None else int(iterations),
            None if time_limit is None else float(time_limit))


def check_distribution(probs: Mapping, actions: Sequence[int], where) -> list[float]:
    """``probs`` as a list over ``actions`` (missing actions: 0), checked to be a distribution."""
    if not probs.keys() <= set(actions):
        unknown = sorted(set(probs) - set(actions))
        raise ValueError(f"strategy gives probability to illegal actions {unknown} "
                         f"(legal: {list(actions)}) at\n{where}")
    p = [float(probs.get(a, 0.0)) for a in actions]
    if min(p) < -PROBABILITY_TOLERANCE or abs(sum(p) - 1.0) > PROBABILITY_TOLERANCE:
        raise ValueError(f"strategy probabilities {p} for actions {list(actions)} are not a "
                         f"distribution at\n{where}")
    return p


def check_probability(value, name: str, *, below_one: bool = False) -> float:
    """A probability in [0, 1] (or [0, 1) with ``below_one``), e.g. an exploration rate."""
    bound = "[0, 1)" if below_one else "[0, 1]"
    if (isinstance(value, bool) or not isinstance(value, (int, float, np.floating))
            or not 0 <= value <= 1 or (below_one and value == 1)):
        raise ValueError(f"{name} must be a probability in {bound}, got {shown(value)!r}")
    return float(value)


def check_size(count: float, limit: float, what: str, fix: str, unit: str = "items") -> None:
    """Refuse, before allocating anything, a structure of ``count`` ``unit`` above ``limit``.

    ``what`` names the structure and its parameters, ``fix`` what to choose instead.
    """
    if count > limit:
        raise ValueError(f"{what} would have about {approximately(count)} {unit}, more than "
                         f"the limit of {approximately(limit)}; {fix}")


def approximately(count) -> str:
    """``count`` to 3 digits, also an integer too large for a float (e.g. ``1e+400``)."""
    try:
        return f"{float(count):.3g}"
    except OverflowError:
        count = int(count)
        shift = count.bit_length() - 64
        exponent = math.log10(count >> shift) + shift * math.log10(2)
        return f"{10 ** (exponent % 1):.3g}e+{int(exponent)}"


def check_state_game(state: pyspiel.State, game: str, who: str) -> None:
    """Refuse a state of another game than ``game`` (the game string ``who`` was built for).

    A bot keeps a search tree (or trained strategies) of its own game; stepped on a state
    of another game it would answer from the wrong tree.
    """
    state_game = str(state.get_game())
    if state_game != game:
        raise ValueError(f"{who} was built for {game} but got a state of {state_game}; "
                         "build a new bot for that game")


@functools.lru_cache(maxsize=64)
def _turn_based_string(game_string: str) -> str:
    return str(pyspiel.convert_to_turn_based(pyspiel.load_game(game_string)))


def state_of_game(state: pyspiel.State, game: pyspiel.Game, who: str) -> pyspiel.State:
    """The state of ``game`` that ``state`` stands for; refuses any other game's state.

    ``state`` itself if it is a state of ``game``. For a state of
    ``pyspiel.convert_to_turn_based(game)`` (OpenSpiel's evaluators walk that game), the
    state of ``game`` it is in: inside a simultaneous round, the state before the round,
    since the moves already chosen in the round are applied only when all are chosen (and
    the later movers cannot see them).
    """
    state_game = state.get_game()
    game_string = str(game)
    if str(state_game) == game_string:
        return state
    simultaneous = game.get_type().dynamics == _Dynamics.SIMULTANEOUS
    if not simultaneous or str(state_game) != _turn_based_string(game_string):
        raise ValueError(f"{who} answers for states of {game_string}"
                         + (" (or of its convert_to_turn_based game)" if simultaneous else "")
                         + f", not for a state of {state_game}")
    own = game.new_initial_state()
    chosen: list[int] = []
    for action in state.history():
        if not own.is_simultaneous_node():
            own.apply_action(action)
            continue
        chosen.append(action)
        movers = [p for p in range(game.num_players()) if own.legal_actions(p)]
        if len(chosen) == len(movers):
            joint = [0] * game.num_players()  # a player without moves: 0, as OpenSpiel does
            for p, a in zip(movers, chosen):
                joint[p] = a
            own.apply_actions(joint)
            chosen = []
    return own


def load_npz(path: str | os.PathLike, max_bytes: int | None = None) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` file ``path``, read without pickle once the sizes its
    members declare are known to fit: ``max_bytes`` in all (default :data:`MAX_NPZ_BYTES`),
    and no array larger than the bytes its member holds. A small file that declares
    gigabytes (a compressed run of zeros, a header claiming a huge shape) is refused before
    anything is allocated; ValueError saying what is wrong (the caller names the file)."""
    max_bytes = MAX_NPZ_BYTES if max_bytes is None else max_bytes
    try:
        total = 0
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                total += member.file_size
                if total > max_bytes:
                    raise ValueError(
                        f"its arrays would take more than {approximately(max_bytes)} bytes "
                        f"once read ({member.filename} alone {approximately(member.file_size)}"
                        "), the limit; it is not a file this library wrote")
                with archive.open(member) as f:
                    header = _NPY_HEADERS.get(np.lib.format.read_magic(f))
                    if header is None:
                        raise ValueError(f"{member.filename} is not an array of format 1 or 2")
                    shape, _, dtype = header(f)
                if dtype.hasobject:
                    raise ValueError(f"{member.filename} holds Python objects (a pickle)")
                declared = math.prod(shape) * dtype.itemsize
                if declared > member.file_size:
                    raise ValueError(f"{member.filename} declares shape {shape} "
                                     f"({approximately(declared)} bytes) in "
                                     f"{member.file_size} bytes")
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except zipfile.BadZipFile as e:
        raise ValueError(f"not a .npz file (numpy's zip of arrays): {e}") from None
    except ValueError:
        raise
    except Exception as e:  # noqa: BLE001  (zip and npy readers raise many kinds)
        raise ValueError(f"{type(e).__name__}: {e}") from None
