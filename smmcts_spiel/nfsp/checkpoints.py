"""Checkpoints of MC-NFSP and ANFSP runs in a format that cannot run code when loaded.

A checkpoint is one ``.npz`` file (numpy's zip of ``.npy`` arrays), read with
``allow_pickle=False``: the run's arrays (network parameters, optimiser states, memories)
under path-like names, and one JSON document (the unicode array ``__meta__``) holding the
kind of run, its configuration, its counters and its generator's state. Nothing in it is
executed: a pickle can run any code when loaded, which made a checkpoint (or a bot spec
``nfsp(file=...)``) a way to run code on whoever loads it.

:func:`load` checks what it reads before anything uses it: the file is a checkpoint of this
format and kind, and every array has the name, shape and dtype that the configuration's
networks and optimisers have (:func:`restore`); the caller checks the game. A truncated,
corrupted or foreign file raises :class:`CheckpointError` (a ``ValueError``) naming the file
and what is wrong. :func:`save` writes a temporary file and renames it, so an interrupted
save leaves the previous checkpoint whole.
"""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from collections.abc import Callable, Mapping

import jax
import numpy as np
import pyspiel

from smmcts_spiel import checks
from smmcts_spiel.experiments import outputs
from smmcts_spiel.nfsp import networks

FORMAT = "smmcts_spiel.nfsp checkpoint"
VERSION = 1
#: The kinds of run a checkpoint holds (``MCNFSP``, ``ANFSP``).
KINDS = ("mc_nfsp", "anfsp")
_META = "__meta__"
#: The first bytes of a pickle (protocol 2 and later): the old checkpoint format.
_PICKLE_MAGIC = b"\x80"


class CheckpointError(ValueError):
    """A file that is not a usable checkpoint: says which file and why."""


def save(path: str | os.PathLike, kind: str, meta: Mapping, arrays: Mapping[str, np.ndarray]
         ) -> None:
    """Write ``arrays`` and the JSON-able ``meta`` to ``path`` (atomically: a temporary file
    in the same folder, renamed over ``path`` when complete)."""
    document = json.dumps({"format": FORMAT, "version": VERSION, "kind": kind, **meta})
    if _META in arrays:
        raise ValueError(f"an array may not be named {_META!r}")
    fields: dict[str, typing.Any] = {_META: np.array(document),
                                     **{k: np.asarray(v) for k, v in arrays.items()}}
    with outputs.replaced_file(path, "wb") as f:
        np.savez(f, **fields)


