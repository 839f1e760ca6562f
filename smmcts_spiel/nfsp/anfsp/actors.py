"""ANFSP's actors: the work of one (:class:`Worker`), its loop on a link to the learner
(:func:`serve`), and the actors as local processes or Ray actors with their links
(:class:`Actors`)."""

from __future__ import annotations

import collections
import multiprocessing as mp
import multiprocessing.connection
import os
import socket
import threading
import time
from typing import Any, cast

from smmcts_spiel.nfsp.anfsp.acting import Acting
from smmcts_spiel.nfsp.anfsp.config import ANFSPConfig
from smmcts_spiel.nfsp.anfsp.gradients import Gradients
from smmcts_spiel.nfsp.anfsp.shared_networks import SharedNetworks
from smmcts_spiel.nfsp.buffers import ReservoirBuffer


class Worker:
    """An actor's work wherever it runs (an actor process, a Ray actor, or the learner's own
    process): play ``episodes_per_message`` episodes with the newest parameters it has and
    return the message for the learner, ``(actor, payload, episodes, CPU seconds)``; the
    payload is the experience (design ``learner``: transitions and SL samples stacked field
    by field) or its gradients (``actor_learners``: :class:`Gradients`)."""

    def __init__(self, config: ANFSPConfig, actor: int, episodes: int,
                 acting: Acting | None = None, reservoir: ReservoirBuffer | None = None,
                 shared: SharedNetworks | None = None):
        self.config, self.actor, self.episodes = config, actor, episodes
        # actor_learners: the shared networks, updated here, if they are on this machine
        self.shared = shared if shared is not None and shared.attach() else None
        # distinct generator streams; ``episodes`` keeps a resumed actor's streams new
        self.acting = acting or Acting(config, seed=[config.seed, 1 + actor, episodes])
        self.params: tuple | None = None
        self.gradients = None
        if config.design == "actor_learners":
            if reservoir is None:
                reservoir = ReservoirBuffer(
                    max(1, config.reservoir_capacity // max(1, config.num_actors)),
                    self.acting.rng)
            self.gradients = Gradients(config, self.acting, reservoir,
                                        stream=(1 + actor) << 24 | episodes & 0xFFFFFF)

    def set_params(self, params: tuple) -> None:
        """(Q, average) parameters; with the ``actor_learners`` design (Q, target, average),
        the target None if it is the one this worker has (it changes rarely)."""
        if len(params) == 3 and params[1] is None:
            params = (params[0], cast(tuple, self.params)[1], params[2])
        self.params = params
        self.acting.set_params(params[0], params[-1])

    def work(self, params: tuple | None = None) -> tuple:
        """One message (after taking ``params`` if given)."""
        if params is not None:
            self.set_params(params)
        n = self.config.episodes_per_message
        cpu = time.process_time()
        if self.shared is not None:  # the shared networks as they are now
            self.set_params(self.shared.read()[0])
        transitions, supervised = self.acting.play(n, self.actor, self.episodes)
        self.episodes += n
        payload = ((transitions, supervised) if self.gradients is None
                   else self.gradients(cast(tuple, self.params), transitions, supervised))
        if self.shared is not None:  # applied here; the learner only counts
            q_grads, avg_grads, actions = payload
            self.shared.apply(self.config, q_grads, avg_grads, actions, writer=1 + self.actor)
            payload = (None, None, actions)
        return self.actor, payload, n, time.process_time() - cpu

    def serve(self, address, authkey: bytes) -> None:
        """A Ray actor's one call: connect to the learner at ``address`` and serve it
        (:func:`serve`) until it says stop or goes."""
        with multiprocessing.connection.Client(address, authkey=authkey) as link:
            _tune_socket(link.fileno())
            serve(self, link)


def _tune_socket(fd: int) -> None:
    """TCP options for a Ray actor's link (both ends): no Nagle delay (a long message is
    written as a header, then its body) and a send buffer that holds several messages:
    TCP's starts at 16 KB, so a 50 KB parameter message left in pieces, each waiting for
    the learner's writing thread (py-spy: 23% of a Ray actor-learner's samples in ``recv``
    of a message whose first bytes had come)."""
    with socket.socket(fileno=os.dup(fd)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)


def serve(worker: Worker, link) -> None:
    """An actor's loop, as a local process or a Ray actor: while told to run, send the
    learner one message after another down ``link`` (a duplex connection), each played with
    the newest parameters received. The learner's orders come the other way on the same
    link: ``("params", parameters)``, ``("run", bool)``, ``("stop", None)``.

    Every actor has a link of its own, written from its playing thread: through one bounded
    ``multiprocessing.Queue`` for all actors, each message went through a feeder thread that
    waited for the actors' shared write lock (py-spy: ``experiments/nfsp/NOTES.md``);
    through a Ray call per message (or per four), Ray's scheduling and serialisation cost
    the actor about 0.9 ms of CPU a call. A full link (the learner behind) makes the actor
    wait rather than pile up stale experience."""
    newest, running = None, False
    try:
        # ready (imports done): which actor this is, and whether it updates the shared
        # networks itself
        link.send((worker.actor, worker.shared is not None))
        while True:
            while link.poll(0 if running else 0.2):  # every order waiting; paused: wait
                order, value = link.recv()
                if order == "params":
                    newest = value
                elif order == "run":
                    running = value
                else:
                    return
            if running:
                link.send(worker.work(newest))
                newest = None
    except (EOFError, OSError):  # the learner has gone
        return


def _actor_process(config: ANFSPConfig, actor: int, episodes: int, link,
                   shared: SharedNetworks | None = None) -> None:
    """An actor process (``episodes``: how many it played before, so that its exploration
    rate's decay continues there after a checkpoint)."""
    serve(Worker(config, actor, episodes, shared=shared), link)


#: Seconds the actors may take to start (spawn, imports, Ray) before ANFSP gives up.
_START_TIMEOUT = 300


class _Link:
    """The learner's end of an actor's link: messages are read from it by the learner,
    orders written to it by a thread of its own, so that the learner never waits for an
    actor busy playing (or blocked on its own full link) to read them; parameters not yet
    sent are replaced by newer ones (an actor only wants the newest)."""

    def __init__(self, connection):
        self.connection = connection
        self._params: tuple | None = None
        self._orders: collections.deque = collections.deque()
        self._wake = threading.Condition()
        self._thread = threading.Thread(target=self._write, daemon=True)
        self._thread.start()

    def order(self, order: str, value: Any = None) -> None:
        with self._wake:
            if order == "params":
                self._params = value
            else:
                self._orders.append((order, value))
            self._wake.notify()

    def _write(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._params is not None or bool(self._orders))
                params, self._params = self._params, None
                orders, self._orders = list(self._orders), collections.deque()
            try:
                if params is not None:
                    self.connection.send(("params", params))
                for order in orders:
                    self.connection.send(order)
            except OSError:  # the actor has gone
                return
            if ("stop", None) in orders:
                return

    def close(self) -> None:
        self._thread.join(timeout=10)
        self.connection.close()


class Actors:
    """The actors, as local processes (``backend="processes"``; ``spawn``: JAX is not
    fork-safe) or Ray actors (``"ray"``: a local Ray, or the cluster at
    ``config.ray_address``), each linked to the learner by a duplex connection: a pipe, or
    a socket the Ray actor opens to the learner (authenticated with a random key), which
    its one Ray call then serves (:func:`serve`). Ray places the actors; their messages do
    not go through Ray."""

    def __init__(self, config: ANFSPConfig, episodes: int, params: tuple,
                 shared: SharedNetworks | None = None):
        self._backend = config.backend  # to name an actor that failed (_who)
        self._processes: list = []
        self._ray_actors: list = []
        self._links: list[_Link] = []
        self._ready: collections.deque = collections.deque()  # links with a message waiting
        connections = (self._start_ray(config, episodes, shared) if config.backend == "ray"
                       else self._start_processes(config, episodes, shared))
        self._links = [_Link(c) for c in connections]
        by_actor: dict = {}
        #: the actors that update the shared networks themselves (on this machine)
        self.sharing: set[int] = set()
        deadline = time.perf_counter() + _START_TIMEOUT
        try:
            for each in self._links:
                each.order("params", params)
            while len(by_actor) < len(self._links):  # each actor says it is ready
                if time.perf_counter() > deadline:
                    break
                waiting = [k for k in self._links if k not in by_actor.values()]
                for link in self._ready_links(waiting, 0.5):
                    # EOFError if the actor died, an OSError (ConnectionResetError) if its
                    # connection reset: a Ray actor's socket, a pipe on some systems
                    actor, sharing = link.connection.recv()
                    by_actor[actor] = link
                    if sharing:
                        self.sharing.add(actor)
        except (EOFError, OSError) as error:
            index = self._links.index(link)
            self.close()  # every actor stopped, the dead one's process joined
            raise RuntimeError(
                f"ANFSP's {self._who(index)} ended while starting "
                f"({error!r}): its error, if it printed one, is above; it may have run out "
                f"of memory or been killed. Start again, or run with num_actors=0 to play "
                f"in this process") from None
        if len(by_actor) < len(self._links):
            missing = [k for k, each in enumerate(self._links) if each not in by_actor.values()]
            self.close()
            raise RuntimeError(
                f"ANFSP's {', '.join(self._who(k) for k in missing)} did not "
                f"say {'it was' if len(missing) == 1 else 'they were'} ready within "
                f"{_START_TIMEOUT} s: the machine (or the Ray cluster) is likely too busy; "
                f"use fewer actors (num_actors) or a less loaded machine")
        self._links = [by_actor[k] for k in sorted(by_actor)]

    def _who(self, index: int) -> str:
        """The actor on the ``index``-th link, named before it said which actor it is:
        processes are linked in actor order (and, once joined, have an exit code), Ray
        actors in the order they connected."""
        if self._backend == "ray":
            return f"Ray actor on link {index} (links in the order the actors connected)"
        if index >= len(self._processes):
            return f"actor {index}"
        process = self._processes[index]
        code = process.exitcode
        ended = ("" if code is None else f", exit code {code}" if code >= 0
                 else f", killed by signal {-code}")
        return f"actor {index} (process {process.pid}{ended})"

    def _start_processes(self, config: ANFSPConfig, episodes: int,
                         shared: SharedNetworks | None) -> list:
        ctx = mp.get_context("spawn")  # jax is not fork-safe
        connections: list = []
        for k in range(config.num_actors):
            mine, theirs = ctx.Pipe(duplex=True)
            process = ctx.Process(target=_actor_process, daemon=True,
                                  args=(config, k, episodes, theirs, shared))
            process.start()
            theirs.close()  # the learner sees EOF if the actor dies
            self._processes.append(process)
            connections.append(mine)
        return connections

    def _start_ray(self, config: ANFSPConfig, episodes: int,
                   shared: SharedNetworks | None) -> list:
        import ray  # the ray extra (ANFSP checks it is installed before it gets here)

        if not ray.is_initialized():
            if config.ray_address is None:
                # A local Ray runs its workers at niceness +15 (RAY_worker_niceness) so that
                # its own processes stay responsive; here the workers are the work, and at
                # +15 they lose the cores to any other process (bench_nfsp.py measured the
                # Ray actors at 0.2 to 0.4 times local processes' episodes). Unless the user
                # says otherwise, they run at the learner's priority, as local processes do.
                os.environ.setdefault("RAY_worker_niceness", "0")
            ray.init(address=config.ray_address, include_dashboard=False, log_to_driver=False)
        # On a cluster each actor asks for a CPU (Ray places them) and connects to this
        # node's address; on a local Ray the actors share this machine's cores as local
        # processes do, however many, and connect through the loopback.
        host = "127.0.0.1" if config.ray_address is None else ray.util.get_node_ip_address()
        remote: Any = ray.remote(num_cpus=1 if config.ray_address else 0)(Worker)
        authkey = os.urandom(32)
        connections: list = []
        with socket.create_server((host, 0)) as server:
            server.settimeout(0.5)
            self._ray_actors = [remote.remote(config, k, episodes, shared=shared)
                                for k in range(config.num_actors)]
            calls = [a.serve.remote(server.getsockname(), authkey) for a in self._ray_actors]
            deadline = time.perf_counter() + _START_TIMEOUT
            while len(connections) < config.num_actors:
                if time.perf_counter() > deadline:
                    self.close()
                    raise RuntimeError(f"ANFSP's Ray actors did not connect within "
                                       f"{_START_TIMEOUT} s")
                try:
                    sock, _ = server.accept()
                except TimeoutError:
                    ended, _ = ray.wait(calls, timeout=0)
                    if ended:  # an actor failed before connecting: raise its error
                        self.close()
                        ray.get(ended)
                    continue
                sock.settimeout(None)
                _tune_socket(sock.fileno())
                connection = multiprocessing.connection.Connection(sock.detach())
                try:  # what multiprocessing's Listener does with a client
                    multiprocessing.connection.deliver_challenge(connection, authkey)
                    multiprocessing.connection.answer_challenge(connection, authkey)
                except (multiprocessing.AuthenticationError, EOFError, OSError):
                    connection.close()  # not one of ours
                    continue
                connections.append(connection)
        return connections

    def _ready_links(self, links: list, timeout: float) -> list:
        ready = multiprocessing.connection.wait([k.connection for k in links], timeout)
        return [k for k in links if k.connection in ready]

    def resume(self) -> None:
        for link in self._links:
            link.order("run", True)

    def pause(self) -> None:
        for link in self._links:
            link.order("run", False)

    def get(self, timeout: float):
        """The next message (the actors' links in turn), or None after ``timeout`` seconds."""
        if not self._ready:
            self._ready.extend(self._ready_links(self._links, timeout))
        while self._ready:
            link = self._ready.popleft()
            try:
                return link.connection.recv()
            except (EOFError, OSError):  # an actor died: stop reading its link
                self._links.remove(link)
        return None

    def send(self, actors, params: tuple) -> None:
        """Parameters for these actors (they take the newest before their next message)."""
        for k in actors:
            self._links[k].order("params", params)

    def close(self) -> None:
        """Stop the actors (their unsent messages are dropped)."""
        links = list(self._links)
        for link in links:
            link.order("stop")
        deadline = time.perf_counter() + 10
        open_ = list(links)
        while open_ and time.perf_counter() < deadline:  # read on until each actor ends
            for link in self._ready_links(open_, 0.1):
                try:
                    link.connection.recv()
                except (EOFError, OSError):
                    open_.remove(link)
        for process in self._processes:
            if process.is_alive():
                process.terminate()
            process.join()
        if self._ray_actors:
            import ray

            for actor in self._ray_actors:
                ray.kill(actor)
        for link in links:
            link.close()
        self._links, self._ready, self._ray_actors = [], collections.deque(), []
