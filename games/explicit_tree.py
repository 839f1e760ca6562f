"""A pyspiel game over any explicit tree of matrix stages (:mod:`smmcts_spiel.trees`).

Both registered explicit-tree games, ``smmcts_random_stacked_matrix`` and
``smmcts_matrix_tree``, are this game over a different tree; only the way they build the
tree from their parameters differs.

Conventions (relied on by the exact solver and the fast engine):

* at a :class:`~smmcts_spiel.trees.MatrixStage` player 1 (pyspiel player 0) plays
  row ``i`` as action ``i`` and player 2 (pyspiel player 1) plays column ``j`` as action
  ``j``; at a :class:`~smmcts_spiel.trees.ChanceStage` chance outcome ``k`` is
  ``outcomes[k]``;
* a leaf ``u`` ends the game with returns ``(u, -u)``: the game is zero-sum, and values and
  exploitabilities are in player 1's utility units (``[0, 1]`` for the random games, as in
  the paper);
* ``game.tree`` is the :class:`~smmcts_spiel.trees.MatrixTree` and ``state.node`` the
  current node of it, so tools can work on the explicit tree of a loaded game.

A state stores its path (the child indices taken from the root) and a reference to the
current node that cloning shares and serialising drops, so neither copies the tree.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from smmcts_spiel import trees as mt
from smmcts_spiel.games import serialization, simultaneous
from smmcts_spiel.games.actions import CheckedActions, IllegalActionError

_NUM_PLAYERS = 2


def game_type(short_name: str, long_name: str, parameter_specification: dict,
              *, has_chance: bool = False) -> pyspiel.GameType:
    """The GameType shared by the explicit-tree games (chance mode follows the tree)."""
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SIMULTANEOUS,
        chance_mode=(pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC if has_chance
                     else pyspiel.GameType.ChanceMode.DETERMINISTIC),
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=_NUM_PLAYERS,
        min_num_players=_NUM_PLAYERS,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameter_specification,
    )


class ExplicitTreeGame(pyspiel.Game):
    """A simultaneous-move zero-sum game whose whole tree is given as a matrix tree."""

    def __init__(self, registered_type: pyspiel.GameType, tree: mt.MatrixTree, params: dict):
        if not isinstance(tree.root, (mt.MatrixStage, mt.ChanceStage)):
            raise ValueError("the root of an explicit-tree game must be a matrix or chance "
                             "stage, not a bare leaf")
        has_chance = mt.max_chance_outcomes(tree.root) > 0
        lo, hi = mt.utility_range(tree.root)
        super().__init__(
            game_type(registered_type.short_name, registered_type.long_name,
                      registered_type.parameter_specification, has_chance=has_chance),
            pyspiel.GameInfo(
                num_distinct_actions=mt.max_actions(tree.root),
                max_chance_outcomes=mt.max_chance_outcomes(tree.root),
                num_players=_NUM_PLAYERS,
                # Player 1 gets u in [lo, hi], player 2 gets -u in [-hi, -lo].
                min_utility=min(lo, -hi),
                max_utility=max(hi, -lo),
                utility_sum=0.0,
                max_game_length=mt.max_game_length(tree.root),
            ),
            params,
        )
        self.tree = tree

    def new_initial_state(self) -> ExplicitTreeState:
        return ExplicitTreeState(self)

    deserialize_state = serialization.deserialize_state

    def make_py_observer(self, iig_obs_type=None, params=None) -> ExplicitTreeObserver:
        return ExplicitTreeObserver(self, iig_obs_type, params)


class ExplicitTreeState(CheckedActions, pyspiel.State):
    """A position in the tree, identified by the child indices taken from the root."""

    def __init__(self, game: ExplicitTreeGame):
        super().__init__(game)
        # One entry per move: (i, j) after a matrix stage, k after a chance stage.
        self._path: tuple = ()
        self._at = _NodeRef(game.tree.root)

    @property
    def node(self) -> mt.Node:
        """The current node of ``get_game().tree``."""
        node = self._at.node
        if node is None:  # Just deserialised: find the node from the path.
            node = self.get_game().tree.root
            for step in self._path:
                node = _child(node, step)
            self._at = _NodeRef(node)
        return node

    @property
    def path(self) -> tuple:
        """Moves from the root: ``(row, column)`` per matrix stage, ``k`` per chance stage."""
        return self._path

    def current_player(self) -> int:
        node = self.node
        if isinstance(node, mt.MatrixStage):
            return pyspiel.PlayerId.SIMULTANEOUS
        if isinstance(node, mt.ChanceStage):
            return pyspiel.PlayerId.CHANCE
        return pyspiel.PlayerId.TERMINAL

    def _legal_actions(self, player: int) -> list[int]:
        node = self.node
        if not isinstance(node, mt.MatrixStage):
            return []
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_actions(self)
        return list(range(node.shape[player]))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        node = self.node
        assert isinstance(node, mt.ChanceStage)
        return [(k, p) for k, (p, _) in enumerate(node.outcomes)]

    def _apply_action(self, action: int) -> None:
        if isinstance(self.node, mt.MatrixStage):  # A flat joint action.
            self._apply_actions(simultaneous.flat_to_joint(self, int(action)))
        else:
            self._step(int(action))

    def _apply_actions(self, actions: list[int]) -> None:
        node = self.node
        if not isinstance(node, mt.MatrixStage):
            raise IllegalActionError(f"apply_actions at {self}: not a matrix stage")
        if len(actions) != _NUM_PLAYERS:
            raise IllegalActionError(f"a joint action needs 2 actions, got {list(actions)}")
        i, j = int(actions[0]), int(actions[1])
        if not (0 <= i < node.shape[0] and 0 <= j < node.shape[1]):
            raise IllegalActionError(f"joint action ({i}, {j}) is not legal at {self}: rows "
                                     f"0..{node.shape[0] - 1}, columns 0..{node.shape[1] - 1}")
        self._step((i, j))

    def _step(self, step) -> None:
        node = self.node
        if not isinstance(step, tuple):
            if not isinstance(node, mt.ChanceStage) or not 0 <= step < len(node.outcomes):
                raise IllegalActionError(f"chance outcome {step} is not legal at {self}")
        self._at = _NodeRef(_child(node, step))
        self._path = self._path + (step,)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"outcome {action}"
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            return simultaneous.flat_joint_action_to_string(self, action)
        return f"{'row' if player == 0 else 'column'} {action}"

    def is_terminal(self) -> bool:
        return mt.is_leaf(self.node)

    def returns(self) -> list[float]:
        node = self.node
        if not mt.is_leaf(node):
            return [0.0, 0.0]
        return [float(node), -float(node)]

    def __str__(self) -> str:
        return _path_string(self._path)


class ExplicitTreeObserver:
    """Observer (PyObserver interface): the public path of moves, which both players see.

    The game has perfect information (both moves are revealed after each stage), so the
    information state and the observation of either player are the path from the root.
    The tensor holds, for every move slot up to the maximum game length, one-hot row,
    column and chance outcome.
    """

    def __init__(self, game: ExplicitTreeGame, iig_obs_type, params):
        if params:
            raise ValueError(f"Observation parameters not supported; passed {params}")
        self._public = iig_obs_type is None or iig_obs_type.public_info
        num_actions = game.num_distinct_actions()
        num_outcomes = game.max_chance_outcomes()
        shape = (game.max_game_length(), 2 * num_actions + num_outcomes)
        self._num_actions = num_actions
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"path": self.tensor.reshape(shape)} if self._public else {}
        if not self._public:
            self.tensor = np.zeros(0, np.float32)

    def set_from(self, state: ExplicitTreeState, player: int) -> None:
        del player  # Everything observable is public.
        self.tensor.fill(0)
        if not self._public:
            return
        path = self.dict["path"]
        a = self._num_actions
        for t, step in enumerate(state.path):
            if isinstance(step, tuple):
                path[t, step[0]] = 1
                path[t, a + step[1]] = 1
            else:
                path[t, 2 * a + step] = 1

    def string_from(self, state: ExplicitTreeState, player: int) -> str:
        del player
        return _path_string(state.path) if self._public else ""


def _child(node: mt.Node, step) -> mt.Node:
    if isinstance(step, tuple):
        assert isinstance(node, mt.MatrixStage), "a joint action below a non-matrix node"
        return node.children[step[0]][step[1]]
    assert isinstance(node, mt.ChanceStage), "a chance outcome below a non-chance node"
    return node.outcomes[step][1]


class _NodeRef:
    """An immutable reference to a node of the (immutable) tree.

    ``clone`` deep-copies a state and serialisation pickles it; the reference makes the
    first share the node instead of copying the subtree and the second drop it (the path
    is kept and leads back to it).
    """

    __slots__ = ("node",)

    def __init__(self, node: mt.Node | None = None):
        self.node = node

    def __deepcopy__(self, memo) -> _NodeRef:
        return self

    def __reduce__(self):
        return _NodeRef, ()


def _path_string(path: tuple) -> str:
    """E.g. ``"(0,1) c2 (1,1)"``; ``"root"`` for the empty path."""
    if not path:
        return "root"
    return " ".join(f"({s[0]},{s[1]})" if isinstance(s, tuple) else f"c{s}" for s in path)


def tree_of(game: pyspiel.Game) -> mt.MatrixTree:
    """The explicit tree of an explicit-tree game, also through ``convert_to_turn_based``.

    A game loaded by name is the Python object and has ``game.tree``; a wrapper such as
    the turn-based conversion only knows the parameters, so the game is loaded again
    from them (the same parameters always give the same tree).
    """
    tree = getattr(game, "tree", None)
    if isinstance(tree, mt.MatrixTree):
        return tree
    params = dict(game.get_parameters())
    if game.get_type().short_name == "turn_based_simultaneous_game":
        params = dict(params["game"])
        name = params.pop("name")
    else:
        name = game.get_type().short_name
    tree = getattr(pyspiel.load_game(name, params), "tree", None)
    if not isinstance(tree, mt.MatrixTree):
        raise ValueError(f"{game} is not an explicit-tree game (it has no matrix tree)")
    return tree
