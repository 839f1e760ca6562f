"""The ANFSP learner (:class:`ANFSP`): networks, memories, the actors, checkpoints."""

from __future__ import annotations

import functools
import math
import time
from typing import Any, ClassVar, cast

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pyspiel

from smmcts_spiel import checks, extras
from smmcts_spiel.nfsp import checkpoints, networks
from smmcts_spiel.nfsp.anfsp import gradients
from smmcts_spiel.nfsp.anfsp.acting import SAMPLE_TYPES, TRANSITION_TYPES, Acting, stack
from smmcts_spiel.nfsp.anfsp.actors import Actors, Worker
from smmcts_spiel.nfsp.anfsp.config import ANFSPConfig
from smmcts_spiel.nfsp.anfsp.gradients import (
    losses,
    minibatches,
    optimisers,
    sgd,
    to_numpy,
)
from smmcts_spiel.nfsp.anfsp.shared_networks import SharedNetworks
from smmcts_spiel.nfsp.buffers import ReplayBuffer, ReservoirBuffer, check_memory
from smmcts_spiel.nfsp.policy import NetworkPolicy, tensor_size


class ANFSP:
    """The learner: networks, memories, and (with ``num_actors > 0``) the actors.

    Use as a context manager (or call :meth:`close`) so the actors are stopped.
    """

    # The networks' parameters and optimiser states (pytrees; TREES), set by __init__/load.
    q_params: Any
    target_params: Any
    avg_params: Any
    q_opt_state: Any
    avg_opt_state: Any

    def __init__(self, config: ANFSPConfig):
        self.config = config
        self.acting = Acting(config, seed=config.seed)
        self.game = self.acting.game
        checks.check_game(self.game, "ANFSP", perfect_information=False, sequential_only=True)
        if not self.game.get_type().provides_information_state_tensor and not (
                self.game.get_type().provides_observation_tensor):
            raise ValueError(f"ANFSP needs information-state or observation tensors; "
                             f"{self.game.get_type().short_name!r} has neither")
        if config.backend == "ray" and config.num_actors:
            with extras.required("ray", "ANFSP's backend='ray'"):  # now, not in train()
                import ray  # noqa: F401
        check_memory(self.memory_items(), {"replay": config.replay_capacity,
                                            "reservoir": config.reservoir_capacity},
                     config.batch_size * config.steps_per_call, "ANFSP")
        self.q_opt, self.avg_opt = optimisers(config)
        for name, tree in self.initial_trees(config, self.game).items():
            setattr(self, name, tree)
        self.rng = self.acting.rng
        self.replay = ReplayBuffer(config.replay_capacity, self.rng)
        self.reservoir = ReservoirBuffer(config.reservoir_capacity, self.rng)
        self.episodes = 0
        self.steps = 0
        self.actions = 0  # transitions learnt from (the actor_learners design's target clock)
        self.train_seconds = 0.0
        self.cpu_seconds = 0.0  # of the learner and its actors, while training
        # Where the time goes with actors (not checkpointed): the actors' share of
        # cpu_seconds, and the learner's wall time spent waiting for their messages.
        self.actor_cpu_seconds = 0.0
        self.wait_seconds = 0.0
        self._pending = 0  # transitions received since the last gradient step
        self._target_sent: dict = {}  # actor_learners: actor -> the target it was last sent
        self._actors: Actors | None = None
        self._shared: SharedNetworks | None = None  # actor_learners with actors
        self._worker: Worker | None = None  # actor_learners without actors: in this process
        self._compile()
        self.acting.set_params(self.q_params, self.avg_params)

    def _compile(self) -> None:
        q_loss, avg_loss = losses(self.acting.q_net, self.acting.avg_net)
        seed, target_every = self.config.seed, self.config.target_update_every

        def applied(optimiser):
            def apply(params, opt_state, grads):
                updates, opt_state = optimiser.update(grads, opt_state, params)
                return optax.apply_updates(params, updates), opt_state
            return apply

        apply_q, apply_avg = applied(self.q_opt), applied(self.avg_opt)

        def step(learn_q: bool, learn_avg: bool):
            """One gradient step of the networks that learn, then the target's refit."""
            def body(carry, batches):
                (q, q_opt, target, avg, avg_opt), count = carry
                # Dropout masks (if any) from the seed and the step count: a stream each.
                q_key, avg_key = networks.dropout_keys(seed, count, 2)
                if learn_q:
                    weight = jnp.ones(batches[0][0].shape[0])
                    q, q_opt = apply_q(q, q_opt, jax.grad(q_loss)(q, q_key, target,
                                                                  *batches[0], weight))
                if learn_avg:
                    avg, avg_opt = apply_avg(avg, avg_opt,
                                             jax.grad(avg_loss)(avg, avg_key, *batches[1]))
                count = count + 1
                refit = count % target_every == 0
                target = jax.tree_util.tree_map(lambda a, b: jnp.where(refit, a, b), q, target)
                return ((q, q_opt, target, avg, avg_opt), count), None
            return body

        @functools.partial(jax.jit, static_argnums=(0, 1, 2))
        def learn_steps(learn_q: bool, learn_avg: bool, steps: int, trees, count, batches):
            """``steps`` gradient steps in one call (a scan over their minibatches): one
            call's dispatch instead of ``2 * steps``."""
            (trees, _), _ = jax.lax.scan(step(learn_q, learn_avg), (trees, count), batches,
                                         length=steps)
            return trees

        self._learn_steps = learn_steps

    # -- actors -------------------------------------------------------------------------

    def _params(self, target: bool = True) -> tuple:
        """The parameters an actor plays (and, for actor_learners, differentiates) with;
        without ``target``, the actor_learners' target network as None (unchanged)."""
        if self.config.design == "learner":
            return to_numpy((self.q_params, self.avg_params))
        return (to_numpy(self.q_params), to_numpy(self.target_params) if target else None,
                to_numpy(self.avg_params))

    def _params_for(self, actor: int) -> tuple:
        """The actor_learners' parameters for ``actor``, with the target network only if it
        changed since the actor last got it (every ``target_update_actions`` actions): a
        third less to send after every message. With actors, the shared networks."""
        if self._shared is not None:
            refits = self._shared.refits
            fresh = self._target_sent.get(actor) == refits
            self._target_sent[actor] = refits
            return self._shared.read(target=not fresh)[0]
        fresh = self._target_sent.get(actor) is self.target_params
        self._target_sent[actor] = self.target_params
        return self._params(target=not fresh)

    def _start_actors(self) -> None:
        self._target_sent = {}
        cfg = self.config
        if cfg.design == "actor_learners":
            self._shared = SharedNetworks(self._params(), self.actions, 1 + cfg.num_actors,
                                           cfg.target_update_actions)
            for actor in range(cfg.num_actors):  # the target they start with
                self._target_sent[actor] = self._shared.refits
        try:
            self._actors = Actors(cfg, self.episodes // cfg.num_actors, self._params(),
                                   self._shared)
        finally:
            if self._shared is not None:  # attached (or not on this machine) by now
                self._shared.unlink()

    def close(self) -> None:
        """Stop the actors (their unsent episodes are dropped)."""
        if self._actors is not None:
            self._actors.close()
            self._actors = None
            self._shared = None

    def __enter__(self) -> ANFSP:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- learning -----------------------------------------------------------------------

    def _take(self, message: tuple) -> None:
        """A worker's message: its experience stored and learnt from, or its gradients
        applied (and the new parameters sent back to it)."""
        actor, payload, episodes, cpu = message
        self.actor_cpu_seconds += cpu
        if self.config.design == "learner":
            transitions, supervised = payload
            self._receive(transitions, supervised, episodes, cpu)
            return
        self.cpu_seconds += cpu
        self.episodes += episodes
        if self._actors is not None and actor in self._actors.sharing:
            self.steps += 1  # the actor-learner has applied them itself
            return
        if self._shared is not None:  # an actor on another machine: applied here for it
            self._shared.apply(self.config, *payload)
            self.steps += 1
        else:
            self.apply_gradients(*payload)
        if self._actors is not None:
            self._actors.send([actor], self._params_for(actor))
        else:
            cast(Worker, self._worker).set_params(self._params_for(actor))

    def apply_gradients(self, q_grads, avg_grads, actions: int) -> None:
        """One asynchronous update of the shared networks (design ``actor_learners``): SGD
        steps with an actor-learner's gradients, the target refitted every
        ``target_update_actions`` actions (counted over all actor-learners)."""
        cfg = self.config
        if q_grads is not None:
            self.q_params = sgd(self.q_params, q_grads, cfg.rl_learning_rate)
        if avg_grads is not None:
            self.avg_params = sgd(self.avg_params, avg_grads, cfg.sl_learning_rate)
        every = self.config.target_update_actions
        if (self.actions + actions) // every > self.actions // every:
            self.target_params = self.q_params
        self.actions += actions
        self.steps += 1

    def _receive(self, transitions: tuple, supervised: tuple, episodes: int,
                 actor_cpu_seconds: float = 0.0) -> None:
        """Store experience (one array per field) and take the gradient steps it is owed."""
        self.cpu_seconds += actor_cpu_seconds
        if transitions:
            self.replay.add_batch(transitions)
            self._pending += len(transitions[0])
            self.actions += len(transitions[0])
        if supervised:
            self.reservoir.add_batch(supervised)
        self.episodes += episodes
        cfg = self.config
        stepped = False
        while self._pending >= cfg.learn_every * cfg.steps_per_call:
            self._pending -= cfg.learn_every * cfg.steps_per_call
            stepped |= self.learn(cfg.steps_per_call)
        if stepped and self._actors is None:
            self.acting.set_params(self.q_params, self.avg_params)

    def learn(self, steps: int = 1) -> bool:
        """``steps`` gradient steps of each network whose memory holds enough data (design
        ``learner``), in one call; True if a network changed. The target network is refitted
        after every ``target_update_every``-th step, the actors get the parameters at the
        end of a call that passed a multiple of ``sync_every`` steps."""
        cfg = self.config
        learn_q = len(self.replay) >= cfg.min_buffer_size_to_learn
        learn_avg = len(self.reservoir) >= cfg.min_buffer_size_to_learn
        before, self.steps = self.steps, self.steps + steps
        if not (learn_q or learn_avg):
            if self.steps // cfg.target_update_every > before // cfg.target_update_every:
                self.target_params = self.q_params
            return False
        batches = tuple(minibatches(memory, cfg.batch_size, steps) if learns else None
                        for memory, learns in ((self.replay, learn_q),
                                               (self.reservoir, learn_avg)))
        trees = (self.q_params, self.q_opt_state, self.target_params, self.avg_params,
                 self.avg_opt_state)
        (self.q_params, self.q_opt_state, self.target_params, self.avg_params,
         self.avg_opt_state) = self._learn_steps(learn_q, learn_avg, steps, trees,
                                                 np.uint32(before), batches)
        if self._actors is not None and self.steps // cfg.sync_every > before // cfg.sync_every:
            self._actors.send(range(cfg.num_actors), self._params())
        return True

    def train(self, seconds: float) -> None:
        """Self-play and learn for ``seconds`` of wall time (added to ``train_seconds``)."""
        if self.config.num_actors and self._actors is None:
            self._start_actors()  # not training time: a fixed cost, not the algorithm's
        start, cpu = time.perf_counter(), time.process_time()
        stop = start + seconds
        if self._actors is not None:
            self._actors.resume()
            while (now := time.perf_counter()) < stop:
                message = self._actors.get(min(0.5, max(0.01, stop - now)))
                self.wait_seconds += time.perf_counter() - now
                if message is not None:
                    self._take(message)
            self._actors.pause()
            if self._shared is not None:  # the networks as the actor-learners left them
                (self.q_params, self.target_params, self.avg_params), self.actions = (
                    self._shared.read())
        else:
            while time.perf_counter() < stop:
                self.self_play(self.config.episodes_per_message)
        self.train_seconds += time.perf_counter() - start
        self.cpu_seconds += time.process_time() - cpu

    def self_play(self, episodes: int) -> None:
        """``episodes`` episodes in this process, learning as they come (seeded NFSP; with
        the ``actor_learners`` design, one actor-learner: whole messages, rounded up).

        With the ``learner`` design the experience is stored in batches, each just before
        the gradient step it completes, so the memories hold at every step what they would
        hold had each episode been stored as it ended (storing a batch costs about what
        storing one episode does).
        """
        if self.config.design == "actor_learners":
            if self._worker is None:
                self._worker = Worker(self.config, 0, self.episodes, acting=self.acting,
                                       reservoir=self.reservoir)
                self._worker.set_params(self._params())
                self._target_sent[0] = self.target_params
            for _ in range(math.ceil(episodes / self.config.episodes_per_message)):
                self._take(self._worker.work())
            return
        transitions, supervised, played = [], [], 0
        chunk = self.config.learn_every * self.config.steps_per_call
        for _ in range(episodes):
            rl, sl = self.acting.play_episode(self.acting.epsilon(0, self.episodes + played))
            transitions += rl
            supervised += sl
            played += 1
            if self._pending + len(transitions) >= chunk:
                self._receive(stack(transitions, TRANSITION_TYPES),
                              stack(supervised, SAMPLE_TYPES), played)
                transitions, supervised, played = [], [], 0
        if played:
            self._receive(stack(transitions, TRANSITION_TYPES),
                          stack(supervised, SAMPLE_TYPES), played)

    def average_policy(self) -> NetworkPolicy:
        return NetworkPolicy(self.game, self.acting.avg_net.apply, self.avg_params)

    # -- checkpoints --------------------------------------------------------------------

    KIND: ClassVar[str] = "anfsp"
    CONFIG: ClassVar[type] = ANFSPConfig
    TREES: ClassVar[tuple[str, ...]] = gradients.TREES
    COUNTERS: ClassVar[dict[str, type]] = {"episodes": int, "steps": int, "actions": int,
                                           "train_seconds": float, "cpu_seconds": float,
                                           "_pending": int}

    @staticmethod
    def initial_trees(config: ANFSPConfig, game: pyspiel.Game) -> dict:
        """The networks' initial parameters (target = Q) and their optimisers' states."""
        return gradients.initial_trees(config, game)

    def memory_items(self) -> dict:
        """(shape, dtype) of each field of the memories' items."""
        x, n = (tensor_size(self.game),), (self.acting.num_actions,)
        return {"replay": tuple(zip((x, (), (), x, n, ()), TRANSITION_TYPES)),
                "reservoir": tuple(zip((x, n, ()), SAMPLE_TYPES))}

    def restored(self) -> None:
        self.acting.set_params(self.q_params, self.avg_params)

    def save(self, path) -> None:
        """The learner's state (the actors restart from it on the next :meth:`train`), in
        a checkpoint that runs no code when loaded
        (:func:`smmcts_spiel.nfsp.checkpoints.save_run`)."""
        checkpoints.save_run(self, path)

    @classmethod
    def load(cls, path, game: str | pyspiel.Game | None = None,
             network: ANFSPConfig | None = None) -> ANFSP:
        """The learner saved at ``path``; with ``game``, refuses a run trained on another
        game, with ``network`` (a configuration) one whose network is not ``network``'s.
        Raises :class:`~smmcts_spiel.nfsp.checkpoints.CheckpointError` for a file that is
        not a checkpoint of an ANFSP run or does not fit its own configuration."""
        return checkpoints.load_as(cls, path, game, network)
