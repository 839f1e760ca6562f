"""The networks in shared memory that ANFSP's actor-learners update lock-free
(:class:`SharedNetworks`)."""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile

import jax
import numpy as np

from smmcts_spiel.nfsp.anfsp.config import ANFSPConfig
from smmcts_spiel.nfsp.anfsp.gradients import to_numpy


class SharedNetworks:
    """The paper's shared networks for actor-learners (design ``actor_learners`` with
    actors): the Q, target and average networks' parameters and Algorithm 2's global action
    counter in one block of shared memory, a file in ``/dev/shm`` (or the temporary
    directory) mapped by the learner and by every actor-learner on this machine, local
    process or Ray actor, which attach to it by its path. Each applies its own SGD steps
    there after each message, lock-free as A3C's threads do (Mnih et al. 2016), and refits
    the target when the count passes a multiple of ``target_update_actions``; no learner
    applies updates or sends parameters in between (with it, the learner's share of the two
    cores kept 2 actor-learners at 1.4-1.8 times one: ``experiments/nfsp/NOTES.md``; Ray
    actors on this machine once sent gradients that way and ran at 0.80-0.85 of local
    processes' rate). An actor on another machine finds no such file (or, in a container
    that happens to have one, not this block's random tag), so it sends its gradients to
    the learner, which applies them here: whether an actor can share is tested on the
    memory itself, not inferred from host names or node ids.

    The counter is one integer per writer (the learner, at index 0, which also holds the
    count of a resumed run, and each actor-learner), each written only by its writer, so
    that no lock is needed: the total is their sum. A writer that sees the total's
    multiples of ``target_update_actions`` pass the refits done so far refits the target
    and records them; two writers may both do so for the same multiple (a second copy of
    the Q-network), none misses one."""

    _TAG = 16  # bytes of the random tag at the start of the block

    def __init__(self, trees: tuple, actions: int, writers: int, every: int):
        self._templates = tuple(to_numpy(t) for t in trees)  # their shapes and structure
        self._sizes = [sum(leaf.size for leaf in jax.tree_util.tree_leaves(t))
                       for t in self._templates]
        self._writers = writers
        self._tag = os.urandom(self._TAG)
        self._owner = True
        directory = "/dev/shm" if os.path.isdir("/dev/shm") else None  # memory, not disk
        fd, self.path = tempfile.mkstemp(prefix="smmcts-anfsp-", dir=directory)
        try:
            os.ftruncate(fd, self._bytes())
            self._map: mmap.mmap | None = mmap.mmap(fd, self._bytes())
        finally:
            os.close(fd)
        self._map[:self._TAG] = self._tag
        self._views: tuple | None = None
        self.views()
        self._counts[0] = actions
        self._refits[0] = actions // every
        self.write(trees)

    def _bytes(self) -> int:
        return self._TAG + 8 * (2 + self._writers) + 4 * sum(self._sizes)

    def __getstate__(self) -> dict:  # to an actor: the path, attached there (attach)
        state = {**self.__dict__, "_map": None, "_views": None, "_owner": False}
        for views in ("_refits", "_counts"):  # of the learner's mapping
            state.pop(views, None)
        return state

    def attach(self) -> bool:
        """Map the block in this process; False if it is not on this machine (the actor
        then sends its gradients to the learner)."""
        if self._map is not None:
            return True
        try:
            with open(self.path, "r+b") as f:
                if os.fstat(f.fileno()).st_size != self._bytes():
                    return False
                memory = mmap.mmap(f.fileno(), self._bytes())
        except OSError:  # no such file here: another machine (or container)
            return False
        if memory[:self._TAG] != self._tag:  # someone else's file of that name
            memory.close()
            return False
        self._map = memory
        return True

    def unlink(self) -> None:
        """Remove the block's name (the learner, once its actors have attached): the
        mappings stay valid, and nothing is left behind if the learner dies."""
        if self._owner:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            self._owner = False

    def views(self) -> tuple:
        """(Q, target, average) as pytrees of numpy arrays in the shared memory."""
        if self._views is None:
            if not self.attach() or self._map is None:
                raise RuntimeError(f"the shared networks {self.path} are not on this machine")
            memory = self._map
            counters = np.frombuffer(memory, np.int64, 2 + self._writers, self._TAG)
            self._refits, self._counts = counters[:1], counters[1:]
            start = self._TAG + counters.nbytes
            views = []
            for size, template in zip(self._sizes, self._templates):
                leaves, treedef = jax.tree_util.tree_flatten(template)
                flat = np.frombuffer(memory, np.float32, size, start)
                start += flat.nbytes
                offsets = np.cumsum([0] + [leaf.size for leaf in leaves])
                views.append(jax.tree_util.tree_unflatten(treedef, [
                    flat[a:b].reshape(leaf.shape)
                    for a, b, leaf in zip(offsets[:-1], offsets[1:], leaves)]))
            self._views = tuple(views)
        return self._views

    @property
    def refits(self) -> int:
        """Target refits so far (the target changed since an actor got it if this did)."""
        self.views()
        return int(self._refits[0])

    def read(self, target: bool = True) -> tuple:
        """Copies of (Q, target or None, average) and the action count."""
        q, t, avg = (jax.tree_util.tree_map(np.array, v) if target or k != 1 else None
                     for k, v in enumerate(self.views()))
        return (q, t, avg), int(self._counts.sum())

    def write(self, trees: tuple) -> None:
        for view, tree in zip(self.views(), trees):
            for v, leaf in zip(jax.tree_util.tree_leaves(view), jax.tree_util.tree_leaves(tree)):
                v[...] = leaf

    def apply(self, config: ANFSPConfig, q_grads, avg_grads, actions: int,
              writer: int = 0) -> None:
        """SGD steps with an actor-learner's gradients (``sgd``'s, in place), its actions
        counted as ``writer``'s and, past a multiple of ``target_update_actions`` actions
        of all, the target's refit."""
        q, target, avg = self.views()
        for view, grads, rate in ((q, q_grads, config.rl_learning_rate),
                                  (avg, avg_grads, config.sl_learning_rate)):
            if grads is not None:
                for v, g in zip(jax.tree_util.tree_leaves(view),
                                jax.tree_util.tree_leaves(grads)):
                    v += np.float32(-rate) * g
        self._counts[writer] += actions
        owed = int(self._counts.sum()) // config.target_update_actions
        if owed > self._refits[0]:
            self._refits[0] = owed
            for t, v in zip(jax.tree_util.tree_leaves(target), jax.tree_util.tree_leaves(q)):
                t[...] = v
