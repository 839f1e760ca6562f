"""Hostile and careless inputs to the games: refused with a clear error, before any harm.

Issue 13, classes 2 (code execution through serialised states), 5 (illegal moves), 7 (size
limits) and 9 (corrupted serialised states, edited tree files).
"""

import base64
import pickle

import pyspiel
import pytest

import smmcts_spiel  # noqa: F401  (registers the games)
from smmcts_spiel import trees as mt

GAMES = [
    "smmcts_goofspiel(num_cards=4)",
    "smmcts_goofspiel(num_cards=4,points_order=descending)",
    "smmcts_phantom_ttt",
    "smmcts_random_stacked_matrix(depth=3,chance_branching=2)",
    "smmcts_matrix_tree(tree=[[1 0] [0 1]])",
    "smmcts_othello",
]


def _played(game_string: str, moves: int = 3) -> tuple[pyspiel.Game, pyspiel.State]:
    game = pyspiel.load_game(game_string)
    state = game.new_initial_state()
    for _ in range(moves):
        if state.is_terminal():
            break
        if state.is_simultaneous_node():
            state.apply_actions([state.legal_actions(p)[-1] for p in range(2)])
        else:
            state.apply_action(state.legal_actions()[-1])
    return game, state


class _Payload:
    """A pickle that creates a file when unpickled (stands for any command)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


# -- 2. code execution -----------------------------------------------------------------


@pytest.mark.parametrize("game_string", GAMES)
def test_crafted_pickle_in_a_serialised_state_is_refused_unexecuted(game_string, tmp_path):
    game, state = _played(game_string)
    marker = tmp_path / "executed"
    payload = base64.b64encode(pickle.dumps({"x": _Payload(str(marker))})).decode()
    text = pyspiel.serialize_game_and_state(game, state)
    crafted = text[:text.index("__dict__=")] + "__dict__=" + payload + "\n"
    with pytest.raises(ValueError, match="__dict__ line does not match its history"):
        pyspiel.deserialize_game_and_state(crafted)
    with pytest.raises(ValueError, match="refused without decoding it"):
        game.deserialize_state(crafted[crafted.index("history="):])
    assert not marker.exists()


@pytest.mark.parametrize("game_string", GAMES)
def test_serialised_states_round_trip_by_replay(game_string):
    for moves in range(6):
        game, state = _played(game_string, moves)
        text = pyspiel.serialize_game_and_state(game, state)
        game2, state2 = pyspiel.deserialize_game_and_state(text)
        assert str(game2) == str(game)
        assert str(state2) == str(state)
        assert state2.history() == state.history()
        assert state2.serialize() == state.serialize()
        assert game.deserialize_state(state.serialize()).returns() == state.returns()


def test_a_game_wrapping_ours_is_not_deserialised_through_pickle():
    game = pyspiel.convert_to_turn_based(pyspiel.load_game("smmcts_goofspiel(num_cards=3)"))
    text = pyspiel.serialize_game_and_state(game, game.new_initial_state())
    with pytest.raises(ValueError, match="serialise the inner game's state instead"):
        pyspiel.deserialize_game_and_state(text)


def test_other_games_keep_openspiels_deserialiser():
    game = pyspiel.load_game("kuhn_poker")
    state = game.new_initial_state()
    state.apply_action(0)
    _, state2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert state2.history() == [0]


# -- 9. corrupted serialised states, edited tree files ----------------------------------


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("corrupt, message", [
    (lambda t: t.replace("history=", "history=7:"), "history entry 0"),
    (lambda t: t.replace("history=", "history=x,"), "not player:action"),
    (lambda t: t.replace("history=", "history=0:99,"), "cannot be replayed"),
    (lambda t: t.replace("move_number=", "move_number=1"), "move_number line does not match"),
    (lambda t: t.split("\nmove_number")[0], "not a serialised state"),
    (lambda t: t.replace("[State]", "[Stat]"), "expected \\[Game\\] and \\[State\\]"),
])
def test_corrupted_serialised_states_name_the_problem(game_string, corrupt, message):
    game, state = _played(game_string, 2)
    text = corrupt(pyspiel.serialize_game_and_state(game, state))
    with pytest.raises(ValueError, match=message):
        pyspiel.deserialize_game_and_state(text)


def test_an_edited_tree_file_is_refused_on_deserialisation(tmp_path):
    path = tmp_path / "tree.json"
    mt.dump(mt.parse_compact("[[1 0] [0 1]]"), path)
    game, state = _played(f"smmcts_matrix_tree(file={path})", 1)
    assert game.get_parameters()["sha256"]
    text = pyspiel.serialize_game_and_state(game, state)
    assert pyspiel.deserialize_game_and_state(text)[1].returns() == state.returns()
    mt.dump(mt.parse_compact("[[5 0] [0 1]]"), path)
    with pytest.raises(ValueError, match="changed since this game string was written"):
        pyspiel.deserialize_game_and_state(text)


# -- 5. illegal moves ---------------------------------------------------------------------


@pytest.mark.parametrize("game_string, actions", [
    ("smmcts_goofspiel(num_cards=4,points_order=descending)", [[0, 0], [0, 1]]),  # card twice
    ("smmcts_goofspiel(num_cards=4,points_order=descending)", [[-1, 0]]),  # bid -1
    ("smmcts_goofspiel(num_cards=4,points_order=descending)", [[4, 0]]),  # no card 5
    ("smmcts_goofspiel(num_cards=4,points_order=descending)", [[0]]),  # one bid
    ("smmcts_matrix_tree(tree=[[1 0] [0 1]])", [[-1, 0]]),  # row -1
    ("smmcts_matrix_tree(tree=[[1 0] [0 1]])", [[0, 2]]),  # column 2
    ("smmcts_random_stacked_matrix", [[0, 0], [0, 0], [0, 0]]),  # past the end
])
def test_illegal_joint_actions_raise_spiel_error(game_string, actions):
    state = pyspiel.load_game(game_string).new_initial_state()
    with pytest.raises(pyspiel.SpielError, match="not legal|cannot bid|needs 2|nobody bids|"
                                                 "not a matrix stage"):
        for joint in actions:
            state.apply_actions(joint)


@pytest.mark.parametrize("game_string, actions", [
    ("smmcts_goofspiel(num_cards=4)", [-1]),  # chance deals prize 0
    ("smmcts_goofspiel(num_cards=4)", [0, 0, 0]),  # flat (0, 0), then prize 1 again
    ("smmcts_goofspiel(num_cards=4,points_order=descending)", [-1]),  # negative flat
    ("smmcts_goofspiel(num_cards=4,points_order=descending)", [16]),  # flat out of range
    ("smmcts_matrix_tree(tree=[[1 0] [0 1]])", [-1]),  # negative flat
    ("smmcts_matrix_tree(tree={1/2:[[1]] 1/2:[[0 1]]})", [2]),  # no chance outcome 2
    ("smmcts_phantom_ttt", [4, 4, 4]),  # x replays its own cell
    ("smmcts_phantom_ttt", [9]),
    ("smmcts_phantom_ttt", [-1]),
])
def test_illegal_actions_raise_spiel_error(game_string, actions):
    state = pyspiel.load_game(game_string).new_initial_state()
    with pytest.raises(pyspiel.SpielError):
        for action in actions:
            state.apply_action(action)


def test_a_refused_move_leaves_the_state_unchanged():
    state = pyspiel.load_game("smmcts_goofspiel(num_cards=3,points_order=ascending)") \
        .new_initial_state()
    before = str(state), state.history()
    with pytest.raises(pyspiel.SpielError):
        state.apply_actions([1, 7])
    assert (str(state), state.history()) == before


# -- 7. size limits -----------------------------------------------------------------------


@pytest.mark.parametrize("game_string, message", [
    ("smmcts_random_stacked_matrix(depth=12,branching=100000)", "would have about 1e\\+120"),
    ("smmcts_random_stacked_matrix(depth=20)", "choose a smaller depth or branching"),
    ("smmcts_random_stacked_matrix(depth=1000000000)", "at most 200 stages"),
    ("smmcts_random_stacked_matrix(branching=3000,depth=2)", "limit of 5e\\+06"),
    ("smmcts_goofspiel(num_cards=1000000000)", "num_cards must be an integer from 1 to 100"),
    ("smmcts_matrix_tree(tree=" + "[[" * 5000 + "1" + "]]" * 5000 + ")",
     "deeper than 200 stages"),
])
def test_huge_games_are_refused_before_allocating(game_string, message):
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game(game_string)


def test_deep_json_trees_are_refused_not_recursion_errors(tmp_path):
    path = tmp_path / "deep.json"
    node = "0.5"
    for stages in range(1, 401):
        node = '{"matrix": [[' + node + ", 0]]}"
        if stages in (201, 400):  # Past the limit; at 400 past json's own nesting limit.
            path.write_text('{"format": "smmcts_matrix_tree", "version": 1, "root": '
                            + node + "}")
            with pytest.raises(ValueError, match="more than 200 stages|deeper than 200"):
                pyspiel.load_game(f"smmcts_matrix_tree(file={path})")
    path.write_text("[" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply"):
        mt.load(path)


def test_the_deepest_allowed_tree_loads_plays_and_round_trips():
    node = "0.5"
    for _ in range(mt.MAX_STAGES):
        node = f"[[{node} 0]]"
    game = pyspiel.load_game(f"smmcts_matrix_tree(tree={node})")
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_actions([0, 0])
    assert state.returns() == [0.5, -0.5]
    _, state2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert state2.returns() == [0.5, -0.5]
    assert len(mt.flatten(game.tree).kind) == 2 * mt.MAX_STAGES + 1



# -- 6. stale trees: bots refuse states of another game ----------------------------------


def _bots(game):
    from smmcts_spiel.bots.belief_sampler import BeliefSamplerBot
    from smmcts_spiel.bots.mmcts_bot import MMCTSBot
    from smmcts_spiel.bots.openspiel_bots import ISMCTSBot, TurnBasedMCTSBot
    from smmcts_spiel.bots.smmcts_bot import SMMCTSBot
    if game.get_type().short_name == "smmcts_phantom_ttt":
        return [MMCTSBot(game, 0, training_iterations=10), BeliefSamplerBot(game, 0),
                ISMCTSBot(game, 0, simulations=10), TurnBasedMCTSBot(game, 0, iterations=10)]
    return [SMMCTSBot(game, 0, iterations=20, seed=1),
            TurnBasedMCTSBot(game, 0, iterations=10),
            TurnBasedMCTSBot(game, 0, iterations=10, engine="cpp")]


@pytest.mark.parametrize("game_string, other_string", [
    ("smmcts_random_stacked_matrix(seed=1)", "smmcts_random_stacked_matrix(seed=2)"),
    ("smmcts_random_stacked_matrix", "smmcts_goofspiel(num_cards=3,points_order=descending)"),
    ("smmcts_phantom_ttt", "phantom_ttt"),
])
def test_bots_refuse_states_of_another_game(game_string, other_string):
    game, other = pyspiel.load_game(game_string), pyspiel.load_game(other_string)
    for bot in _bots(game):
        bot.step(game.new_initial_state())  # Builds a tree / strategy for its own game.
        for call in (bot.step, bot.restart_at):
            with pytest.raises(ValueError, match="was built for .* but got a state of"):
                call(other.new_initial_state())
