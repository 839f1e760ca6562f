"""The ``paper`` and ``tuned`` settings of MC-NFSP, NFSP and ANFSP, side by side.

``paper``: every setting Zhang et al., *Monte Carlo Neural Fictitious Self-Play* (2019,
``../shared/papers/mc-nfsp-2019.txt``) give for their experiments, each cited to its
section: MC-NFSP and NFSP on Othello (Sec. 3.3.1, 3.3.2), ANFSP and NFSP on Leduc Hold'em
(Sec. 4.2.1, 4.2.2). Where the paper gives no value (or its text lost it: the anticipatory
parameters, ANFSP's set of exploration rates, MC-NFSP's batch size and simulations) the
tuned value stays, and the comment says so. On Othello the networks are the paper's
convolutional ones (``network="conv"``, :mod:`smmcts_spiel.nfsp.networks`, with the shapes
the text lost chosen there); ANFSP's are the paper's asynchronous actor-learners
(``design="actor_learners"``, :mod:`smmcts_spiel.nfsp.anfsp`).

``tuned``: the settings our published measurements ran with (``experiments/nfsp/NOTES.md``).

Each function returns a configuration; keyword arguments override single fields (the
seed, a script's flags); an override of None keeps the preset's value (a flag not given).
"""

from __future__ import annotations

import dataclasses

import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.nfsp.anfsp import ANFSPConfig
from smmcts_spiel.nfsp.mc_nfsp import Config

PRESETS = ("paper", "tuned")

#: ANFSPConfig's fields a script sets with flags of their own, not with ``overrides``.
_OWN_FLAGS = {"game": "--game", "seed": "--seeds", "num_actors": "--num_actors",
              "design": "--design", "backend": "--backend", "ray_address": "--ray_address"}


