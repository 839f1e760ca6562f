"""Game kernels play exactly as their pyspiel games (check_kernel on 1,000 random
trajectories per parameter set), kernel_for picks them, and says why where it does not."""

import logging
import types

import numba
import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import smmcts_spiel  # noqa: F401  (registers smmcts_goofspiel and the explicit-tree games)
from smmcts_spiel.games import kernels
from smmcts_spiel.games.kernels import (
    blotto,
    capture_the_flag,
    explicit_tree,
    goofspiel,
    laser_tag,
    markov_soccer,
    normal_form,
    oshi_zumo,
)

TRAJECTORIES = 1000

# A representative parameter set or two per kernel (the default suite); the hypothesis
# tests below draw many more (slow).
REPRESENTATIVE = [
    "goofspiel(num_cards=5,points_order=random)",
    "goofspiel(num_cards=6,points_order=descending,returns_type=point_difference,num_turns=3)",
    "smmcts_goofspiel(num_cards=4,points_order=ascending,returns_type=point_difference)",
    "oshi_zumo(coins=7,size=1,horizon=50,min_bid=2)",
    "oshi_zumo(coins=5,size=2,horizon=10,alesia=True)",
    "smmcts_random_stacked_matrix(depth=3,branching=2,chance_branching=3,seed=2)",
    "smmcts_matrix_tree(tree={1/3:[[1 0] [0 1]] 2/3:[[0.25 [[1;0]]] [0.5 -2]]})",
    "blotto(coins=6,fields=3)",
    "matrix_brps",
    "repeated_game(stage_game=matrix_rpsw(),num_repetitions=4)",
    "markov_soccer(horizon=30)",
    "capture_the_flag(horizon=40,grid=a..*..\n..*...b)",
    "laser_tag(zero_sum=true,horizon=25,grid=S.*\n..S\n*.S)",
]


@pytest.mark.parametrize("game_string", REPRESENTATIVE)
def test_kernel_plays_as_the_pyspiel_game(game_string):
    assert kernels.check_kernel(pyspiel.load_game(game_string), trajectories=TRAJECTORIES) is None


@pytest.mark.parametrize("game_string,module", [
    ("goofspiel(num_cards=4)", goofspiel),
    ("goofspiel(num_cards=5,egocentric=true,num_turns=2)", goofspiel),
    ("smmcts_goofspiel(num_cards=4)", goofspiel),
    ("oshi_zumo", oshi_zumo),
    ("smmcts_random_stacked_matrix(depth=2,branching=2,seed=1)", explicit_tree),
    ("blotto", blotto),
    ("blotto(coins=7,fields=4)", blotto),
    ("matrix_rps", normal_form),
    ("matrix_mp", normal_form),
    ("matrix_rpsw", normal_form),
    ("matrix_brps", normal_form),
    ("normal_form_extensive_game(game=matrix_rps())", normal_form),
    ("repeated_game(stage_game=matrix_mp(),num_repetitions=5)", normal_form),
    ("repeated_game(stage_game=blotto(coins=3),num_repetitions=2)", normal_form),
    ("markov_soccer", markov_soccer),
    ("capture_the_flag", capture_the_flag),
    ("laser_tag(zero_sum=true)", laser_tag),
])
def test_kernel_for_picks_the_game_kernel(game_string, module):
    game = pyspiel.load_game(game_string)
    kernel = kernels.kernel_for(game)
    assert kernel is not None and kernel.module is module
    assert kernel.utility_sum == game.utility_sum()
    assert kernels.dispatch.MODULES[kernel.code] is module


def test_kernel_for_picks_matrix_games_made_in_python_and_nfg_files(tmp_path):
    game = pyspiel.create_matrix_game([[3, -1], [-2, 0.5]], [[-3, 1], [2, -0.5]])
    assert kernels.kernel_for(game).module is normal_form
    path = tmp_path / "zero_sum.nfg"
    path.write_text('NFG 1 R "zero-sum" { "P1" "P2" } { 3 2 }\n'
                    "1 -1 -2 2 0 0 3 -3 -1 1 2 -2\n")
    nfg = pyspiel.load_game(f"nfg_game(filename={path})")
    assert kernels.kernel_for(nfg).module is normal_form
    for g in (game, nfg):
        assert kernels.check_kernel(g, trajectories=200) is None