def load(path: str | os.PathLike, kind: str | None) -> tuple[dict, dict[str, np.ndarray]]:
    """The metadata and arrays of the checkpoint of ``kind`` (None: any) at ``path``.

    Raises :class:`CheckpointError` for a missing, truncated, corrupted, pickled or
    foreign file, a file declaring more than it holds (:func:`smmcts_spiel.checks.load_npz`),
    NaN or infinite numbers, or a checkpoint of another kind of run.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            head = f.read(2)
    except OSError as e:
        raise CheckpointError(f"checkpoint {name}: cannot be read: {e.strerror}") from None
    if head.startswith(_PICKLE_MAGIC):
        raise CheckpointError(
            f"checkpoint {name} is a pickle (the old checkpoint format), which can run "
            f"arbitrary code when loaded: refused. Checkpoints are now .npz files with JSON "
            f"metadata; retrain, or save the run again with a version you trust")
    try:
        arrays = checks.load_npz(name)
    except ValueError as e:
        raise CheckpointError(f"checkpoint {name} is truncated or corrupted, or not a "
                              f"checkpoint ({e})") from None
    document = arrays.pop(_META, None)
    try:
        if document is None or document.dtype.kind != "U" or document.shape != ():
            raise ValueError("no metadata")
        meta = json.loads(str(document))
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ValueError("not this format")
    except ValueError:
        raise CheckpointError(f"{name} is not a checkpoint of smmcts_spiel.nfsp (no "
                              f"{FORMAT!r} metadata)") from None
    if meta.get("version") != VERSION:
        raise CheckpointError(f"checkpoint {name} has format version {meta.get('version')!r}; "
                              f"this version reads {VERSION}")
    if meta.get("kind") not in ((kind,) if kind else KINDS):
        raise CheckpointError(f"checkpoint {name} holds a {meta.get('kind')!r} run, not "
                              f"{'a ' + repr(kind) if kind else 'one of ' + ', '.join(KINDS)}")
    for key, array in arrays.items():
        if array.dtype.kind in "fc" and not np.isfinite(array).all():
            raise CheckpointError(f"checkpoint {name}: {key} holds NaN or infinite values (a "
                                  "run that diverged, or a corrupted file); use an earlier "
                                  "checkpoint or train again")
    return meta, arrays


class Checkpointed(typing.Protocol):
    """What a run (``MCNFSP``, ``ANFSP``) tells :func:`save_run` and :func:`load_as`."""

    KIND: typing.ClassVar[str]  # its kind of checkpoint (one of KINDS)
    CONFIG: typing.ClassVar[type]  # its configuration's dataclass
    TREES: typing.ClassVar[tuple[str, ...]]  # its pytrees: parameters and optimiser states
    COUNTERS: typing.ClassVar[dict[str, type]]  # its counters and their types
    config: typing.Any
    rng: np.random.Generator

    def __init__(self, config: typing.Any) -> None: ...

    def memory_items(self) -> dict:
        """(shape, dtype) of each field of each memory's items, by the memory's name."""

    @staticmethod
    def initial_trees(config: typing.Any, game: pyspiel.Game) -> dict:
        """The pytrees a fresh run of ``config`` on ``game`` starts from, by name."""

    def restored(self) -> None:
        """Called once a loaded run holds its pytrees, memories and counters."""


Run = typing.TypeVar("Run", bound=Checkpointed)


def save_run(run: Checkpointed, path: str | os.PathLike) -> None:
    """Everything needed to continue ``run`` bit for bit (its pytrees, memories, generator
    and counters), in a checkpoint that runs no code when loaded."""
    arrays, memories = {}, {}
    for name in run.TREES:
        arrays.update(flatten(getattr(run, name), name))
    for name in run.memory_items():
        memories[name], fields = buffer_arrays(getattr(run, name), name)
        arrays.update(fields)
    save(path, run.KIND, {
        "config": config_to_json(run.config),
        "counters": {k: getattr(run, k) for k in run.COUNTERS},
        "memories": memories, "rng": rng_state(run.rng)}, arrays)


def load_as(cls: type[Run], path: str | os.PathLike, game: str | pyspiel.Game | None = None,
            network=None) -> Run:
    """The run of class ``cls`` saved at ``path``, ready to continue; with ``game``, refuses
    a run trained on another game (or board size), with ``network`` (a configuration) one
    whose network is not ``network``'s. Raises :class:`CheckpointError` for a file that is
    not a checkpoint of a ``cls`` run or does not fit its own configuration."""
    source = os.fspath(path)
    meta, arrays = load(path, cls.KIND)
    config = config_from_json(cls.CONFIG, meta.get("config"), source)
    trained = check_game(config.game, game, source)
    check_network(config, network, source)
    trees = restore_trees(lambda: cls.initial_trees(config, trained), cls.TREES, arrays,
                          source, networks.describe(config))
    counts = counters(meta, cls.COUNTERS, source)
    run = cls(config)
    memories = meta.get("memories")
    for name, items in run.memory_items().items():
        kept = memories.get(name) if isinstance(memories, dict) else None
        restore_buffer(getattr(run, name), kept, arrays, name, items, source)
    set_rng_state(run.rng, meta.get("rng"), source)
    for name, value in {**trees, **counts}.items():
        setattr(run, name, value)
    run.restored()
    return run


# -- pieces of a run -----------------------------------------------------------------------


def flatten(tree, prefix: str) -> dict[str, np.ndarray]:
    """The leaves of a pytree (parameters, optimiser state) as ``{prefix/path: array}``."""
    leaves, _ = jax.tree_util.tree_flatten_with_path(tree)
    return {_name(prefix, path): np.asarray(leaf) for path, leaf in leaves}


def restore(template, arrays: Mapping[str, np.ndarray], prefix: str, source: str,
            built: str = ""):
    """``template`` (a pytree the run's configuration built) with its leaves read from
    ``arrays``: every leaf must be there with the template's shape and dtype, and no other
    array under ``prefix`` may be (else the checkpoint is of another network). ``built``
    names that network in the messages."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(template)
    names = [_name(prefix, path) for path, _ in leaves]
    extra = sorted(k for k in arrays if k.startswith(prefix + "/") and k not in set(names))
    missing = [n for n in names if n not in arrays]
    network = f"the network its configuration builds{', ' + built if built else ''}"
    if missing or extra:
        raise CheckpointError(
            f"checkpoint {source}: {prefix} is not {network} (missing {missing[:3]}, "
            f"unexpected {extra[:3]})")
    restored = []
    for name, (_, leaf) in zip(names, leaves):
        got = arrays[name]
        if got.shape != tuple(leaf.shape) or got.dtype != leaf.dtype:
            raise CheckpointError(
                f"checkpoint {source}: {name} has shape {got.shape} ({got.dtype}), but "
                f"{network}, has {tuple(leaf.shape)} ({leaf.dtype})")
        restored.append(got)
    return jax.tree_util.tree_unflatten(treedef, restored)


def restore_trees(initial: Callable[[], dict], names: tuple[str, ...],
                  arrays: Mapping[str, np.ndarray], source: str, built: str = "") -> dict:
    """The pytrees ``initial()`` would build (``{name: tree}``: parameters, optimiser
    states), read from ``arrays`` instead, checked in the order of ``names``. ``initial``
    runs abstractly (``jax.eval_shape``): nothing is allocated for a configuration before the
    file's arrays are known to fit it, so a configuration edited to ask for huge networks
    costs nothing."""
    shapes = jax.eval_shape(initial)
    return {name: restore(shapes[name], arrays, name, source, built) for name in names}


#: The fields of a configuration that make its network's shape.
NETWORK_FIELDS = ("network", "hidden", "dropout")


def check_network(saved, expected, source: str) -> None:
    """Refuse a checkpoint whose configuration ``saved`` has another network than the
    configuration ``expected`` (None accepts any), naming both."""
    if expected is not None and any(getattr(saved, k) != getattr(expected, k)
                                    for k in NETWORK_FIELDS):
        raise CheckpointError(
            f"checkpoint {source} holds a network {networks.describe(saved)}, not the "
            f"{networks.describe(expected)} asked for")


def check_game(saved: str, expected, source: str) -> pyspiel.Game:
    """The game a checkpoint was trained on, which must be ``expected`` (a game or game
    string; None accepts any)."""
    try:
        trained = pyspiel.load_game(saved)
    except (pyspiel.SpielError, RuntimeError, ValueError, TypeError) as e:
        raise CheckpointError(f"checkpoint {source}: its game {saved!r} cannot be loaded "
                              f"({e})") from None
    if expected is not None:
        expected = pyspiel.load_game(expected) if isinstance(expected, str) else expected
        if str(trained) != str(expected):
            raise CheckpointError(f"checkpoint {source} was trained on {trained}, not on "
                                  f"{expected}")
    return trained


def counters(meta: Mapping, kinds: Mapping[str, type], source: str) -> dict:
    """The run's counters (``{name: int or float}``), checked to be non-negative numbers."""
    values = {}
    for name, kind in kinds.items():
        value = meta.get("counters", {}).get(name) if isinstance(meta.get("counters"),
                                                                   dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                value >= 0) or (kind is int and not isinstance(value, int)):
            raise CheckpointError(f"checkpoint {source}: counter {name} is {value!r}, not a "
                                  f"non-negative {kind.__name__}")
        values[name] = kind(value)
    return values


def _name(prefix: str, path) -> str:
    return f"{prefix}/{jax.tree_util.keystr(path, simple=True, separator='/')}"


def config_to_json(config) -> dict:
    """A frozen dataclass of parameters as a JSON object."""
    return dataclasses.asdict(config)


def config_from_json(cls: type, values, source: str):
    """``cls(**values)`` (tuples restored from JSON lists), or CheckpointError naming what
    does not fit (an unknown or missing field, a bad value)."""
    if not isinstance(values, dict):
        raise CheckpointError(f"checkpoint {source}: its configuration is not an object")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise CheckpointError(f"checkpoint {source}: unknown parameters {unknown} for "
                              f"{cls.__name__} (saved by another version?)")
    hints = typing.get_type_hints(cls)
    converted = {}
    for key, value in values.items():
        if typing.get_origin(hints[key]) is tuple and isinstance(value, list):
            value = tuple(value)
        converted[key] = value
    try:
        return cls(**converted)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"checkpoint {source}: bad configuration: {e}") from None


