"""ANFSP's parameters and their checks (:class:`ANFSPConfig`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from smmcts_spiel import checks
from smmcts_spiel.nfsp import networks


@dataclass(frozen=True)
class ANFSPConfig:
    """ANFSP's parameters; the learning ones are OpenSpiel's kuhn_nfsp.py defaults."""

    game: str = "kuhn_poker"
    hidden: tuple[int, ...] = (128,)  # widths of the fully connected hidden layers
    network: str = "mlp"  # or "conv", the paper's (smmcts_spiel.nfsp.networks)
    dropout: float = 0.0  # after every fully connected hidden layer, in training only
    num_actors: int = 2
    eta: float = 0.1
    epsilons: tuple[float, ...] = (0.06, 0.12, 0.24, 0.48)
    epsilon_decay: float = 10_000.0  # episodes
    replay_capacity: int = 200_000
    reservoir_capacity: int = 2_000_000
    batch_size: int = 128
    learn_every: int = 64  # transitions per gradient step of each network
    # design learner: gradient steps taken together, in one jitted call, once that many are
    # owed; 10 = sync_every, so the actors' parameters are as fresh as with single steps
    steps_per_call: int = 10
    min_buffer_size_to_learn: int = 1000
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.01
    target_update_every: int = 300  # gradient steps
    sync_every: int = 10  # gradient steps between parameter broadcasts to the actors
    episodes_per_message: int = 16  # an actor's episodes per message to the learner
    design: str = "learner"  # or "actor_learners", the paper's (see the module docstring)
    target_update_actions: int = 50_000  # actor_learners: actions between target refits
    backend: str = "processes"  # where the actors run: "processes" or "ray"
    ray_address: str | None = None  # with backend="ray": a cluster's address (None: local)
    seed: int = 0

    def __post_init__(self):
        checks.check_count(self.num_actors, "num_actors", 0)
        networks.check_network(self.network, self.dropout)
        if not 0.0 < self.eta <= 1.0:
            raise ValueError(f"eta must be in (0, 1], got {checks.shown(self.eta)!r}")
        if not self.epsilons or not all(0.0 <= e <= 1.0 for e in self.epsilons):
            raise ValueError(f"epsilons must be probabilities, got {self.epsilons!r}")
        for name in ("epsilon_decay", "rl_learning_rate", "sl_learning_rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not 0.0 < value < math.inf:
                raise ValueError(f"{name} must be a positive, finite number, got "
                                 f"{checks.shown(value)!r}")
        for name in ("batch_size", "learn_every", "steps_per_call", "target_update_every",
                     "sync_every",
                     "episodes_per_message", "replay_capacity", "reservoir_capacity",
                     "target_update_actions"):
            checks.check_count(getattr(self, name), name, 1)
        for name, value, allowed in (("design", self.design, DESIGNS),
                                     ("backend", self.backend, BACKENDS)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


#: ANFSP's designs and where its actors can run (ANFSPConfig.design, .backend).
DESIGNS = ("learner", "actor_learners")
BACKENDS = ("processes", "ray")