@pytest.mark.parametrize("game_string,reason", [
    ("goofspiel(num_cards=4,imp_info=True)", "imp_info=True"),
    ("goofspiel(num_cards=4,players=3)", "players=3"),
    ("goofspiel(num_cards=5,num_turns=4)", "num_turns=4"),
    ("goofspiel(num_cards=6,returns_type=total_points)", "returns_type=total_points"),
    ("goofspiel(num_cards=63)", "num_cards=63"),
    ("smmcts_goofspiel(num_cards=4,imp_info=True)", "imp_info=True"),
    ("blotto(players=3)", "players=3"),
    ("blotto(coins=40,fields=5)", "coins=40, fields=5"),
    ("matrix_pd", "general-sum"),
    ("repeated_game(stage_game=matrix_sh(),num_repetitions=3)", "general-sum"),
    ("markov_soccer(grid=A..B)", "ball"),
    ("capture_the_flag(zero_sum=false)", "zero_sum=False"),
    ("capture_the_flag(horizon=-1)", "horizon=-1"),
    ("laser_tag", "zero_sum=False"),
    ("laser_tag(zero_sum=true,fully_obs=false)", "fully_obs=False"),
    ("laser_tag(zero_sum=true,horizon=-1)", "horizon=-1"),
    ("laser_tag(zero_sum=true,grid=S..\n...)", "1 spawn point"),
])
def test_uncovered_parameters_are_logged_once(game_string, reason, caplog, monkeypatch):
    monkeypatch.setattr(kernels.registry, "_logged", set())  # (other tests load them too)
    game = pyspiel.load_game(game_string)
    with caplog.at_level(logging.WARNING):
        assert kernels.kernel_for(game) is None
        assert kernels.kernel_for(game) is None  # said once, not at every call
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert str(game) in lines[0] and reason in lines[0] and "generic engine" in lines[0]


@pytest.mark.parametrize("game_string", ["tic_tac_toe", "kuhn_poker", "smmcts_othello"])
def test_games_without_a_kernel_are_not_logged(game_string, caplog):
    with caplog.at_level(logging.WARNING):
        assert kernels.kernel_for(pyspiel.load_game(game_string)) is None
    assert not caplog.records


def test_goofspiel_utility_range_is_exact():
    """OpenSpiel rounds the point difference's minimum of 5 cards (15 points) to -7."""
    game = pyspiel.load_game("goofspiel(num_cards=5,returns_type=point_difference)")
    kernel = kernels.kernel_for(game)
    assert (kernel.min_utility, kernel.max_utility) == (-7.5, 7.5)
    assert game.min_utility() == -7.0


# ----------------------------------------------------------------------------------------
# A user's kernel, written here: matching pennies repeated ``num_repetitions`` times.
# State: stages played, player 0's return, its last stage's reward.


@numba.njit
def _pennies_initial_state(params):
    return np.zeros(3, np.int64)


@numba.njit
def _pennies_status(state, params, data):
    return kernels.TERMINAL if state[0] >= params[0] else kernels.DECISION


@numba.njit
def _pennies_legal_actions(state, params, data, player, out):
    if state[0] >= params[0]:
        return 0
    out[0] = 0
    out[1] = 1
    return 2


@numba.njit
def _pennies_chance_outcomes(state, params, data, outcomes, probs):
    return 0


@numba.njit
def _pennies_apply_actions(state, params, data, action0, action1):
    state[0] += 1
    state[2] = 1 if action0 == action1 else -1
    state[1] += state[2]


@numba.njit
def _pennies_apply_chance(state, params, data, outcome):
    pass


@numba.njit
def _pennies_rewards(state, params, data):
    return float(state[2])


@numba.njit
def _pennies_returns(state, params, data):
    return float(state[1])


@numba.njit
def _pennies_rollout(state, params, data, rng):
    total = state[1]
    for _ in range(state[0], params[0]):
        total += 1 if rng.random() < 0.5 else -1
    return float(total)


def _pennies_parameters(game):
    return np.array([game.get_parameters()["num_repetitions"]]), np.zeros(0)


def _pennies_limits(params):
    return 2, 0, int(params[0]) + 1


def pennies_kernel(**replaced):
    """The user's kernel module (with some functions ``replaced``)."""
    module = types.ModuleType("repeated_pennies_kernel")
    module.SHORT_NAMES = ("repeated_game",)
    module.DEFAULT_EVALUATOR = "random_rollout"
    module.parameters = _pennies_parameters
    module.limits = replaced.get("limits", _pennies_limits)
    for name in ("initial_state", "status", "legal_actions", "chance_outcomes",
                 "apply_actions", "apply_chance", "rewards", "returns", "rollout"):
        setattr(module, name, replaced.get(name, globals()[f"_pennies_{name}"]))
    return module


REPEATED_PENNIES = "repeated_game(stage_game=matrix_mp(),num_repetitions=3)"


