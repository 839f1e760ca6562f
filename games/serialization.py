"""Deserialising our games' states by replaying their history, never by unpickling.

pyspiel serialises a Python game's state as ``history=``, ``move_number=`` and
``__dict__=<base64 pickle of the state's attributes>``, and its C++ deserialiser unpickles
that last line: a crafted string runs arbitrary code (``pickle.loads`` calls whatever the
payload names). Our games' states are functions of their action history, so they do not
need the pickle: :func:`deserialize_state` (each of our games' ``deserialize_state``)
replays the history on a new initial state through ``apply_action``/``apply_actions``,
which refuse illegal moves, then requires the replayed state to serialise back to exactly
the given text. The ``__dict__`` line is compared as text, never decoded, so a payload is
refused before anything runs.

:func:`install` makes ``pyspiel.deserialize_game_and_state`` take this path for the
``smmcts_*`` games (``import smmcts_spiel`` calls it); other games keep OpenSpiel's. The
pickle path remains behind ``pickle.loads(pickle.dumps(state))``, which trusts its input
anyway, and behind a copy of ``pyspiel.deserialize_game_and_state`` taken before
``import smmcts_spiel``.
"""

from __future__ import annotations

import pyspiel

PREFIX = "smmcts_"
_TAGS = ("history=", "move_number=", "__dict__=")
_MAX_TEXT = 1 << 20  # 1 MiB: far above any state of our games (a few hundred moves).
_original_deserialize_game_and_state = pyspiel.deserialize_game_and_state


def deserialize_state(game: pyspiel.Game, text: str) -> pyspiel.State:
    """The state of ``game`` serialised as ``text``, rebuilt by replaying its history."""
    name = game.get_type().short_name
    if not isinstance(text, str) or len(text) > _MAX_TEXT:
        raise ValueError(f"{name}: a serialised state must be a string of at most "
                         f"{_MAX_TEXT} characters")
    lines = text.split("\n", 2)
    if len(lines) != 3 or any(not line.startswith(tag) for line, tag in zip(lines, _TAGS)):
        raise ValueError(f"{name}: not a serialised state: expected three lines "
                         f"{', '.join(t + '...' for t in _TAGS)}; got {text[:80]!r}")
    history = _parse_history(name, lines[0][len(_TAGS[0]):])
    state = game.new_initial_state()
    _replay(state, history)
    expected = state.serialize().split("\n", 2)
    for tag, got, want in zip(_TAGS, lines, expected):
        if got != want:
            raise ValueError(
                f"{name}: the serialised state's {tag[:-1]} line does not match its history "
                f"(the text is corrupted, crafted, or written by another version); refused "
                f"without decoding it. Serialise the state again with this version.")
    return state


def deserialize_game_and_state(text: str) -> tuple[pyspiel.Game, pyspiel.State]:
    """``pyspiel.deserialize_game_and_state`` that replays the states of our games."""
    if not isinstance(text, str):
        return _original_deserialize_game_and_state(text)
    sections = _sections(text)
    game_string = sections.get("Game", "")
    state_text = sections.get("State")
    if state_text is None or not game_string:
        raise ValueError(f"not a serialised game and state: expected [Game] and [State] "
                         f"sections (the output of pyspiel.serialize_game_and_state); got "
                         f"{text[:80]!r}")
    if PREFIX not in text:
        return _original_deserialize_game_and_state(text)
    if not game_string.startswith(PREFIX):
        raise ValueError(
            f"cannot deserialise a state of {game_string.split('(')[0]} wrapping an "
            f"{PREFIX}* game safely (its inner state would be unpickled); serialise the "
            f"inner game's state instead")
    game = pyspiel.load_game(game_string)
    return game, deserialize_state(game, state_text)


def install() -> None:
    """Route ``pyspiel.deserialize_game_and_state`` through :func:`deserialize_game_and_state`."""
    pyspiel.deserialize_game_and_state = deserialize_game_and_state


def _sections(text: str) -> dict[str, str]:
    """``{"Meta": ..., "Game": ..., "State": ...}`` of SerializeGameAndState's format."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.split("\n"):
        if line.startswith("#") and current is None:
            continue
        if line in ("[Meta]", "[Game]", "[State]"):
            current = line[1:-1]
            if current in sections:
                raise ValueError(f"serialised game and state: section {line} appears twice")
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    joined = {k: "\n".join(v) for k, v in sections.items()}
    if "Game" in joined:
        joined["Game"] = joined["Game"].strip()
    if "State" in joined:
        joined["State"] = joined["State"].rstrip("\n")
    return joined


def _parse_history(name: str, text: str) -> list[tuple[int, int]]:
    if not text:
        return []
    history = []
    for k, item in enumerate(text.split(",")):
        player, sep, action = item.partition(":")
        try:
            if not sep:
                raise ValueError
            history.append((int(player), int(action)))
        except ValueError:
            raise ValueError(f"{name}: history entry {k} is {item!r}, not player:action") \
                from None
    return history


def _replay(state: pyspiel.State, history: list[tuple[int, int]]) -> None:
    """Apply ``history`` (pyspiel's (player, action) records) to ``state``, checking each."""
    name = state.get_game().get_type().short_name
    n = state.num_players()
    k = 0
    while k < len(history):
        player, action = history[k]
        try:
            if state.is_terminal():
                raise pyspiel.SpielError("the game is over")
            if state.is_simultaneous_node() and player != pyspiel.PlayerId.SIMULTANEOUS:
                joint = history[k:k + n]
                if [p for p, _ in joint] != list(range(n)):
                    raise pyspiel.SpielError(
                        f"a simultaneous move needs one entry per player 0..{n - 1}")
                state.apply_actions([a for _, a in joint])
                k += n
                continue
            if player != state.current_player():
                raise pyspiel.SpielError(f"player {player} is not to move "
                                         f"(player {state.current_player()} is)")
            state.apply_action(action)
        except pyspiel.SpielError as e:
            raise ValueError(f"{name}: history entry {k} ({player}:{action}) cannot be "
                             f"replayed: {e}") from None
        k += 1
