"""ANFSP on a real Ray cluster of two nodes, the second in a memory of its own.

Both nodes run on this machine (``ray start``), the second in a mount namespace with a
private ``/dev/shm``: to ANFSP it is another machine (it cannot open the learner's shared
networks), as a node of a real cluster is. The learner runs in a driver process of its own
(this module run as a script), so the test process keeps no Ray state.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

NODE_START_TIMEOUT = 90.0  # seconds for the second node to join a busy machine

# Under pytest-xdist both designs run in one worker, on one cluster (the module's fixture),
# and no other test's local Ray starts beside it.
pytestmark = pytest.mark.xdist_group("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _private_memory_command() -> list[str]:
    """A command prefix that runs its command with a /dev/shm of its own."""
    unshare = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        unshare[1:1] = ["--user", "--map-root-user"]
    return unshare


def _stop(process: subprocess.Popen) -> None:
    """``ray start --block`` stops the node's processes when it is terminated."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def two_nodes():
    """The address of a two-node Ray cluster and the environment that reaches it."""
    pytest.importorskip("ray")
    pytest.importorskip("jax")
    if shutil.which("unshare") is None:
        pytest.skip("needs util-linux's unshare for the second node's own /dev/shm")
    probe = subprocess.run([*_private_memory_command(), "sh", "-c",
                            "mount -t tmpfs tmpfs /dev/shm"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("cannot give a process a /dev/shm of its own here (mount namespaces "
                    f"need root or user namespaces): {probe.stderr.decode().strip()}")
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    temp = tempfile.mkdtemp(prefix="r2n", dir="/tmp")  # Ray's socket paths must be short
    port = _free_port()
    address = f"127.0.0.1:{port}"
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32),
               RAY_USAGE_STATS_ENABLED="0")
    common = ["--num-cpus=1", "--block", f"--temp-dir={temp}", "--disable-usage-stats"]
    nodes = [subprocess.Popen([ray_cli, "start", "--head", f"--port={port}",
                               "--include-dashboard=false", *common],
                              env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        worker = (f"mount -t tmpfs tmpfs /dev/shm && exec {ray_cli} start "
                  f"--address={address} " + " ".join(common))
        nodes.append(subprocess.Popen([*_private_memory_command(), "sh", "-c", worker],
                                      env=env, start_new_session=True,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + NODE_START_TIMEOUT
        while True:  # not timed: until both nodes have joined
            alive = subprocess.run([sys.executable, __file__, "nodes", address], env=env,
                                   capture_output=True, text=True)
            if alive.returncode == 0 and alive.stdout.strip() == "2":
                break
            assert time.monotonic() < deadline, f"the two Ray nodes did not start: {alive}"
            time.sleep(2)
        yield address, env
    finally:
        for node in reversed(nodes):
            _stop(node)
        shutil.rmtree(temp, ignore_errors=True)


def _drive(address: str, env: dict, design: str) -> dict:
    result = subprocess.run([sys.executable, __file__, "drive", address, design], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # two Ray nodes and two ANFSP runs: about a minute
@pytest.mark.parametrize("design", ["learner", "actor_learners"])
def test_actors_on_two_ray_nodes_feed_the_learner(two_nodes, design):
    """One actor on the learner's node, one on the other node (a CPU each): both feed the
    learner; the paper's actor-learner on the learner's node updates the shared networks
    in place, the one on the other node cannot open them and sends gradients."""
    address, env = two_nodes
    run = _drive(address, env, design)
    head, other = run["driver_node"], [n for n in run["nodes"] if n != run["driver_node"]]
    assert len(run["nodes"]) == 2 and len(other) == 1
    assert sorted(run["actor_nodes"].values()) == sorted([head, other[0]])
    assert run["messages_from"] == [0, 1]
    assert run["episodes"] > 0 and run["steps"] > 0 and run["learnt"]
    on_head = [int(k) for k, node in run["actor_nodes"].items() if node == head]
    assert run["sharing"] == (on_head if design == "actor_learners" else [])


def _count_nodes(address: str) -> None:
    import ray

    ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    print(sum(1 for n in ray.nodes() if n["Alive"]))


def _drive_anfsp(address: str, design: str) -> None:
    """The learner with two Ray actors on the cluster: what reached it, from where."""
    import jax
    import numpy as np
    import ray
    import ray._private.state

    from smmcts_spiel.nfsp import anfsp

    seen: set[int] = set()
    take = anfsp.ANFSP._take

    def recording_take(self, message):
        seen.add(int(message[0]))
        return take(self, message)

    anfsp.ANFSP._take = recording_take
    ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    config = anfsp.ANFSPConfig(num_actors=2, episodes_per_message=8, design=design,
                               backend="ray", ray_address=address,
                               min_buffer_size_to_learn=64, hidden=(16,))
    def flat(params) -> np.ndarray:
        return np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(params)])

    with anfsp.ANFSP(config) as run:
        before = flat(run.q_params)
        for _ in range(60):  # not timed: until both actors have been heard and learnt from
            run.train(3.0)
            if seen == {0, 1} and run.steps > 0:
                break
        after = flat(run.q_params)
        actors = run._actors  # noqa: SLF001
        states = ray._private.state.actors()  # noqa: SLF001
        actor_nodes = {str(k): states[h._actor_id.hex()]["Address"]["NodeID"]  # noqa: SLF001
                       for k, h in enumerate(actors._ray_actors)}  # noqa: SLF001
        result = {"driver_node": ray.get_runtime_context().get_node_id(),
                  "nodes": [n["NodeID"] for n in ray.nodes() if n["Alive"]],
                  "actor_nodes": actor_nodes, "sharing": sorted(actors.sharing),
                  "messages_from": sorted(seen), "episodes": run.episodes,
                  "steps": run.steps, "learnt": bool(not np.array_equal(before, after))}
    print(json.dumps(result))


if __name__ == "__main__":
    if sys.argv[1] == "nodes":
        _count_nodes(sys.argv[2])
    else:
        _drive_anfsp(sys.argv[2], sys.argv[3])