def test_check_kernel_accepts_a_correct_user_kernel():
    game = pyspiel.load_game(REPEATED_PENNIES)
    assert kernels.check_kernel(game, pennies_kernel(), trajectories=TRAJECTORIES) is None


@numba.njit
def _return_as_reward(state, params, data):
    return float(state[1])  # the bug: the return so far, not the last stage's reward


def test_check_kernel_reports_the_first_mismatch(capsys):
    game = pyspiel.load_game(REPEATED_PENNIES)
    mismatch = kernels.check_kernel(game, pennies_kernel(rewards=_return_as_reward),
                                    trajectories=50)
    # Reward and return agree after the first stage and differ (by it) after the second.
    assert (mismatch.trajectory, mismatch.move, mismatch.field) == (0, 2, "rewards(0)")
    assert len(mismatch.history) == 4
    state = game.new_initial_state()
    for k in range(2):
        state.apply_actions(list(mismatch.history[2 * k:2 * k + 2]))
    assert mismatch.pyspiel_value == state.rewards()[0]
    assert mismatch.kernel_value == state.returns()[0] != state.rewards()[0]
    printed = capsys.readouterr().out
    assert "trajectory 0, move 2" in printed and "rewards(0)" in printed


@pytest.mark.parametrize("broken,field", [
    (dict(limits=lambda params: (2, 0, int(params[0]))), "max_depth"),
    (dict(limits=lambda params: (1, 0, int(params[0]) + 1)), "max_actions"),
])
def test_check_kernel_catches_limits_below_the_game(broken, field):
    mismatch = kernels.check_kernel(pyspiel.load_game(REPEATED_PENNIES),
                                    pennies_kernel(**broken), trajectories=5, verbose=False)
    assert mismatch.field.startswith(field)


def test_registered_kernel_comes_first_until_unregistered():
    game = pyspiel.load_game(REPEATED_PENNIES)
    module = pennies_kernel()
    kernels.register_kernel(module)
    try:
        kernel = kernels.kernel_for(game)
        assert kernel.module is module and kernel.code == kernels.USER_CODE
    finally:
        kernels.unregister_kernel(module)
    assert kernels.kernel_for(game).module is normal_form


def test_register_kernel_refuses_an_incomplete_module():
    module = pennies_kernel()
    del module.rollout
    with pytest.raises(ValueError, match="lacks rollout"):
        kernels.register_kernel(module)