def _check(preset: str, fields: dict) -> dict:
    """The overrides that are given; ValueError for an unknown preset."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    return {name: value for name, value in fields.items() if value is not None}


def parse_overrides(items: list[str]) -> dict:
    """``name=value`` items (a script's ``--overrides``) as ANFSPConfig fields with values of
    their types, checked as the configuration checks them: one setting of a preset swapped
    at a time, e.g. the paper's ANFSP with the tuned exploration decay
    (``epsilon_decay=10000``). ValueError naming the item and the fix for an unknown field,
    one with a flag of its own, a tuple field, a repeated field or a bad value."""
    defaults = ANFSPConfig()
    fields = {f.name: type(getattr(defaults, f.name)) for f in dataclasses.fields(ANFSPConfig)}
    settable = sorted(name for name, kind in fields.items()
                      if name not in _OWN_FLAGS and kind in (int, float, str))
    overrides: dict = {}
    for item in items:
        name, equals, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not equals or not name or not text:
            raise ValueError(f"{item!r} is not name=value, e.g. epsilon_decay=10000")
        if name in _OWN_FLAGS:
            raise ValueError(f"{name} has a flag of its own: use {_OWN_FLAGS[name]}")
        if name not in fields:
            raise ValueError(f"{name!r} is not a setting of ANFSP"
                             f"{checks.did_you_mean(name, settable)}; one of "
                             f"{', '.join(settable)}")
        if name not in settable:
            raise ValueError(f"{name} is a tuple, not settable here (only single values: "
                             f"{', '.join(settable)})")
        if name in overrides:
            raise ValueError(f"{name} is given twice")
        kind = fields[name]
        try:
            overrides[name] = kind(text)
        except ValueError:
            kind_name = {int: "an integer", float: "a number", str: "a string"}[kind]
            raise ValueError(f"{name} must be {kind_name}, got {text!r}") from None
    dataclasses.replace(defaults, **overrides)  # the configuration's own checks
    return overrides


def _othello(game: str) -> bool:
    return pyspiel.load_game(game).get_type().short_name == "smmcts_othello"


#: The paper's Othello networks (Sec. 3.1: "relu activation is used in convolution layers;
#: dropout used in fully connection layers"; Sec. 3.3.1: "two convolutional layers and a
#: flatten layer. Then, the resultant 120 dimensional vector is passed through many fully
#: connected layers"; Sec. 3.3.2: NFSP's network "is the same with MC-NFSP's except the
#: output"). The dropout rate is not given: 0.3, that of the widely used AlphaZero Othello
#: network of alpha-zero-general, whose shape (convolutions, flatten, fully connected
#: layers with dropout, Adam) the paper's resembles. The fully connected widths are not
#: given either: the tuned (128, 128) stay.
_PAPER_OTHELLO_NETWORK = dict(network="conv", dropout=0.3)


def mc_nfsp(preset: str, game: str = "smmcts_othello", **fields) -> Config:
    """MC-NFSP's configuration (Sec. 3.3.1 on Othello; the paper runs it on nothing else)."""
    fields = _check(preset, fields)
    tuned = Config(game=game, hidden=(128, 128) if _othello(game) else (128,))
    if preset == "tuned":
        return dataclasses.replace(tuned, **fields)
    paper = dict(
        # Sec. 3.3.1: "We set the sizes of memory to 4M and 400K for M_RL and M_SL".
        replay_capacity=4_000_000,
        reservoir_capacity=400_000,
        # Sec. 3.3.1: "The reinforcement learning and supervised learning rate were set to
        # 0.01 and 0.005, and both used Adam optimizer" (Config's optimiser is Adam).
        br_learning_rate=0.01,
        avg_learning_rate=0.005,
        # Sec. 3.3.1: "Players perform gradient update every 100 episodes of play" (one step
        # of each network: the number of steps per update is not given).
        learn_every=100,
        # Not given: the anticipatory parameter eta (its value is lost from the text), the
        # batch size, the simulations per move and c_puct; the tuned values stay. The
        # value head is "the probability of the current player winning": play it with
        # win/loss returns (smmcts_othello's default).
        **(_PAPER_OTHELLO_NETWORK if _othello(game) else {}),
    )
    return dataclasses.replace(tuned, **{**paper, **fields})


def nfsp(preset: str, game: str = "leduc_poker", **fields) -> ANFSPConfig:
    """NFSP's configuration (our DQN-NFSP: ANFSP without actors): Sec. 3.3.2 on Othello,
    Sec. 4.2.2 on Leduc (and every other game)."""
    fields = _check(preset, fields)
    othello = _othello(game)
    tuned = ANFSPConfig(game=game, hidden=(128, 128) if othello else (128,), num_actors=0)
    if preset == "tuned":
        return dataclasses.replace(tuned, **fields)
    if othello:
        paper = dict(
            # Sec. 3.3.2: "We set the size of memory to 400w and 40w" (4M and 400K).
            replay_capacity=4_000_000, reservoir_capacity=400_000,
            # Sec. 3.3.2: "gradient updates of mini-batch size 256 per network for every 256
            # moves" (a move is a transition of the mover).
            batch_size=256, learn_every=256,
            # Sec. 3.3.2: "The -greedy policy's exploration rate started at 0.6 and decayed
            # to 0, proportionally to the inverse square root of the number of iterations":
            # epsilon = 0.6 / sqrt(1 + episodes).
            epsilons=(0.6,), epsilon_decay=1.0,
            **_PAPER_OTHELLO_NETWORK)
    else:
        paper = dict(
            # Sec. 4.2.2: "We set the size of memory to 20w and 200w" (200K and 2M).
            replay_capacity=200_000, reservoir_capacity=2_000_000,
            # Sec. 4.2.2: "gradient updates of mini-batch size 128 per network for every 128
            # actions".
            batch_size=128, learn_every=128,
            # Sec. 4.2.2: "exploration rate started at 0.06 and decayed to 0, proportionally
            # to the inverse square root of the number of iterations".
            epsilons=(0.06,), epsilon_decay=1.0)
    paper.update(
        # Sec. 3.3.2 and 4.2.2: "The reinforcement learning and supervised learning rate
        # were set 0.01 and 0.005" (the optimiser is not named; SGD as in Sec. 4.2.1).
        rl_learning_rate=0.01, sl_learning_rate=0.005,
        # Sec. 3.3.2 and 4.2.2: "The target network of best response network was refitted
        # every 300 training".
        target_update_every=300,
        # Each gradient update when its moves are played (the tuned preset takes them ten
        # at a time, in one call: a speed-up the paper does not have).
        steps_per_call=1,
        # Not given: eta (lost from the text) and the memory size before learning starts;
        # the tuned values stay. The network: the paper's on Othello (above); on Leduc
        # (Sec. 4.2.2: "the same with ANFSP's", whose input is a vector, Sec. 4.2.1) the
        # tuned MLP.
    )
    return dataclasses.replace(tuned, **{**paper, **fields})


def anfsp(preset: str, game: str = "leduc_poker", **fields) -> ANFSPConfig:
    """ANFSP's configuration (Sec. 4.2.1, Leduc Hold'em)."""
    fields = _check(preset, fields)
    tuned = ANFSPConfig(game=game, hidden=(128, 128) if _othello(game) else (128,))
    if preset == "tuned":
        return dataclasses.replace(tuned, **fields)
    paper = dict(
        # Sec. 4.1: "Inspired with A3C algorithm ... Each thread computes gradient of best
        # response network using transition tuple each step and accumulate gradients over
        # multiple timesteps ... before they are applied ... And we compute gradient of
        # average strategy network using mini-batch of supervised learning memory";
        # Algorithm 2 line 29: "update ... asynchronously" (the shared networks).
        design="actor_learners",
        # Sec. 4.2.1: "We started 4 threads" (here actor-learner processes or Ray actors).
        num_actors=4,
        # Sec. 4.2.1: "We set the sizes of M_SL to 200w" (2M).
        reservoir_capacity=2_000_000,
        # Sec. 4.2.1: "We train network every 32 iterations of play. We update Deep
        # Q-learning network with accumulated gradients, and update average strategy network
        # with mini-batch size of 128" (an iteration is an episode: Algorithm 2 lines 26-27).
        episodes_per_message=32,
        batch_size=128,
        # Sec. 4.2.1: "The reinforcement learning and supervised learning rate were set 0.01
        # and 0.005, and both used SGD" (ANFSP's optimiser is SGD).
        rl_learning_rate=0.01, sl_learning_rate=0.005,
        # Sec. 4.2.1: "The target network of Deep Q-learning was updated every 50000
        # actions" (counted over all actor-learners: Algorithm 2's global counter T).
        target_update_actions=50_000,
        # Sec. 4.2.1: "The exploration rate decayed to 0, proportionally to the inverse
        # square root of the number of iterations"; the set the rates are "randomly
        # chosen from" is lost from the text: the tuned rates stay.
        epsilon_decay=1.0,
        # Not given: eta (lost from the text), the network (a vector input, Sec. 4.2.1:
        # the tuned MLP) and the supervised memory's size before learning starts; the
        # tuned values stay. No replay memory (Sec. 1: "This reduces the data storage
        # memory needed compared to NFSP"): replay_capacity is unused by this design.
    )
    return dataclasses.replace(tuned, **{**paper, **fields})