def rng_state(rng: np.random.Generator) -> dict:
    """A numpy generator's state as a JSON object."""
    return dict(rng.bit_generator.state)


def set_rng_state(rng: np.random.Generator, state, source: str) -> None:
    """Put ``rng`` in the saved ``state`` (a PCG64 state, the only one these runs use)."""
    try:
        if state["bit_generator"] != type(rng.bit_generator).__name__:
            raise ValueError(f"a {state['bit_generator']} state")
        rng.bit_generator.state = state
    except (TypeError, KeyError, ValueError) as e:
        raise CheckpointError(f"checkpoint {source}: bad generator state ({e})") from None


def buffer_arrays(buffer, prefix: str) -> tuple[dict, dict[str, np.ndarray]]:
    """A replay or reservoir memory's counters and stored fields."""
    fields = buffer.contents()
    return ({"size": buffer.size, "added": buffer.added, "fields": len(fields)},
            {f"{prefix}/{k}": f for k, f in enumerate(fields)})


def restore_buffer(buffer, counters, arrays: Mapping[str, np.ndarray], prefix: str,
                   items: tuple[tuple[tuple[int, ...], type], ...], source: str) -> None:
    """Fill an empty memory with what :func:`buffer_arrays` saved, checked: counts within
    the capacity, and each field of ``size`` items of the ``items`` (shape, dtype) the run
    stores."""
    try:
        size, added, count = (int(counters[k]) for k in ("size", "added", "fields"))
        fields = tuple(arrays[f"{prefix}/{k}"] for k in range(count))
    except (TypeError, KeyError, ValueError) as e:
        raise CheckpointError(f"checkpoint {source}: {prefix} is incomplete ({e})") from None
    if not 0 <= size <= min(added, buffer.capacity) or (size and count != len(items)):
        raise CheckpointError(f"checkpoint {source}: {prefix} holds inconsistent counts "
                              f"(size {size}, added {added}, capacity {buffer.capacity}, "
                              f"{count} fields where the run stores {len(items)})")
    for k, (field, (shape, dtype)) in enumerate(zip(fields, items)):
        want = (size, *shape)
        if field.shape != want or field.dtype != np.dtype(dtype):
            raise CheckpointError(
                f"checkpoint {source}: {prefix}/{k} has shape {field.shape} ({field.dtype}), "
                f"but this game's memory stores {want} ({np.dtype(dtype)})")
    buffer.restore(fields, size, added)