@pytest.mark.slow
def test_smmcts_bot_searches_with_a_registered_user_kernel(tmp_path, monkeypatch):
    """A user's kernel module (a file) gets its own compiled engine: the bot picks it
    automatically and searches the same game as the built-in kernel (same root
    strategy within sampling noise at equal iterations)."""
    import importlib
    import inspect

    from smmcts_spiel.bots import SMMCTSBot

    source = ["import numba", "import numpy as np",
              "from smmcts_spiel.games.kernels import DECISION, TERMINAL",
              "SHORT_NAMES = ('repeated_game',)", "DEFAULT_EVALUATOR = 'random_rollout'"]
    for name in ("parameters", "limits", "initial_state", "status", "legal_actions",
                 "chance_outcomes", "apply_actions", "apply_chance", "rewards", "returns",
                 "rollout"):
        source.append(inspect.getsource(globals()[f"_pennies_{name}"])
                      .replace(f"_pennies_{name}", name).replace("kernels.", "")
                      .replace("@numba.njit", "@numba.njit(cache=True)"))
    (tmp_path / "user_pennies_kernel.py").write_text("\n\n".join(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("user_pennies_kernel")
    game = pyspiel.load_game(REPEATED_PENNIES)
    assert kernels.check_kernel(game, module) is None
    kernels.register_kernel(module)
    try:
        bot = SMMCTSBot(game, 0, iterations=20_000, seed=3)
        assert bot._search.kernel.module is module
        ours = dict(bot.step_with_policy(game.new_initial_state())[0])
    finally:
        kernels.unregister_kernel(module)
    built_in = SMMCTSBot(game, 0, iterations=20_000, seed=3)
    theirs = dict(built_in.step_with_policy(game.new_initial_state())[0])
    assert ours.keys() == theirs.keys() == {0, 1}
    assert ours[0] == pytest.approx(0.5, abs=0.05) and theirs[0] == pytest.approx(0.5, abs=0.05)


# ----------------------------------------------------------------------------------------
# The evaluators.


@pytest.mark.parametrize("game_string", [
    "goofspiel(num_cards=5,points_order=random)",
    "goofspiel(num_cards=5,points_order=descending,returns_type=point_difference)",
    "goofspiel(num_cards=6,points_order=random,returns_type=point_difference,num_turns=3)",
    "oshi_zumo(coins=6,size=2,horizon=8)",
])
@pytest.mark.parametrize("evaluator", sorted(kernels.EVALUATORS))
def test_evaluators_are_exact_at_terminals_and_bounded(game_string, evaluator):
    game = pyspiel.load_game(game_string)
    kernel = kernels.kernel_for(game)
    code, params, data = kernel.code, kernel.params, kernel.data
    evaluator = kernels.EVALUATORS[evaluator]
    rng = np.random.default_rng(1)
    values = []
    for _ in range(200):
        start = kernel.initial_state()
        values.append(kernels.evaluate(code, evaluator, start.copy(), params, data, rng))
        terminal = start.copy()
        kernels.evaluate(code, 0, terminal, params, data, rng)  # a rollout plays to the end
        assert kernels.status(code, terminal, params, data) == kernels.TERMINAL
        assert kernels.evaluate(code, evaluator, terminal.copy(), params, data, rng) == \
            kernels.returns(code, terminal, params, data)
    assert kernel.min_utility <= min(values) and max(values) <= kernel.max_utility


@pytest.mark.parametrize("game_string", [
    "goofspiel(num_cards=4,points_order=random,returns_type=point_difference)",
    "markov_soccer(horizon=12)",
    "laser_tag(zero_sum=true,horizon=15,grid=S.*.\n....\n.*.S)",
])
def test_random_rollout_matches_pyspiel_random_play(game_string):
    """The rollout's first two moments from the start equal those of uniformly random
    pyspiel play (within 4 standard errors of their difference)."""
    game = pyspiel.load_game(game_string)
    kernel = kernels.kernel_for(game)
    rng = np.random.default_rng(2)
    ours = [kernels.evaluate(kernel.code, 0, kernel.initial_state(), kernel.params,
                             kernel.data, rng)
            for _ in range(4000)]
    py_rng = np.random.default_rng(3)
    theirs = []
    for _ in range(4000):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, p = zip(*state.chance_outcomes())
                state.apply_action(actions[py_rng.choice(len(actions), p=p)])
            else:
                state.apply_actions([py_rng.choice(state.legal_actions(q)) for q in (0, 1)])
        theirs.append(state.returns()[0])
    for power in (1, 2):
        a, b = np.power(ours, power), np.power(theirs, power)
        se = np.sqrt((np.var(a) + np.var(b)) / len(b))
        assert abs(np.mean(a) - np.mean(b)) < 4 * se, power


@pytest.mark.parametrize("game_string", ["oshi_zumo(coins=10,size=3,horizon=20)",
                                         "oshi_zumo(coins=7,size=1,horizon=50,min_bid=2)"])
def test_oshi_zumo_heuristic_is_the_fitted_python_evaluator(game_string):
    """The compiled heuristic computes OshiZumoEvaluator's value on every visited state."""
    from smmcts_spiel.search.evaluators import OshiZumoEvaluator

    game = pyspiel.load_game(game_string)
    kernel = kernels.kernel_for(game)
    code, params, data = kernel.code, kernel.params, kernel.data
    python_evaluator = OshiZumoEvaluator(game)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(100):
        state, ours = game.new_initial_state(), kernel.initial_state()
        while not state.is_terminal():
            value = kernels.evaluate(code, kernels.EVALUATORS["heuristic"], ours.copy(),
                                     params, data, rng)
            assert value == pytest.approx(python_evaluator.evaluate(state)[0], abs=1e-12)
            checked += 1
            joint = [int(rng.choice(state.legal_actions(p))) for p in (0, 1)]
            state.apply_actions(joint)
            kernels.apply_actions(code, ours, params, data, *joint)
    assert checked > 100


# ----------------------------------------------------------------------------------------
# Parameter sets drawn by hypothesis (slow): 1,000 trajectories each.


@st.composite
def goofspiel_games(draw):
    n = draw(st.integers(1, 9))
    turns = draw(st.sampled_from([-1, n] + list(range(1, n - 1))))
    name = draw(st.sampled_from(["goofspiel", "smmcts_goofspiel"]))
    extra = f",num_turns={turns},egocentric={draw(st.booleans())}" if name == "goofspiel" \
        else ""
    return (f"{name}(num_cards={n},points_order="
            f"{draw(st.sampled_from(goofspiel.POINTS_ORDERS))},returns_type="
            f"{draw(st.sampled_from(['win_loss', 'point_difference']))}{extra})")


@st.composite
def oshi_zumo_games(draw):
    coins = draw(st.integers(0, 14))
    return (f"oshi_zumo(coins={coins},size={draw(st.integers(0, 4))},"
            f"horizon={draw(st.integers(0, 40))},min_bid={draw(st.integers(0, coins))},"
            f"alesia={draw(st.booleans())})")


@st.composite
def blotto_games(draw):
    return f"blotto(coins={draw(st.integers(0, 9))},fields={draw(st.integers(1, 4))})"


@st.composite
def normal_form_games(draw):
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    payoffs = draw(st.lists(st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.25, 1.0, 3.0]),
                            min_size=rows * cols, max_size=rows * cols))
    table = np.array(payoffs).reshape(rows, cols)
    stage = pyspiel.create_matrix_game(table.tolist(), (-table).tolist())
    kind = draw(st.sampled_from(["matrix", "named", "repeated", "repeated_blotto"]))
    if kind == "matrix":
        return stage
    repetitions = draw(st.integers(0, 5))
    if kind == "named":
        return pyspiel.load_game(draw(st.sampled_from(["matrix_rps", "matrix_mp", "matrix_rpsw",
                                                       "matrix_brps"])))
    if kind == "repeated_blotto":
        return pyspiel.load_game(f"repeated_game(stage_game=blotto(coins="
                                 f"{draw(st.integers(1, 5))},fields=3),"
                                 f"num_repetitions={repetitions})")
    return pyspiel.create_repeated_game(stage, {"num_repetitions": repetitions})


