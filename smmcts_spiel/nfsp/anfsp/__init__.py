"""ANFSP (Zhang et al. 2019, Sec. 4): NFSP whose self-play runs in parallel actors.

NFSP (Heinrich and Silver 2016): each player acts, for a whole episode, with its best
response (epsilon-greedy on a Q-network) with probability ``eta`` and with its average
policy otherwise. Every transition goes to the replay memory (Q-learning towards a target
network), every best-response action to the reservoir (supervised learning of the
average). ANFSP's actors play with their own exploration rates (``epsilons[k]``, decayed as
``1 / sqrt(1 + episodes / epsilon_decay)``, the paper's inverse square root) on copies of the
game and share the networks, which the learner holds. Two designs (``design``):

* ``"actor_learners"``, the paper's (Sec. 4.1, in the manner of A3C, Mnih et al. 2016):
  each actor-learner computes the Q-network's gradient on its own transitions, accumulated
  over ``episodes_per_message`` episodes (the mean over them, "similar to mini-batches"),
  and the average network's gradient on a minibatch of its own supervised memory, and
  applies them (SGD) to the shared networks itself, lock-free on networks in shared
  memory, as A3C's threads do (:class:`.shared_networks.SharedNetworks`): local processes
  and Ray actors on this machine alike. A Ray actor on another machine sends them to the
  learner, which applies them as they arrive and sends it the new parameters. The target network is
  refitted every ``target_update_actions`` actions of all actor-learners. No replay
  memory. The paper's threads share one supervised memory; our actor-learners are
  processes, so each keeps its own (``reservoir_capacity / num_actors`` items), lost when
  the run is checkpointed and resumed.
* ``"learner"``, ours (Ape-X style): actors send their experience to the learner, which
  trains on replayed minibatches, a step every ``learn_every`` transitions taken
  ``steps_per_call`` at a time in one jitted call (a ``lax.scan`` over their minibatches:
  the dispatch of a call costs more than a step's computation), and broadcasts the
  parameters every ``sync_every`` steps: the same shared networks, one optimiser, the
  memories in one place (and in the checkpoints).

Actors run as local processes (``backend="processes"``) or as Ray actors (``"ray"``: a
local Ray, or the cluster at ``ray_address``; needs the ``ray`` extra). ``num_actors=0``
plays in the learner's own process: synchronous, seeded and reproducible (NFSP with the
``learner`` design). With actors the order in which their messages arrive depends on
timing, so runs are not bit-for-bit reproducible.

Modules: :mod:`.config` (the parameters), :mod:`.acting` (an actor's play),
:mod:`.gradients` (losses, gradients, SGD), :mod:`.shared_networks` (the actor-learners'
networks in shared memory), :mod:`.actors` (processes, Ray actors and their links),
:mod:`.learner` (:class:`ANFSP`).
"""

from __future__ import annotations

from smmcts_spiel.nfsp.anfsp.config import BACKENDS, DESIGNS, ANFSPConfig
from smmcts_spiel.nfsp.anfsp.learner import ANFSP

# The learner and its parameters, then the modules (so that the API reference shows them).
__all__ = ["ANFSP", "ANFSPConfig", "BACKENDS", "DESIGNS", "acting", "actors", "config",
           "gradients", "learner", "shared_networks"]