def _grid(draw, rows, cols, pieces, obstacle):
    """A rows x cols grid with the ``pieces`` on distinct cells and, elsewhere, obstacles
    (``obstacle``) drawn at random."""
    cells = draw(st.permutations(range(rows * cols)))
    grid = [["."] * cols for _ in range(rows)]
    for piece, cell in zip(pieces, cells):
        grid[cell // cols][cell % cols] = piece
    if obstacle:
        for cell in cells[len(pieces):]:
            if draw(st.integers(0, 4)) == 0:
                grid[cell // cols][cell % cols] = obstacle
    return "\n".join("".join(row) for row in grid)


@st.composite
def markov_soccer_games(draw):
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 6))
    balls = draw(st.integers(1, max(1, min(3, rows * cols - 2))))
    if rows * cols < 3:
        rows, cols = 1, 3
    grid = _grid(draw, rows, cols, "AB" + "O" * balls, None)
    return pyspiel.load_game("markov_soccer", {"grid": grid,
                                               "horizon": draw(st.integers(0, 60))})


@st.composite
def capture_the_flag_games(draw):
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(3, 7))
    grid = _grid(draw, rows, cols, "ab", "*")
    if draw(st.booleans()):  # ragged rows: OpenSpiel reads the missing cells as empty
        grid = "\n".join(row.rstrip(".") or "." for row in grid.split("\n"))
    return pyspiel.load_game("capture_the_flag", {
        "grid": grid, "horizon": draw(st.integers(0, 60)),
        "score_limit": draw(st.integers(1, 3))})


@st.composite
def laser_tag_games(draw):
    rows, cols = draw(st.integers(1, 6)), draw(st.integers(2, 7))
    spawns = draw(st.integers(2, min(4, rows * cols)))
    grid = _grid(draw, rows, cols, "S" * spawns, "*")
    return pyspiel.load_game("laser_tag", {"grid": grid, "zero_sum": True,
                                           "horizon": draw(st.integers(0, 40))})


@pytest.mark.slow
@pytest.mark.parametrize("games", [goofspiel_games(), oshi_zumo_games(), blotto_games(),
                                   normal_form_games(), markov_soccer_games(),
                                   capture_the_flag_games(), laser_tag_games()],
                         ids=["goofspiel", "oshi_zumo", "blotto", "normal_form",
                              "markov_soccer", "capture_the_flag", "laser_tag"])
def test_drawn_parameter_sets_play_as_pyspiel(games):
    @settings(max_examples=6, deadline=None)
    @given(game=games, seed=st.integers(0, 2**31 - 1))
    def check(game, seed):
        if isinstance(game, str):
            game = pyspiel.load_game(game)
        assert kernels.kernel_for(game) is not None, game
        assert kernels.check_kernel(game, trajectories=TRAJECTORIES, seed=seed) is None

    check()


@pytest.mark.slow
@pytest.mark.parametrize("game_string", [
    "goofspiel", "goofspiel(num_cards=13,points_order=descending)", "oshi_zumo", "blotto",
    "markov_soccer", "capture_the_flag", "laser_tag(zero_sum=true)",
])
def test_default_parameters_play_as_pyspiel(game_string):
    assert kernels.check_kernel(pyspiel.load_game(game_string),
                                trajectories=TRAJECTORIES) is None
